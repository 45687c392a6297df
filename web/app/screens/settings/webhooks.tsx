/**
 * Webhooks (Settings): the list with each endpoint's state, a new one with its signing secret
 * shown once, the events and an optional link or tag filter, a test event, enable/disable,
 * delete, and each endpoint's deliveries with their status and a retry. Event types and
 * delivery statuses come from the API's own definitions (src/events, src/webhooks).
 */
import { useEffect, useState } from 'preact/hooks'
import { EVENT_CATALOG, EVENT_TYPES, type EventType } from '../../../../src/events/events.types'
import { DELIVERY_STATUSES, type DeliveryStatus } from '../../../../src/webhooks/webhooks.values'
import { api, del, errorText, get, patch, post } from '../../api'
import { Button, Empty, ErrorBox, Field, Loading, Modal, Pager, toast, useResource } from '../../ui'
import { shortUserId, when } from './records'
import { SecretDialog } from './secret'

/** A webhook as the API answers it (src/webhooks/webhooks.schema.ts WebhookRecord). */
export interface WebhookRecord {
  id: string
  userId: string
  url: string
  events: EventType[]
  name: string | null
  linkIds: string[]
  tagIds: string[]
  disabled: boolean
  failingSince: string | null
  createdAt: string
}
interface DeliveryRecord {
  eventId: string
  type: EventType
  attempts: number
  status: DeliveryStatus
  responseStatus: number | null
  at: string
  nextAttemptAt: string | null
}
interface LinkSummary {
  id: string
  shortLink: string
  destination: string
}
interface TagSummary {
  id: string
  name: string
}

const PAGE_SIZE = 50
/** What a user subscribes to; webhook.test is sent by the Test button whatever the choice. */
const SUBSCRIBABLE = EVENT_TYPES.filter((t) => t !== 'webhook.test')
const STATUS_WORDS: Record<DeliveryStatus, string> = { pending: 'Waiting', delivered: 'Delivered', failed: 'Failed' }
/** The first sentence of the API's description of a type, without its Markdown. */
const eventWords = (type: string) => (EVENT_CATALOG[type as EventType]?.description.split('.')[0] ?? type).replaceAll('`', '')

function stateOf(w: WebhookRecord): { text: string; kind: 'ok' | 'bad' | '' } {
  if (w.disabled) return { text: w.failingSince ? 'Disabled after failing' : 'Disabled', kind: 'bad' }
  if (w.failingSince) return { text: `Failing since ${when(w.failingSince)}`, kind: 'bad' }
  return { text: 'Active', kind: 'ok' }
}

export function WebhooksSection({ all, canCreate }: { all: boolean; canCreate: boolean }) {
  const [page, setPage] = useState(1)
  const hooks = useResource((signal) => api<WebhookRecord[]>('GET', '/webhooks', { query: { page, pageSize: PAGE_SIZE }, signal }), [page])
  const [creating, setCreating] = useState(false)
  const [secret, setSecret] = useState<(WebhookRecord & { secret: string }) | null>(null)
  const [showing, setShowing] = useState<WebhookRecord | null>(null)
  const [deleting, setDeleting] = useState<WebhookRecord | null>(null)
  const [busy, setBusy] = useState<string | null>(null)
  const list = hooks.data?.data ?? []

  const act = async (w: WebhookRecord, what: string, run: () => Promise<unknown>, done: string) => {
    setBusy(`${what}:${w.id}`)
    try {
      await run()
      toast(done)
      hooks.reload()
    } catch (e) {
      toast(errorText(e), 'error')
    } finally {
      setBusy(null)
    }
  }
  const label = (w: WebhookRecord) => w.name ?? new URL(w.url).host

  return (
    <section class="card settings-section" aria-labelledby="webhooks-title">
      <header class="settings-section-head">
        <div>
          <h2 id="webhooks-title">Webhooks</h2>
          <p class="hint">
            shortlink sends events (links created, changed, visited…) to your endpoints as signed POST requests (Standard Webhooks), retrying for a day when
            they fail.
            {all ? ' As an admin you see every user’s webhooks.' : ''}
          </p>
        </div>
        {canCreate ? (
          <Button kind="primary" onClick={() => setCreating(true)}>
            Add webhook
          </Button>
        ) : null}
      </header>
      {hooks.error && !hooks.data ? (
        <ErrorBox error={hooks.error} retry={hooks.reload} />
      ) : !hooks.data ? (
        <Loading label="Loading webhooks…" />
      ) : list.length === 0 ? (
        <Empty title="No webhooks yet">{canCreate ? <p>Add one to send events to Zapier, Slack, your CRM or your own server.</p> : null}</Empty>
      ) : (
        <div class="table-wrap">
          <table>
            <caption class="visually-hidden">Webhooks</caption>
            <thead>
              <tr>
                <th scope="col">Endpoint</th>
                <th scope="col">Events</th>
                {all ? <th scope="col">User</th> : null}
                <th scope="col">State</th>
                <th scope="col">
                  <span class="visually-hidden">Actions</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {list.map((w) => {
                const state = stateOf(w)
                return (
                  <tr key={w.id} class={w.disabled ? 'settings-disabled' : ''}>
                    <td>
                      <strong>{label(w)}</strong>
                      <div class="mono webhooks-url">{w.url}</div>
                      {w.linkIds.length || w.tagIds.length ? (
                        <div class="hint">
                          Only {w.linkIds.length ? `${w.linkIds.length} link${w.linkIds.length === 1 ? '' : 's'}` : ''}
                          {w.linkIds.length && w.tagIds.length ? ' and ' : ''}
                          {w.tagIds.length ? `links tagged (${w.tagIds.length} tag${w.tagIds.length === 1 ? '' : 's'})` : ''}
                        </div>
                      ) : null}
                    </td>
                    <td>
                      <ul class="webhooks-events">
                        {w.events.map((e) => (
                          <li key={e} class="mono">
                            {e}
                          </li>
                        ))}
                      </ul>
                    </td>
                    {all ? <td>{shortUserId(w.userId)}</td> : null}
                    <td>
                      <span class={`badge ${state.kind ? `badge-${state.kind}` : ''}`}>{state.text}</span>
                    </td>
                    <td class="settings-row-actions">
                      <Button onClick={() => setShowing(w)} aria-label={`Deliveries of ${label(w)}`}>
                        Deliveries
                      </Button>
                      {canCreate ? (
                        <>
                          <Button
                            busy={busy === `test:${w.id}`}
                            onClick={() => act(w, 'test', () => post(`/webhooks/${encodeURIComponent(w.id)}/test`), `Test event sent to ${label(w)}`)}
                            aria-label={`Send a test event to ${label(w)}`}
                          >
                            Test
                          </Button>
                          <Button
                            busy={busy === `toggle:${w.id}`}
                            onClick={() =>
                              act(
                                w,
                                'toggle',
                                () => patch(`/webhooks/${encodeURIComponent(w.id)}`, { disabled: !w.disabled }),
                                w.disabled ? `${label(w)} enabled` : `${label(w)} disabled`,
                              )
                            }
                            aria-label={`${w.disabled ? 'Enable' : 'Disable'} ${label(w)}`}
                          >
                            {w.disabled ? 'Enable' : 'Disable'}
                          </Button>
                          <Button kind="danger" onClick={() => setDeleting(w)} aria-label={`Delete ${label(w)}`}>
                            Delete
                          </Button>
                        </>
                      ) : null}
                    </td>
                  </tr>
                )
              })}
            </tbody>
          </table>
        </div>
      )}
      {(hooks.data?.total ?? 0) > PAGE_SIZE ? <Pager page={page} pageSize={PAGE_SIZE} total={hooks.data!.total!} onPage={setPage} /> : null}
      {creating ? (
        <CreateWebhookDialog
          onClose={() => setCreating(false)}
          onCreated={(w) => {
            setCreating(false)
            setSecret(w)
            hooks.reload()
          }}
        />
      ) : null}
      {secret ? (
        <SecretDialog
          title="Your webhook's signing secret"
          label={`Signing secret for ${secret.name ?? secret.url}`}
          value={secret.secret}
          copyLabel="Copy secret"
          onClose={() => setSecret(null)}
        >
          <strong>Copy this secret now: it will not be shown again.</strong> Your endpoint uses it to check that a request comes from shortlink (the
          webhook-signature header, as the Standard Webhooks libraries verify it).
        </SecretDialog>
      ) : null}
      {showing ? <DeliveriesDialog webhook={showing} canRetry={canCreate} onClose={() => setShowing(null)} /> : null}
      {deleting ? (
        <Modal title={`Delete webhook ${label(deleting)}?`} onClose={() => setDeleting(null)}>
          <p>Nothing more is sent to {deleting.url}, and its delivery history goes with it. This cannot be undone.</p>
          <div class="settings-actions">
            <Button
              kind="danger"
              busy={busy === `delete:${deleting.id}`}
              onClick={() =>
                act(deleting, 'delete', () => del(`/webhooks/${encodeURIComponent(deleting.id)}`), `Webhook ${label(deleting)} deleted`).then(() =>
                  setDeleting(null),
                )
              }
            >
              Delete webhook
            </Button>
            <Button onClick={() => setDeleting(null)}>Cancel</Button>
          </div>
        </Modal>
      ) : null}
    </section>
  )
}

type Scope = 'all' | 'links' | 'tags'

function CreateWebhookDialog({ onClose, onCreated }: { onClose: () => void; onCreated: (w: WebhookRecord & { secret: string }) => void }) {
  const [url, setUrl] = useState('')
  const [name, setName] = useState('')
  const [events, setEvents] = useState<EventType[]>(['link.created', 'link.clicked'])
  const [scope, setScope] = useState<Scope>('all')
  const [links, setLinks] = useState<LinkSummary[]>([])
  const [tagIds, setTagIds] = useState<string[]>([])
  const [busy, setBusy] = useState(false)
  const [error, setError] = useState<{ field: string | null; text: string } | null>(null)
  const tags = useResource((signal) => get<TagSummary[]>('/tags', { pageSize: 100, sortBy: 'name', sortOrder: 'asc' }, signal), [])

  const submit = async (e: Event) => {
    e.preventDefault()
    setError(null)
    if (events.length === 0) return setError({ field: 'events', text: 'Choose at least one event.' })
    if (scope === 'links' && links.length === 0) return setError({ field: 'links', text: 'Add at least one link, or send events of all links.' })
    if (scope === 'tags' && tagIds.length === 0) return setError({ field: 'tags', text: 'Choose at least one tag, or send events of all links.' })
    setBusy(true)
    try {
      const body: Record<string, unknown> = { url: url.trim(), events }
      if (name.trim()) body.name = name.trim()
      if (scope === 'links') body.linkIds = links.map((l) => l.id)
      if (scope === 'tags') body.tagIds = tagIds
      onCreated(await post<WebhookRecord & { secret: string }>('/webhooks', body))
    } catch (err) {
      const text = errorText(err)
      setError({ field: ["'url'", "'events'", "'name'"].find((f) => text.includes(f))?.slice(1, -1) ?? null, text })
      setBusy(false)
    }
  }

  return (
    <Modal title="Add a webhook" onClose={onClose} wide>
      <form onSubmit={submit}>
        <Field label="Endpoint URL" hint="An https (or http) address that accepts POST requests." error={error?.field === 'url' ? error.text : null}>
          {(p) => (
            <input {...p} name="url" type="url" required autocomplete="off" spellcheck={false} value={url} onInput={(e) => setUrl(e.currentTarget.value)} />
          )}
        </Field>
        <Field label="Name (optional)" hint="So you recognise it, e.g. “Slack #growth”." error={error?.field === 'name' ? error.text : null}>
          {(p) => <input {...p} name="name" maxLength={100} autocomplete="off" value={name} onInput={(e) => setName(e.currentTarget.value)} />}
        </Field>
        <fieldset class="webhooks-fieldset">
          <legend>Events</legend>
          {SUBSCRIBABLE.map((t) => (
            <label key={t} class="check">
              <input
                type="checkbox"
                checked={events.includes(t)}
                onChange={(e) => setEvents(e.currentTarget.checked ? [...events, t] : events.filter((x) => x !== t))}
              />
              <span>
                <span class="mono">{t}</span> <span class="muted">{eventWords(t)}</span>
              </span>
            </label>
          ))}
          {error?.field === 'events' ? <p class="field-error">{error.text}</p> : null}
        </fieldset>
        <fieldset class="webhooks-fieldset">
          <legend>Link events of</legend>
          {(
            [
              ['all', 'All links'],
              ['links', 'Only these links'],
              ['tags', 'Only links with these tags'],
            ] as const
          ).map(([value, text]) => (
            <label key={value} class="check">
              <input type="radio" name="scope" checked={scope === value} onChange={() => setScope(value)} />
              <span>{text}</span>
            </label>
          ))}
          {scope === 'links' ? <LinkPicker chosen={links} onChange={setLinks} /> : null}
          {scope === 'tags' ? (
            tags.error ? (
              <ErrorBox error={tags.error} retry={tags.reload} />
            ) : !tags.data ? (
              <Loading label="Loading tags…" />
            ) : tags.data.length === 0 ? (
              <p class="muted">You have no tags yet.</p>
            ) : (
              <div class="webhooks-tags">
                {tags.data.map((t) => (
                  <label key={t.id} class="check">
                    <input
                      type="checkbox"
                      checked={tagIds.includes(t.id)}
                      onChange={(e) => setTagIds(e.currentTarget.checked ? [...tagIds, t.id] : tagIds.filter((x) => x !== t.id))}
                    />
                    <span>{t.name}</span>
                  </label>
                ))}
              </div>
            )
          ) : null}
          {error?.field === 'links' || error?.field === 'tags' ? <p class="field-error">{error.text}</p> : null}
        </fieldset>
        {error && !error.field ? (
          <p class="field-error" role="alert">
            {error.text}
          </p>
        ) : null}
        <div class="settings-actions">
          <Button kind="primary" type="submit" busy={busy}>
            {busy ? 'Adding…' : 'Add webhook'}
          </Button>
          <Button onClick={onClose}>Cancel</Button>
        </div>
      </form>
    </Modal>
  )
}

/** Finds links by their text and adds them to the filter. */
function LinkPicker({ chosen, onChange }: { chosen: LinkSummary[]; onChange: (links: LinkSummary[]) => void }) {
  const [search, setSearch] = useState('')
  const [found, setFound] = useState<LinkSummary[]>([])
  useEffect(() => {
    const controller = new AbortController()
    const timer = setTimeout(() => {
      get<{ links: LinkSummary[] }>('/links', { search: search.trim() || undefined, pageSize: 8 }, controller.signal).then(
        (r) => setFound(r.links),
        () => {},
      )
    }, 200)
    return () => {
      clearTimeout(timer)
      controller.abort()
    }
  }, [search])
  return (
    <div class="webhooks-picker">
      <Field label="Find a link" hint="Its key, destination or any text it holds.">
        {(p) => <input {...p} type="search" autocomplete="off" value={search} onInput={(e) => setSearch(e.currentTarget.value)} />}
      </Field>
      <ul class="webhooks-found" aria-label="Links found">
        {found
          .filter((l) => !chosen.some((c) => c.id === l.id))
          .map((l) => (
            <li key={l.id}>
              <Button kind="ghost" onClick={() => onChange([...chosen, l])} aria-label={`Add ${l.shortLink}`}>
                + <span class="mono">{l.shortLink.replace(/^https?:\/\//, '')}</span> <span class="muted">→ {l.destination}</span>
              </Button>
            </li>
          ))}
      </ul>
      {chosen.length ? (
        <ul class="webhooks-chosen" aria-label="Links chosen">
          {chosen.map((l) => (
            <li key={l.id} class="badge">
              <span class="mono">{l.shortLink.replace(/^https?:\/\//, '')}</span>
              <button type="button" class="btn btn-ghost" aria-label={`Remove ${l.shortLink}`} onClick={() => onChange(chosen.filter((c) => c.id !== l.id))}>
                ×
              </button>
            </li>
          ))}
        </ul>
      ) : null}
    </div>
  )
}

function DeliveriesDialog({ webhook, canRetry, onClose }: { webhook: WebhookRecord; canRetry: boolean; onClose: () => void }) {
  const [page, setPage] = useState(1)
  const [status, setStatus] = useState<DeliveryStatus | ''>('')
  const [tick, setTick] = useState(0)
  const path = `/webhooks/${encodeURIComponent(webhook.id)}`
  const deliveries = useResource(
    (signal) => api<DeliveryRecord[]>('GET', `${path}/deliveries`, { query: { page, pageSize: PAGE_SIZE, status }, signal }),
    [page, status, tick],
  )
  // Waiting deliveries change on their own: look again every few seconds while the dialog is open.
  useEffect(() => {
    const timer = setInterval(() => setTick((t) => t + 1), 3000)
    return () => clearInterval(timer)
  }, [])
  const [busy, setBusy] = useState<string | null>(null)
  const retry = async (d: DeliveryRecord) => {
    setBusy(d.eventId)
    try {
      await post(`${path}/deliveries/${encodeURIComponent(d.eventId)}/retry`)
      toast('Sending it again now')
      setTick((t) => t + 1)
    } catch (e) {
      toast(errorText(e), 'error')
    } finally {
      setBusy(null)
    }
  }
  const test = async () => {
    setBusy('test')
    try {
      await post(`${path}/test`)
      toast('Test event sent')
      setTick((t) => t + 1)
    } catch (e) {
      toast(errorText(e), 'error')
    } finally {
      setBusy(null)
    }
  }
  const rows = deliveries.data?.data ?? []
  return (
    <Modal title={`Deliveries to ${webhook.name ?? webhook.url}`} onClose={onClose} wide>
      <div class="toolbar webhooks-toolbar">
        <Field label="Status">
          {(p) => (
            <select
              {...p}
              value={status}
              onChange={(e) => {
                setStatus(e.currentTarget.value as DeliveryStatus | '')
                setPage(1)
              }}
            >
              <option value="">All</option>
              {DELIVERY_STATUSES.map((s) => (
                <option key={s} value={s}>
                  {STATUS_WORDS[s]}
                </option>
              ))}
            </select>
          )}
        </Field>
        {canRetry ? (
          <Button onClick={test} busy={busy === 'test'}>
            Send test event
          </Button>
        ) : null}
      </div>
      {deliveries.error && !deliveries.data ? (
        <ErrorBox error={deliveries.error} retry={deliveries.reload} />
      ) : !deliveries.data ? (
        <Loading label="Loading deliveries…" />
      ) : rows.length === 0 ? (
        <Empty title={status ? `No ${STATUS_WORDS[status].toLowerCase()} deliveries` : 'Nothing sent yet'}>
          <p>Events appear here as they are sent; delivered ones are kept for a day, failed ones for a week.</p>
        </Empty>
      ) : (
        <div class="table-wrap">
          <table>
            <caption class="visually-hidden">Deliveries</caption>
            <thead>
              <tr>
                <th scope="col">Event</th>
                <th scope="col">Status</th>
                <th scope="col">Attempts</th>
                <th scope="col">Answer</th>
                <th scope="col">Last attempt</th>
                <th scope="col" class="hide-phone">
                  Next attempt
                </th>
                {canRetry ? (
                  <th scope="col">
                    <span class="visually-hidden">Actions</span>
                  </th>
                ) : null}
              </tr>
            </thead>
            <tbody>
              {rows.map((d) => (
                <tr key={d.eventId}>
                  <td>
                    <span class="mono">{d.type}</span>
                    <div class="mono hint">{d.eventId}</div>
                  </td>
                  <td>
                    <span class={`badge ${d.status === 'delivered' ? 'badge-ok' : d.status === 'failed' ? 'badge-bad' : ''}`}>{STATUS_WORDS[d.status]}</span>
                  </td>
                  <td>{d.attempts}</td>
                  <td>{d.responseStatus ?? (d.attempts ? 'no answer' : '—')}</td>
                  <td>{when(d.at)}</td>
                  <td class="hide-phone">{d.nextAttemptAt ? when(d.nextAttemptAt) : '—'}</td>
                  {canRetry ? (
                    <td class="settings-row-actions">
                      <Button busy={busy === d.eventId} onClick={() => retry(d)} aria-label={`Retry ${d.type} ${d.eventId}`}>
                        Retry
                      </Button>
                    </td>
                  ) : null}
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      {(deliveries.data?.total ?? 0) > PAGE_SIZE ? <Pager page={page} pageSize={PAGE_SIZE} total={deliveries.data!.total!} onPage={setPage} /> : null}
    </Modal>
  )
}
