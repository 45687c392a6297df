/**
 * The SQL builder of GET /statistics: turns the planner's reads (stats.plan.ts) into
 * statements over the rollups (stats_quarter/hour/day/week) and raw click_events, plus
 * the link-set selects behind scopes. Builds text and arguments only (`?` placeholders);
 * stats.store.ts and stats.store.pg.ts run them.
 *
 * Two dialects, both reading raw events as dictionary ids (`click_events_compact` and
 * `stats_values`: SQLite migration 0011, PostgreSQL migration 0009). SQLite: index hints (INDEXED
 * BY, `+link_seq`). PostgreSQL: no hints, `strpos`/`chr` for the geo paths, and every number cast
 * to float8 or int (Bun.SQL returns bigint and numeric as strings), so rows are the same
 * `ReadRow`/`PerLinkRow` shapes.
 */

import type { DimRead, KeyKind, LinkScope, LinkSet, Read, ReadPlan, Scope, SqlArg } from './stats.plan'
import { DAY, DIMENSIONS, type Dimension, type Level } from './stats.rollup'

export type Dialect = 'sqlite' | 'pg' | 'duckdb'

export interface Statement {
  sql: string
  args: SqlArg[]
  /** DuckDB: per-link sums (k = seq) the store joins with the links itself (they live in SQLite): by link, or by this column. */
  perLink?: 'link' | 'link_type' | 'destination'
  /** A raw read over every link or thousands of links (PostgreSQL runs it with parallel workers and sequential scans). */
  scan?: boolean
}

const HOUR_MS = 3_600_000

/** Raw reads group time by quarter hours: every zone offset in use is a multiple of 15 minutes. */
export const RAW_UNIT_MS = 900_000

/** `SELECT l.seq FROM links l WHERE …`: the seqs of a link set. */
export function linkSetSql(links: LinkSet): Statement {
  const where: string[] = []
  const args: SqlArg[] = []
  if (links.seqs) {
    where.push(`l.seq IN (${links.seqs.map(() => '?').join(',')})`)
    args.push(...links.seqs)
  }
  if (links.urlSeq !== undefined) {
    where.push('l.seq = ?')
    args.push(links.urlSeq)
  }
  if (links.domain !== undefined) {
    where.push('l.domain = ?')
    args.push(links.domain)
  }
  if (links.linkType !== undefined) {
    where.push('l.link_type = ?')
    args.push(links.linkType)
  }
  if (links.destination !== undefined) {
    where.push('l.destination = ?')
    args.push(links.destination)
  }
  if (links.tagIds) {
    where.push(`l.seq IN (SELECT link_seq FROM link_tags WHERE tag_id IN (${links.tagIds.map(() => '?').join(',')}))`)
    args.push(...links.tagIds)
  }
  if (links.tagNames) {
    const { names, ownerId } = links.tagNames
    const own = ownerId === null ? '' : ' AND user_id = ?'
    where.push(`l.seq IN (SELECT link_seq FROM link_tags WHERE tag_id IN (SELECT id FROM tags WHERE name_key IN (${names.map(() => '?').join(',')})${own}))`)
    args.push(...names)
    if (ownerId !== null) args.push(ownerId)
  }
  if (links.ownerId !== undefined) {
    where.push('l.user_id = ?')
    args.push(links.ownerId)
  }
  return { sql: `SELECT l.seq FROM links l${where.length ? ` WHERE ${where.join(' AND ')}` : ''}`, args }
}

/** The seqs of a link scope: its set, or only the busy links of it, or only the others. */
export function linkScopeSql(scope: LinkScope): Statement {
  const set = linkSetSql(scope.links)
  if (scope.busy === undefined) return set
  return { sql: `SELECT seq FROM (${set.sql}) ls WHERE seq ${scope.busy ? '' : 'NOT '}IN (SELECT seq FROM stats_busy_links)`, args: set.args }
}

/** How many links a set holds. */
export function countLinksSql(links: LinkSet, dialect: Dialect = 'sqlite'): Statement {
  const set = linkSetSql(links)
  return { sql: `SELECT count(*)${dialect === 'pg' ? '::int' : ''} AS n FROM (${set.sql}) ls`, args: set.args }
}

/** The first hour (unit number) with a click in the scope: `t`, null when none. Not for a group without a number. */
export function firstClickHourSql(scope: Scope, dialect: Dialect = 'sqlite', rolledHour = 0): Statement {
  if (dialect === 'duckdb') {
    // Hours rolled up, then the events after them (DuckDB's least() skips nulls).
    const rolled = duckScopeCondition(scope, 'scope', false)
    const raw = duckScopeCondition(scope, 'link_seq', true)
    return {
      sql: `SELECT least((SELECT min(t) FROM stats_hour WHERE dim = 0${rolled.sql}), (SELECT min("at") // ${HOUR_MS} FROM events WHERE "at" >= ?${raw.sql}))::DOUBLE AS t`,
      args: [...rolled.args, rolledHour, ...raw.args],
    }
  }
  const t = dialect === 'pg' ? 'min(t)::float8' : 'min(t)'
  if (scope.kind === 'all') return { sql: `SELECT ${t} AS t FROM stats_hour WHERE scope = 0 AND dim = 0`, args: [] }
  if (scope.kind === 'group') return { sql: `SELECT ${t} AS t FROM stats_hour WHERE scope = ? AND dim = 0`, args: [-(scope.num ?? 0)] }
  const set = linkScopeSql(scope)
  const first = `min((SELECT t FROM stats_hour h WHERE h.scope = x.seq AND h.dim = 0 ORDER BY t LIMIT 1))`
  return { sql: `SELECT ${dialect === 'pg' ? `${first}::float8` : first} AS t FROM (${set.sql}) x`, args: set.args }
}

/** A geo path expression of stats.rollup.ts (SQLite functions) in PostgreSQL terms. */
const pgExpr = (expr: string) => expr.replaceAll('instr(', 'strpos(').replaceAll('char(31)', 'chr(31)')

/**
 * PostgreSQL: the busy links of every link, or the others, as a condition on stats_busy_links
 * alone (a hashed list of a few hundred seqs checked per row), where `IN (every link's seq)`
 * made a hash of every link joined with every event read (groupBy=link&country=DE at 10M:
 * ~130k events of 30 days). Null for any other scope. Every event and rollup row is of a link
 * (per-link answers are joined with links anyway).
 */
function busyPartOfEveryLink(scope: Scope, column: string): string | null {
  if (scope.kind !== 'link' || scope.busy === undefined) return null
  if (Object.values(scope.links).some((v) => v !== undefined)) return null
  return `${column} ${scope.busy ? '' : 'NOT '}IN (SELECT seq FROM stats_busy_links)`
}

/**
 * DuckDB (the events engine): the links live in SQLite, so a link set is an argument the store
 * resolves into its list of seqs (`{ seqsOf }`); the busy links are DuckDB's own table. `raw`:
 * a group is a column of the events (a link never changes owner or type), else the rollup scope.
 */
function duckScopeCondition(scope: Scope, column: string, raw: boolean): Statement {
  if (scope.kind === 'all') return { sql: raw ? '' : ' AND scope = 0', args: [] }
  if (scope.kind === 'group') {
    if (scope.num === null) return { sql: ' AND FALSE', args: [] }
    if (raw) return { sql: ` AND ${scope.column === 'user_id' ? 'owner' : 'ltype'} = ?`, args: [scope.num] }
    return { sql: ' AND scope = ?', args: [-scope.num] }
  }
  let sql = raw ? '' : ' AND scope > 0'
  const args: SqlArg[] = []
  if (!scope.everyLink && Object.values(scope.links).some((v) => v !== undefined)) {
    // The store keeps only the busy links of the set, or only the others: a list it finds empty
    // (a busy link's raw part) skips the read instead of scanning every event for none.
    sql += ` AND ${column} IN ?`
    args.push(scope.busy === undefined ? { seqsOf: scope.links } : { seqsOf: scope.links, busy: scope.busy })
  } else if (scope.busy !== undefined) sql += ` AND ${column} ${scope.busy ? '' : 'NOT '}IN (SELECT seq FROM stats_busy_links)`
  return { sql, args }
}

/** Events of a scope: the condition on `column` (a link seq); `seek`: as a list of seqs (PostgreSQL), seeking (link_seq, at) per link. */
function scopeCondition(scope: Scope, column: string, seek = false): Statement {
  if (scope.kind === 'all' || (scope.kind === 'link' && scope.everyLink)) return { sql: '', args: [] }
  const set: Statement = scope.kind === 'group' ? { sql: `SELECT seq FROM links WHERE ${scope.column} = ?`, args: [scope.value] } : linkScopeSql(scope)
  return { sql: seek ? ` AND ${column} = ANY(ARRAY(${set.sql}))` : ` AND ${column} IN (${set.sql})`, args: set.args }
}

/**
 * The number columns of a read's rows: SQLite's as they are, PostgreSQL's as float8 (Bun.SQL
 * returns bigint and numeric as strings; sums of integers are exact as doubles up to 2^53, far
 * beyond any click count). A per-link key stays a bigint seq there: perLinkSql joins it with
 * links.seq, then casts it.
 */
function numbers(dialect: Dialect, u: string, k: string, c: string, s: string, summed = true): string {
  if (dialect === 'sqlite') return `${u} AS u, ${k} AS k, sum(${c}) AS c, sum(${s}) AS s`
  // DuckDB sums integers as HUGEINT (a bigint in JavaScript): as doubles, exact up to 2^53.
  if (dialect === 'duckdb') return `(${u})::DOUBLE AS u, ${k} AS k, sum(${c})::DOUBLE AS c, sum(${s})::DOUBLE AS s`
  // Summed as doubles: sum(bigint) accumulates a numeric, ~20 % of a per-link read of 100k rows.
  if (summed) return `(${u})::float8 AS u, ${k} AS k, sum((${c})::float8) AS c, sum((${s})::float8) AS s`
  return `(${u})::float8 AS u, ${k} AS k, (${c})::float8 AS c, (${s})::float8 AS s`
}

/**
 * PostgreSQL: a per-link read (only perLinkSql reads key 'link' without time) gives its rows
 * unsummed, so perLinkSql sums every part's rows in one aggregation (admin groupBy=link over 30
 * days: ~100k rollup rows), not each part and then their ~30k sums again.
 */
const unsummed = (dialect: Dialect, key: KeyKind, byTime: boolean) => dialect === 'pg' && key === 'link' && !byTime

/**
 * Sums of rollup rows of one level in units [fromUnit, toUnit), optionally per unit
 * (`byTime`) and per value or link.
 */
export function rollupSql(
  level: Level,
  scope: Scope,
  read: DimRead,
  fromUnit: number,
  toUnit: number,
  key: KeyKind,
  byTime: boolean,
  dialect: Dialect = 'sqlite',
  units: [number, number][] = [[fromUnit, toUnit]],
): Statement {
  const { dim } = read
  const expr = dialect === 'sqlite' ? (e: string) => e : pgExpr
  const args: SqlArg[] = []
  let from = level.table
  let where: string
  if (dialect === 'duckdb') {
    const sc = duckScopeCondition(scope, 'scope', false)
    where = sc.sql.slice(' AND '.length)
    args.push(...sc.args)
  } else if (scope.kind === 'all') where = 'scope = 0'
  else if (scope.kind === 'group') {
    where = 'scope = ?'
    args.push(-(scope.num ?? 0))
  } else {
    // Many links: the partial index in time order, links checked against the set.
    if (scope.wide && dim === 0 && dialect === 'sqlite') from += ` INDEXED BY ${level.table}_links`
    const busyPart = dialect === 'pg' ? busyPartOfEveryLink(scope, 'scope') : null
    if (scope.everyLink) where = 'scope > 0'
    else if (busyPart) where = `scope > 0 AND ${busyPart}`
    else {
      const set = linkScopeSql(scope)
      where = `scope > 0 AND scope IN (${set.sql})`
      args.push(...set.args)
    }
  }
  // dim is inlined (a small integer of ours) so the partial indexes' `dim = 0` can be proven.
  where += ` AND dim = ${Math.trunc(dim)}`
  const spans = units.length > 1
  if (!spans) {
    where += ' AND t >= ? AND t < ?'
    args.push(units[0]![0], units[0]![1])
  }
  for (const c of read.conds) {
    where += ` AND ${expr(c.expr)} IN (${c.values.map(() => '?').join(',')})`
    args.push(...c.values)
  }
  const keyCol = key === 'value' ? expr(read.keyExpr!) : key === 'link' ? 'scope' : 'NULL'
  const group = [byTime ? 'u' : '', key !== 'none' ? 'k' : ''].filter(Boolean)
  if (dialect === 'duckdb') {
    // Several spans: their units as one list (a hash semi-join) within the spans' overall range. A
    // range join with the 732 spans of a :30-zone daily year took ~1 s at 10M on a loaded machine.
    let source = `${from} WHERE ${where}`
    if (spans) {
      const list: number[] = []
      for (const [lo, hi] of units) for (let t = Math.trunc(lo); t < hi; t++) list.push(t)
      source += ` AND t >= ${Math.min(...list)} AND t <= ${Math.max(...list)} AND t IN (SELECT unnest(?))`
      args.push(list)
    }
    return {
      sql: `SELECT ${numbers(dialect, byTime ? 't' : '0', keyCol, 'clicks', 'scans')} FROM ${source}${group.length ? ` GROUP BY ${group.join(', ')}` : ''}`,
      args,
    }
  }
  // PostgreSQL groups by output names only when they are plain: group by the expressions.
  const flat = unsummed(dialect, key, byTime)
  const groupBy = flat ? [] : dialect === 'pg' ? [byTime ? 't' : '', key !== 'none' ? keyCol : ''].filter(Boolean) : group
  let source = `${from} WHERE ${where}`
  if (spans) {
    // Several spans (PostgreSQL, mergeReads): one index range per span in one statement, each
    // span read by a lateral subquery (OFFSET 0 keeps it one). Joined plainly, once the planner
    // knows `scope = 0 AND dim = 0` is a few thousand rows (migration 0002), it read them all
    // and tested each against every span: a :30-zone daily series of a year, 8,760 hours × 366
    // spans, 7 → 190 ms at 10M.
    const list = (i: 0 | 1) => `'{${units.map((u) => Math.trunc(u[i])).join(',')}}'::bigint[]`
    source = `unnest(${list(0)}, ${list(1)}) AS span(lo, hi) CROSS JOIN LATERAL (SELECT * FROM ${from} WHERE ${where} AND t >= span.lo AND t < span.hi OFFSET 0) r`
  }
  return {
    sql: `SELECT ${numbers(dialect, byTime ? 't' : '0', keyCol, 'clicks', 'scans', !flat)} FROM ${source}${groupBy.length ? ` GROUP BY ${groupBy.join(', ')}` : ''}`,
    args,
  }
}

/**
 * Sums of raw events in [from, to) ms matching `filters` (column → accepted values),
 * optionally per quarter hour and per value of `keyColumn` or per link. Events hold dictionary
 * ids (stats_values): filters compare ids, grouped ids become their strings.
 */
export function rawSql(
  scope: Scope,
  from: number,
  to: number,
  filters: Map<string, string[]>,
  key: KeyKind,
  keyColumn: string | null,
  byTime: boolean,
  dialect: Dialect = 'sqlite',
): Statement {
  // Every link, thousands of links, or a span of up to a day (the edges of a range): a time
  // index, links checked per event. Events sit in time order, so that reads pages in order;
  // the planner would rather skip-scan (link_seq, at) to group by link: a random row fetch per
  // event, measured 5x slower (30 days of all links' events: 1.5 s against 0.15-0.2 s). With a
  // country filter, that country's events in time order (country, at, link_seq, n, scan): a
  // per-link count of one country reads no row (groupBy=link&country=DE: 263 → ~20 ms at 10M).
  if (dialect === 'pg' && scope.kind === 'all' && !byTime) {
    const pairs = pairsSql(from, to, filters, key, keyColumn)
    if (pairs) return pairs
  }
  const timeIndex = scope.kind === 'all' || (scope.kind === 'link' && scope.wide) || to - from <= DAY
  const keyCol = key === 'value' ? keyColumn! : key === 'link' ? 'link_seq' : 'NULL'
  if (dialect === 'duckdb') {
    // Plain strings in columns; `at` is a keyword there; integer division is `//`.
    const sc = duckScopeCondition(scope, 'link_seq', true)
    const f = valueFilters(filters)
    const where = `"at" >= ? AND "at" < ?${sc.sql}${f.sql}`
    const args: SqlArg[] = [from, to, ...sc.args, ...f.args]
    const group = [byTime ? 'u' : '', key !== 'none' ? 'k' : ''].filter(Boolean)
    const unitExpr = byTime ? `"at" // ${RAW_UNIT_MS}` : '0'
    const sql = `SELECT ${numbers(dialect, unitExpr, keyCol, 'n', 'CASE WHEN scan THEN n ELSE 0 END')} FROM events WHERE ${where}${group.length ? ` GROUP BY ${group.join(', ')}` : ''}`
    // Grouped by the column itself, which keeps an unknown value as '' (or NULL, in files written before that): both
    // become null after grouping, where there are a few rows (grouping by nullif(…) would group row by row, 5x slower).
    if (key !== 'value') return { sql, args }
    return { sql: `SELECT u, nullif(k, '') AS k, sum(c) AS c, sum(s) AS s FROM (${sql}) GROUP BY u, nullif(k, '')`, args }
  }
  const unit = byTime ? `at / ${RAW_UNIT_MS}` : '0'
  let sc: Statement
  if (dialect === 'pg') {
    // Else a seek per link, as SQLite does: PostgreSQL takes `link_seq IN (links of u0 of type
    // menu)` for a join with a month of events through the time index (300 ms at 10M, against
    // 28 ms for `= ANY(ARRAY(…))`, which it reads as index conditions on (link_seq, at)).
    const busyPart = busyPartOfEveryLink(scope, 'link_seq')
    sc = busyPart ? { sql: ` AND ${busyPart}`, args: [] } : scopeCondition(scope, 'link_seq', !timeIndex)
  } else {
    sc = scopeCondition(scope, 'link_seq')
    if (timeIndex) sc = { sql: sc.sql.replace(' AND link_seq', ' AND +link_seq'), args: sc.args }
  }
  const index = dialect === 'sqlite' && timeIndex ? (filters.has('country') ? 'click_events_country_at' : 'click_events_at') : null
  const f = eventFilters(filters, dialect)
  const where = `at >= ? AND at < ?${sc.sql}${f.sql}`
  const args: SqlArg[] = [from, to, ...sc.args, ...f.args]
  // PostgreSQL groups by output names only when they are plain: group by the expressions.
  const flat = unsummed(dialect, key, byTime)
  const group = dialect === 'sqlite' ? ['u', 'k'] : flat ? [] : [unit, keyCol]
  const grouped = group.filter((_, i) => (i === 0 ? byTime : key !== 'none'))
  const sql = `SELECT ${numbers(dialect, unit, keyCol, 'n', 'n * scan', !flat)} FROM click_events_compact${index ? ` INDEXED BY ${index}` : ''} WHERE ${where}${grouped.length ? ` GROUP BY ${grouped.join(', ')}` : ''}`
  const scan = dialect === 'pg' && timeIndex ? { scan: true } : {}
  if (key !== 'value') return { sql, args, ...scan }
  return { sql: `SELECT u, (SELECT value FROM stats_values WHERE id = x.k) AS k, c, s FROM (${sql}) x`, args, ...scan }
}

/** `AND column …` for each event filter (column → accepted strings), comparing dictionary ids; `side` names the column. */
function eventFilters(filters: Map<string, string[]>, dialect: Dialect, side: (column: string) => string = (c) => c): Statement {
  let sql = ''
  const args: SqlArg[] = []
  for (const [col, vals] of filters) {
    // PostgreSQL: as an array of ids, which it estimates from the column's statistics. As `IN (SELECT …)`
    // it joined the dictionary and expected ~10k of a year's 6.2M Mobile events: a sort spilled to disk
    // where a hash aggregate takes them all (device=Mobile by os, a year at 10M: 16-40 s → 8-11 s under a load of 20).
    const ids = `SELECT id FROM stats_values WHERE value IN (${vals.map(() => '?').join(',')})`
    sql += dialect === 'pg' ? ` AND ${side(col)} = ANY(ARRAY(${ids}))` : ` AND ${side(col)} IN (${ids})`
    args.push(...vals)
  }
  return { sql, args }
}

/**
 * PostgreSQL, a raw read of every link over exactly two event dimensions (filters and the grouped
 * one), not per time unit: its whole UTC days below the roll-up limit from the pair rows
 * (migration 0011, stats.pairs.pg.ts), the partial first and last days and the days not rolled
 * up yet from the events, in one statement (one snapshot: the limit and the rows agree). Null
 * when the read is not of that kind, or spans no whole day.
 */
function pairsSql(from: number, to: number, filters: Map<string, string[]>, key: KeyKind, keyColumn: string | null): Statement | null {
  if (key === 'link') return null
  const columns = new Set([...filters.keys(), ...(key === 'value' ? [keyColumn!] : [])])
  const dims = DIMENSIONS.filter((d) => columns.has(d.column))
  if (columns.size !== 2 || dims.length !== 2) return null
  const firstDay = Math.ceil(from / DAY)
  const lastDay = Math.floor(to / DAY)
  if (firstDay >= lastDay) return null
  const [a, b] = dims as [Dimension, Dimension]
  const side = (column: string) => (column === a.column ? 'va' : 'vb')
  const rawKey = key === 'value' ? keyColumn! : 'NULL'
  const upto = '(SELECT upto FROM stats_pairs_state)'
  const pf = eventFilters(filters, 'pg', side)
  const rf = eventFilters(filters, 'pg')
  const raw = (when: string) =>
    `SELECT ${rawKey} AS k, sum((n)::float8) AS c, sum((n * scan)::float8) AS s FROM click_events_compact WHERE ${when}${rf.sql} GROUP BY 1`
  const parts = [
    `SELECT ${key === 'value' ? `nullif(${side(keyColumn!)}, 0)` : 'NULL'} AS k, sum((clicks)::float8) AS c, sum((scans)::float8) AS s FROM stats_pairs
      WHERE a = ${a.code} AND b = ${b.code} AND day >= ? AND day < least(?, ${upto})${pf.sql} GROUP BY 1`,
    raw('at >= ? AND at < ?'),
    raw(`at >= greatest(?, least(?, ${upto})) * ${DAY}::bigint AND at < ?`),
  ]
  const k = key === 'value' ? '(SELECT value FROM stats_values WHERE id = x.k)' : 'NULL'
  return {
    sql: `SELECT (0)::float8 AS u, ${k} AS k, sum(x.c) AS c, sum(x.s) AS s FROM (${parts.join(' UNION ALL ')}) x GROUP BY x.k`,
    args: [firstDay, lastDay, ...pf.args, from, firstDay * DAY, ...rf.args, firstDay, lastDay, to, ...rf.args],
    scan: true,
  }
}

/** Event filters over plain string columns (DuckDB's and PostgreSQL's events, every store's conversions). */
function valueFilters(filters: Map<string, string[]>): Statement {
  let sql = ''
  const args: SqlArg[] = []
  for (const [col, vals] of filters) {
    sql += ` AND ${col} IN (${vals.map(() => '?').join(',')})`
    args.push(...vals)
  }
  return { sql, args }
}

/** Planned reads with the spans each covers: SQLite, one span per read; see mergeReads. */
export interface SpannedRead {
  /** For a merged read: from the first span's start to the last span's end. */
  read: Read
  spans: { from: number; to: number }[]
}

/**
 * On PostgreSQL, the rollup reads of one level and scope as one read over all their spans: a
 * statement costs a round trip and a plan (~0.15-0.3 ms), and a daily series of a year in a
 * :30 zone plans 731 reads (the quarter-hour edges and hours of every local day): ~90 ms,
 * against ~5 ms merged. A merged read's rows are aligned units, so their bucket is the
 * same as in their own read. SQLite: each read alone (a statement costs microseconds).
 */
export function mergeReads(reads: Read[], dialect: Dialect): SpannedRead[] {
  // DuckDB: a statement costs a plan and a trip to its threads (~1 ms), merged like PostgreSQL's.
  if (dialect === 'sqlite') return reads.map((read) => ({ read, spans: [read] }))
  const merged: SpannedRead[] = []
  const byLevelScope = new Map<string, Map<Scope, SpannedRead>>()
  for (const read of reads) {
    if (!read.level) {
      merged.push({ read, spans: [read] })
      continue
    }
    let scopes = byLevelScope.get(read.level.table)
    if (!scopes) {
      scopes = new Map()
      byLevelScope.set(read.level.table, scopes)
    }
    const same = scopes.get(read.scope)
    if (same) {
      same.spans.push(read)
      same.read = { ...same.read, from: Math.min(same.read.from, read.from), to: Math.max(same.read.to, read.to) }
    } else {
      const group = { read, spans: [read] }
      scopes.set(read.scope, group)
      merged.push(group)
    }
  }
  return merged
}

/** The statement of one planned read; its rows (u, k, c, s) count time in units of `unitMs`. */
export function readSql(
  plan: ReadPlan,
  read: Read,
  byTime: boolean,
  dialect: Dialect = 'sqlite',
  spans: { from: number; to: number }[] = [read],
): Statement & { unitMs: number } {
  const { level, scope, from, to } = read
  if (level) {
    const units = spans.map((s) => [s.from / level.ms, s.to / level.ms] as [number, number])
    return { ...rollupSql(level, scope, plan.dimRead!, from / level.ms, to / level.ms, plan.key, byTime, dialect, units), unitMs: level.ms }
  }
  return { ...rawSql(scope, from, to, plan.filters, plan.key, plan.groupDim?.column ?? null, byTime, dialect), unitMs: RAW_UNIT_MS }
}

/**
 * Per-link sums of several reads (key 'link', no time) joined with the links: one row per
 * link (k = seq, c, s, id, domain, key, destination), or per link_type/destination when
 * `by` is set (k, c, s). Null when there is nothing to read.
 */
export function perLinkSql(parts: Statement[], by: 'link_type' | 'destination' | null, dialect: Dialect = 'sqlite'): Statement | null {
  if (!parts.length) return null
  const union = parts.map((p) => p.sql).join(' UNION ALL ')
  const args = parts.flatMap((p) => p.args)
  const summed = `SELECT k, sum(c) AS c, sum(s) AS s FROM (${union}) p GROUP BY k`
  if (dialect === 'duckdb') return { sql: `SELECT k::DOUBLE AS k, sum(c) AS c, sum(s) AS s FROM (${union}) p GROUP BY k`, args, perLink: by ?? 'link' }
  if (by) return { sql: `SELECT l.${by} AS k, sum(x.c) AS c, sum(x.s) AS s FROM (${summed}) x JOIN links l ON l.seq = x.k GROUP BY l.${by}`, args }
  const k = dialect === 'pg' ? 'x.k::float8 AS k' : 'x.k'
  return { sql: `SELECT ${k}, x.c, x.s, l.id, l.domain, l.key, l.link_type, l.destination FROM (${summed}) x JOIN links l ON l.seq = x.k`, args }
}

/**
 * Leads and sales (contract: "Conversions") in [from, to) ms of the links of `links` (null:
 * every link), matching `filters` like raw events (a conversion carries its click's
 * dimensions), optionally only scans or only other clicks (`qr`): per time unit of `unitMs` (0:
 * no time) and per value of `keyColumn` or per link (`key`), per kind and currency. Rows: u, k,
 * kind, cur, n (leads: the quantity; sales: 1 each), a (the amounts).
 */
export function conversionsSql(
  links: LinkSet | null,
  from: number,
  to: number,
  filters: Map<string, string[]>,
  key: KeyKind,
  keyColumn: string | null,
  unitMs: number,
  qr: boolean | undefined,
  dialect: Dialect,
): Statement {
  const at = dialect === 'duckdb' ? '"at"' : 'at'
  let where = `${at} >= ? AND ${at} < ?`
  const args: SqlArg[] = [from, to]
  if (links && Object.values(links).some((v) => v !== undefined)) {
    if (dialect === 'duckdb') {
      where += ' AND link_seq IN ?'
      args.push({ seqsOf: links })
    } else {
      const set = linkSetSql(links)
      where += ` AND link_seq IN (${set.sql})`
      args.push(...set.args)
    }
  }
  const f = valueFilters(filters)
  where += f.sql
  args.push(...f.args)
  if (qr !== undefined) where += dialect === 'duckdb' ? ` AND ${qr ? '' : 'NOT '}scan` : ` AND scan = ${qr ? 1 : 0}`
  const u = unitMs > 0 ? (dialect === 'duckdb' ? `"at" // ${Math.trunc(unitMs)}` : `at / ${Math.trunc(unitMs)}`) : '0'
  const k = key === 'value' ? keyColumn! : key === 'link' ? 'link_seq' : 'NULL'
  const num = (e: string) => (dialect === 'sqlite' ? e : dialect === 'pg' ? `(${e})::float8` : `(${e})::DOUBLE`)
  return {
    sql: `SELECT ${num(u)} AS u, ${key === 'link' ? num(k) : k} AS k, kind, currency AS cur, ${num('sum(quantity)')} AS n, ${num('sum(coalesce(amount, 0))')} AS a
      FROM conversions WHERE ${where} GROUP BY 1, 2, 3, 4`,
    args,
  }
}

/** The links of some seqs (conversions of links without clicks in a per-link answer). */
export function linksOfSeqsSql(seqs: number[], dialect: Dialect): Statement {
  return {
    sql: `SELECT ${dialect === 'pg' ? 'seq::float8 AS seq' : 'seq'}, id, domain, key, link_type, destination FROM links WHERE seq IN (${seqs.map(() => '?').join(',')})`,
    args: seqs,
  }
}
