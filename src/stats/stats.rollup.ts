/**
 * Rollups of click events: pre-summed clicks and scans per scope × time unit × dimension
 * value, kept in the same transaction as the events (click-writer.ts) and rebuilt from
 * them by the migrations. Layout chosen by measurement at 10M events (scripts/bench/stats.ts):
 *
 *   scope 0 (all links)        quarter hour × total; hour and day × total and every dimension
 *   scope −n (group n)         quarter hour and hour × total; day × total and every dimension.
 *                              Groups (`stats_groups`): each link owner, and each link type
 *                              (`type:<linkType>`); a link never changes owner or type.
 *   scope +seq (one link)      hour, day and 7-day block × total
 *   scope +seq (a busy link)   also day × every dimension, for links with BUSY_LINK_CLICKS
 *                              clicks or more (`stats_busy_links`)
 *
 * Per-link dimension rollups for every link were measured at ~4 rows per event (the long
 * tail of links makes nearly every link-day-value unique: 40M rows at 10M events), so only
 * busy links get them: 190 links with 62 % of the events, 6.6M rows. A link below the
 * threshold has few events, which its breakdowns read raw through (link_seq, at).
 *
 * Region and city values are stored as paths that carry their country (and region):
 * `DEBavaria` and `DEBavaria\x1fMunich` (the 2-letter country, or `--` when unknown,
 * first), so a geo filter with a geo groupBy (country=DE by city, continent by
 * region) reads one rollup. A null dimension value is stored as '' (WITHOUT ROWID keys
 * cannot hold NULL; no real value is ever empty).
 */
import type { ClickEvent } from './click-event'

/** Event dimensions with rollups: code (stored in `dim`), column, and groupBy/output names. */
export const DIMENSIONS = [
  { code: 1, column: 'country', groupBy: 'country', key: 'country' },
  { code: 2, column: 'region', groupBy: 'region', key: 'region' },
  { code: 3, column: 'city', groupBy: 'city', key: 'city' },
  { code: 4, column: 'os', groupBy: 'os', key: 'os' },
  { code: 5, column: 'browser', groupBy: 'browser', key: 'browser' },
  { code: 6, column: 'device', groupBy: 'device', key: 'device' },
  { code: 7, column: 'referer', groupBy: 'referer', key: 'referer' },
  { code: 8, column: 'referer_url', groupBy: 'referer_url', key: 'refererUrl' },
  { code: 9, column: 'utm_source', groupBy: 'utm_source', key: 'utmSource' },
  { code: 10, column: 'utm_medium', groupBy: 'utm_medium', key: 'utmMedium' },
  { code: 11, column: 'utm_campaign', groupBy: 'utm_campaign', key: 'utmCampaign' },
  { code: 12, column: 'utm_term', groupBy: 'utm_term', key: 'utmTerm' },
  { code: 13, column: 'utm_content', groupBy: 'utm_content', key: 'utmContent' },
] as const
export type Dimension = (typeof DIMENSIONS)[number]
/** `dim` of the rows holding plain totals. */
export const TOTAL = 0
/** Geo dims from coarse to fine: a finer rollup row also knows the coarser values. */
export const GEO_COLUMNS = ['country', 'region', 'city'] as const
export type GeoColumn = (typeof GEO_COLUMNS)[number]

/** A link gets per-day dimension rollups once it has this many clicks (see the header). */
export const BUSY_LINK_CLICKS = 5000

/** Separates a region from its city in a stored city path. */
const SEP = '\x1f'
/** The 2-character country part of a stored region or city path. */
const countryPart = (country: string | null) => (country && country.length === 2 ? country : '--')

/** The stored rollup value of an event for a dimension (null → ''); a dimension's output key is its ClickEvent field. */
function dimValueOf(dim: number, e: ClickEvent): string {
  if (dim === TOTAL) return ''
  if (dim === 2) return countryPart(e.country) + (e.region ?? '')
  if (dim === 3) return countryPart(e.country) + (e.region ?? '') + SEP + (e.city ?? '')
  return e[DIMENSIONS[dim - 1]!.key] ?? ''
}

/** The same value computed in SQL from click_events `e` (the rebuilds; `chr` is DuckDB's name of SQLite's `char`). */
export function valueSql(dim: number, charFn: 'char' | 'chr' = 'char'): string {
  if (dim === TOTAL) return "''"
  const cc = "(CASE WHEN length(e.country) = 2 THEN e.country ELSE '--' END)"
  if (dim === 2) return `${cc} || coalesce(e.region, '')`
  if (dim === 3) return `${cc} || coalesce(e.region, '') || ${charFn}(31) || coalesce(e.city, '')`
  return `coalesce(e.${DIMENSIONS[dim - 1]!.column}, '')`
}

/**
 * SQL reading one geo component out of the `value` of rows of geo dim `dim` (a
 * component at most as fine as the dim), null when unknown.
 */
export function geoComponentSql(dim: 1 | 2 | 3, component: GeoColumn): string {
  if (component === 'country') return dim === 1 ? "nullif(value, '')" : "nullif(substr(value, 1, 2), '--')"
  if (component === 'region') return dim === 2 ? "nullif(substr(value, 3), '')" : "nullif(substr(value, 3, instr(value, char(31)) - 3), '')"
  return "nullif(substr(value, instr(value, char(31)) + 1), '')"
}

export const HOUR = 3_600_000
export const DAY = 86_400_000

/**
 * Events engine only (events.engine.ts): day rows of all links per pair of event dimensions
 * (`stats_pair_day`: scope 0, dim, t, a, b, clicks, scans; null → ''), for the questions that
 * involve two of them (one filtered, another grouped: a bar click on the statistics screen),
 * which otherwise scan a year of raw events. The dimensions of few values: their pairs per day
 * are a few thousand rows against ~27,000 events a day at 10M a year. A pair's `dim` is
 * PAIR_DIM_BASE + 8·i + j (i < j, indexes in PAIR_COLUMNS); `a` holds the first one's value.
 */
export const PAIR_COLUMNS = ['country', 'os', 'browser', 'device', 'referer', 'utm_source', 'utm_medium', 'utm_campaign'] as const
export const PAIR_DIM_BASE = 64
/**
 * City with the dimensions of fewest values (os, browser, device): a few values × the day's cities.
 * Their dim is PAIR_DIM_BASE + 8·i + 8 (i: the first one's index), a code no pair above takes (j > i).
 * Without them "phones only, by city" read a year of raw events: 651 ms at 100M clicks.
 */
const CITY_PAIRS = (['os', 'browser', 'device'] as const).map((first) => ({
  dim: PAIR_DIM_BASE + 8 * PAIR_COLUMNS.indexOf(first) + 8,
  first: first as string,
  second: 'city',
}))
export const PAIRS: { dim: number; first: string; second: string }[] = [
  ...PAIR_COLUMNS.flatMap((first, i) => PAIR_COLUMNS.slice(i + 1).map((second, k) => ({ dim: PAIR_DIM_BASE + 8 * i + (i + 1 + k), first, second }))),
  ...CITY_PAIRS,
]
/** The set of PAIRS the pair rows of a file were made for: another one (a file from before) drops them and backfills them all. */
export const PAIRS_VERSION = 2
/** The pair of two distinct columns, or null when either has no pair rows. */
export const pairOf = (a: string, b: string) => PAIRS.find((p) => (p.first === a && p.second === b) || (p.first === b && p.second === a)) ?? null
/** SQL reading the first (0) or second (1) value of a pair row, null when unknown. */
export const pairPartSql = (which: 0 | 1) => (which === 0 ? "nullif(a, '')" : "nullif(b, '')")

/** A rollup level: its table and unit (a unit number t covers [t·ms, (t+1)·ms) UTC). */
export interface Level {
  table: 'stats_quarter' | 'stats_hour' | 'stats_day' | 'stats_week' | 'stats_pair_day'
  ms: number
}
/**
 * Quarter hours, totals of all links and of each group only: the edges of local days in
 * :30/:45 zones (Asia/Kolkata) without reading raw events (a 1-year daily series read a
 * raw hour per day: ~100 ms at 10M events).
 */
export const LEVEL_QUARTER: Level = { table: 'stats_quarter', ms: 900_000 }
export const LEVEL_HOUR: Level = { table: 'stats_hour', ms: HOUR }
export const LEVEL_DAY: Level = { table: 'stats_day', ms: DAY }
/**
 * 7-day blocks from the epoch (not calendar weeks: any aligned block serves a range).
 * Only for link totals, where a month of days is ~5,000 active links × 30 rows.
 */
export const LEVEL_WEEK: Level = { table: 'stats_week', ms: 7 * DAY }
export const LEVELS = [LEVEL_QUARTER, LEVEL_HOUR, LEVEL_DAY, LEVEL_WEEK]
/** The pair rows' days (all links only): complete up to their own limit (`RolledUp.pairDay`). */
export const LEVEL_PAIR_DAY: Level = { table: 'stats_pair_day', ms: DAY }

/** Scope kinds of the rollups; `busy` = the dimension rows of busy links (scope +seq too). */
export type ScopeKind = 'all' | 'group' | 'link' | 'busy'

/** Which levels hold rows for a scope kind and dim (TOTAL or a dimension code), finest first. */
export function levelsFor(kind: ScopeKind, dim: number): Level[] {
  if (dim >= PAIR_DIM_BASE) return kind === 'all' ? [LEVEL_PAIR_DAY] : []
  if (dim === TOTAL) return kind === 'link' ? [LEVEL_HOUR, LEVEL_DAY, LEVEL_WEEK] : kind === 'busy' ? [] : [LEVEL_QUARTER, LEVEL_HOUR, LEVEL_DAY]
  if (kind === 'all') return [LEVEL_HOUR, LEVEL_DAY]
  if (kind === 'group' || kind === 'busy') return [LEVEL_DAY]
  return []
}

/** Dims kept for a scope kind at a level (the same table as levelsFor, read the other way). */
export function dimsKept(kind: ScopeKind, level: Level): number[] {
  const all = [TOTAL, ...DIMENSIONS.map((d) => d.code)]
  return all.filter((dim) => levelsFor(kind, dim).includes(level))
}

export interface RollupDelta {
  table: Level['table']
  scope: number
  dim: number
  t: number
  value: string
  clicks: number
  scans: number
}

const KINDS: ScopeKind[] = ['all', 'group', 'link', 'busy']
/** (level, scope kind, dims) triples every event is summed into, computed once. */
const PLAN_ENTRIES = LEVELS.flatMap((level) => KINDS.map((kind) => ({ level, kind, dims: dimsKept(kind, level) })).filter((p) => p.dims.length > 0))
/**
 * Each plan entry with, when there is one, the finer entry of its kind that keeps all its dims
 * (`from`, and where each dim sits there): its rows are summed from that entry's rows after the
 * events, not from every event (all links' days from their hours, a link's days and weeks from
 * its hours): a quarter fewer map updates per event.
 */
const PLAN = PLAN_ENTRIES.map((entry) => {
  const finer = PLAN_ENTRIES.filter(
    (f) => f.kind === entry.kind && f.level.ms < entry.level.ms && entry.level.ms % f.level.ms === 0 && entry.dims.every((d) => f.dims.includes(d)),
  ).sort((a, b) => b.level.ms - a.level.ms)[0]
  return { ...entry, from: finer ? PLAN_ENTRIES.indexOf(finer) : -1, fromDims: finer ? entry.dims.map((d) => finer.dims.indexOf(d)) : [] }
})
/** Plan entries summed from the events, and those summed from a finer entry's rows (finer ones first, so a source is complete). */
const FROM_EVENTS = PLAN.flatMap((p, i) => (p.from < 0 ? [i] : []))
const FROM_ROWS = PLAN.flatMap((p, i) => (p.from >= 0 ? [i] : [])).sort((a, b) => PLAN[a]!.level.ms - PLAN[b]!.level.ms)

/** What the writer knows of a link: its group scopes (owner, type) and whether it is busy. */
export interface LinkScopes {
  groups(linkSeq: number): readonly number[]
  busy(linkSeq: number): boolean
}

/**
 * Sums a batch of events into rollup rows. Rows are found through maps keyed by numbers (plan
 * entry, scope, unit) and each event's stored values are computed once: keys built as strings per
 * event and plan entry cost ~1 µs each, seconds for a batch of 50,000 events.
 */
export function rollupDeltas(events: ClickEvent[], links: LinkScopes): RollupDelta[] {
  const out: RollupDelta[] = []
  // Per plan entry: scope → unit → per dim of the entry, value → row.
  const rows = PLAN.map(() => new Map<number, Map<number, Map<string, RollupDelta>[]>>())
  const values: string[] = []
  /** The per-dim maps of a plan entry's rows of one scope and unit. */
  const unitOf = (p: number, scope: number, t: number) => {
    let byUnit = rows[p]!.get(scope)
    if (!byUnit) {
      byUnit = new Map()
      rows[p]!.set(scope, byUnit)
    }
    let byDim = byUnit.get(t)
    if (!byDim) {
      byDim = PLAN[p]!.dims.map(() => new Map())
      byUnit.set(t, byDim)
    }
    return byDim
  }
  const addTo = (g: Map<string, RollupDelta>, p: number, scope: number, t: number, i: number, value: string, n: number, scans: number) => {
    const row = g.get(value)
    if (row) {
      row.clicks += n
      row.scans += scans
    } else {
      const made = { table: PLAN[p]!.level.table, scope, dim: PLAN[p]!.dims[i]!, t, value, clicks: n, scans }
      g.set(value, made)
      out.push(made)
    }
  }
  const add = (p: number, scope: number, t: number, n: number, scans: number) => {
    const { dims } = PLAN[p]!
    const byDim = unitOf(p, scope, t)
    for (let i = 0; i < dims.length; i++) addTo(byDim[i]!, p, scope, t, i, values[dims[i]!]!, n, scans)
  }
  for (const e of events) {
    const scans = e.scan ? e.n : 0
    for (let dim = 0; dim <= DIMENSIONS.length; dim++) values[dim] = dimValueOf(dim, e)
    const groups = links.groups(e.linkSeq)
    const busy = links.busy(e.linkSeq)
    for (const p of FROM_EVENTS) {
      const { level, kind } = PLAN[p]!
      const t = Math.floor(e.at / level.ms)
      if (kind === 'all') add(p, 0, t, e.n, scans)
      else if (kind === 'group') for (const scope of groups) add(p, scope, t, e.n, scans)
      else if (kind === 'link' || busy) add(p, e.linkSeq, t, e.n, scans)
    }
  }
  for (const p of FROM_ROWS) {
    const { from, fromDims, level } = PLAN[p]!
    const per = level.ms / PLAN[from]!.level.ms
    for (const [scope, byUnit] of rows[from]!)
      for (const [ft, byDim] of byUnit) {
        const t = Math.floor(ft / per)
        const target = unitOf(p, scope, t)
        for (let i = 0; i < fromDims.length; i++) for (const r of byDim[fromDims[i]!]!.values()) addTo(target[i]!, p, scope, t, i, r.value, r.clicks, r.scans)
      }
  }
  return out
}

/** Parts of the rebuild: which scopes (`owner`/`type` are the two kinds of group) and dims. */
export type RebuildKind = 'all' | 'owner' | 'type' | 'link' | 'busy'

/**
 * SQL that rebuilds rollup rows from click_events (the reference the writer is tested
 * against): every row of the given kinds and dims, expecting none of them present. Needs
 * stats_groups filled with the groups, and stats_busy_links. Migrations 0007/0008 hold
 * a frozen copy of the text this produced when they shipped, so changing this changes no
 * migration: a change to the stored values needs a new migration, with its rebuild pasted
 * in as text the same way (src/store/migrate.test.ts checks that migrations import no
 * live code, and that upgrading a database rebuilds what the writer writes).
 */
export function rebuildSql(kinds: RebuildKind[] = ['all', 'owner', 'type', 'link', 'busy'], onlyDims?: number[]): string {
  const parts: string[] = []
  const scopes: Record<RebuildKind, [ScopeKind, string, string]> = {
    all: ['all', '0', ''],
    owner: ['group', '-o.num', 'JOIN links l ON l.seq = e.link_seq JOIN stats_groups o ON o.name = l.user_id'],
    type: ['group', '-o.num', "JOIN links l ON l.seq = e.link_seq JOIN stats_groups o ON o.name = 'type:' || l.link_type"],
    link: ['link', 'e.link_seq', ''],
    busy: ['busy', 'e.link_seq', 'JOIN stats_busy_links b ON b.seq = e.link_seq'],
  }
  for (const level of LEVELS)
    for (const k of kinds) {
      const [kind, scopeExpr, join] = scopes[k]
      for (const dim of dimsKept(kind, level)) {
        if (onlyDims && !onlyDims.includes(dim)) continue
        parts.push(`INSERT INTO ${level.table} (scope, dim, t, value, clicks, scans)
  SELECT ${scopeExpr}, ${dim}, e.at / ${level.ms}, ${valueSql(dim)}, sum(e.n), sum(e.n * e.scan) FROM click_events e ${join}
  GROUP BY 1, 3, 4;`)
      }
    }
  return parts.join('\n')
}

/** The same rows for one link that just became busy (its events so far): one statement per dim, bound to the link seq. */
export function busyBackfillSql(): string[] {
  return DIMENSIONS.map(
    (d) => `INSERT INTO stats_day (scope, dim, t, value, clicks, scans)
  SELECT e.link_seq, ${d.code}, e.at / ${DAY}, ${valueSql(d.code)}, sum(e.n), sum(e.n * e.scan) FROM click_events e
  WHERE e.link_seq = ? GROUP BY 3, 4`,
  )
}
