/**
 * The click writer on PostgreSQL: the same writes as click-writer.ts (events, each link's
 * `clicks` and `last_clicked`, every rollup of stats.rollup.ts, busy-link marking and
 * backfill) in ONE transaction per batch, written by several nodes at once.
 *
 * - Concurrency: rollups are `INSERT … ON CONFLICT DO UPDATE SET clicks = t.clicks +
 *   excluded.clicks`, so concurrent nodes add up. Every lock a batch takes is taken in one
 *   global order (link rows by seq, then the rollup tables in a fixed order, each batch's
 *   keys sorted), so two nodes cannot wait on each other; a deadlock or serialization
 *   failure that still happens (another writer of `links`) reruns the batch.
 * - Busy links: the link rows are locked (FOR UPDATE, by seq) before the busy state is read
 *   from `stats_busy_links`, so a link crosses the threshold in exactly one transaction; that
 *   one marks it and backfills its dimension rows from every committed event plus its own,
 *   and every later batch (of any node) sees the mark after taking the same lock.
 * - Events go in as plain strings (no dictionary), into the month partitions, which are
 *   created before the transaction (once per month per process).
 * - `stats_groups` are numbered outside the batch transaction, one autocommit insert per
 *   new name, in the order of first appearance in the batch (as SQLite numbers them), so
 *   racing nodes never deadlock on them; a race loser reads the winner's number.
 * - PostgreSQL text cannot hold NUL: it is removed from strings (a visitor controls the UTM
 *   values through the query string; one NUL would fail every batch it is merged into).
 */
import type { SQL } from 'bun'
import { appendClickEventsPg } from '../events'
import { ensureClickPartitions, monthStart } from '../store'
import type { ClickEvent } from './click-event'
import type { EventWriterOptions } from './click-writer'
import { BUSY_LINK_CLICKS, DAY, DIMENSIONS, type LinkScopes, type RollupDelta, rollupDeltas } from './stats.rollup'

export interface PgEventWriterOptions extends EventWriterOptions {
  /**
   * How events are inserted: `COPY … FROM STDIN` or one multi-row INSERT from unnest
   * arrays. Measured with scripts/bench/pg-click-ingest.ts (see the report in STORAGE.md).
   */
  eventInsert?: 'copy' | 'unnest'
  /** Runs of a batch that hit a deadlock or serialization failure before its error is thrown. */
  maxAttempts?: number
}

/** SQLSTATEs after which the whole transaction can simply run again. */
const RETRYABLE = new Set(['40P01', '40001'])

const ROLLUP_TABLES = ['stats_quarter', 'stats_hour', 'stats_day', 'stats_week'] as const

const EVENT_COLUMNS =
  'link_seq, at, scan, continent, country, region, city, os, browser, device, referer, referer_url, utm_source, utm_medium, utm_campaign, utm_term, utm_content, n, variant'

/** The stored rollup value of each dimension, in SQL over click_events `e` (stats.rollup.ts dimValueOf). */
function pgValueSql(code: number, column: string): string {
  const cc = "(CASE WHEN length(e.country) = 2 THEN e.country ELSE '--' END)"
  if (code === 2) return `${cc} || coalesce(e.region, '')`
  if (code === 3) return `${cc} || coalesce(e.region, '') || chr(31) || coalesce(e.city, '')`
  return `coalesce(e.${column}, '')`
}

/** A link that just became busy: its per-day rows of every dimension from all its events, in one statement. */
const BACKFILL_SQL = `INSERT INTO stats_day (scope, dim, t, value, clicks, scans)
  SELECT e.link_seq, d.dim, e.at / ${DAY}, d.value, sum(e.n), sum(e.n * e.scan)
  FROM click_events e CROSS JOIN LATERAL (VALUES ${DIMENSIONS.map((d) => `(${d.code}, ${pgValueSql(d.code, d.column)})`).join(', ')}) AS d(dim, value)
  WHERE e.link_seq = $1
  GROUP BY 1, 2, 3, 4`

const upsertSql = (table: string) => `INSERT INTO ${table} AS r (scope, dim, t, value, clicks, scans)
  SELECT * FROM unnest($1::bigint[], $2::int[], $3::bigint[], $4::text[], $5::bigint[], $6::bigint[])
  ON CONFLICT (scope, dim, t, value) DO UPDATE SET clicks = r.clicks + excluded.clicks, scans = r.scans + excluded.scans`

const clean = (s: string | null): string | null => (s?.includes('\0') ? s.replaceAll('\0', '') : s)

/** One COPY text-format field. */
function copyField(v: string | number | null): string {
  if (v === null) return '\\N'
  if (typeof v === 'number') return String(v)
  return v.replace(/[\\\n\r\t]/g, (c) => (c === '\\' ? '\\\\' : c === '\n' ? '\\n' : c === '\r' ? '\\r' : '\\t'))
}

function eventFields(e: ClickEvent): (string | number | null)[] {
  return [
    e.linkSeq,
    e.at,
    e.scan ? 1 : 0,
    e.continent,
    e.country,
    e.region,
    e.city,
    e.os,
    e.browser,
    e.device,
    e.referer,
    e.refererUrl,
    e.utmSource,
    e.utmMedium,
    e.utmCampaign,
    e.utmTerm,
    e.utmContent,
    e.n,
    e.variant ?? null,
  ]
}

/** Inserts events (NUL-free strings) by COPY or by one INSERT from unnest arrays: what the writer does, alone (the benchmark compares them). */
export function insertClickEvents(tx: SQL, events: ClickEvent[], how: 'copy' | 'unnest'): Promise<void> {
  return how === 'copy' ? copyEvents(tx, events) : insertEvents(tx, events)
}

async function copyEvents(tx: SQL, events: ClickEvent[]): Promise<void> {
  const writer = tx.unsafe(`COPY click_events (${EVENT_COLUMNS}) FROM STDIN`).writable().getWriter()
  let text = ''
  for (const e of events) text += `${eventFields(e).map(copyField).join('\t')}\n`
  await writer.write(text)
  await writer.close()
}

async function insertEvents(tx: SQL, events: ClickEvent[]): Promise<void> {
  const cols: (string | number | null)[][] = Array.from({ length: 19 }, () => [])
  for (const e of events) {
    const f = eventFields(e)
    for (let i = 0; i < 19; i++) cols[i]!.push(f[i] ?? null)
  }
  const types = ['bigint', 'bigint', 'smallint', ...Array(14).fill('text'), 'int', 'smallint']
  await tx.unsafe(`INSERT INTO click_events (${EVENT_COLUMNS}) SELECT * FROM unnest(${types.map((t, i) => `$${i + 1}::${t}[]`).join(', ')})`, cols)
}

/** Total order of rollup keys: every node upserts rows in this order. */
function byKey(a: RollupDelta, b: RollupDelta): number {
  return a.scope - b.scope || a.dim - b.dim || a.t - b.t || (a.value < b.value ? -1 : a.value > b.value ? 1 : 0)
}

export function createPgEventWriter(sql: SQL, options: PgEventWriterOptions = {}): (events: ClickEvent[]) => Promise<void> {
  const busyAt = options.busyLinkClicks ?? BUSY_LINK_CLICKS
  const maxAttempts = options.maxAttempts ?? 5
  const writeEvents = options.eventInsert === 'unnest' ? insertEvents : copyEvents
  /** Months whose partition this process has made sure of. */
  const partitioned = new Set<number>()
  /** Group scopes (−num) per link seq, and numbers per group name: a link never changes owner or type. */
  const groupScopes = new Map<number, readonly number[]>()
  const groupNums = new Map<string, number>()
  /** Links known to be busy (a mark is never removed). */
  const busy = new Set<number>()

  async function ensurePartitions(events: ClickEvent[]) {
    const months = new Set<number>()
    for (const e of events) months.add(monthStart(e.at))
    for (const m of months) {
      if (partitioned.has(m)) continue
      await ensureClickPartitions(sql, m, m)
      partitioned.add(m)
    }
  }

  async function groupNum(name: string): Promise<number> {
    const known = groupNums.get(name)
    if (known !== undefined) return known
    // Read first: an insert that conflicts still uses up a number of the identity.
    let [row] = await sql`SELECT num::float8 AS num FROM stats_groups WHERE name = ${name}`
    row ??= (await sql`INSERT INTO stats_groups (name) VALUES (${name}) ON CONFLICT (name) DO NOTHING RETURNING num::float8 AS num`)[0]
    row ??= (await sql`SELECT num::float8 AS num FROM stats_groups WHERE name = ${name}`)[0]
    groupNums.set(name, row.num)
    return row.num
  }

  /** Fills groupScopes for the batch's links not seen yet, numbering groups as SQLite would (first appearance, owner then type). */
  async function resolveGroups(events: ClickEvent[]) {
    const unknown: number[] = []
    const seen = new Set<number>()
    for (const e of events)
      if (!groupScopes.has(e.linkSeq) && !seen.has(e.linkSeq)) {
        seen.add(e.linkSeq)
        unknown.push(e.linkSeq)
      }
    if (unknown.length === 0) return
    const rows: { seq: number; user_id: string; link_type: string }[] =
      await sql`SELECT seq::float8 AS seq, user_id, link_type FROM links WHERE seq = ANY(${unknown}::bigint[])`
    const found = new Map(rows.map((r) => [r.seq, r]))
    if (groupScopes.size > 1_000_000) groupScopes.clear()
    for (const seq of unknown) {
      const link = found.get(seq)
      const scopes = [-(await groupNum(link?.user_id ?? ''))]
      if (link) scopes.push(-(await groupNum(`type:${link.link_type}`)))
      groupScopes.set(seq, scopes)
    }
  }

  /** What a batch writes that does not depend on which links are busy: computed once, before the transaction (and its retries). */
  function prepare(events: ClickEvent[]) {
    const perLink = new Map<number, { n: number; last: number }>()
    for (const e of events) {
      const agg = perLink.get(e.linkSeq)
      if (agg) {
        agg.n += e.n
        agg.last = Math.max(agg.last, e.at)
      } else perLink.set(e.linkSeq, { n: e.n, last: e.at })
    }
    const seqs = [...perLink.keys()].sort((a, b) => a - b)
    const byTable = new Map<string, RollupDelta[]>()
    for (const d of rollupDeltas(events, { groups: (seq) => groupScopes.get(seq) ?? [], busy: () => false })) {
      const list = byTable.get(d.table)
      if (list) list.push(d)
      else byTable.set(d.table, [d])
    }
    return {
      events,
      seqs,
      clicks: seqs.map((s) => perLink.get(s)!.n),
      lasts: seqs.map((s) => perLink.get(s)!.last),
      byTable,
    }
  }

  /** The per-day dimension rows of the batch's busy links (stats.rollup.ts, kind busy). */
  function busyDeltas(events: ClickEvent[], busyNow: Set<number>): RollupDelta[] {
    const theirs = events.filter((e) => busyNow.has(e.linkSeq))
    if (theirs.length === 0) return []
    const links: LinkScopes = { groups: () => [], busy: () => true }
    return rollupDeltas(theirs, links).filter((d) => d.table === 'stats_day' && d.scope > 0 && d.dim !== 0)
  }

  async function writeBatch(tx: SQL, batch: ReturnType<typeof prepare>): Promise<number[]> {
    const { events, seqs } = batch
    // Events first: they take no lock another batch waits for.
    await writeEvents(tx, events)
    await appendClickEventsPg(tx, events)
    // Link rows locked in seq order (FOR UPDATE locks after the sort), before the busy state is read.
    await tx`SELECT seq FROM links WHERE seq = ANY(${seqs}::bigint[]) ORDER BY seq FOR UPDATE`
    const bumped: { seq: number; clicks: number }[] = await tx`UPDATE links AS l
      SET clicks = l.clicks + u.n, last_clicked = greatest(coalesce(l.last_clicked, 0), u.last)
      FROM unnest(${seqs}::bigint[], ${batch.clicks}::bigint[], ${batch.lasts}::bigint[]) AS u(seq, n, last)
      WHERE l.seq = u.seq RETURNING l.seq::float8 AS seq, l.clicks::float8 AS clicks`
    const unsure = seqs.filter((s) => !busy.has(s))
    const busyNow = new Set(seqs.filter((s) => busy.has(s)))
    if (unsure.length) {
      const marked: { seq: number }[] = await tx`SELECT seq::float8 AS seq FROM stats_busy_links WHERE seq = ANY(${unsure}::bigint[])`
      for (const r of marked) busyNow.add(r.seq)
    }
    const promoted = bumped
      .filter((r) => r.clicks >= busyAt && !busyNow.has(r.seq))
      .map((r) => r.seq)
      .sort((a, b) => a - b)
    const busyRows = busyDeltas(events, busyNow)
    for (const table of ROLLUP_TABLES) {
      const own = batch.byTable.get(table) ?? []
      const rows = (table === 'stats_day' && busyRows.length ? [...own, ...busyRows] : own).sort(byKey)
      if (!rows.length) continue
      await tx.unsafe(upsertSql(table), [
        rows.map((r) => r.scope),
        rows.map((r) => r.dim),
        rows.map((r) => r.t),
        rows.map((r) => r.value),
        rows.map((r) => r.clicks),
        rows.map((r) => r.scans),
      ])
    }
    // A link that just became busy: its dimension rows from all its events, this batch's included.
    for (const seq of promoted) {
      const [marked] = await tx`INSERT INTO stats_busy_links (seq) VALUES (${seq}) ON CONFLICT DO NOTHING RETURNING seq`
      if (marked) await tx.unsafe(BACKFILL_SQL, [seq])
    }
    return [...busyNow, ...promoted]
  }

  return async (input) => {
    if (input.length === 0) return
    const events = input.map((e) => ({
      ...e,
      referer: clean(e.referer),
      refererUrl: clean(e.refererUrl),
      utmSource: clean(e.utmSource),
      utmMedium: clean(e.utmMedium),
      utmCampaign: clean(e.utmCampaign),
      utmTerm: clean(e.utmTerm),
      utmContent: clean(e.utmContent),
    }))
    await ensurePartitions(events)
    await resolveGroups(events)
    const batch = prepare(events)
    for (let attempt = 1; ; attempt++) {
      try {
        const nowBusy = await sql.begin((tx) => writeBatch(tx, batch))
        for (const seq of nowBusy) busy.add(seq)
        return
      } catch (e) {
        const errno = (e as { errno?: unknown }).errno
        if (attempt >= maxAttempts || typeof errno !== 'string' || !RETRYABLE.has(errno)) throw e
      }
    }
  }
}
