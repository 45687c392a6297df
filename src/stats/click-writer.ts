/**
 * Writes a batch of click events, the matching link counters and the statistics rollups
 * (stats.rollup.ts) in one transaction, so statistics never see events without their
 * rollups. Used inline (tests, in-memory stores) and inside the click-writer worker.
 */
import type { Database } from 'bun:sqlite'
import { rollupDeltas } from './stats.rollup'

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
  const upsert = Object.fromEntries(
    (['stats_quarter', 'stats_hour', 'stats_day', 'stats_week'] as const).map((table) => [
      table,
      db.query(`INSERT INTO ${table} (scope, dim, t, value, clicks, scans) VALUES (?, ?, ?, ?, ?, ?)
        ON CONFLICT DO UPDATE SET clicks = clicks + excluded.clicks, scans = scans + excluded.scans`),
    ]),
  )
  const ownerOf = db.query<{ user_id: string }, [number]>('SELECT user_id FROM links WHERE seq = ?')
  const addOwner = db.query('INSERT OR IGNORE INTO stats_owners (user_id) VALUES (?)')
  const ownerNum = db.query<{ num: number }, [string]>('SELECT num FROM stats_owners WHERE user_id = ?')
  // A link never changes owner: its owner scope is looked up once per writer.
  const ownerScopes = new Map<number, number>()
  const ownerScope = (seq: number): number => {
    let scope = ownerScopes.get(seq)
    if (scope === undefined) {
      const user = ownerOf.get(seq)?.user_id ?? ''
      addOwner.run(user)
      scope = -ownerNum.get(user)!.num
      if (ownerScopes.size > 1_000_000) ownerScopes.clear()
      ownerScopes.set(seq, scope)
    }
    return scope
  }
  const write = db.transaction((events: ClickEvent[]) => {
    const perLink = new Map<number, { n: number; last: number }>()
    for (const e of events) {
      insert.run(e.linkSeq, e.at, e.scan ? 1 : 0, e.continent, e.country, e.region, e.city, e.os, e.browser, e.device,
        e.referer, e.refererUrl, e.utmSource, e.utmMedium, e.utmCampaign, e.utmTerm, e.utmContent, e.n)
      const agg = perLink.get(e.linkSeq)
      if (agg) (agg.n += e.n, (agg.last = Math.max(agg.last, e.at)))
      else perLink.set(e.linkSeq, { n: e.n, last: e.at })
    }
    for (const [seq, { n, last }] of perLink) bump.run(n, last, seq)
    for (const d of rollupDeltas(events, ownerScope)) upsert[d.table]!.run(d.scope, d.dim, d.t, d.value, d.clicks, d.scans)
  })
  return (events) => {
    try {
      write(events)
    } catch (e) {
      // An owner numbered inside the failed transaction was rolled back with it.
      ownerScopes.clear()
      throw e
    }
  }
}
