/** One domain: its live DNS and certificate status, the DNS record to create, redirects, deep-link files, archive and delete. */
import { useEffect, useState } from 'preact/hooks'
import { del, errorText, get, patch, post } from '../../api'
import { Button, ErrorBox, Field, Loading, Modal, toast, useResource } from '../../ui'
import { DnsRecord } from './dns-record'
import { cnameWords, type DomainRecord, isSettling, sslWords, type Tone } from './domain'
import { DEEP_LINK_FILES, JsonFileEditor } from './json-file-editor'

const POLL_FIRST_MS = 5_000
const POLL_MAX_MS = 60_000

export function DomainDetail({ slug, admin, onChanged, onDeleted }: { slug: string; admin: boolean; onChanged: () => void; onDeleted: () => void }) {
  const path = `/domains/${encodeURIComponent(slug)}`
  const loaded = useResource((signal) => get<DomainRecord>(path, undefined, signal), [slug])
  const [domain, setDomain] = useState<DomainRecord | null>(null)
  useEffect(() => setDomain(loaded.data ?? null), [loaded.data])

  // While a check or certificate order is under way, ask again now and then: 5 s, doubling to a minute, only while the tab is visible.
  const [pollRound, setPollRound] = useState(0)
  const [wake, setWake] = useState(0)
  const settling = domain ? isSettling(domain) : false
  useEffect(() => {
    if (!settling) return
    const delay = Math.min(POLL_MAX_MS, POLL_FIRST_MS * 2 ** pollRound)
    const controller = new AbortController()
    const timer = setTimeout(() => {
      if (document.hidden) return setWake((n) => n + 1) // a hidden tab is not asked for; look again after the same delay
      get<DomainRecord>(path, undefined, controller.signal).then(
        (d) => {
          setDomain((cur) => {
            if (cur && (cur.cnameStatus !== d.cnameStatus || cur.sslStatus !== d.sslStatus)) onChanged()
            return d
          })
          setPollRound((n) => n + 1)
        },
        () => setPollRound((n) => n + 1),
      )
    }, delay)
    return () => {
      clearTimeout(timer)
      controller.abort()
    }
  }, [settling, pollRound, wake, path])

  if (loaded.error && !domain) return <ErrorBox error={loaded.error} retry={loaded.reload} />
  if (!domain) return <Loading />

  const saved = (d: DomainRecord) => {
    setDomain(d)
    onChanged()
  }
  const readOnly = !admin || domain.isDefault

  return (
    <article class="card domains-detail" aria-labelledby="domain-detail-title">
      <header class="domains-detail-head">
        <h2 id="domain-detail-title" class="mono">
          {domain.slug}
        </h2>
        {domain.isDefault ? <span class="badge">Built in</span> : null}
        {domain.archived ? <span class="badge">Archived</span> : null}
      </header>
      {domain.isDefault ? (
        <p class="muted">A built-in short domain from the server's configuration: always connected and secure, and not changeable here.</p>
      ) : (
        <>
          <StatusPanel
            domain={domain}
            admin={admin}
            onChecked={(d) => {
              setPollRound(0)
              saved(d)
            }}
          />
          {domain.cnameStatus !== 'valid' ? <DnsRecord domain={domain} /> : <DnsRecordCollapsed domain={domain} />}
        </>
      )}
      {readOnly ? <ReadOnlySettings domain={domain} /> : <RedirectsForm key={domain.slug} domain={domain} onSaved={saved} />}
      {!readOnly ? (
        <section class="domains-section" aria-labelledby="deeplinks-title">
          <h3 id="deeplinks-title">App deep-link files</h3>
          <p class="hint">Let phones open your links straight in your app. Paste the file your app developer gives you.</p>
          {DEEP_LINK_FILES.map((spec) => (
            <JsonFileEditor key={`${domain.slug}-${spec.field}`} domain={domain} spec={spec} onSaved={saved} />
          ))}
        </section>
      ) : null}
      {!readOnly ? <DangerZone domain={domain} onSaved={saved} onDeleted={onDeleted} /> : null}
    </article>
  )
}

function StatusLine({ label, words }: { label: string; words: { short: string; long: string; tone: Tone } }) {
  return (
    <div class={`domains-status domains-status-${words.tone}`}>
      <span class="domains-dot" aria-hidden="true" />
      <div>
        <strong>
          {label}: {words.short}
        </strong>
        <p>{words.long}</p>
      </div>
    </div>
  )
}

function StatusPanel({ domain, admin, onChecked }: { domain: DomainRecord; admin: boolean; onChecked: (d: DomainRecord) => void }) {
  const [busy, setBusy] = useState(false)
  const check = async () => {
    setBusy(true)
    try {
      const d = await post<DomainRecord>(`/domains/${encodeURIComponent(domain.slug)}/verify`)
      onChecked(d)
      toast(d.cnameStatus === 'valid' ? 'DNS is connected' : d.cnameStatus === 'invalid' ? 'DNS does not point here yet' : 'DNS could not be checked yet')
    } catch (e) {
      toast(errorText(e), 'error')
    } finally {
      setBusy(false)
    }
  }
  return (
    <section class="domains-section" aria-labelledby="status-title">
      <h3 id="status-title">Status</h3>
      <div role="status" aria-live="polite" class="domains-statuses">
        <StatusLine label="DNS" words={cnameWords(domain)} />
        <StatusLine label="HTTPS" words={sslWords(domain)} />
      </div>
      {domain.cnameDetail && domain.cnameStatus !== 'valid' ? <p class="hint">Last check: {domain.cnameDetail}</p> : null}
      {admin && !(domain.cnameStatus === 'valid' && domain.sslStatus === 'active') ? (
        <Button onClick={check} busy={busy}>
          {busy ? 'Checking…' : 'Check again'}
        </Button>
      ) : null}
    </section>
  )
}

/** Once connected, the record is still there to look up, folded away. */
function DnsRecordCollapsed({ domain }: { domain: DomainRecord }) {
  return (
    <details class="domains-section">
      <summary>Show the DNS record</summary>
      <DnsRecord domain={domain} />
    </details>
  )
}

const URL_FIELDS = [
  { field: 'destination', label: 'Home page', hint: (slug: string) => `Where https://${slug}/ itself goes. Empty: a plain page.` },
  { field: 'notFoundUrl', label: 'Not-found page', hint: () => 'Where visitors go when a short link does not exist. Empty: a “not found” page.' },
  {
    field: 'expiredUrl',
    label: 'Expired-link page',
    hint: () => 'Where visitors go when a link has expired (and has no page of its own). Empty: an “expired” page.',
  },
] as const
type UrlField = (typeof URL_FIELDS)[number]['field']

function RedirectsForm({ domain, onSaved }: { domain: DomainRecord; onSaved: (d: DomainRecord) => void }) {
  const initial = () => Object.fromEntries(URL_FIELDS.map((f) => [f.field, domain[f.field] ?? ''])) as Record<UrlField, string>
  const [values, setValues] = useState(initial)
  const [busy, setBusy] = useState(false)
  const [error, setError] = useState<{ field: UrlField | null; text: string } | null>(null)
  const changed = URL_FIELDS.filter((f) => values[f.field].trim() !== (domain[f.field] ?? ''))

  const save = async (e: Event) => {
    e.preventDefault()
    if (!changed.length) return
    setBusy(true)
    setError(null)
    try {
      const body = Object.fromEntries(changed.map((f) => [f.field, values[f.field].trim() === '' ? null : values[f.field].trim()]))
      const d = await patch<DomainRecord>(`/domains/${encodeURIComponent(domain.slug)}`, body)
      onSaved(d)
      setValues(Object.fromEntries(URL_FIELDS.map((f) => [f.field, d[f.field] ?? ''])) as Record<UrlField, string>)
      toast('Redirects saved')
    } catch (err) {
      const text = errorText(err)
      setError({ field: URL_FIELDS.find((f) => text.includes(f.field))?.field ?? null, text })
    } finally {
      setBusy(false)
    }
  }

  return (
    <form class="domains-section" aria-labelledby="redirects-title" onSubmit={save}>
      <h3 id="redirects-title">Redirects</h3>
      {URL_FIELDS.map((f) => (
        <Field key={f.field} label={f.label} hint={f.hint(domain.slug)} error={error?.field === f.field ? error.text : null}>
          {(p) => (
            <input
              {...p}
              type="url"
              inputMode="url"
              placeholder="https://"
              value={values[f.field]}
              onInput={(e) => {
                const v = e.currentTarget.value
                setValues((cur) => ({ ...cur, [f.field]: v }))
              }}
            />
          )}
        </Field>
      ))}
      {error && !error.field ? (
        <p class="field-error" role="alert">
          {error.text}
        </p>
      ) : null}
      <Button kind="primary" type="submit" busy={busy} disabled={!changed.length}>
        Save redirects
      </Button>
    </form>
  )
}

function ReadOnlySettings({ domain }: { domain: DomainRecord }) {
  return (
    <section class="domains-section" aria-labelledby="settings-ro-title">
      <h3 id="settings-ro-title">Settings</h3>
      <dl class="domains-record">
        {URL_FIELDS.map((f) => (
          <div key={f.field}>
            <dt>{f.label}</dt>
            <dd class={domain[f.field] ? 'mono' : 'muted'}>{domain[f.field] ?? 'Not set'}</dd>
          </div>
        ))}
        {DEEP_LINK_FILES.map((f) => (
          <div key={f.field}>
            <dt>{f.file}</dt>
            <dd class="muted">{domain[f.field] ? 'Set' : 'Not set'}</dd>
          </div>
        ))}
      </dl>
    </section>
  )
}

function DangerZone({ domain, onSaved, onDeleted }: { domain: DomainRecord; onSaved: (d: DomainRecord) => void; onDeleted: () => void }) {
  const [busy, setBusy] = useState(false)
  const [confirming, setConfirming] = useState(false)
  const path = `/domains/${encodeURIComponent(domain.slug)}`

  const setArchived = async (archived: boolean) => {
    setBusy(true)
    try {
      onSaved(await patch<DomainRecord>(path, { archived }))
      toast(archived ? `${domain.slug} archived: its links keep working, new links cannot use it` : `${domain.slug} is back in use`)
    } catch (e) {
      toast(errorText(e), 'error')
    } finally {
      setBusy(false)
    }
  }
  const remove = async () => {
    setBusy(true)
    try {
      await del(path)
      toast(`${domain.slug} deleted`)
      setConfirming(false)
      onDeleted()
    } catch (e) {
      toast(errorText(e), 'error')
      setBusy(false)
    }
  }

  return (
    <section class="domains-section" aria-labelledby="archive-title">
      <h3 id="archive-title">Archive or delete</h3>
      <p class="hint">
        Archiving hides the domain from lists and new links; existing links keep working. Deleting stops the domain at once: its links no longer open.
      </p>
      <div class="domains-actions">
        <Button onClick={() => setArchived(!domain.archived)} busy={busy}>
          {domain.archived ? 'Unarchive domain' : 'Archive domain'}
        </Button>
        <Button kind="danger" onClick={() => setConfirming(true)} disabled={busy}>
          Delete domain
        </Button>
      </div>
      {confirming ? (
        <Modal title={`Delete ${domain.slug}?`} onClose={() => setConfirming(false)}>
          <p>
            Links under <strong>{domain.slug}</strong> stop working immediately (visitors see a “not found” page). The links themselves are kept. This cannot be
            undone.
          </p>
          <div class="domains-actions">
            <Button kind="danger" onClick={remove} busy={busy}>
              Delete {domain.slug}
            </Button>
            <Button onClick={() => setConfirming(false)}>Cancel</Button>
          </div>
        </Modal>
      ) : null}
    </section>
  )
}
