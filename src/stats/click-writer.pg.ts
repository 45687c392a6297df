/**
 * The click writer on PostgreSQL: the same writes as click-writer.ts (events, each link's
 * `clicks` and `last_clicked` (in `link_clicks`, migration 0010), every rollup of stats.rollup.ts, busy-link marking and
 * backfill) in ONE transaction per batch, written by several nodes at once.
 *
 * - Concurrency: rollups are `INSERT … ON CONFLICT DO UPDATE SET clicks = t.clicks +
 *   excluded.clicks`, so concurrent nodes add up. Every lock a batch takes is taken in one
 *   global order (link counter rows by seq, then the rollup tables in a fixed order, each batch's
 *   keys sorted), so two nodes cannot wait on each other; a deadlock or serialization
 *   failure that still happens (another writer of `links`) reruns the batch.
 * - Busy links: the link counter rows are locked (upserted, by seq) before the busy state is read
 *   from `stats_busy_links`, so a link crosses the threshold in exactly one transaction; that
 *   one marks it and backfills its dimension rows from every committed event plus its own,
 *   and every later batch (of any node) sees the mark after taking the same lock.
 * - A batch called while another is being written prepares meanwhile, begins its transaction and
 *   inserts its rows (events, tracked clicks, outbox: locks nobody waits for), then waits for that
 *   one to end before its counters and rollups: the two transactions overlap, and commit in call
 *   order (the recorder's writeAhead, ADR 28).
 * - Events go in as compact rows (their strings as stats_values ids, numbered before the
 *   transaction; migration 0009) by COPY, into the month partitions, which are created before
 *   the transaction (once per month per process).
 * - `stats_groups` are numbered outside the batch transaction, one autocommit insert per
 *   new name, in the order of first appearance in the batch (as SQLite numbers them), so
 *   racing nodes never deadlock on them; a race loser reads the winner's number.
 * - PostgreSQL text cannot hold NUL: it is removed from strings (a visitor controls the UTM
 *   values through the query string; one NUL would fail every batch it is merged into).
 */
import type { SQL } from 'bun'
import { appendClickEventsPg } from '../events'
import { ensureClickPartitions, monthStart } from '../store'
import { type ClickEvent, trackedClicksOf } from './click-event'
import { type JournalMark, journalKey } from './click-journal'
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
  /** Hears how long each step of a batch took (scripts/bench/pg-click-ingest.ts; batches written one after another). */
  onStep?: (step: string, ms: number) => void
}

/** SQLSTATEs after which the whole transaction can simply run again. */
const RETRYABLE = new Set(['40P01', '40001'])
/** Thrown to roll a batch's transaction back when it is not to be written after all (taken back, or already written). */
const SKIPPED = Symbol('skipped')

const ROLLUP_TABLES = ['stats_quarter', 'stats_hour', 'stats_day', 'stats_week'] as const

/** The event's strings stored as stats_values ids (migration 0009), in column order. */
const EVENT_STRINGS = ['continent', ...DIMENSIONS.map((d) => d.key)] as const satisfies readonly (keyof ClickEvent)[]
const EVENT_COLUMNS = `link_seq, at, n, continent, ${DIMENSIONS.map((d) => d.column).join(', ')}, scan, variant`
/** Where scan sits in a compact row (the A/B variant, migration 0012, comes after it). */
const SCAN_AT = 3 + EVENT_STRINGS.length

/** The ids a dimension's stored rollup value is made of (stats.rollup.ts dimValueOf): region and city carry the country before them. */
const valueIds = (code: number, column: string) =>
  code === 2 ? ['c.country', 'c.region', 'NULL::int'] : code === 3 ? ['c.country', 'c.region', 'c.city'] : [`c.${column}`, 'NULL::int', 'NULL::int']
const COUNTRY_CODE = "(CASE WHEN length(va.value) = 2 THEN va.value ELSE '--' END)"

/**
 * A link that just became busy: its per-day rows of every dimension from all its events, in one
 * statement. Grouped on the compact rows' ids first and the strings joined to the groups after:
 * 84 ms for a link of ~5,000 events against 155-180 through the click_events view (a join per
 * string per event).
 */
const BACKFILL_SQL = `INSERT INTO stats_day (scope, dim, t, value, clicks, scans)
  SELECT $1, g.dim, g.t,
    CASE g.dim
      WHEN 2 THEN ${COUNTRY_CODE} || coalesce(vb.value, '')
      WHEN 3 THEN ${COUNTRY_CODE} || coalesce(vb.value, '') || chr(31) || coalesce(vc.value, '')
      ELSE coalesce(va.value, '') END,
    sum(g.clicks), sum(g.scans)
  FROM (
    SELECT d.dim, c.at / ${DAY} AS t, d.a, d.b, d.c, sum(c.n) AS clicks, sum(c.n * c.scan) AS scans
    FROM click_events_compact c
    CROSS JOIN LATERAL (VALUES ${DIMENSIONS.map((d) => `(${d.code}, ${valueIds(d.code, d.column).join(', ')})`).join(', ')}) AS d(dim, a, b, c)
    WHERE c.link_seq = $1
    GROUP BY 1, 2, 3, 4, 5
  ) g
  LEFT JOIN stats_values va ON va.id = g.a
  LEFT JOIN stats_values vb ON vb.id = g.b
  LEFT JOIN stats_values vc ON vc.id = g.c
  GROUP BY 1, 2, 3, 4`

const upsertSql = (table: string) => `INSERT INTO ${table} AS r (scope, dim, t, value, clicks, scans)
  SELECT * FROM unnest($1::bigint[], $2::int[], $3::bigint[], $4::text[], $5::bigint[], $6::bigint[])
  ON CONFLICT (scope, dim, t, value) DO UPDATE SET clicks = r.clicks + excluded.clicks, scans = r.scans + excluded.scans`

const clean = (s: string | null): string | null => (s?.includes('\0') ? s.replaceAll('\0', '') : s)

/** An event as the row of click_events_compact: numbers (and nulls) in EVENT_COLUMNS order. */
export type CompactEvent = (number | null)[]

/** Above this many cached strings the cache of ids starts over (referer URLs are unbounded). */
const MAX_CACHED_VALUES = 100_000

/**
 * The stats_values ids of the batch's strings. New strings are numbered outside the batch's
 * transaction, one autocommit INSERT in sorted order (nodes adding the same strings wait on each
 * other in one order, never in a cycle); an id is never removed, so a batch that fails later
 * leaves ids nobody uses, not ids that vanish.
 */
export function createPgValueIds(sql: SQL) {
  const cache = new Map<string, number>()
  /** Times the cache started over: a call that saw none while it waited checks only its own new strings again, not every event's. */
  let restarts = 0
  const missingOf = (events: ClickEvent[]) => {
    const missing = new Set<string>()
    for (const e of events)
      for (const k of EVENT_STRINGS) {
        const v = e[k] as string | null
        if (v !== null && !cache.has(v)) missing.add(v)
      }
    return missing
  }
  return async (events: ClickEvent[]): Promise<CompactEvent[]> => {
    // Until every string is cached when checked: another batch's call may start the cache over while this one waits.
    for (let missing = missingOf(events); missing.size; ) {
      if (cache.size + missing.size > MAX_CACHED_VALUES) {
        cache.clear()
        restarts++
        missing = missingOf(events)
      }
      const restartsBefore = restarts
      const values = [...missing].sort()
      // The new strings come back from the insert; only those already stored (or another node's since) are looked up.
      const added: { id: number; value: string }[] =
        await sql`INSERT INTO stats_values (value) SELECT v FROM unnest(${values}::text[]) AS v ON CONFLICT (value) DO NOTHING RETURNING id, value`
      for (const r of added) cache.set(r.value, r.id)
      const known = added.length === values.length ? [] : values.filter((v) => !cache.has(v))
      if (known.length) {
        const rows: { id: number; value: string }[] = await sql`SELECT id, value FROM stats_values WHERE value = ANY(${known}::text[])`
        for (const r of rows) cache.set(r.value, r.id)
      }
      missing = restarts === restartsBefore ? new Set(values.filter((v) => !cache.has(v))) : missingOf(events)
    }
    return events.map((e) => {
      const row: CompactEvent = [e.linkSeq, e.at, e.n]
      for (const k of EVENT_STRINGS) {
        const v = e[k] as string | null
        row.push(v === null ? null : cache.get(v)!)
      }
      row.push(e.scan ? 1 : 0, e.variant ?? null)
      return row
    })
  }
}

/** Inserts compact events by COPY or by one INSERT from unnest arrays: what the writer does, alone (the benchmark compares them). */
export function insertClickEvents(tx: SQL, events: CompactEvent[], how: 'copy' | 'unnest'): Promise<void> {
  return how === 'copy' ? copyEvents(tx, events) : insertEvents(tx, events)
}

/** Compact events as the text COPY reads. */
function copyTextOf(events: CompactEvent[]): string {
  let text = ''
  for (const e of events) text += `${e.map((v) => (v === null ? '\\N' : v)).join('\t')}\n`
  return text
}

async function copyEvents(tx: SQL, events: CompactEvent[], text = copyTextOf(events)): Promise<void> {
  const writer = tx.unsafe(`COPY click_events_compact (${EVENT_COLUMNS}) FROM STDIN`).writable().getWriter()
  await writer.write(text)
  await writer.close()
}

async function insertEvents(tx: SQL, events: CompactEvent[]): Promise<void> {
  const width = events[0]!.length
  const cols: (number | null)[][] = Array.from({ length: width }, (_, i) => events.map((e) => e[i]!))
  const types = ['bigint', 'bigint', 'int', ...Array(EVENT_STRINGS.length).fill('int'), 'smallint', 'smallint']
  await tx.unsafe(`INSERT INTO click_events_compact (${EVENT_COLUMNS}) SELECT * FROM unnest(${types.map((t, i) => `$${i + 1}::${t}[]`).join(', ')})`, cols)
}

/** Adds compact events' pair rows (migration 0011 stats_pairs_add_rows: at, n, scan, then the 13 dimensions from country). */
function addPairRows(tx: SQL, events: CompactEvent[]): Promise<unknown> {
  const column = (i: number) => events.map((e) => e[i]!)
  const dims = DIMENSIONS.map((_, k) => column(4 + k))
  return tx.unsafe(`SELECT stats_pairs_add_rows($1::bigint[], $2::int[], $3::smallint[], ${dims.map((_, k) => `$${k + 4}::int[]`).join(', ')})`, [
    column(1),
    column(2),
    column(SCAN_AT),
    ...dims,
  ])
}

/**
 * Conversion tracking: the batch's visits that carry a click id, with their dimensions, where
 * POST /track/lead finds them (migration 0013), with the A/B variant of each (0014). A click id is unique: a batch written again
 * after a failure inserts nothing twice.
 */
async function insertTrackedClicks(tx: SQL, events: ClickEvent[]): Promise<void> {
  // Plain strings here, not the stats_values ids of click_events_compact: POST /track/lead reads one row by its id.
  const cols: (string | number | null)[][] = Array.from({ length: 5 + EVENT_STRINGS.length }, () => [])
  for (const e of events) {
    if (!e.tracked) continue
    for (const t of trackedClicksOf(e.tracked, e.at)) {
      cols[0]!.push(t.clickId)
      cols[1]!.push(e.linkSeq)
      cols[2]!.push(t.at)
      cols[3]!.push(e.scan ? 1 : 0)
      for (let i = 0; i < EVENT_STRINGS.length; i++) cols[4 + i]!.push(clean(e[EVENT_STRINGS[i]!] as string | null))
      cols[4 + EVENT_STRINGS.length]!.push(e.variant ?? null)
    }
  }
  if (cols[0]!.length === 0) return
  const columns = `click_id, link_seq, at, scan, continent, ${DIMENSIONS.map((d) => d.column).join(', ')}, variant`
  const types = ['text', 'bigint', 'bigint', 'smallint', ...EVENT_STRINGS.map(() => 'text'), 'smallint']
  await tx.unsafe(
    `INSERT INTO tracked_clicks (${columns}) SELECT * FROM unnest(${types.map((t, i) => `$${i + 1}::${t}[]`).join(', ')}) ON CONFLICT DO NOTHING`,
    cols,
  )
}

/** Total order of rollup keys: every node upserts rows in this order. */
function byKey(a: RollupDelta, b: RollupDelta): number {
  return a.scope - b.scope || a.dim - b.dim || a.t - b.t || (a.value < b.value ? -1 : a.value > b.value ? 1 : 0)
}

/** Numbers as the text of a PostgreSQL array. */
const numberArray = (xs: number[]) => `{${xs.join(',')}}`
/** Strings as the text of a PostgreSQL array: each quoted, its quotes and backslashes escaped. */
const textArray = (xs: string[]) => `{${xs.map((s) => `"${/["\\]/.test(s) ? s.replace(/["\\]/g, '\\$&') : s}"`).join(',')}}`

/**
 * Sorted rollup rows as the columns of upsertSql's unnest, or null for none: as array texts made
 * here, before the transaction, rather than by the driver inside it (it quotes element by element).
 */
function upsertColumnsOf(rows: RollupDelta[]): string[] | null {
  if (!rows.length) return null
  return [
    numberArray(rows.map((r) => r.scope)),
    numberArray(rows.map((r) => r.dim)),
    numberArray(rows.map((r) => r.t)),
    textArray(rows.map((r) => r.value)),
    numberArray(rows.map((r) => r.clicks)),
    numberArray(rows.map((r) => r.scans)),
  ]
}

/** PostgreSQL's mark of `journal` (click-journal.ts): the position its rows are written up to, or null. */
export async function pgJournalMark(sql: SQL, journal: string): Promise<number | null> {
  const [row] = await sql`SELECT value FROM kv WHERE key = ${journalKey(journal)}`
  return row ? Number(row.value) : null
}

/** What the caller hears of a batch written after another one (the recorder's writeAhead). */
export interface WriteTurn {
  /** The batch's work outside its transaction is done (strings numbered, rollups computed). */
  prepared(): void
  /** Its turn has come: false when the caller took the rows back meanwhile (the batch is then skipped). */
  starting(): boolean
}

/**
 * Writes a batch; with a journal mark, only when the mark is not applied yet (click-journal.ts): false when skipped
 * (or taken back by `turn`).
 */
export type PgEventWriter = (events: ClickEvent[], mark?: JournalMark, turn?: WriteTurn) => Promise<boolean>

export function createPgEventWriter(sql: SQL, options: PgEventWriterOptions = {}): PgEventWriter {
  const busyAt = options.busyLinkClicks ?? BUSY_LINK_CLICKS
  const maxAttempts = options.maxAttempts ?? 5
  const idsOf = createPgValueIds(sql)
  let stepStart = 0
  /** Reports the step that just ended (options.onStep). */
  const step = (name: string) => {
    if (!options.onStep) return
    const now = performance.now()
    options.onStep(name, now - stepStart)
    stepStart = now
  }
  /** Months whose partition this process has made sure of. */
  const partitioned = new Set<number>()
  /** Group scopes (−num) per link seq, and numbers per group name: a link never changes owner or type. */
  const groupScopes = new Map<number, readonly number[]>()
  const groupNums = new Map<string, number>()
  /** Links known to be busy (a mark is never removed). */
  const busy = new Set<number>()
  /**
   * Settles when the transaction of the batch called last has ended. A batch called while
   * another is being written prepares at once (JavaScript, and PostgreSQL numbering its
   * strings), inserts its rows in its own transaction, and takes its first shared lock (link
   * counters) after that one ended, in call order: the two overlap on two cores instead of
   * taking turns. It settles true when that batch was written (or skipped).
   */
  let lastTransaction: Promise<boolean> = Promise.resolve(true)
  /** Batches called and not ended. */
  let running = 0

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

  /**
   * What a batch writes, computed once before the transaction (and its retries), down to the COPY
   * text and the upserts' sorted columns: while the batch before is written, this runs on the other
   * core. The links known to be busy get their dimension rows here; links another node marked since
   * are added inside.
   */
  function prepare(events: ClickEvent[], compact: CompactEvent[]) {
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
    const knownBusy = new Set(seqs.filter((s) => busy.has(s)))
    for (const d of rollupDeltas(events, { groups: (seq) => groupScopes.get(seq) ?? [], busy: (seq) => knownBusy.has(seq) })) {
      const list = byTable.get(d.table)
      if (list) list.push(d)
      else byTable.set(d.table, [d])
    }
    for (const rows of byTable.values()) rows.sort(byKey)
    return {
      events,
      compact,
      copyText: options.eventInsert === 'unnest' ? null : copyTextOf(compact),
      knownBusy,
      seqs,
      clicks: seqs.map((s) => perLink.get(s)!.n),
      lasts: seqs.map((s) => perLink.get(s)!.last),
      byTable,
      upserts: new Map([...byTable].map(([table, rows]) => [table, upsertColumnsOf(rows)])),
    }
  }

  /** The per-day dimension rows of the batch's busy links (stats.rollup.ts, kind busy). */
  function busyDeltas(events: ClickEvent[], busyNow: Set<number>): RollupDelta[] {
    const theirs = events.filter((e) => busyNow.has(e.linkSeq))
    if (theirs.length === 0) return []
    const links: LinkScopes = { groups: () => [], busy: () => true }
    return rollupDeltas(theirs, links).filter((d) => d.table === 'stats_day' && d.scope > 0 && d.dim !== 0)
  }

  /** A batch's rows that take no lock another batch waits for: its events, tracked clicks and link.clicked webhook events. */
  async function insertRows(tx: SQL, batch: ReturnType<typeof prepare>): Promise<void> {
    await (batch.copyText === null ? insertEvents(tx, batch.compact) : copyEvents(tx, batch.compact, batch.copyText))
    await insertTrackedClicks(tx, batch.events)
    // link.clicked webhook events, in the transaction of the clicks they announce (the outbox).
    await appendClickEventsPg(tx, batch.events)
    step('events')
  }

  /** The batch's counters and rollups (its rows are in): locks taken in the global order of the header. */
  async function writeBatch(tx: SQL, batch: ReturnType<typeof prepare>): Promise<number[]> {
    const { events, seqs, knownBusy } = batch
    // Days already rolled up into pair rows (stats.pairs.pg.ts): this batch's events of those days
    // add their rows here. Shared with other batches; the roll-up of a day waits for it.
    const [{ upto }] = await tx`SELECT upto FROM stats_pairs_state FOR SHARE`
    const late = batch.compact.filter((e) => Math.floor((e[1] as number) / DAY) < upto)
    if (late.length) await addPairRows(tx, late)
    step('pair rows of past days')
    // Each link's counters (link_clicks, migration 0010), upserted in seq order: the rows are locked
    // in that order, before the busy state is read.
    const bumped: { seq: number; clicks: number }[] = await tx`INSERT INTO link_clicks AS c (seq, clicks, last_clicked)
      SELECT * FROM unnest(${seqs}::bigint[], ${batch.clicks}::bigint[], ${batch.lasts}::bigint[])
      ON CONFLICT (seq) DO UPDATE SET clicks = c.clicks + excluded.clicks, last_clicked = greatest(coalesce(c.last_clicked, 0), excluded.last_clicked)
      RETURNING c.seq::float8 AS seq, c.clicks::float8 AS clicks`
    step('link counters')
    const unsure = seqs.filter((s) => !knownBusy.has(s))
    const busyNow = new Set(knownBusy)
    if (unsure.length) {
      const marked: { seq: number }[] = await tx`SELECT seq::float8 AS seq FROM stats_busy_links WHERE seq = ANY(${unsure}::bigint[])`
      for (const r of marked) busyNow.add(r.seq)
    }
    const promoted = bumped
      .filter((r) => r.clicks >= busyAt && !busyNow.has(r.seq))
      .map((r) => r.seq)
      .sort((a, b) => a - b)
    // Marked busy by another node since prepare: this batch adds their dimension rows too.
    const busyRows = busyDeltas(events, new Set([...busyNow].filter((s) => !knownBusy.has(s))))
    for (const table of ROLLUP_TABLES) {
      const columns =
        table === 'stats_day' && busyRows.length ? upsertColumnsOf([...(batch.byTable.get(table) ?? []), ...busyRows].sort(byKey)) : batch.upserts.get(table)
      if (!columns) continue
      await tx.unsafe(upsertSql(table), columns)
      step(table)
    }
    // A link that just became busy: its dimension rows from all its events, this batch's included.
    for (const seq of promoted) {
      const [marked] = await tx`INSERT INTO stats_busy_links (seq) VALUES (${seq}) ON CONFLICT DO NOTHING RETURNING seq`
      if (marked) await tx.unsafe(BACKFILL_SQL, [seq])
    }
    step('busy links')
    return [...busyNow, ...promoted]
  }

  /** The mark's row, locked: false when this chunk of the journal is already in the store. */
  async function takeMark(tx: SQL, mark: JournalMark): Promise<boolean> {
    const [row] = await tx`SELECT value FROM kv WHERE key = ${journalKey(mark.journal)} FOR UPDATE`
    if (row && Number(row.value) >= mark.upTo) return false
    await tx`INSERT INTO kv (key, value) VALUES (${journalKey(mark.journal)}, ${String(mark.upTo)})
      ON CONFLICT (key) DO UPDATE SET value = excluded.value`
    return true
  }

  return async (input, mark, turn) => {
    if (input.length === 0) return true
    const before = lastTransaction
    // Only a batch still being written when this one is called holds it back (one that failed before is history).
    const behind = running++ > 0
    let ended!: (written: boolean) => void
    lastTransaction = new Promise((resolve) => {
      ended = resolve
    })
    let written = false
    try {
      const applied = await writeAfter(behind ? before : null, input, mark, turn)
      written = true
      return applied
    } finally {
      running--
      ended(written)
    }
  }

  async function writeAfter(before: Promise<boolean> | null, input: ClickEvent[], mark: JournalMark | undefined, turn: WriteTurn | undefined) {
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
    stepStart = performance.now()
    await ensurePartitions(events)
    await resolveGroups(events)
    const compact = await idsOf(events)
    step('value ids')
    const batch = prepare(events, compact)
    step('prepare (JS)')
    turn?.prepared()
    stepStart = performance.now()
    let started = false
    for (let attempt = 1; ; attempt++) {
      try {
        const nowBusy = await sql.begin(async (tx) => {
          // The rows first, while the batch before is still written (new rows: none of its locks), so the two
          // transactions overlap on two backends; then the wait for it, before any lock it takes too (link counters,
          // rollups, the journal mark): neither can wait on the other.
          await insertRows(tx, batch)
          // A journal chunk read ahead of the one before it must not move the mark past rows that failed.
          if (before && !(await before) && mark) throw new Error('the write before this journal chunk failed; the chunk stays in the journal')
          step('waiting for the batch before')
          // Asked once: a rerun after a deadlock has had its turn already.
          if (turn && !started) {
            if (!turn.starting()) throw SKIPPED
            started = true
          }
          if (mark && !(await takeMark(tx, mark))) throw SKIPPED
          return writeBatch(tx, batch)
        })
        step('commit')
        for (const seq of nowBusy) busy.add(seq)
        return true
      } catch (e) {
        // Taken back while it waited, or a journal chunk already written: rolled back, rows and all.
        if (e === SKIPPED) return false
        const errno = (e as { errno?: unknown }).errno
        if (attempt >= maxAttempts || typeof errno !== 'string' || !RETRYABLE.has(errno)) throw e
      }
    }
  }
}
