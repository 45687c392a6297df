/**
 * The events engine of a single node (docs/adr/0019): click events in DuckDB, a columnar file
 * beside the SQLite store (`events.duckdb`), and the statistics rollups derived from them there.
 * Links, users and every other record stay in SQLite, and so do each link's `clicks` and
 * `lastClicked` (the redirect path and GET /links read them).
 *
 * Writes, one batch at a time: the events are appended in one DuckDB transaction that also
 * records the batch number (`events_meta.batch`); then one SQLite transaction adds the links'
 * counters and records the same number (`kv.events_batch`). A batch interrupted between the two
 * (kill -9) is found at the next open (DuckDB's number ahead of SQLite's): its counters are
 * derived from its events then, so it is counted once, never lost, never twice.
 *
 * Rollups (stats_quarter/hour/day/week, the layout of stats.rollup.ts) are derived from the
 * events when an hour closes (`compact`): quarter hours and hours up to `rolled.hour`, days
 * and 7-day blocks only once whole. The planner reads them below those limits and raw events
 * after them (stats.plan.ts `rolledUp`); an event written later than its hour was rolled (a
 * visit held back, an imported one) adds its rows to the rollups in its batch's transaction.
 * Busy links (BUSY_LINK_CLICKS or more, from SQLite's counters) get their day rows per
 * dimension backfilled at the next compaction.
 */
import type { Database } from 'bun:sqlite'
import { constants, copyFileSync, existsSync, statSync, unlinkSync } from 'node:fs'
import type { DuckDBConnection, DuckDBInstance } from '@duckdb/node-api'
import { appendClickEvents } from '../events'
import { type ClickEvent, EVENT_STRINGS } from './click-event'
import { clickTimeSql } from './click-id'
import { type JournalMark, journalKey, markedSqliteWriter, sqliteJournalMark } from './click-journal'
import { createEventWriter } from './click-writer'
import { loadDuckDb } from './events.duckdb'
import { duckCopyOptions, duckExportSelect, exportLinks, type ResolvedExportSpec } from './events.export'
import {
  BUSY_LINK_CLICKS,
  DAY,
  DIMENSIONS,
  dimsKept,
  HOUR,
  LEVEL_DAY,
  LEVELS,
  type Level,
  PAIRS,
  PAIRS_VERSION,
  type ScopeKind,
  valueSql,
} from './stats.rollup'

const WEEK = 7 * DAY

const sqlString = (s: string) => `'${s.replaceAll("'", "''")}'`

/**
 * The events' strings (EVENT_STRINGS) hold '' for an unknown value (no referer, no UTM, a place
 * the GeoIP database does not know), not NULL: DuckDB groups a dictionary-compressed column
 * without NULLs per dictionary entry, and one with NULLs row by row. A year of 10M events by
 * city took 125 ms with NULLs and 24 ms with '' (by continent: 173 → 25 ms). Reads turn '' back
 * into null (after grouping: nullif before it would cost the same again); files written before
 * 2026-11-26 still hold NULLs in their older row groups, read the same way.
 */
const SCHEMA = `
CREATE TABLE IF NOT EXISTS events (
  "at" BIGINT NOT NULL, link_seq INTEGER NOT NULL, owner INTEGER NOT NULL, ltype INTEGER NOT NULL,
  scan BOOLEAN NOT NULL, n INTEGER NOT NULL, batch BIGINT NOT NULL,
  ${EVENT_STRINGS.map(([c]) => `${c} VARCHAR`).join(', ')}
);
${LEVELS.map((l) => `CREATE TABLE IF NOT EXISTS ${l.table} (scope INTEGER NOT NULL, dim TINYINT NOT NULL, t BIGINT NOT NULL, value VARCHAR NOT NULL, clicks BIGINT NOT NULL, scans BIGINT NOT NULL);`).join('\n')}
CREATE TABLE IF NOT EXISTS stats_pair_day (scope INTEGER NOT NULL, dim TINYINT NOT NULL, t BIGINT NOT NULL, a VARCHAR NOT NULL, b VARCHAR NOT NULL, clicks BIGINT NOT NULL, scans BIGINT NOT NULL);
CREATE TABLE IF NOT EXISTS stats_busy_links (seq INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS events_meta (key VARCHAR PRIMARY KEY, value BIGINT NOT NULL);
INSERT OR IGNORE INTO events_meta VALUES ('batch', 0), ('rolled_hour', 0), ('rolled_day', 0), ('rolled_week', 0), ('imported_id', 0), ('reclustered_day', 0);
-- Columns added to files written before them, in this order (the Appender and the CSV load are by position):
-- the visits' click ids (conversions), then the A/B test variant of the visits.
ALTER TABLE events ADD COLUMN IF NOT EXISTS tracked VARCHAR;
ALTER TABLE events ADD COLUMN IF NOT EXISTS variant TINYINT;
CREATE TABLE IF NOT EXISTS conversions (
  "at" BIGINT NOT NULL, seq BIGINT NOT NULL, kind VARCHAR NOT NULL, link_seq INTEGER NOT NULL, scan BOOLEAN NOT NULL,
  quantity INTEGER NOT NULL, amount BIGINT, currency VARCHAR, click_id VARCHAR NOT NULL, event_name VARCHAR NOT NULL,
  customer_external_id VARCHAR NOT NULL, invoice_id VARCHAR,
  ${EVENT_STRINGS.map(([c]) => `${c} VARCHAR`).join(', ')}
);
INSERT OR IGNORE INTO events_meta VALUES ('conversions_seq', 0);
-- How far (a day's start, ms) the backfill of pair rows has come (0: not begun).
INSERT OR IGNORE INTO events_meta VALUES ('pairs_backfilled_to', 0);
-- The A/B variant of a conversion's click (SQLite migration 0019), for the raw events export; last, as the CSV load is by position.
ALTER TABLE conversions ADD COLUMN IF NOT EXISTS variant TINYINT;
`

/** Conversion columns copied from SQLite's `conversions` (migration 0018) into DuckDB's, in the table's order. */
const CONVERSION_COLUMNS = [
  ['at', 'BIGINT'],
  ['seq', 'BIGINT'],
  ['kind', 'VARCHAR'],
  ['link_seq', 'INTEGER'],
  ['scan', 'BOOLEAN'],
  ['quantity', 'INTEGER'],
  ['amount', 'BIGINT'],
  ['currency', 'VARCHAR'],
  ['click_id', 'VARCHAR'],
  ['event_name', 'VARCHAR'],
  ['customer_external_id', 'VARCHAR'],
  ['invoice_id', 'VARCHAR'],
  ...EVENT_STRINGS.map(([c]) => [c, 'VARCHAR'] as const),
  ['variant', 'TINYINT'],
] as const
/** Conversions copied into DuckDB per transaction. */
const CONVERSIONS_CHUNK = 50_000

/** Per level, the instant (ms) up to which its rollup rows are complete. */
export interface Rolled {
  hour: number
  day: number
  week: number
  /** The pair rows of all links (stats.rollup.ts PAIRS) are complete up to here (readers; 0: not yet). */
  pairDay?: number
}

/**
 * Rollup rows are appended hour by hour, so every row group holds every scope: a link's year
 * (or a member's) read all of stats_day. Every RECLUSTER_DAYS of rolled-up days the tables are
 * rewritten in (scope, dim, t) order, so DuckDB's zone maps skip to a scope's row groups; the
 * rows appended since then are the only ones read whole.
 */
const RECLUSTER_DAYS = 7

/** Compaction waits this long after an hour ends, so a visit still held in memory is rarely late. */
const COMPACT_LAG_MS = 90_000

/** The scopes each event is summed into (stats.rollup.ts): SQL for the scope number, and a join. */
const SCOPES: { kind: ScopeKind; scope: string; join: string }[] = [
  { kind: 'all', scope: '0', join: '' },
  { kind: 'group', scope: '-e.owner', join: '' },
  { kind: 'group', scope: '-e.ltype', join: '' },
  { kind: 'link', scope: 'e.link_seq', join: '' },
  { kind: 'busy', scope: 'e.link_seq', join: 'JOIN stats_busy_links b ON b.seq = e.link_seq' },
]

const SCANS = 'sum(CASE WHEN e.scan THEN e.n ELSE 0 END)'

/** The pair rows of all links (stats.rollup.ts PAIRS) for the days of the events matching `where` (over `e`). */
const pairInserts = (where: string) =>
  PAIRS.map(
    (p) => `INSERT INTO stats_pair_day SELECT 0, ${p.dim}, e."at" // ${DAY} AS t, coalesce(e.${p.first}, ''), coalesce(e.${p.second}, ''), sum(e.n), ${SCANS}
      FROM events e WHERE ${where} GROUP BY ALL ORDER BY t`,
  )

/** Rollup rows of `level` from the events matching `where` (over `e`): one SELECT per scope kind and dim. */
function rollupSelects(level: Level, where: string): string[] {
  const out: string[] = []
  for (const s of SCOPES)
    for (const dim of dimsKept(s.kind, level))
      out.push(
        `SELECT ${s.scope} AS scope, ${dim} AS dim, e."at" // ${level.ms} AS t, ${valueSql(dim, 'chr')} AS value, sum(e.n) AS clicks, ${SCANS} AS scans
         FROM events e ${s.join} WHERE ${where} GROUP BY ALL`,
      )
  return out
}

/**
 * The same rows appended to the level's table (reads sum them); at the day level also the pair
 * rows of the events `pairsWhere` (over `e`) keeps: a store rolled up before pairs existed gets
 * the earlier days' from its backfill, and only the days it has not reached yet are left to it.
 */
const rollupInserts = (level: Level, where: string, pairsWhere: string) => [
  ...rollupSelects(level, where).map((sql) => `INSERT INTO ${level.table} ${sql} ORDER BY 3`),
  ...(level === LEVEL_DAY ? pairInserts(`${where} AND ${pairsWhere}`) : []),
]

/**
 * Days of pair rows one backfill step adds, in one transaction: writes and roll-ups take their
 * turn between steps. In one transaction, the backfill of a 100M-event year took 58 s on a
 * quiet machine, and every write waited behind it, so the writer's watchdog (60 s) could end
 * the thread and the backfill with it, to start again at the next open.
 */
const PAIR_BACKFILL_DAYS = 7

/** Days of events one step of the rewrite of a file's NULLs updates (~0.2-0.4 s at 10M events a year). */
const NULLS_REWRITE_DAYS = 7
/** That rewrite, of the events a step's condition (appended) keeps: their NULL strings as '' (SCHEMA). */
const REWRITE_NULLS = `UPDATE events SET ${EVENT_STRINGS.map(([c]) => `${c} = coalesce(${c}, '')`).join(', ')}
  WHERE (${EVENT_STRINGS.map(([c]) => `${c} IS NULL`).join(' OR ')})`

/** The rollup limit of a level. */
const limitOf = (level: Level, r: Rolled) => (level.ms >= WEEK ? r.week : level.ms >= DAY ? r.day : r.hour)

/** Integers of an `IN ?` list written into the SQL at most (bindArgs). */
const INLINE_IN_MAX = 1000

/** A statement's `?` arguments: integers inline (so DuckDB prunes by its zone maps), as are integer lists after `IN `; strings and other lists as parameters. */
export function bindArgs(sql: string, args: readonly unknown[]): { text: string; params: unknown[] } {
  const parts = sql.split('?')
  if (parts.length - 1 !== args.length) throw new Error(`statement has ${parts.length - 1} placeholders for ${args.length} arguments`)
  const params: unknown[] = []
  let text = parts[0]!
  for (let i = 0; i < args.length; i++) {
    const a = args[i]
    if (typeof a === 'number') {
      if (!Number.isSafeInteger(a)) throw new Error(`not an integer argument: ${a}`)
      text += String(a)
    } else if (Array.isArray(a) && text.endsWith(' IN ')) {
      // `x IN ?` with a list of integers (a scope's links): up to INLINE_IN_MAX, a literal list, which DuckDB hashes
      // (a tag's ~400 links by country over a year of 100M events: 561 → 470 ms against `IN (SELECT unnest($n))`);
      // longer, that (a big member's links per link over 30 days, in several parts: 66-70 ms, inline 96-100).
      if (!a.every((n) => Number.isSafeInteger(n))) throw new Error('not a list of integers')
      if (a.length <= INLINE_IN_MAX) text += `(${a.length ? a.join(',') : 'NULL'})`
      else {
        params.push(a)
        text += `(SELECT unnest($${params.length}))`
      }
    } else {
      params.push(a)
      text += `$${params.length}`
    }
    text += parts[i + 1]!
  }
  return { text, params }
}

export interface EventsEngineOptions {
  /** The DuckDB file (':memory:' in tests). */
  path: string
  /** Where a compiled binary puts libduckdb.so. */
  dataDir: string
  memoryLimit?: string
  threads?: number
  /** Reader connections (statistics queries at once). */
  readers?: number
  busyLinkClicks?: number
  now?: () => number
  /** Tests: after a batch's events committed, before its counters. */
  afterEventsCommitted?: (batch: number) => void
  /** Tests: rows per chunk of an upgrade's move (100,000). */
  importChunkRows?: number
  /** Tests: awaited after each chunk of an upgrade's move committed (writes wait meanwhile; reads do not). */
  afterImportChunk?: (copiedUpToId: number) => Promise<void> | void
  /** Days of pair rows per step of a backfill (PAIR_BACKFILL_DAYS). */
  pairBackfillDays?: number
  /** Tests: awaited after each step of a pair backfill committed (`to`: the day it reached); a throw stops the backfill there. */
  afterPairBackfillStep?: (to: number) => Promise<void> | void
  /** Tests: awaited after each step of the rewrite of a file's NULLs committed (`to`: where it reached); a throw stops it there. */
  afterNullsRewriteStep?: (to: number) => Promise<void> | void
  /** Tests: awaited once a statistics snapshot has begun, before its reads. */
  afterSnapshotBegun?: (legacy: boolean) => Promise<void> | void
  /**
   * How a batch's events enter DuckDB: its Appender (default), or a CSV file read by `read_csv`
   * (the first way; kept for the ingest benchmark's A/B, scripts/bench/events-ingest.ts).
   */
  ingest?: 'appender' | 'csv'
  /**
   * DuckDB's checkpoint_threshold (its default 16MB when unset): the WAL size at which a commit
   * also checkpoints. Under a steady click load most of a batch's time is that checkpoint
   * (scripts/bench/events-ingest.ts); a larger one costs memory and a longer WAL replay after a kill -9.
   */
  checkpointThreshold?: string
  log?: (message: string, fields: Record<string, unknown>) => void
}

export interface ReadTx {
  /**
   * The store is moving the previous release's events out of SQLite (an upgrade): until it is
   * done, statistics are answered by the SQLite rollups, which the recorder keeps writing.
   */
  legacy?: boolean
  rolled: Rolled
  /** Stops the statement running now (a deadline): it fails. */
  interrupt(): void
  /** Rows of each statement, as plain objects (numbers cast to DOUBLE by the SQL). */
  run(statements: { sql: string; args: readonly unknown[] }[]): Promise<Record<string, unknown>[][]>
}

export type EventsEngine = Awaited<ReturnType<typeof openEventsEngine>>

/** Opens (and creates) the events file, recovers an interrupted batch, and rolls up closed hours. */
export async function openEventsEngine(db: Database, opts: EventsEngineOptions) {
  const api = await loadDuckDb(opts.dataDir)
  const instance: DuckDBInstance = await api.DuckDBInstance.create(opts.path, {
    memory_limit: opts.memoryLimit ?? '256MB',
    threads: String(opts.threads ?? 2),
    ...(opts.checkpointThreshold ? { checkpoint_threshold: opts.checkpointThreshold } : {}),
    // Spilling a big aggregation beside the data rather than in /tmp.
    ...(opts.path === ':memory:' ? {} : { temp_directory: `${opts.path}.tmp` }),
  })
  const writer = await instance.connect()
  await writer.run(SCHEMA)
  const now = opts.now ?? Date.now
  const busyAt = opts.busyLinkClicks ?? BUSY_LINK_CLICKS
  const log = opts.log ?? (() => {})
  const csvPath = opts.path === ':memory:' ? `/tmp/shortlink-events-${process.pid}-${Math.random().toString(36).slice(2)}.csv` : `${opts.path}.batch.csv`

  const meta = async (c: DuckDBConnection) => {
    const rows = (await c.runAndReadAll('SELECT key, value::DOUBLE AS value FROM events_meta')).getRowObjectsJS() as { key: string; value: number }[]
    const get = (k: string) => rows.find((r) => r.key === k)!.value
    const day = get('rolled_day')
    const pairDay = rows.find((r) => r.key === 'pairs')?.value === 1 ? day : 0
    return { batch: get('batch'), rolled: { hour: get('rolled_hour'), day, week: get('rolled_week'), pairDay } as Rolled }
  }
  let { batch: lastBatch, rolled } = await meta(writer)
  /** An `events_meta` value, undefined when its key is absent. */
  const metaValue = async (key: string): Promise<number | undefined> =>
    ((await writer.runAndReadAll('SELECT value::DOUBLE AS v FROM events_meta WHERE key = $1', [key])).getRowObjectsJS()[0] as { v: number } | undefined)?.v
  // Pair rows came after stores were rolled up: such a store gets them for the days rolled up before
  // this open in the background (pairsFrom: the roll-ups and late events add them from there on).
  // Pair rows made for another set of pairs (stats.rollup.ts PAIRS_VERSION; none: the first set) are dropped and all
  // backfilled again below, readers answering from raw events meanwhile.
  if ((await metaValue('pairs_version')) !== PAIRS_VERSION)
    await inWriterTransaction(async () => {
      await writer.run('DELETE FROM stats_pair_day')
      await writer.run(`UPDATE events_meta SET value = ${rolled.day === 0 ? 1 : 0} WHERE key = 'pairs'`)
      await writer.run("UPDATE events_meta SET value = 0 WHERE key = 'pairs_backfilled_to'")
      await writer.run(`INSERT OR REPLACE INTO events_meta VALUES ('pairs_version', ${PAIRS_VERSION})`)
    })
  const pairsState = await metaValue('pairs')
  if (pairsState === undefined) await writer.run(`INSERT INTO events_meta VALUES ('pairs', ${rolled.day === 0 ? 1 : 0})`)
  let pairsFrom = pairsState === 1 || (pairsState === undefined && rolled.day === 0) ? 0 : rolled.day
  /** The backfill's pair rows cover the days before this (from the first event's day): late events there add their own. */
  let pairsBackfilledTo = (await metaValue('pairs_backfilled_to'))!
  /** The events whose pair rows a roll-up or a late batch adds itself (the backfill adds the others). */
  const pairsWhere = () => (pairsFrom === 0 ? 'TRUE' : `(e."at" >= ${Math.trunc(pairsFrom)} OR e."at" < ${Math.trunc(pairsBackfilledTo)})`)
  /** The latest event time stored: hours after it are not rolled up yet (a bulk load of the past stays on the fast path). */
  let latestAt = ((await writer.runAndReadAll('SELECT coalesce(max("at"), 0)::DOUBLE AS t FROM events')).getRowObjectsJS()[0] as { t: number }).t
  // A file written before unknown values were '' (SCHEMA) holds NULLs in the events up to its latest one: rewritten in
  // the background from its first day on (nulls_rewritten_to), so its old row groups group as fast as new ones.
  /** At the first open by a version that writes '': where the NULLs end and where their rewrite begins (nothing when empty). */
  const noteNullsToRewrite = async (): Promise<number> => {
    const first = ((await writer.runAndReadAll('SELECT min("at")::DOUBLE AS t FROM events')).getRowObjectsJS()[0] as { t: number | null }).t
    const until = first === null ? 0 : latestAt + 1
    await writer.run(`INSERT INTO events_meta VALUES ('nulls_until', ${until}), ('nulls_rewritten_to', ${first === null ? 0 : Math.floor(first / DAY) * DAY})`)
    return until
  }
  const nullsUntil = (await metaValue('nulls_until')) ?? (await noteNullsToRewrite())
  let nullsRewrittenTo = (await metaValue('nulls_rewritten_to'))!

  // SQLite: the links' groups (numbered once per owner and type), counters and the batch number.
  const linkOf = db.query<{ user_id: string; link_type: string }, [number]>('SELECT user_id, link_type FROM links WHERE seq = ?')
  const addGroup = db.query('INSERT OR IGNORE INTO stats_groups (name) VALUES (?)')
  const groupNum = db.query<{ num: number }, [string]>('SELECT num FROM stats_groups WHERE name = ?')
  const bump = db.query('UPDATE links SET clicks = clicks + ?, last_clicked = max(coalesce(last_clicked, 0), ?) WHERE seq = ?')
  const readBatch = db.query<{ value: string }, []>("SELECT value FROM kv WHERE key = 'events_batch'")
  const writeBatch = db.query("INSERT INTO kv (key, value) VALUES ('events_batch', ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value")
  const groupsOf = new Map<number, [number, number]>()
  const numOf = (name: string) => {
    addGroup.run(name)
    return groupNum.get(name)!.num
  }
  function groups(seq: number): [number, number] {
    let g = groupsOf.get(seq)
    if (!g) {
      const link = linkOf.get(seq)
      g = [numOf(link?.user_id ?? ''), numOf(`type:${link?.link_type ?? ''}`)]
      if (groupsOf.size > 1_000_000) groupsOf.clear()
      groupsOf.set(seq, g)
    }
    return g
  }
  const applyCounters = db.transaction((rows: ClickEvent[], batch: number) => {
    const perLink = new Map<number, { n: number; last: number }>()
    for (const e of rows) {
      const agg = perLink.get(e.linkSeq)
      if (agg) {
        agg.n += e.n
        agg.last = Math.max(agg.last, e.at)
      } else perLink.set(e.linkSeq, { n: e.n, last: e.at })
    }
    for (const [seq, { n, last }] of perLink) bump.run(n, last, seq)
    // The batch's link.clicked events (webhooks, live streams) are written with its counters, so they exist exactly when its clicks do.
    appendClickEvents(db, rows)
    writeBatch.run(String(batch))
  })

  /** Events of batches after `after`, as the recorder wrote them (for counters derived after a crash). */
  async function eventsOfBatches(after: number): Promise<{ batch: number; rows: ClickEvent[] }[]> {
    const reader = await writer.runAndReadAll(
      `SELECT batch::DOUBLE AS batch, "at"::DOUBLE AS "at", link_seq, scan, n, tracked, ${EVENT_STRINGS.map(([c]) => c).join(', ')} FROM events WHERE batch > ${Math.trunc(after)} ORDER BY batch`,
    )
    const byBatch = new Map<number, ClickEvent[]>()
    for (const r of reader.getRowObjectsJS() as Record<string, unknown>[]) {
      const e = {
        linkSeq: r.link_seq as number,
        domain: '',
        at: r.at as number,
        scan: r.scan as boolean,
        n: r.n as number,
        tracked: (r.tracked as string | null) ?? null,
      } as ClickEvent
      for (const [column, field] of EVENT_STRINGS) (e as unknown as Record<string, unknown>)[field] = r[column] || null
      const list = byBatch.get(r.batch as number) ?? []
      list.push(e)
      byBatch.set(r.batch as number, list)
    }
    return [...byBatch].map(([batch, rows]) => ({ batch, rows }))
  }

  /**
   * Counters of batches whose events committed and whose counters did not (the process died in
   * between, or SQLite refused them): derived from their events, once, in batch order.
   */
  function countersApplied(): number {
    const v = readBatch.get()?.value
    return v === undefined ? Number.NaN : Number(v)
  }
  async function catchUpCounters(): Promise<void> {
    const applied = countersApplied()
    if (Number.isNaN(applied)) {
      writeBatch.run(String(lastBatch))
      return
    }
    if (applied >= lastBatch) return
    for (const { batch, rows } of await eventsOfBatches(applied)) applyCounters.immediate(rows, batch)
    writeBatch.run(String(lastBatch))
    log('click counters derived from stored events', { fromBatch: applied + 1, toBatch: lastBatch })
  }
  await catchUpCounters()

  // The previous release kept events in SQLite (click_events_compact and its rollups): they are
  // moved here in chunks, in the background, oldest first (`imported_id` records how far, in the
  // chunk's transaction). Until the last chunk the recorder writes the SQLite way and statistics
  // read the SQLite rollups; then both switch here and the SQLite tables are emptied.
  const legacyLast = () => db.query<{ id: number | null }, []>('SELECT max(id) AS id FROM click_events_compact').get()?.id ?? 0
  let importedId = (await metaValue('imported_id'))!
  let importing = legacyLast() > importedId
  // A journal chunk's mark goes with its rows into SQLite's kv here (click-journal.ts), as it did before the engine.
  const legacyWrite = importing ? markedSqliteWriter(db, createEventWriter(db, { busyLinkClicks: busyAt })) : null
  const IMPORT_CHUNK = opts.importChunkRows ?? 100_000
  const legacyChunk = db.query<Record<string, unknown>, [number, number]>(
    `SELECT e.id, e.link_seq, e.at, e.scan, e.n, ${EVENT_STRINGS.map(([c]) => `e.${c}`).join(', ')}, l.user_id, l.link_type
     FROM click_events e LEFT JOIN links l ON l.seq = e.link_seq WHERE e.id > ? ORDER BY e.id LIMIT ?`,
  )

  /** One chunk of the previous release's events; true when none were left. */
  async function importChunk(): Promise<boolean> {
    const rows = legacyChunk.all(importedId, IMPORT_CHUNK)
    if (rows.length) {
      const events = rows.map((r) => {
        const e = { linkSeq: r.link_seq as number, domain: '', at: r.at as number, scan: r.scan === 1, n: r.n as number } as ClickEvent
        for (const [column, field] of EVENT_STRINGS) (e as unknown as Record<string, unknown>)[field] = r[column] ?? null
        return e
      })
      const last = rows[rows.length - 1]!.id as number
      // Batch 0: their counters are in SQLite already; no late rows: nothing is rolled up before the end.
      await appendEvents(events, 0, `UPDATE events_meta SET value = ${last} WHERE key = 'imported_id'`)
      importedId = last
      await opts.afterImportChunk?.(last)
    }
    const total = legacyLast()
    if (rows.length === IMPORT_CHUNK) {
      log('moving click events into the events store', {
        copiedUpToId: importedId,
        lastId: total,
        percent: Math.floor((100 * importedId) / Math.max(total, 1)),
      })
      return false
    }
    // Caught up (writes wait behind this chunk): switch and roll everything up. SQLite's tables are
    // emptied after this (importAll), once no snapshot that was told to read them is open.
    importing = false
    await compactNow()
    log('click events moved into the events store', { lastId: importedId })
    return true
  }
  /**
   * Snapshots begun while the move was under way (`legacy`: they read SQLite's rollups, in this
   * thread or in the main one after the worker answered) and not ended yet: the previous tables
   * are kept until they end.
   */
  let legacyReaders = 0
  let legacyDrained: (() => void) | null = null
  const legacyReadsEnded = () =>
    legacyReaders === 0
      ? Promise.resolve()
      : new Promise<void>((resolve) => {
          log("the previous release's click tables are emptied once the statistics reads of them end", { reads: legacyReaders })
          legacyDrained = resolve
        })
  /**
   * The previous release's event and rollup tables emptied in short transactions (the API's
   * writes to SQLite wait at most one of them, never the whole delete), then VACUUM: the file
   * keeps only the records, its free pages go back to the disk.
   */
  async function emptyLegacyTables(): Promise<void> {
    const keyed: [string, string][] = [
      ['click_events_compact', 'rowid'],
      ['stats_values', 'rowid'],
      ['stats_busy_links', 'rowid'],
      ...(['stats_quarter', 'stats_hour', 'stats_day', 'stats_week'] as const).map((t) => [t, '(scope, dim, t, value)'] as [string, string]),
    ]
    for (const [table, key] of keyed) {
      const chunk = db.query(`DELETE FROM ${table} WHERE ${key} IN (SELECT ${key.replace(/[()]/g, '')} FROM ${table} LIMIT 20000)`)
      // Closing: the rest is emptied at the next start (`leftover`).
      while (!closing && chunk.run().changes > 0) await Bun.sleep(1)
    }
    if (closing) return
    db.run('VACUUM')
    // VACUUM went through the WAL: give its pages back now, not at the next automatic checkpoint.
    db.run('PRAGMA wal_checkpoint(TRUNCATE)')
  }
  const importAll = async () => {
    while (!(await serial(importChunk))) {}
    await legacyReadsEnded()
    await serial(emptyLegacyTables)
    log("the previous release's click tables emptied", {})
  }

  const csvField = (v: string | null) => (v === null ? '' : `"${v.replaceAll('"', '""')}"`)
  const csvColumns = [
    '"at": \'BIGINT\'',
    "link_seq: 'INTEGER'",
    "owner: 'INTEGER'",
    "ltype: 'INTEGER'",
    "scan: 'BOOLEAN'",
    "n: 'INTEGER'",
    "batch: 'BIGINT'",
    ...EVENT_STRINGS.map(([c]) => `${c}: 'VARCHAR'`),
    "tracked: 'VARCHAR'",
    "variant: 'TINYINT'",
  ].map((c) => `'${c.split(':')[0]!.replaceAll('"', '')}': ${c.split(': ')[1]}`)
  const loadCsv = `INSERT INTO events SELECT * FROM read_csv('${csvPath.replaceAll("'", "''")}', header = false, auto_detect = false,
    columns = {${csvColumns.join(', ')}}, nullstr = '', allow_quoted_nulls = false, quote = '"', escape = '"', delim = ',', new_line = '\\n')`

  /** The rows through the Appender, inside the caller's transaction (its flush appends there). */
  async function appendRows(rows: ClickEvent[], batch: number): Promise<void> {
    const appender = await writer.createAppender('events')
    try {
      const b = BigInt(batch)
      for (const e of rows) {
        const [owner, ltype] = groups(e.linkSeq)
        appender.appendBigInt(BigInt(Math.trunc(e.at)))
        appender.appendInteger(Math.trunc(e.linkSeq))
        appender.appendInteger(owner)
        appender.appendInteger(ltype)
        appender.appendBoolean(Boolean(e.scan))
        appender.appendInteger(Math.trunc(e.n))
        appender.appendBigInt(b)
        // An unknown value is stored as '' (see SCHEMA).
        for (const [, field] of EVENT_STRINGS) appender.appendVarchar((e[field] as string | null) ?? '')
        // The columns SCHEMA adds to older files, in its order: the visits' click ids, then the A/B variant (null outside a test).
        if (e.tracked) appender.appendVarchar(e.tracked)
        else appender.appendNull()
        if (e.variant == null) appender.appendNull()
        else appender.appendTinyInt(Math.trunc(e.variant))
        appender.endRow()
      }
      appender.flushSync()
    } finally {
      appender.closeSync()
    }
  }

  /** The rows as a CSV file that DuckDB reads on its own threads (the first way; see `ingest`). */
  async function writeCsv(rows: ClickEvent[], batch: number): Promise<void> {
    const lines: string[] = []
    for (const e of rows) {
      const [owner, ltype] = groups(e.linkSeq)
      let line = `${Math.trunc(e.at)},${Math.trunc(e.linkSeq)},${owner},${ltype},${e.scan},${Math.trunc(e.n)},${batch}`
      for (const [, field] of EVENT_STRINGS) line += `,${csvField((e[field] as string | null) ?? '')}`
      line += `,${csvField(e.tracked ?? null)}`
      line += e.variant == null ? ',' : `,${Math.trunc(e.variant)}`
      lines.push(line)
    }
    await Bun.write(csvPath, `${lines.join('\n')}\n`)
  }

  /** The events in one DuckDB transaction with their late rollup rows and the batch number. */
  async function appendEvents(rows: ClickEvent[], batch: number, alsoSql = ''): Promise<void> {
    const viaCsv = opts.ingest === 'csv'
    let minAt = Number.POSITIVE_INFINITY
    for (const e of rows) {
      groups(e.linkSeq) // numbered before the transaction: a refusing store fails the batch here
      if (e.at < minAt) minAt = e.at
      if (e.at > latestAt) latestAt = e.at
    }
    if (viaCsv) await writeCsv(rows, batch)
    await writer.run('BEGIN TRANSACTION')
    try {
      if (viaCsv) await writer.run(loadCsv)
      else await appendRows(rows, batch)
      // Events of time already rolled up: their rows too (reads below the limits read rollups only).
      if (alsoSql) await writer.run(alsoSql)
      for (const level of LEVELS)
        if (batch > 0 && minAt < limitOf(level, rolled))
          for (const sql of rollupInserts(level, `e.batch = ${batch} AND e."at" < ${limitOf(level, rolled)}`, pairsWhere())) await writer.run(sql)
      if (batch > 0) await writer.run(`UPDATE events_meta SET value = ${batch} WHERE key = 'batch'`)
      await writer.run('COMMIT')
    } catch (e) {
      await writer.run('ROLLBACK').catch(() => {})
      throw e
    } finally {
      if (viaCsv)
        try {
          unlinkSync(csvPath)
        } catch {}
    }
  }

  /** Rolls up the hours (and days, 7-day blocks) closed since the last time, and promotes busy links. */
  async function compactNow(at = now()): Promise<boolean> {
    if (importing || closing) return false
    maintaining = true
    try {
      return await compactOnce(at)
    } finally {
      maintaining = false
    }
  }
  async function compactOnce(at: number): Promise<boolean> {
    const hour = Math.min(Math.floor((at - COMPACT_LAG_MS) / HOUR), Math.floor(latestAt / HOUR)) * HOUR
    const next: Rolled = hour > rolled.hour ? { hour, day: Math.floor(hour / DAY) * DAY, week: Math.floor(hour / WEEK) * WEEK } : rolled
    const started = performance.now()
    const busy = new Set(((await writer.runAndReadAll('SELECT seq FROM stats_busy_links')).getRowObjectsJS() as { seq: number }[]).map((r) => r.seq))
    const promoted = db
      .query<{ seq: number }, [number]>('SELECT seq FROM links WHERE clicks >= ?')
      .all(busyAt)
      .map((r) => r.seq)
      .filter((s) => !busy.has(s))
    if (next === rolled && promoted.length === 0) return false
    await writer.run('BEGIN TRANSACTION')
    try {
      for (const level of LEVELS) {
        const [from, to] = [limitOf(level, rolled), limitOf(level, next)]
        if (to > from) for (const sql of rollupInserts(level, `e."at" >= ${from} AND e."at" < ${to}`, pairsWhere())) await writer.run(sql)
      }
      if (promoted.length) {
        const list = `[${promoted.join(',')}]`
        for (const d of DIMENSIONS)
          await writer.run(`INSERT INTO stats_day SELECT e.link_seq, ${d.code}, e."at" // ${DAY}, ${valueSql(d.code, 'chr')}, sum(e.n), ${SCANS}
            FROM events e WHERE e.link_seq IN (SELECT unnest(${list})) AND e."at" < ${next.day} GROUP BY ALL ORDER BY 3`)
        await writer.run(`INSERT INTO stats_busy_links SELECT unnest(${list})`)
      }
      await writer.run(
        `UPDATE events_meta SET value = CASE key WHEN 'rolled_hour' THEN ${next.hour} WHEN 'rolled_day' THEN ${next.day} ELSE ${next.week} END WHERE key IN ('rolled_hour', 'rolled_day', 'rolled_week')`,
      )
      await writer.run('COMMIT')
    } catch (e) {
      await writer.run('ROLLBACK').catch(() => {})
      throw e
    }
    const ms = performance.now() - started
    if (ms > 1000 || next.hour - rolled.hour > DAY)
      log('statistics rolled up', { until: new Date(next.hour).toISOString(), busyLinksAdded: promoted.length, ms: Math.round(ms) })
    rolled = next
    if (rolled.day - reclusteredDay >= RECLUSTER_DAYS * DAY) await recluster()
    return true
  }

  /** `fn`'s statements in one transaction of the writer: committed, or rolled back and thrown. */
  async function inWriterTransaction(fn: () => Promise<void>): Promise<void> {
    await writer.run('BEGIN TRANSACTION')
    try {
      await fn()
      await writer.run('COMMIT')
    } catch (e) {
      await writer.run('ROLLBACK').catch(() => {})
      throw e
    }
  }

  /**
   * One step of the pair rows of the days rolled up before pairs existed: PAIR_BACKFILL_DAYS days
   * in one transaction with how far it came (a restart goes on from there). Readers use raw
   * events until the last step commits. True while days are left.
   */
  async function backfillPairsStep(): Promise<boolean> {
    if (pairsFrom === 0 || closing) return false
    maintaining = true
    let to: number
    try {
      if (pairsBackfilledTo === 0) {
        const first = (await writer.runAndReadAll('SELECT min("at")::DOUBLE AS t FROM events')).getRowObjectsJS()[0] as { t: number | null }
        pairsBackfilledTo = first.t === null ? pairsFrom : Math.min(pairsFrom, Math.floor(first.t / DAY) * DAY)
      }
      const from = pairsBackfilledTo
      to = Math.min(pairsFrom, from + (opts.pairBackfillDays ?? PAIR_BACKFILL_DAYS) * DAY)
      await inWriterTransaction(async () => {
        if (to > from) for (const sql of pairInserts(`e."at" >= ${from} AND e."at" < ${to}`)) await writer.run(sql)
        await writer.run(`UPDATE events_meta SET value = ${to} WHERE key = 'pairs_backfilled_to'`)
        if (to >= pairsFrom) await writer.run("UPDATE events_meta SET value = 1 WHERE key = 'pairs'")
      })
    } finally {
      maintaining = false
    }
    pairsBackfilledTo = to
    await opts.afterPairBackfillStep?.(to)
    if (to < pairsFrom) return true
    pairsFrom = 0
    return false
  }
  /**
   * One step of the rewrite of a file's NULLs as '' (SCHEMA): NULLS_REWRITE_DAYS days of events in
   * one transaction with how far it came. Reads are the same before and after (they take both).
   * True while events are left.
   */
  async function rewriteNullsStep(): Promise<boolean> {
    if (nullsRewrittenTo >= nullsUntil || closing) return false
    maintaining = true
    const from = nullsRewrittenTo
    const to = Math.min(nullsUntil, from + NULLS_REWRITE_DAYS * DAY)
    try {
      await inWriterTransaction(async () => {
        await writer.run(`${REWRITE_NULLS} AND "at" >= ${from} AND "at" < ${to}`)
        await writer.run(`UPDATE events_meta SET value = ${to} WHERE key = 'nulls_rewritten_to'`)
      })
    } finally {
      maintaining = false
    }
    nullsRewrittenTo = to
    await opts.afterNullsRewriteStep?.(to)
    return to < nullsUntil
  }
  const rewriteNulls = async (): Promise<void> => {
    const started = performance.now()
    while (await serial(rewriteNullsStep)) {}
    if (nullsRewrittenTo >= nullsUntil) log("statistics events' unknown values rewritten", { ms: Math.round(performance.now() - started) })
  }

  /** The backfill's steps, each queued behind what was queued during the one before. */
  const backfillPairs = async (): Promise<void> => {
    const started = performance.now()
    while (await serial(backfillPairsStep)) {}
    if (pairsFrom === 0) log('statistics pair rows added for the days rolled up before', { ms: Math.round(performance.now() - started) })
  }

  let reclusteredDay = (await metaValue('reclustered_day'))!
  /** The rollup tables rewritten in (scope, dim, t) order, each in one transaction (readers keep their snapshot). */
  async function recluster(): Promise<void> {
    const started = performance.now()
    for (const table of [...LEVELS.map((l) => l.table), 'stats_pair_day']) {
      if (closing) return
      await inWriterTransaction(async () => {
        await writer.run(`CREATE TABLE ${table}_sorted AS SELECT * FROM ${table} ORDER BY scope, dim, t`)
        await writer.run(`DROP TABLE ${table}`)
        await writer.run(`ALTER TABLE ${table}_sorted RENAME TO ${table}`)
      })
    }
    await writer.run(`UPDATE events_meta SET value = ${rolled.day} WHERE key = 'reclustered_day'`)
    reclusteredDay = rolled.day
    log('statistics rollups reordered by scope', { ms: Math.round(performance.now() - started) })
  }

  /** Closing: no roll-up starts; `maintaining`: one runs now (close interrupts it). */
  let closing = false
  let maintaining = false
  // One write or compaction at a time, in order.
  let chain: Promise<unknown> = Promise.resolve()
  const serial = <T>(fn: () => Promise<T>): Promise<T> => {
    const run = chain.then(fn)
    chain = run.catch(() => {})
    return run
  }

  // Conversions (leads, sales) are recorded in SQLite (their idempotency keys live there) and
  // copied here in order, each chunk in one transaction with the position it reached, so a
  // crash between the two stores copies the rest at the next sync, never one twice.
  const conversionsAfter = db.query<Record<string, unknown>, [number, number]>(
    `SELECT c.at, c.seq, c.kind, c.link_seq, c.scan, c.quantity, c.amount, c.currency, c.click_id, c.event_name, cu.external_id AS customer_external_id, c.invoice_id,
       ${EVENT_STRINGS.map(([col]) => `c.${col}`).join(', ')}, c.variant
     FROM conversions c JOIN customers cu ON cu.id = c.customer_id WHERE c.seq > ? ORDER BY c.seq LIMIT ?`,
  )
  const conversionsCsv = `${csvPath}.conversions.csv`
  const loadConversions = `INSERT INTO conversions SELECT * FROM read_csv('${conversionsCsv.replaceAll("'", "''")}', header = false, auto_detect = false,
    columns = {${CONVERSION_COLUMNS.map(([c, t]) => `'${c}': '${t}'`).join(', ')}}, nullstr = '', quote = '"', escape = '"', delim = ',', new_line = '\\n')`
  let conversionsSeq = (await metaValue('conversions_seq'))!
  async function syncConversionsNow(): Promise<void> {
    for (;;) {
      const rows = conversionsAfter.all(conversionsSeq, CONVERSIONS_CHUNK)
      if (!rows.length) return
      const lines = rows.map((r) =>
        CONVERSION_COLUMNS.map(([c, t]) => {
          const v = r[c]
          if (v === null || v === undefined) return ''
          if (t === 'BOOLEAN') return v ? 'true' : 'false'
          return t === 'VARCHAR' ? csvField(String(v)) : String(Math.trunc(Number(v)))
        }).join(','),
      )
      const last = rows[rows.length - 1]!.seq as number
      await Bun.write(conversionsCsv, `${lines.join('\n')}\n`)
      await writer.run('BEGIN TRANSACTION')
      try {
        await writer.run(loadConversions)
        await writer.run(`UPDATE events_meta SET value = ${Math.trunc(last)} WHERE key = 'conversions_seq'`)
        await writer.run('COMMIT')
      } catch (e) {
        await writer.run('ROLLBACK').catch(() => {})
        throw e
      } finally {
        try {
          unlinkSync(conversionsCsv)
        } catch {}
      }
      conversionsSeq = last
      if (rows.length < CONVERSIONS_CHUNK) return
    }
  }
  await fillConversionVariants()
  await syncConversionsNow()
  let syncQueued: Promise<void> | null = null

  /**
   * Once per file: the variants of conversions copied before DuckDB's conversions had the column
   * (the builds between the A/B tests and the export's variant), from SQLite, which kept them.
   */
  async function fillConversionVariants(): Promise<void> {
    const done = (await writer.runAndReadAll("SELECT count(*)::INTEGER AS n FROM events_meta WHERE key = 'conversions_variant'")).getRowObjectsJS()[0] as {
      n: number
    }
    if (done.n > 0) return
    const rows = db
      .query<{ seq: number; variant: number }, [number]>('SELECT seq, variant FROM conversions WHERE variant IS NOT NULL AND seq <= ? ORDER BY seq')
      .all(conversionsSeq)
    await writer.run('BEGIN TRANSACTION')
    try {
      for (let i = 0; i < rows.length; i += CONVERSIONS_CHUNK) {
        const values = rows
          .slice(i, i + CONVERSIONS_CHUNK)
          .map((r) => `(${Math.trunc(r.seq)}, ${Math.trunc(r.variant)})`)
          .join(', ')
        await writer.run(`UPDATE conversions SET variant = v.variant FROM (VALUES ${values}) AS v(seq, variant) WHERE conversions.seq = v.seq`)
      }
      await writer.run("INSERT INTO events_meta VALUES ('conversions_variant', 1)")
      await writer.run('COMMIT')
    } catch (e) {
      await writer.run('ROLLBACK').catch(() => {})
      throw e
    }
  }

  /** A click journal's mark in the events store (click-journal.ts), or null. */
  async function markOf(journal: string): Promise<number | null> {
    return (await metaValue(journalKey(journal))) ?? null
  }

  /**
   * One batch. With a journal chunk's `mark`, the mark is stored in events_meta in the events'
   * transaction, and a chunk at or below the stored mark is skipped (false): each journal row is
   * stored once; the counters follow from the events (the batch numbers).
   */
  async function writeBatchNow(rows: ClickEvent[], mark?: JournalMark): Promise<boolean> {
    if (!rows.length) return true
    if (importing) return legacyWrite!(rows, mark)
    if (mark && ((await markOf(mark.journal)) ?? -1) >= mark.upTo) return false
    // Counters a failed batch left behind first, so they stay in batch order.
    await catchUpCounters()
    const batch = lastBatch + 1
    await appendEvents(rows, batch, mark ? `INSERT OR REPLACE INTO events_meta VALUES (${sqlString(journalKey(mark.journal))}, ${Math.trunc(mark.upTo)})` : '')
    lastBatch = batch
    opts.afterEventsCommitted?.(batch)
    try {
      applyCounters.immediate(rows, batch)
    } catch (e) {
      // The events are stored: never written again. Their counters follow with the next batch (catchUpCounters).
      log('click counters not written; they follow from the stored events', { batch, error: String(e) })
    }
    // The batch is stored and counted: a roll-up that fails (or is stopped by close) is done again later, never fails it.
    if (Math.min(Math.floor((now() - COMPACT_LAG_MS) / HOUR), Math.floor(latestAt / HOUR)) * HOUR > rolled.hour)
      await compactNow().catch((e) => log('statistics roll-up stopped; it runs again with a later batch', { error: String(e) }))
    return true
  }

  // Readers: a few connections, each request's statements in one transaction (one snapshot).
  const idle: DuckDBConnection[] = []
  const waiting: ((c: DuckDBConnection) => void)[] = []
  let open = 0
  const maxReaders = opts.readers ?? 4
  async function acquire(): Promise<DuckDBConnection> {
    const c = idle.pop()
    if (c) return c
    if (open < maxReaders) {
      open++
      return instance.connect()
    }
    return new Promise((resolve) => waiting.push(resolve))
  }
  function release(c: DuckDBConnection) {
    const next = waiting.shift()
    if (next) next(c)
    else idle.push(c)
  }
  const running = new Set<DuckDBConnection>()

  const snapshotsOpen = new Set<Promise<unknown>>()
  async function snapshotOf<T>(read: (tx: ReadTx) => Promise<T>, legacy: boolean, timeoutMs: number): Promise<T> {
    const c = await acquire()
    running.add(c)
    let timedOut = false
    const timer =
      timeoutMs > 0
        ? setTimeout(() => {
            timedOut = true
            c.interrupt()
          }, timeoutMs)
        : null
    try {
      await c.run('BEGIN TRANSACTION')
      const m = await meta(c)
      await opts.afterSnapshotBegun?.(legacy)
      const tx: ReadTx = {
        legacy,
        rolled: m.rolled,
        interrupt: () => c.interrupt(),
        async run(statements) {
          const out: Record<string, unknown>[][] = []
          for (const s of statements) {
            const { text, params } = bindArgs(s.sql, s.args)
            // Typed: an empty list has no element type of its own.
            const values = params.map((p) => (Array.isArray(p) ? api.listValue(p.map((x) => BigInt(x))) : p))
            const types = params.map((p) => (Array.isArray(p) ? api.LIST(api.BIGINT) : api.VARCHAR))
            out.push((await c.runAndReadAll(text, values as never, types)).getRowObjectsJS() as Record<string, unknown>[])
          }
          return out
        },
      }
      return await read(tx)
    } catch (e) {
      if (timedOut) throw new QueryTimeoutError(timeoutMs)
      throw e
    } finally {
      if (timer) clearTimeout(timer)
      await c.run('COMMIT').catch(() => c.run('ROLLBACK').catch(() => {}))
      running.delete(c)
      release(c)
    }
  }

  // Hours closed while the server was down are rolled up in the background: the engine answers meanwhile (raw after the limits).
  if (now() - COMPACT_LAG_MS >= rolled.hour + HOUR) void serial(() => compactNow()).catch((e) => log('statistics roll-up failed', { error: String(e) }))
  const pairsBackfilled =
    pairsFrom > 0 ? backfillPairs().catch((e) => log('statistics pair rows not added; again at the next start', { error: String(e) })) : Promise.resolve()
  // After the pair rows (whose questions it does not speed up).
  const nullsRewritten =
    nullsRewrittenTo < nullsUntil
      ? pairsBackfilled.then(rewriteNulls).catch((e) => log("statistics events' unknown values not rewritten; again at the next start", { error: String(e) }))
      : Promise.resolve()
  // A move that switched and was stopped before SQLite's tables were emptied: emptied now.
  const leftover = !importing && db.query('SELECT 1 FROM click_events_compact UNION ALL SELECT 1 FROM stats_week LIMIT 1').get() !== null
  const imported = importing
    ? importAll().catch((e) => log('moving click events into the events store failed; it goes on at the next start', { error: String(e) }))
    : leftover
      ? serial(emptyLegacyTables).catch((e) => log("emptying the previous release's click tables failed", { error: String(e) }))
      : Promise.resolve()
  if (importing) log('moving click events into the events store', { copiedUpToId: importedId, lastId: legacyLast(), percent: 0 })

  return {
    write: (rows: ClickEvent[], mark?: JournalMark) => serial(() => writeBatchNow(rows, mark)),
    /** The position up to which click journal `journal` is stored: here, or in SQLite's kv (written while moving in an upgrade). */
    journalMark: (journal: string) =>
      serial(async () => {
        const here = await markOf(journal)
        const before = sqliteJournalMark(db, journal)
        return here === null && before === null ? null : Math.max(here ?? -1, before ?? -1)
      }),
    /** Copies the conversions SQLite recorded since the last copy (POST /track/lead, /track/sale call it after each). */
    // Calls made while one is waiting its turn share it: it starts after their rows committed.
    syncConversions: () =>
      (syncQueued ??= serial(async () => {
        syncQueued = null
        await syncConversionsNow()
      })),
    /** Settles when the pair backfill of this open has ended (done, failed or stopped), at once when none ran. */
    pairsBackfilled: () => pairsBackfilled,
    /** Settles when a file written before unknown values were '' has none left as NULL (or the rewrite stopped). */
    nullsRewritten: () => nullsRewritten,
    /** Rolls up closed hours now (benchmarks, after a bulk load); false when nothing was due. */
    compact: (at?: number) => serial(() => compactNow(at)),
    /** Runs `read` in one snapshot of the events; `timeoutMs` interrupts its statements past it. */
    async snapshot<T>(read: (tx: ReadTx) => Promise<T>, timeoutMs = 0): Promise<T> {
      // Decided before the snapshot begins: once the move has switched, DuckDB's snapshot holds
      // every moved event (the last chunk committed before the switch). Decided after it began, a
      // snapshot taken before the last chunk committed read DuckDB without it (empty answers).
      const legacy = importing
      if (legacy) legacyReaders++
      const running = snapshotOf(read, legacy, timeoutMs)
      snapshotsOpen.add(running)
      try {
        return await running
      } finally {
        snapshotsOpen.delete(running)
        if (legacy && --legacyReaders === 0) legacyDrained?.()
      }
    },
    /** The connection a streaming read (the raw export) holds for as long as it reads. */
    async withConnection<T>(fn: (c: DuckDBConnection) => Promise<T>): Promise<T> {
      const c = await acquire()
      running.add(c)
      try {
        return await fn(c)
      } finally {
        running.delete(c)
        release(c)
      }
    },
    rolled: () => rolled,
    lastBatch: () => lastBatch,
    /** Settles when the previous release's events are all here (at once when there were none). */
    imported: () => imported,
    /**
     * A consistent copy of the events store at `dest` (a new file), taken between two batches:
     * the writer waits, DuckDB checkpoints (its file then holds every committed batch), the file
     * is copied, and `whilePaused` runs before writing resumes (the SQLite copy, so both hold
     * exactly the same batches). Returns the copy's size and last batch.
     */
    backup: (dest: string, whilePaused?: () => Promise<void> | void) =>
      serial(async () => {
        if (opts.path === ':memory:') throw new Error('an in-memory events store has no file to copy')
        if (existsSync(dest)) throw new Error(`${dest} exists`)
        await writer.run('CHECKPOINT')
        copyFileSync(opts.path, dest, constants.COPYFILE_EXCL)
        await whilePaused?.()
        return { bytes: statSync(dest).size, batch: lastBatch }
      }),
    /** Writes the export of `spec` into the file `dest` (DuckDB's COPY, its own threads; a big sort spills to disk). */
    exportTo: (spec: ResolvedExportSpec, dest: string) =>
      (async () => {
        const c = await acquire()
        const table = `export_links_${Math.random().toString(36).slice(2)}`
        const csv = `${dest}.links.csv`
        try {
          const links = exportLinks(db, spec.seqs)
          await Bun.write(
            csv,
            `seq,id,domain,key\n${links.map((l) => [l.seq, l.id, l.domain, l.key].map((v) => `"${String(v).replaceAll('"', '""')}"`).join(',')).join('\n')}\n`,
          )
          await c.run(
            `CREATE TEMP TABLE ${table} AS SELECT * FROM read_csv(${sqlString(csv)}, header = true, auto_detect = false, columns = {'seq': 'INTEGER', 'id': 'VARCHAR', 'domain': 'VARCHAR', 'key': 'VARCHAR'}, quote = '"', escape = '"')`,
          )
          await c.run(`COPY (${duckExportSelect(spec, table)}) TO ${sqlString(dest)} ${duckCopyOptions(spec.format)}`)
        } finally {
          await c.run(`DROP TABLE IF EXISTS ${table}`).catch(() => {})
          try {
            unlinkSync(csv)
          } catch {}
          release(c)
        }
      })(),
    /** Runs `fn` on the writer connection between batches (backups, imports). */
    exclusive: <T>(fn: (c: DuckDBConnection) => Promise<T>) => serial(() => fn(writer)),
    api,
    async close(): Promise<void> {
      // A roll-up or re-ordering in progress is derived data: stopped (rolled back, done again at the
      // next start) rather than waited for; a batch of clicks in progress is waited for.
      closing = true
      if (maintaining) writer.interrupt()
      await serial(async () => {})
      for (const c of running) c.interrupt()
      for (const c of idle) c.closeSync()
      // A snapshot's COMMIT still running on a connection closed under it fails in the addon's callback (an abort).
      await Promise.allSettled(snapshotsOpen)
      await writer.run('CHECKPOINT').catch(() => {})
      writer.closeSync()
      instance.closeSync()
    },
  }
}

/** A statistics query still running at its deadline. */
export class QueryTimeoutError extends Error {
  constructor(readonly ms: number) {
    super(`statistics query took longer than ${ms} ms`)
  }
}

/**
 * What an events store file holds (its events, their clicks, its last batch number), opened
 * read-only by a process that does not serve it: a backup's staged copy, a restored data dir.
 * Throws when the file is not an events store.
 */
export async function inspectEventsStore(path: string, dataDir: string): Promise<{ events: number; clicks: number; batch: number }> {
  const api = await loadDuckDb(dataDir)
  const instance = await api.DuckDBInstance.create(path, { access_mode: 'READ_ONLY', threads: '1', memory_limit: '128MB' })
  try {
    const c = await instance.connect()
    try {
      const [counts] = (
        await c.runAndReadAll(
          "SELECT count(*)::DOUBLE AS events, coalesce(sum(n), 0)::DOUBLE AS clicks, (SELECT value::DOUBLE FROM events_meta WHERE key = 'batch') AS batch FROM events",
        )
      ).getRowObjectsJS() as { events: number; clicks: number; batch: number | null }[]
      return { events: counts!.events, clicks: counts!.clicks, batch: counts!.batch ?? 0 }
    } finally {
      c.closeSync()
    }
  } finally {
    instance.closeSync()
  }
}

/**
 * The restore side of `backup`: puts a copy of the events store at `path` (the data dir's
 * events.duckdb, which must not exist yet) and checks it opens; returns its events and clicks.
 * For `shortlink restore`, with no server running.
 */
export async function restoreEventsStore(copy: string, path: string, dataDir: string): Promise<{ events: number; clicks: number; batch: number }> {
  if (existsSync(path)) throw new Error(`${path} exists; restore into an empty data dir`)
  copyFileSync(copy, path, constants.COPYFILE_EXCL)
  try {
    return await inspectEventsStore(path, dataDir)
  } catch (e) {
    unlinkSync(path)
    throw new Error(`${copy} is not a copy of an events store: ${(e as Error).message}`)
  }
}

/**
 * The events engine's tables for `migrate-store` (ExternalTables of src/store/pg/copy.ts): the
 * events with their A/B variants, the click ids of conversion tracking (`tracked_clicks`: every one,
 * with its visit's dimensions and variant), and the rollups complete to the last event (the
 * rolled-up rows plus those of the events after them, one row per key as PostgreSQL keeps them). Null when the store has no
 * events file. Opened read-only: the data dir is locked and no server runs on it.
 */
export async function openEventsCopySource(path: string, dataDir: string) {
  if (!existsSync(path)) return null
  const api = await loadDuckDb(dataDir)
  const instance = await api.DuckDBInstance.create(path, { access_mode: 'READ_ONLY', threads: '2', memory_limit: '512MB' })
  const c = await instance.connect()
  const one = async (sql: string) => ((await c.runAndReadAll(sql)).getRowObjectsJS()[0] as Record<string, number>)!
  const m = await one(
    "SELECT max(value) FILTER (key = 'rolled_hour')::DOUBLE AS hour, max(value) FILTER (key = 'rolled_day')::DOUBLE AS day, max(value) FILTER (key = 'rolled_week')::DOUBLE AS week FROM events_meta",
  )
  const rolled: Rolled = { hour: m.hour!, day: m.day!, week: m.week! }
  const strings = EVENT_STRINGS.map(([c]) => c)
  const eventColumns = ['link_seq', 'at', 'scan', ...strings, 'n', 'variant']
  const knownStrings = strings.map((c) => `nullif(${c}, '') AS ${c}`).join(', ')
  // One row per click id of a row's `tracked` (ids separated by spaces, each carrying its time; `<id>@<at ms>` in rows
  // written before 2026-11-26), with the row's dimensions and variant: trackedClicksOf in SQL.
  const trackedColumns = ['click_id', 'link_seq', 'at', 'scan', ...strings, 'variant']
  const selectOf = (table: string): string => {
    if (table === 'click_events') return `SELECT link_seq::DOUBLE, "at"::DOUBLE, scan::INTEGER, ${knownStrings}, n, variant::INTEGER FROM events ORDER BY "at"`
    if (table === 'tracked_clicks')
      return `SELECT CASE WHEN contains(t, '@') THEN regexp_extract(t, '^(.*)@([0-9]+)$', 1) ELSE t END, link_seq::DOUBLE,
        CASE WHEN contains(t, '@') THEN regexp_extract(t, '^(.*)@([0-9]+)$', 2)::DOUBLE
          WHEN regexp_full_match(t, '[A-Za-z0-9_-]{22}') THEN (${clickTimeSql('t')})::DOUBLE ELSE "at"::DOUBLE END, scan::INTEGER,
        ${knownStrings}, variant::INTEGER
        FROM (SELECT unnest(string_split(tracked, ' ')) AS t, * EXCLUDE (tracked) FROM events WHERE tracked IS NOT NULL) WHERE t <> ''`
    if (table === 'stats_busy_links') return 'SELECT DISTINCT seq::DOUBLE FROM stats_busy_links'
    const level = LEVELS.find((l) => l.table === table)!
    const tail = rollupSelects(level, `e."at" >= ${limitOf(level, rolled)}`)
    return `SELECT scope::DOUBLE, dim::INTEGER, t::DOUBLE, value, sum(clicks)::DOUBLE, sum(scans)::DOUBLE
      FROM (SELECT * FROM ${table} UNION ALL ${tail.join(' UNION ALL ')}) GROUP BY scope, dim, t, value`
  }
  // PostgreSQL keeps no pair rows (stats_pair_day): not copied.
  const tables = ['click_events', 'tracked_clicks', 'stats_busy_links', ...LEVELS.map((l) => l.table as Exclude<Level['table'], 'stats_pair_day'>)] as const
  return {
    tables,
    count: async (table: string) => (await one(`SELECT count(*)::DOUBLE AS n FROM (${selectOf(table)})`)).n!,
    columns: (table: string) =>
      table === 'click_events'
        ? eventColumns
        : table === 'tracked_clicks'
          ? trackedColumns
          : table === 'stats_busy_links'
            ? ['seq']
            : ['scope', 'dim', 't', 'value', 'clicks', 'scans'],
    async *rows(table: string): AsyncIterable<unknown[][]> {
      const result = await c.stream(selectOf(table))
      for (;;) {
        const chunk = await result.fetchChunk()
        if (!chunk || chunk.rowCount === 0) return
        yield chunk.convertRows(api.JSDuckDBValueConverter)
      }
    },
    clickMonths: async () =>
      (
        (
          await c.runAndReadAll(`SELECT DISTINCT date_trunc('month', epoch_ms("at"))::DATE AS m, min("at")::DOUBLE AS at FROM events GROUP BY 1`)
        ).getRowObjectsJS() as { at: number }[]
      ).map((r) => r.at),
    close() {
      c.closeSync()
      instance.closeSync()
    },
  }
}
