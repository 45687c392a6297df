/**
 * Click capture off the hot path: visits are buffered in memory and written in one
 * transaction per flush (every `flushMs`, or sooner at `maxBatch` events) together
 * with each link's `clicks` and `lastClicked`. SIGTERM flushes everything; a kill -9
 * loses at most the events of one flush window (1 s by default).
 */
import type { Store } from '../store/db'
import type { Logger } from '../shared/log'

export interface ClickEvent {
  linkSeq: number
  domain: string
  at: number
  scan: boolean
  continent: string | null
  country: string | null
  region: string | null
  city: string | null
  os: string
  browser: string
  device: string
  referer: string | null
  refererUrl: string | null
  utmSource: string | null
  utmMedium: string | null
  utmCampaign: string | null
  utmTerm: string | null
  utmContent: string | null
}

export interface FlushSummary {
  events: number
  byDomain: Map<string, number>
}

/** Beyond this many unwritten events (a store that keeps failing), the oldest are dropped. */
const MAX_PENDING = 200_000

export function createClickRecorder(db: Store, log: Logger, opts: { flushMs?: number; maxBatch?: number } = {}) {
  const flushMs = opts.flushMs ?? 1000
  const maxBatch = opts.maxBatch ?? 1000
  let pending: ClickEvent[] = []
  let timer: ReturnType<typeof setInterval> | null = null
  let flushQueued = false
  const afterFlush: ((s: FlushSummary) => void)[] = []

  const insert = db.query(`INSERT INTO click_events
    (link_seq, at, scan, continent, country, region, city, os, browser, device, referer, referer_url,
     utm_source, utm_medium, utm_campaign, utm_term, utm_content)
    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`)
  const bump = db.query('UPDATE links SET clicks = clicks + ?, last_clicked = max(coalesce(last_clicked, 0), ?) WHERE seq = ?')

  const write = db.transaction((events: ClickEvent[]) => {
    const perLink = new Map<number, { n: number; last: number }>()
    for (const e of events) {
      insert.run(e.linkSeq, e.at, e.scan ? 1 : 0, e.continent, e.country, e.region, e.city, e.os, e.browser, e.device,
        e.referer, e.refererUrl, e.utmSource, e.utmMedium, e.utmCampaign, e.utmTerm, e.utmContent)
      const agg = perLink.get(e.linkSeq)
      if (agg) (agg.n++, (agg.last = Math.max(agg.last, e.at)))
      else perLink.set(e.linkSeq, { n: 1, last: e.at })
    }
    for (const [seq, { n, last }] of perLink) bump.run(n, last, seq)
  })

  function flush(): number {
    flushQueued = false
    if (pending.length === 0) return 0
    const batch = pending
    pending = []
    try {
      write(batch)
    } catch (e) {
      // Keep them for the next attempt (e.g. the store was busy); never fail a redirect.
      pending = batch.concat(pending)
      if (pending.length > MAX_PENDING) pending = pending.slice(pending.length - MAX_PENDING)
      log.error('click flush failed; will retry', { events: batch.length, error: String(e) })
      return 0
    }
    const byDomain = new Map<string, number>()
    for (const e of batch) byDomain.set(e.domain, (byDomain.get(e.domain) ?? 0) + 1)
    for (const hook of afterFlush) {
      try {
        hook({ events: batch.length, byDomain })
      } catch (e) {
        log.error('after-flush hook failed', { error: String(e) })
      }
    }
    return batch.length
  }

  return {
    record(e: ClickEvent) {
      pending.push(e)
      if (pending.length >= maxBatch && !flushQueued) {
        flushQueued = true
        setImmediate(flush)
      }
    },
    flush,
    pendingCount: () => pending.length,
    /** Visits of one link recorded but not yet written. */
    pendingFor: (linkSeq: number) => pending.reduce((n, e) => n + (e.linkSeq === linkSeq ? 1 : 0), 0),
    start() {
      timer ??= setInterval(flush, flushMs)
    },
    /** Stops the timer and writes everything still buffered. */
    stop(): number {
      if (timer) clearInterval(timer)
      timer = null
      return flush()
    },
    onFlush(fn: (s: FlushSummary) => void) {
      afterFlush.push(fn)
    },
    flushMs,
  }
}
export type ClickRecorder = ReturnType<typeof createClickRecorder>
