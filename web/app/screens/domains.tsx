/** Short domains: the built-in ones and your own (go.yourbrand.com), how to connect one, and its settings. */
import { useEffect, useRef, useState } from 'preact/hooks'
import { api, errorText, post } from '../api'
import { setQuery } from '../router'
import type { ScreenProps } from '../routes'
import { isAdmin, useSession } from '../session'
import { Button, Empty, ErrorBox, Field, Loading, Modal, Page, Pager, toast, useResource } from '../ui'
import { DomainDetail } from './domains/detail'
import { cnameWords, type DomainRecord, sslWords, type Tone } from './domains/domain'

const PAGE_SIZE = 50

export function DomainsScreen({ query }: ScreenProps) {
  const session = useSession()
  const admin = isAdmin(session)
  const selected = query.get('domain')
  const includeArchived = query.get('archived') === '1'
  const page = Math.max(1, Number(query.get('page')) || 1)
  const [adding, setAdding] = useState(false)
  const detailRef = useRef<HTMLDivElement>(null)

  const list = useResource(
    (signal) => api<DomainRecord[]>('GET', '/domains', { query: { includeArchived, page, pageSize: PAGE_SIZE, sortBy: 'domain', sortOrder: 'asc' }, signal }),
    [includeArchived, page],
  )
  const all = list.data?.data ?? []
  const custom = all.filter((d) => !d.isDefault)
  const builtIn = all.filter((d) => d.isDefault)

  const select = (slug: string | null) => {
    setQuery({ domain: slug })
    if (slug) requestAnimationFrame(() => detailRef.current?.scrollIntoView({ block: 'start', behavior: 'smooth' }))
  }

  return (
    <Page
      title="Domains"
      actions={
        admin ? (
          <Button kind="primary" onClick={() => setAdding(true)}>
            Add domain
          </Button>
        ) : null
      }
    >
      <p class="domains-intro muted">
        Short links can use your own domain, such as <span class="mono">go.yourbrand.com</span>: visitors trust a link with your name in it.
        {admin ? null : ' Only an admin can add or change domains.'}
      </p>
      <div class="toolbar">
        <label class="check">
          <input type="checkbox" checked={includeArchived} onChange={(e) => setQuery({ archived: e.currentTarget.checked ? '1' : null, page: null })} />
          Show archived domains
        </label>
      </div>
      <div class={`domains-layout${selected ? ' domains-layout-open' : ''}`}>
        <div class="domains-list">
          {list.error && !list.data ? (
            <ErrorBox error={list.error} retry={list.reload} />
          ) : !list.data ? (
            <Loading label="Loading domains…" />
          ) : (
            <>
              <h2 class="domains-list-title">Your domains</h2>
              {custom.length === 0 ? (
                <div class="card">
                  <Empty title={includeArchived ? 'No custom domains' : 'No custom domains yet'}>
                    <p>Links use the built-in domain until you connect one of yours.</p>
                    {admin ? (
                      <Button kind="primary" onClick={() => setAdding(true)}>
                        Add your first domain
                      </Button>
                    ) : null}
                  </Empty>
                </div>
              ) : (
                <DomainList domains={custom} selected={selected} onSelect={select} />
              )}
              {builtIn.length ? (
                <>
                  <h2 class="domains-list-title">Built-in domains</h2>
                  <DomainList domains={builtIn} selected={selected} onSelect={select} />
                </>
              ) : null}
              {(list.data.total ?? 0) > PAGE_SIZE ? (
                <Pager page={page} pageSize={PAGE_SIZE} total={list.data.total ?? 0} onPage={(p) => setQuery({ page: String(p) })} />
              ) : null}
            </>
          )}
        </div>
        <div class="domains-side" ref={detailRef}>
          {selected ? (
            <DomainDetail
              key={selected}
              slug={selected}
              admin={admin}
              onChanged={list.reload}
              onDeleted={() => {
                select(null)
                list.reload()
              }}
            />
          ) : list.data && all.length ? (
            <div class="card domains-pick hide-phone">
              <p class="muted">Choose a domain to see its status and settings.</p>
            </div>
          ) : null}
        </div>
      </div>
      {adding ? (
        <AddDomainDialog
          onClose={() => setAdding(false)}
          onAdded={(d) => {
            setAdding(false)
            list.reload()
            select(d.slug)
          }}
        />
      ) : null}
    </Page>
  )
}

const toneBadge: Record<Tone, string> = { ok: 'badge badge-ok', bad: 'badge badge-bad', wait: 'badge' }

function DomainList({ domains, selected, onSelect }: { domains: DomainRecord[]; selected: string | null; onSelect: (slug: string) => void }) {
  return (
    <ul class="domains-items">
      {domains.map((d) => {
        const dns = cnameWords(d)
        const ssl = sslWords(d)
        return (
          <li key={d.slug}>
            <button type="button" class="domains-item" aria-current={selected === d.slug ? 'true' : undefined} onClick={() => onSelect(d.slug)}>
              <span class="domains-item-name mono">{d.slug}</span>
              <span class="domains-item-badges">
                {d.archived ? <span class="badge">Archived</span> : null}
                {d.isDefault ? (
                  <span class="badge badge-ok">Ready</span>
                ) : (
                  <>
                    <span class={toneBadge[dns.tone]}>{dns.short}</span>
                    <span class={toneBadge[ssl.tone]}>{ssl.short}</span>
                  </>
                )}
              </span>
              <span class="domains-item-clicks muted">
                {d.clicks.toLocaleString()} {d.clicks === 1 ? 'click' : 'clicks'}
              </span>
            </button>
          </li>
        )
      })}
    </ul>
  )
}

function AddDomainDialog({ onClose, onAdded }: { onClose: () => void; onAdded: (d: DomainRecord) => void }) {
  const [name, setName] = useState('')
  const [busy, setBusy] = useState(false)
  const [error, setError] = useState<string | null>(null)
  const input = useRef<HTMLInputElement>(null)
  useEffect(() => input.current?.focus(), [])

  const submit = async (e: Event) => {
    e.preventDefault()
    // People paste addresses: keep only the host.
    const domain = name
      .trim()
      .replace(/^[a-z]+:\/\//i, '')
      .replace(/[/?#].*$/, '')
    if (!domain) return setError('Enter a domain name, e.g. go.yourbrand.com')
    setBusy(true)
    setError(null)
    try {
      const d = await post<DomainRecord>('/domains', { domain })
      toast(`${d.slug} added: now create its DNS record`)
      onAdded(d)
    } catch (err) {
      setError(errorText(err))
      setBusy(false)
    }
  }

  return (
    <Modal title="Add a domain" onClose={onClose}>
      <form onSubmit={submit}>
        <Field label="Domain name" hint="A subdomain you own, such as go.yourbrand.com. Next you will see the DNS record to create." error={error}>
          {(p) => (
            <input
              {...p}
              ref={input}
              name="domain"
              autocomplete="off"
              autocapitalize="off"
              spellcheck={false}
              placeholder="go.yourbrand.com"
              value={name}
              onInput={(e) => setName(e.currentTarget.value)}
            />
          )}
        </Field>
        <div class="domains-actions">
          <Button kind="primary" type="submit" busy={busy}>
            {busy ? 'Adding…' : 'Add domain'}
          </Button>
          <Button onClick={onClose}>Cancel</Button>
        </div>
      </form>
    </Modal>
  )
}
