/**
 * Writes a batch of click events, the matching link counters and the statistics rollups
 * (stats.rollup.ts) in one transaction, so statistics never see events without their
 * rollups. Used inline (tests, in-memory stores) and inside the click-writer worker.
 */
import type { Database } from 'bun:sqlite'
import { appendClickEvents } from '../events'
import type { ClickEvent } from './click-event'
import { BUSY_LINK_CLICKS, busyBackfillSql, type LinkScopes, rollupDeltas } from './stats.rollup'
import { createValueIds } from './stats.values'

export type { ClickEvent } from './click-event'

export interface EventWriterOptions {
  /** Clicks from which a link gets per-day dimension rollups (tests lower it). */
  busyLinkClicks?: number
}

export function createEventWriter(db: Database, options: EventWriterOptions = {}): (events: ClickEvent[]) => void {
  const busyAt = options.busyLinkClicks ?? BUSY_LINK_CLICKS
  const values = createValueIds(db)
  const id = values.idOf
  const insert = db.query(`INSERT INTO click_events_compact
    (link_seq, at, scan, continent, country, region, city, os, browser, device, referer, referer_url,
     utm_source, utm_medium, utm_campaign, utm_term, utm_content, n)
    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`)
  const bump = db.query<{ clicks: number }, [number, number, number]>(
    'UPDATE links SET clicks = clicks + ?, last_clicked = max(coalesce(last_clicked, 0), ?) WHERE seq = ? RETURNING clicks',
  )
  const upsert = Object.fromEntries(
    (['stats_quarter', 'stats_hour', 'stats_day', 'stats_week'] as const).map((table) => [
      table,
      db.query(`INSERT INTO ${table} (scope, dim, t, value, clicks, scans) VALUES (?, ?, ?, ?, ?, ?)
        ON CONFLICT DO UPDATE SET clicks = clicks + excluded.clicks, scans = scans + excluded.scans`),
    ]),
  )
  const linkOf = db.query<{ user_id: string; link_type: string }, [number]>('SELECT user_id, link_type FROM links WHERE seq = ?')
  const addGroup = db.query('INSERT OR IGNORE INTO stats_groups (name) VALUES (?)')
  const groupNum = db.query<{ num: number }, [string]>('SELECT num FROM stats_groups WHERE name = ?')
  const markBusy = db.query('INSERT OR IGNORE INTO stats_busy_links (seq) VALUES (?)')
  const backfill = busyBackfillSql().map((sql) => db.query(sql))
  const loadBusy = () =>
    new Set(
      db
        .query<{ seq: number }, []>('SELECT seq FROM stats_busy_links')
        .all()
        .map((r) => r.seq),
    )
  let busy = loadBusy()
  // A link never changes owner or type: its group scopes are looked up once per writer.
  const groupScopes = new Map<number, readonly number[]>()
  const scopeOfGroup = (name: string) => {
    addGroup.run(name)
    return -groupNum.get(name)!.num
  }
  const links: LinkScopes = {
    groups(seq) {
      let scopes = groupScopes.get(seq)
      if (scopes === undefined) {
        const link = linkOf.get(seq)
        scopes = [scopeOfGroup(link?.user_id ?? ''), ...(link ? [scopeOfGroup(`type:${link.link_type}`)] : [])]
        if (groupScopes.size > 1_000_000) groupScopes.clear()
        groupScopes.set(seq, scopes)
      }
      return scopes
    },
    busy: (seq) => busy.has(seq),
  }
  const write = db.transaction((events: ClickEvent[]) => {
    const perLink = new Map<number, { n: number; last: number }>()
    for (const e of events) {
      insert.run(
        e.linkSeq,
        e.at,
        e.scan ? 1 : 0,
        id(e.continent),
        id(e.country),
        id(e.region),
        id(e.city),
        id(e.os),
        id(e.browser),
        id(e.device),
        id(e.referer),
        id(e.refererUrl),
        id(e.utmSource),
        id(e.utmMedium),
        id(e.utmCampaign),
        id(e.utmTerm),
        id(e.utmContent),
        e.n,
      )
      const agg = perLink.get(e.linkSeq)
      if (agg) {
        agg.n += e.n
        agg.last = Math.max(agg.last, e.at)
      } else perLink.set(e.linkSeq, { n: e.n, last: e.at })
    }
    const promoted: number[] = []
    for (const [seq, { n, last }] of perLink) {
      const clicks = bump.get(n, last, seq)?.clicks ?? 0
      if (clicks >= busyAt && !busy.has(seq)) promoted.push(seq)
    }
    for (const d of rollupDeltas(events, links)) upsert[d.table]!.run(d.scope, d.dim, d.t, d.value, d.clicks, d.scans)
    // A link that just became busy: its dimension rows from all its events, this batch's included.
    for (const seq of promoted) {
      markBusy.run(seq)
      for (const q of backfill) q.run(seq)
      busy.add(seq)
    }
    appendClickEvents(db, events)
  })
  return (events) => {
    try {
      // Immediate: the batch reads (value ids, link owners) before it writes, and a deferred
      // transaction fails at once when the API's connection commits in between.
      write.immediate(events)
    } catch (e) {
      // Groups numbered, strings given ids and links promoted inside the failed transaction were rolled back with it.
      groupScopes.clear()
      values.forget()
      busy = loadBusy()
      throw e
    }
  }
}
