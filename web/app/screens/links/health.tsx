/**
 * Link health in the dashboard: the badge a broken link carries in the list, and the panel of
 * the link editor that shows the last check's answer for each URL, with "Check now"
 * (POST /links/{id}/health). Statuses are the API's own (src/links/links.health.values.ts).
 */
import { useState } from 'preact/hooks'
import { HEALTH_STATUSES, type HealthStatus, type LinkHealth } from '../../../../src/links/links.health.values'
import { errorText, post } from '../../api'
import { Button, toast } from '../../ui'
import { relativeTime } from './model'

/** How the dashboard names each status (the filter's choices and the badges). */
export const HEALTH_LABELS: Record<HealthStatus, string> = { broken: 'Broken', ok: 'Working', unknown: 'Not checked yet' }
/** The filter's choices, the worst first. */
export const HEALTH_CHOICES: readonly HealthStatus[] = [...HEALTH_STATUSES].reverse()

const answerOf = (u: { httpStatus: number | null; error: string | null }) => (u.httpStatus !== null ? `HTTP ${u.httpStatus}` : (u.error ?? 'no answer yet'))

/** The list's badge: only a broken link carries one (its first broken URL and answer in the tooltip). */
export function BrokenBadge({ health }: { health: LinkHealth | null }) {
  if (health?.status !== 'broken') return null
  const first = health.brokenUrls[0]
  const why = first ? `${first.url}: ${answerOf(first)}` : ''
  return (
    <span class="badge badge-bad" title={`Destination broken since ${new Date(health.since).toLocaleString()}. ${why}`}>
      broken
    </span>
  )
}

/** The editor's panel: the status, since when, the last check of each URL, and a check on demand for writers. */
export function HealthPanel({ linkId, health, canCheck }: { linkId: string; health: LinkHealth; canCheck: boolean }) {
  const [shown, setShown] = useState(health)
  const [busy, setBusy] = useState(false)
  const check = async () => {
    setBusy(true)
    try {
      const answer = await post<LinkHealth>(`/links/${encodeURIComponent(linkId)}/health`, {})
      setShown(answer)
      toast(answer.status === 'broken' ? 'Checked: the destination is broken' : `Checked: ${HEALTH_LABELS[answer.status].toLowerCase()}`)
    } catch (e) {
      toast(errorText(e), 'error')
    } finally {
      setBusy(false)
    }
  }
  const badge = shown.status === 'broken' ? 'badge badge-bad' : shown.status === 'ok' ? 'badge badge-ok' : 'badge'
  return (
    <section class="card le-health" aria-label="Destination health">
      <h2>
        Destination health <span class={badge}>{HEALTH_LABELS[shown.status]}</span>
      </h2>
      <p class="muted">
        {shown.checkedAt ? (
          <>
            Last checked{' '}
            <time dateTime={shown.checkedAt} title={new Date(shown.checkedAt).toLocaleString()}>
              {relativeTime(shown.checkedAt)}
            </time>
            {shown.status === 'unknown' ? null : (
              <>
                {' '}
                · {HEALTH_LABELS[shown.status].toLowerCase()} since{' '}
                <time dateTime={shown.since} title={new Date(shown.since).toLocaleString()}>
                  {relativeTime(shown.since)}
                </time>
              </>
            )}
          </>
        ) : (
          'Not checked yet: the server checks every destination regularly.'
        )}
      </p>
      {shown.urls.length ? (
        <table class="le-health-urls">
          <caption class="visually-hidden">The last check of each URL</caption>
          <thead>
            <tr>
              <th scope="col">URL</th>
              <th scope="col">Status</th>
              <th scope="col">Last answer</th>
            </tr>
          </thead>
          <tbody>
            {shown.urls.map((u) => (
              <tr key={u.url}>
                <td class="mono">{u.url}</td>
                <td>{HEALTH_LABELS[u.status]}</td>
                <td>{u.checkedAt ? answerOf(u) : <span class="muted">not checked yet</span>}</td>
              </tr>
            ))}
          </tbody>
        </table>
      ) : null}
      {canCheck ? (
        <Button onClick={check} busy={busy}>
          {busy ? 'Checking…' : 'Check now'}
        </Button>
      ) : null}
    </section>
  )
}
