/**
 * The query planner of GET /statistics: from the query (and the links it is about) to the
 * reads that answer it — which rollup level and dimension rows of which scope, over which
 * aligned time ranges, and what only raw click events hold (sub-hour edges, several event
 * dimensions at once, breakdowns of links that are not busy). Plans hold no SQL and run
 * no query: stats.sql.ts turns them into statements, and the few facts about the data a
 * plan depends on (a group's number, how many links match, the first click) are asked
 * through `PlanFacts`.
 */

import { continentOfCountry } from '../geo'
import { type Awaitable, isDateTime, parameterError } from '../shared'
import {
  DIMENSIONS,
  type Dimension,
  GEO_COLUMNS,
  type GeoColumn,
  geoComponentSql,
  LEVEL_PAIR_DAY,
  type Level,
  levelsFor,
  pairOf,
  pairPartSql,
  TOTAL,
} from './stats.rollup'
import type { GroupBy, Interval, StatisticsQuery } from './stats.schema'
import { ask, runSteps, type Steps } from './stats.steps'
import { bucketBoundaries, canonicalZone, type Granularity } from './stats.time'

/** An argument of a statement; DuckDB's also take lists, and link sets its store resolves into their seqs. */
export type SqlArg = string | number | number[] | { seqsOf: LinkSet; busy?: boolean }

/**
 * The links a query is about, as conditions on them (each present field is one; all
 * must hold). No field at all: every link.
 */
export interface LinkSet {
  /** linkId and linkIds, resolved and visible to the caller. */
  seqs?: number[]
  /** The link `url` names (it takes precedence over `domain`). */
  urlSeq?: number
  domain?: string
  linkType?: string
  destination?: string
  tagIds?: string[]
  /** Normalised tag names; `ownerId` limits them to one user's tags. */
  tagNames?: { names: string[]; ownerId: string | null }
  /** A member's (or readonly key's) own links. */
  ownerId?: string
}

/**
 * Which links count: every link, a rollup group's (one owner's or one link type's: the links
 * whose `column` is `value`; `num` its rollup number, null when it has no rollups yet), or a
 * set of links: `wide` when thousands (read by time range rather than by a seek per link),
 * `busy` true/false for only the busy links of the set (their day rows per dimension) or
 * only the others.
 */
export type Scope = { kind: 'all' } | { kind: 'group'; column: 'user_id' | 'link_type'; value: string; num: number | null } | LinkScope
export interface LinkScope {
  kind: 'link'
  links: LinkSet
  wide: boolean
  /** Every link (an admin's per-link groupBy): no membership check at all. */
  everyLink?: boolean
  busy?: boolean
}

/**
 * What a rollup read takes from the rows of one dim: conditions on (parts of) the stored
 * value, and the grouping key (SQL over `value`, null = unknown) when grouping by value.
 */
export interface DimRead {
  dim: number
  conds: { expr: string; values: string[] }[]
  keyExpr: string | null
}

/** What a read groups by besides time: nothing, the dimension value, or the link. */
export type KeyKind = 'none' | 'value' | 'link'

const INTERVAL_MS: Record<Exclude<Interval, 'all'>, number> = {
  '24h': 86_400_000,
  '7d': 7 * 86_400_000,
  '30d': 30 * 86_400_000,
  '90d': 90 * 86_400_000,
  '180d': 180 * 86_400_000,
  '1y': 365 * 86_400_000,
}
/** Above this many links, link totals are read in time order instead of a seek per link (measured). */
export const WIDE_LINKS = 1000
/** More buckets than this is a mistake (an hourly series over years), not a chart. */
export const MAX_BUCKETS = 50_000

/** Event filters of the query: parameter → click_events column, and how values are normalised. */
const EVENT_FILTERS = [
  { param: 'country', column: 'country', norm: (v: string) => v.toUpperCase() },
  { param: 'region', column: 'region' },
  { param: 'city', column: 'city' },
  { param: 'device', column: 'device' },
  { param: 'browser', column: 'browser' },
  { param: 'os', column: 'os' },
  { param: 'referer', column: 'referer', norm: (v: string) => v.toLowerCase() },
  { param: 'refererUrl', column: 'referer_url' },
  { param: 'utmSource', column: 'utm_source' },
  { param: 'utmMedium', column: 'utm_medium' },
  { param: 'utmCampaign', column: 'utm_campaign' },
  { param: 'utmTerm', column: 'utm_term' },
  { param: 'utmContent', column: 'utm_content' },
] as const

const continentCountries = new Map<string, string[]>()
/** Every ISO code of a continent (the continent filter reads the country rollups). */
function countriesOf(continent: string): string[] {
  let list = continentCountries.get(continent)
  if (!list) {
    list = []
    for (let a = 65; a <= 90; a++)
      for (let b = 65; b <= 90; b++) {
        const code = String.fromCharCode(a, b)
        if (continentOfCountry(code) === continent) list.push(code)
      }
    continentCountries.set(continent, list)
  }
  return list
}

function parseInstant(value: string, name: string): number {
  const v = /^\d{4}-\d{2}-\d{2}$/.test(value) ? `${value}T00:00:00Z` : value
  if (!isDateTime(v)) throw parameterError(`'${name}' must be an ISO 8601 timestamp with a zone, such as 2025-01-31T00:00:00Z (got '${value}')`)
  return Date.parse(v)
}

/** The groupBys answered per link (summed per link and joined with the links). */
export type PerLinkGroupBy = 'link' | 'link_type' | 'destination'
const isPerLink = (g: GroupBy): g is PerLinkGroupBy => g === 'link' || g === 'link_type' || g === 'destination'

/** What a query asks, validated: its output, time range, event filters and the rollup rows that hold them. */
export interface QueryPlan {
  groupBy: GroupBy
  /** Time series: bucket size and zone. */
  series: { granularity: Granularity; zone: string } | null
  /** [start, end) ms; no start: from the first click. */
  start: number | null
  end: number
  /** link, link_type, destination: answered per link. */
  perLink: PerLinkGroupBy | null
  /** The event dimension grouped by. */
  groupDim: Dimension | null
  /** click_events column → accepted values (a continent becomes its countries). */
  filters: Map<string, string[]>
  /** Some filter accepts nothing (country=DE&continent=Asia): nothing to read. */
  empty: boolean
  /** The rollup rows answering the filters and groupBy, or null when only raw events can. */
  dimRead: DimRead | null
  key: KeyKind
  qr: boolean | undefined
}

/** Validates the query's shape and plans what it asks (no data needed). */
export function planQuery(q: StatisticsQuery, now: number): QueryPlan {
  const groupBy: GroupBy = q.groupBy ?? 'count'
  const granularity = q.granularity as Granularity | undefined
  if (groupBy === 'time' && !granularity) throw parameterError(`'granularity' is required when groupBy is time (one of hour, day, week, month)`)
  const zone = canonicalZone(q.timezone ?? 'UTC')
  if (!zone) throw parameterError(`'timezone' must be an IANA time zone such as Europe/Paris (got '${q.timezone}')`)
  const { start, end } = rangeOf(q, now)
  const perLink = isPerLink(groupBy) ? groupBy : null
  const groupDim = DIMENSIONS.find((d) => d.groupBy === groupBy) ?? null
  const filters = eventFiltersOf(q)
  return {
    groupBy,
    series: groupBy === 'time' ? { granularity: granularity!, zone } : null,
    start,
    end,
    perLink,
    groupDim,
    filters,
    empty: [...filters.values()].some((v) => v.length === 0),
    dimRead: dimReadOf(filters, groupDim?.column ?? null),
    key: perLink ? 'link' : groupDim ? 'value' : 'none',
    qr: q.qr,
  }
}

function rangeOf(q: StatisticsQuery, now: number): { start: number | null; end: number } {
  const end = q.end !== undefined ? parseInstant(q.end, 'end') : now
  let start: number | null = null
  if (q.start !== undefined) start = parseInstant(q.start, 'start')
  else if (q.interval && q.interval !== 'all') start = end - INTERVAL_MS[q.interval]
  if (start !== null && start >= end) throw parameterError(`'start' must be before 'end' (${new Date(start).toISOString()} ≥ ${new Date(end).toISOString()})`)
  return { start, end }
}

/** Event filters as column → accepted values (the continent becomes its countries). */
function eventFiltersOf(q: StatisticsQuery): Map<string, string[]> {
  const filters = new Map<string, string[]>()
  const add = (column: string, values: string[]) => {
    const prev = filters.get(column)
    filters.set(column, prev ? prev.filter((v) => values.includes(v)) : values)
  }
  if (q.continent) add('country', countriesOf(q.continent))
  for (const f of EVENT_FILTERS) {
    const v = q[f.param]
    if (v !== undefined) add(f.column, ['norm' in f ? f.norm(v) : v])
  }
  return filters
}

const isGeo = (c: string): c is GeoColumn => (GEO_COLUMNS as readonly string[]).includes(c)

/**
 * The rollup read answering the event filters and groupBy, or null when only raw events
 * can (several dimensions, unless all are geo: a city row knows its region and country).
 */
function dimReadOf(filters: Map<string, string[]>, groupColumn: string | null): DimRead | null {
  const involved = [...new Set([...filters.keys(), ...(groupColumn ? [groupColumn] : [])])]
  if (involved.length === 0) return { dim: TOTAL, conds: [], keyExpr: null }
  if (involved.every(isGeo)) {
    const dim = Math.max(...involved.map((c) => GEO_COLUMNS.indexOf(c) + 1)) as 1 | 2 | 3
    return {
      dim,
      conds: [...filters].map(([c, values]) => ({ expr: dim === 1 ? 'value' : geoComponentSql(dim, c as GeoColumn), values })),
      keyExpr: groupColumn ? geoComponentSql(dim, groupColumn as GeoColumn) : null,
    }
  }
  if (involved.length > 1) return null
  const d = DIMENSIONS.find((x) => x.column === involved[0])!
  const values = filters.get(d.column)
  return { dim: d.code, conds: values ? [{ expr: 'value', values }] : [], keyExpr: "nullif(value, '')" }
}

/** The pair rows (events engine, all links) answering two event dimensions at once, or null. */
function pairReadOf(filters: Map<string, string[]>, groupColumn: string | null): DimRead | null {
  const involved = [...new Set([...filters.keys(), ...(groupColumn ? [groupColumn] : [])])]
  const pair = involved.length === 2 ? pairOf(involved[0]!, involved[1]!) : null
  if (!pair) return null
  const part = (column: string) => pairPartSql(column === pair.first ? 0 : 1)
  return {
    dim: pair.dim,
    conds: [...filters].map(([column, values]) => ({ expr: part(column), values })),
    keyExpr: groupColumn ? part(groupColumn) : null,
  }
}

/** What a plan needs to know of the stored data. */
export interface PlanFacts {
  /** Rollup number of a group (an owner's user id, or `type:<linkType>`), null when it has none. */
  groupNum(name: string): number | null
  /** How many links a set holds. */
  countLinks(links: LinkSet): number
  /** Start (ms) of the first hour with a click in the scope, or null. */
  firstClickHour(scope: Scope): number | null
  /**
   * How far the rollups reach (the events engine derives them from the events as hours close):
   * rows of a level exist for units ending at or before its limit; later time is read raw.
   * Absent: the rollups hold every click (SQLite and PostgreSQL write them with the events).
   */
  rolledUp?(): RolledUp
}

/** Per level, the instant (ms) up to which its rollup rows are complete. */
export interface RolledUp {
  hour: number
  day: number
  week: number
  /** The events engine's pair rows (stats.rollup.ts PAIRS): complete up to here; absent or 0: none. */
  pairDay?: number
}

/** The limit of a level (quarter hours and hours are rolled together). */
const limitOf = (level: Level, rolled: RolledUp) =>
  level === LEVEL_PAIR_DAY ? (rolled.pairDay ?? 0) : level.ms >= 7 * 86_400_000 ? rolled.week : level.ms >= 86_400_000 ? rolled.day : rolled.hour
/** The facts of a store that may answer with promises (PostgreSQL). */
export type PlanFactsPort = Awaitable<PlanFacts>

/** One read: rollup rows of `level` (null: raw click events) of `scope` over [from, to) ms. */
export interface Read {
  level: Level | null
  scope: Scope
  from: number
  to: number
}

export interface ReadPlan extends QueryPlan {
  scope: Scope
  /** Time series: the bucket starts, and the end of the last bucket. */
  bounds: number[]
  /** The reads whose sums are the answer (none when a filter accepts nothing). */
  reads: Read[]
}

/** Number of link conditions of a set. */
const conditionCount = (links: LinkSet) => Object.values(links).filter((v) => v !== undefined).length

/**
 * The scope of a query: a rollup scope of its own when the only condition is the whole
 * of a group (a member's links, one link type) and the answer is not per link.
 */
export function* scopeOf(links: LinkSet, perLink: boolean, facts: PlanFactsPort): Steps<Scope> {
  const n = conditionCount(links)
  if (!perLink && n === 0) return { kind: 'all' }
  if (!perLink && n === 1 && links.ownerId !== undefined)
    return { kind: 'group', column: 'user_id', value: links.ownerId, num: yield* ask(facts.groupNum(links.ownerId)) }
  if (!perLink && n === 1 && links.linkType !== undefined)
    return { kind: 'group', column: 'link_type', value: links.linkType, num: yield* ask(facts.groupNum(`type:${links.linkType}`)) }
  if (n === 0) return { kind: 'link', links, wide: true, everyLink: true }
  return { kind: 'link', links, wide: (yield* ask(facts.countLinks(links))) > WIDE_LINKS }
}

/** The busy links of a link scope (their day rows per dimension), or the other links (raw events). */
function busyPart(scope: LinkScope, busy: boolean): LinkScope {
  return { kind: 'link', links: scope.links, wide: scope.wide, busy }
}

/**
 * Where the answer comes from: the scope's rollups; for an event dimension of chosen
 * links, the busy links' day rows plus the other links' (few) raw events; raw events
 * alone when several non-geo dimensions are involved.
 */
function sourcesOf(scope: Scope, dimRead: DimRead | null): { scope: Scope; levels: Level[] }[] {
  if (dimRead === null) return [{ scope, levels: [] }]
  if (scope.kind === 'link' && dimRead.dim !== TOTAL)
    return [
      { scope: busyPart(scope, true), levels: levelsFor('busy', dimRead.dim) },
      { scope: busyPart(scope, false), levels: [] },
    ]
  return [{ scope, levels: levelsFor(scope.kind, dimRead.dim) }]
}

/** [from, to) split into aligned units of the given levels (finest first) and raw edges. */
export function decompose(from: number, to: number, levels: Level[]): { level: Level | null; from: number; to: number }[] {
  if (from >= to) return []
  const level = levels[levels.length - 1]
  if (!level) return [{ level: null, from, to }]
  const a = Math.ceil(from / level.ms) * level.ms
  const b = Math.floor(to / level.ms) * level.ms
  const finer = levels.slice(0, -1)
  if (a >= b) return decompose(from, to, finer)
  return [...decompose(from, a, finer), { level, from: a, to: b }, ...decompose(b, to, finer)]
}

/** [a, b) cut where a level's rollups end, each part with the levels that hold it. */
function withinRollups(a: number, b: number, levels: Level[], rolled: RolledUp | null): { from: number; to: number; levels: Level[] }[] {
  if (!rolled) return [{ from: a, to: b, levels }]
  const cuts = [...new Set(levels.map((l) => limitOf(l, rolled)))].filter((c) => c > a && c < b).sort((x, y) => x - y)
  const bounds = [a, ...cuts, b]
  return bounds.slice(0, -1).map((from, i) => {
    const to = bounds[i + 1]!
    return { from, to, levels: levels.filter((l) => limitOf(l, rolled) >= to) }
  })
}

/** Aligned ranges of the pieces per level, merged where contiguous: one read each. */
function spansOf(pieces: (readonly [number, number])[], levels: Level[], rolled: RolledUp | null = null): Map<Level | null, { from: number; to: number }[]> {
  const spans = new Map<Level | null, { from: number; to: number }[]>()
  for (const [a, b] of pieces)
    for (const r of withinRollups(a, b, levels, rolled).flatMap((part) => decompose(part.from, part.to, part.levels))) {
      const list = spans.get(r.level) ?? []
      const last = list[list.length - 1]
      if (last && last.to === r.from) last.to = r.to
      else list.push({ from: r.from, to: r.to })
      spans.set(r.level, list)
    }
  return spans
}

/**
 * The reads answering a query about `links`, or null for a time series of a scope that has
 * no click at all (the answer is no buckets). Throws when the series has too many buckets.
 */
export function planReads(query: QueryPlan, links: LinkSet, facts: PlanFacts): ReadPlan | null {
  return runSteps(planReadsSteps(query, links, facts)) as ReadPlan | null
}

/** planReads over facts that may answer with promises: run with runSteps (stats.steps.ts). */
export function* planReadsSteps(query: QueryPlan, links: LinkSet, facts: PlanFactsPort): Steps<ReadPlan | null> {
  const scope = yield* scopeOf(links, query.perLink !== null, facts)
  const rolled = facts.rolledUp ? yield* ask(facts.rolledUp()) : null
  // Two event dimensions of all links: the events engine's pair rows, where it has them.
  const pairRead = query.dimRead === null && scope.kind === 'all' && rolled?.pairDay ? pairReadOf(query.filters, query.groupDim?.column ?? null) : null
  if (pairRead) query = { ...query, dimRead: pairRead }
  const sources = sourcesOf(scope, query.dimRead)
  const { series, end } = query
  // The pieces to sum: one per bucket for time, else the whole range.
  let from = query.start
  if (from === null) from = series ? yield* ask(facts.firstClickHour(scope)) : 0
  let bounds: number[] = []
  if (series) {
    if (from === null) return null
    const b = bucketBoundaries(series.zone, series.granularity, from, end, MAX_BUCKETS)
    if (!b)
      throw parameterError(
        `'granularity' ${series.granularity} gives more than ${MAX_BUCKETS} buckets over this range: choose a coarser one or a shorter range`,
      )
    bounds = b
  }
  const start = from!
  const pieces = series ? bounds.slice(0, -1).map((b, i) => [Math.max(b, start), Math.min(bounds[i + 1]!, end)] as const) : [[start, end] as const]
  const reads: Read[] = []
  if (!query.empty)
    for (const src of sources)
      for (const [level, list] of spansOf(pieces, src.levels, rolled)) {
        // A group without a rollup number has no rows (and no events).
        if (level && src.scope.kind === 'group' && src.scope.num === null) continue
        for (const span of list) reads.push({ level, scope: src.scope, from: span.from, to: span.to })
      }
  return { ...query, scope, bounds, reads }
}
