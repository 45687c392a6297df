/**
 * Writes a batch of click events and the matching link counters in one transaction.
 * Used inline (tests, in-memory stores) and inside the click-writer worker.
 */
import type { Database } from 'bun:sqlite'

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
  /** Identical visits this row stands for. */
  n: number
}

export function createEventWriter(db: Database): (events: ClickEvent[]) => void {
  const insert = db.query(`INSERT INTO click_events
    (link_seq, at, scan, continent, country, region, city, os, browser, device, referer, referer_url,
     utm_source, utm_medium, utm_campaign, utm_term, utm_content, n)
    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`)
  const bump = db.query('UPDATE links SET clicks = clicks + ?, last_clicked = max(coalesce(last_clicked, 0), ?) WHERE seq = ?')
  return db.transaction((events: ClickEvent[]) => {
    const perLink = new Map<number, { n: number; last: number }>()
    for (const e of events) {
      insert.run(e.linkSeq, e.at, e.scan ? 1 : 0, e.continent, e.country, e.region, e.city, e.os, e.browser, e.device,
        e.referer, e.refererUrl, e.utmSource, e.utmMedium, e.utmCampaign, e.utmTerm, e.utmContent, e.n)
      const agg = perLink.get(e.linkSeq)
      if (agg) (agg.n += e.n, (agg.last = Math.max(agg.last, e.at)))
      else perLink.set(e.linkSeq, { n: e.n, last: e.at })
    }
    for (const [seq, { n, last }] of perLink) bump.run(n, last, seq)
  })
}
