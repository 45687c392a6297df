/**
 * Live: visits as they arrive, for all the caller's links (/live) or one (/links/:id/live), on
 * the world map and as a list, from the API's live stream (GET /events, Server-Sent Events,
 * with the session cookie). The browser's EventSource reconnects by itself and resumes with
 * Last-Event-ID, so a dropped connection loses no visit. The list keeps the newest visits.
 */
import { useEffect, useRef, useState } from 'preact/hooks'
import { apiUrl, get } from '../api'
import { Link } from '../router'
import type { ScreenProps } from '../routes'
import { Empty, Page, useResource } from '../ui'
import { countryName } from './stats/view'
import { WorldMapView } from './stats/world-map'

/** A link.clicked event's data (contract: "Webhooks and live events"). */
interface Visit {
  id: string
  link: { id: string; domain: string; key: string; shortLink: string; destination: string }
  click: {
    at: string
    scan: boolean
    country: string | null
    region: string | null
    city: string | null
    device: string
    os: string
    browser: string
    referer: string | null
  }
}

/** Visits kept on screen (the stream itself has no limit). */
const KEEP = 200
type State = 'connecting' | 'live' | 'reconnecting'
const STATE_WORDS: Record<State, string> = { connecting: 'Connecting…', live: 'Live', reconnecting: 'Reconnecting… (no visit is lost)' }

export function LiveScreen({ params }: ScreenProps) {
  const linkId = params.id ?? null
  const [state, setState] = useState<State>('connecting')
  const [visits, setVisits] = useState<Visit[]>([])
  const [total, setTotal] = useState(0)
  const [byCountry, setByCountry] = useState<Map<string, { clicks: number; scans: number }>>(new Map())
  const [country, setCountry] = useState<string | null>(null)
  const link = useResource(
    (signal) => (linkId ? get<{ shortLink: string; destination: string }>(`/links/${encodeURIComponent(linkId)}`, undefined, signal) : Promise.resolve(null)),
    [linkId],
  )
  const counts = useRef(new Map<string, { clicks: number; scans: number }>())

  useEffect(() => {
    setVisits([])
    setTotal(0)
    counts.current = new Map()
    setByCountry(new Map())
    const source = new EventSource(apiUrl('/events', { types: 'link.clicked', linkIds: linkId ?? undefined }))
    source.onopen = () => setState('live')
    source.onerror = () => setState(source.readyState === EventSource.CLOSED ? 'connecting' : 'reconnecting')
    source.addEventListener('link.clicked', (ev) => {
      const envelope = JSON.parse((ev as MessageEvent<string>).data) as { id: string; data: Omit<Visit, 'id'> }
      const visit = { id: envelope.id, ...envelope.data }
      setVisits((vs) => [visit, ...vs].slice(0, KEEP))
      setTotal((n) => n + 1)
      if (visit.click.country) {
        const c = counts.current.get(visit.click.country) ?? { clicks: 0, scans: 0 }
        counts.current.set(visit.click.country, { clicks: c.clicks + 1, scans: c.scans + (visit.click.scan ? 1 : 0) })
        setByCountry(new Map(counts.current))
      }
    })
    return () => source.close()
  }, [linkId])

  const rows = [...byCountry].map(([code, c]) => ({ country: code, ...c }))
  const shown = country ? visits.filter((v) => v.click.country === country) : visits
  return (
    <Page title={linkId ? 'Live: one link' : 'Live'}>
      {/* `stats`: the map's colour scale and the screen's column of cards, as on Statistics. */}
      <div class="live stats">
        <div class="card live-head">
          <p class={`live-state live-state-${state}`} role="status" aria-live="polite">
            <span class="live-dot" aria-hidden="true" />
            {STATE_WORDS[state]}
          </p>
          <p>
            {linkId ? (
              <>
                Visits of <span class="mono">{link.data?.shortLink ?? linkId}</span> · <Link href="/live">All links</Link> ·{' '}
                <Link href={`/links/${encodeURIComponent(linkId)}/stats`}>Statistics</Link>
              </>
            ) : (
              'Visits of all your links, as they arrive.'
            )}{' '}
            <strong class="live-total">{total.toLocaleString()}</strong> {total === 1 ? 'visit' : 'visits'} since you opened this page.
          </p>
        </div>
        <div class="live-body">
          <section class="card live-map" aria-labelledby="live-map-title">
            <h2 id="live-map-title">Where they come from</h2>
            <WorldMapView rows={rows} onPick={(code) => setCountry(country === code ? null : code)} />
            {country ? (
              <p>
                Showing visits from {countryName(country)}.{' '}
                <button type="button" class="btn btn-ghost" onClick={() => setCountry(null)}>
                  Show all
                </button>
              </p>
            ) : null}
          </section>
          <section class="card live-list" aria-labelledby="live-list-title">
            <h2 id="live-list-title">Latest visits</h2>
            {shown.length === 0 ? (
              <Empty title="Waiting for visits…">
                <p>Open one of {linkId ? 'this link’s' : 'your'} short links or scan its QR code: the visit shows up here within a second or two.</p>
              </Empty>
            ) : (
              <ol class="live-visits" aria-label="Visits, newest first">
                {shown.map((v) => (
                  <li key={v.id} class="live-visit">
                    <time dateTime={v.click.at}>{new Date(v.click.at).toLocaleTimeString()}</time>
                    {linkId ? null : (
                      <Link href={`/links/${encodeURIComponent(v.link.id)}/live`} class="mono live-link">
                        {v.link.shortLink.replace(/^https?:\/\//, '')}
                      </Link>
                    )}
                    <span class="live-where">
                      {v.click.country ? countryName(v.click.country) : 'Unknown place'}
                      {v.click.city ? `, ${v.click.city}` : ''}
                    </span>
                    <span class="muted">
                      {v.click.device} · {v.click.os} · {v.click.browser}
                    </span>
                    <span class={`badge ${v.click.scan ? 'badge-ok' : ''}`}>
                      {v.click.scan ? 'QR scan' : v.click.referer ? `from ${v.click.referer}` : 'Direct'}
                    </span>
                  </li>
                ))}
              </ol>
            )}
          </section>
        </div>
      </div>
    </Page>
  )
}
