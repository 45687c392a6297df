/**
 * Rollups of click events: pre-summed clicks and scans per scope × time unit × dimension
 * value, kept in the same transaction as the events (click-writer.ts) and rebuilt from
 * them by the migration. Layout chosen by measurement at 10M events (scripts/bench/stats.ts):
 *
 *   scope 0 (all links)      quarter hour × total; hour and day × total and every dimension
 *   scope −n (owner n)       quarter hour and hour × total; day × total and every dimension
 *   scope +seq (one link)    hour, day and 7-day block × total
 *
 * Per-link dimension rollups were measured at ~4 rows per event (the long tail of links
 * makes nearly every link-hour-value unique), so dimension breakdowns of chosen links read
 * the raw events through the (link_seq, at) index instead. A null dimension value is
 * stored as '' (WITHOUT ROWID keys cannot hold NULL; no real value is ever empty).
 */
import type { ClickEvent } from './click-writer'

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

/** ClickEvent field of each dimension column. */
const FIELD: Record<Dimension['column'], keyof ClickEvent> = {
  country: 'country', region: 'region', city: 'city', os: 'os', browser: 'browser', device: 'device', referer: 'referer',
  referer_url: 'refererUrl', utm_source: 'utmSource', utm_medium: 'utmMedium', utm_campaign: 'utmCampaign', utm_term: 'utmTerm',
  utm_content: 'utmContent',
}

export const HOUR = 3_600_000
export const DAY = 86_400_000

/** A rollup level: its table and unit (a unit number t covers [t·ms, (t+1)·ms) UTC). */
export interface Level {
  table: 'stats_quarter' | 'stats_hour' | 'stats_day' | 'stats_week'
  ms: number
}
/**
 * Quarter hours, totals of all links and of each owner only: the edges of local days in
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

export type ScopeKind = 'all' | 'owner' | 'link'

/** Which levels hold rows for a scope kind and dim (TOTAL or a dimension code), finest first. */
export function levelsFor(kind: ScopeKind, dim: number): Level[] {
  if (dim === TOTAL) return kind === 'link' ? [LEVEL_HOUR, LEVEL_DAY, LEVEL_WEEK] : [LEVEL_QUARTER, LEVEL_HOUR, LEVEL_DAY]
  if (kind === 'all') return [LEVEL_HOUR, LEVEL_DAY]
  if (kind === 'owner') return [LEVEL_DAY]
  return []
}

/** Dims kept for a scope kind at a level (the same table as levelsFor, read the other way). */
function dimsKept(kind: ScopeKind, level: Level): number[] {
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

/** (level, scope kind, dims) triples every event is summed into, computed once. */
const PLAN = LEVELS.flatMap((level) =>
  (['all', 'owner', 'link'] as const).map((kind) => ({
    level,
    kind,
    dims: dimsKept(kind, level).map((dim) => ({ dim, field: dim === TOTAL ? null : FIELD[DIMENSIONS[dim - 1]!.column] })),
  })).filter((p) => p.dims.length > 0),
)

/**
 * Sums a batch of events into rollup rows. `ownerScope(linkSeq)` is the (negative) scope
 * of the link's owner.
 */
export function rollupDeltas(events: ClickEvent[], ownerScope: (linkSeq: number) => number): RollupDelta[] {
  // Rows by (table, scope, t), then per dim by value: one short key per event and plan entry.
  const groups = new Map<string, Map<string, RollupDelta>[]>()
  for (const e of events) {
    const scans = e.scan ? e.n : 0
    const owner = ownerScope(e.linkSeq)
    for (const p of PLAN) {
      const scope = p.kind === 'all' ? 0 : p.kind === 'owner' ? owner : e.linkSeq
      const t = Math.floor(e.at / p.level.ms)
      const gk = `${p.level.table}|${scope}|${t}`
      let byDim = groups.get(gk)
      if (!byDim) groups.set(gk, (byDim = p.dims.map(() => new Map())))
      for (let i = 0; i < p.dims.length; i++) {
        const { dim, field } = p.dims[i]!
        const value = field === null ? '' : ((e[field] as string | null) ?? '')
        const g = byDim[i]!
        const row = g.get(value)
        if (row) (row.clicks += e.n, (row.scans += scans))
        else g.set(value, { table: p.level.table, scope, dim, t, value, clicks: e.n, scans })
      }
    }
  }
  const out: RollupDelta[] = []
  for (const byDim of groups.values()) for (const g of byDim) for (const row of g.values()) out.push(row)
  return out
}

/**
 * SQL that rebuilds every rollup row from click_events (the migration's backfill, and the
 * benchmark's bulk load). Expects empty rollup tables and a filled stats_owners.
 */
export function rebuildSql(): string {
  const parts: string[] = []
  const scopes: [ScopeKind, string, string][] = [
    ['all', '0', ''],
    ['owner', '-o.num', 'JOIN links l ON l.seq = e.link_seq JOIN stats_owners o ON o.user_id = l.user_id'],
    ['link', 'e.link_seq', ''],
  ]
  for (const level of LEVELS) {
    for (const [kind, scopeExpr, join] of scopes) {
      for (const dim of dimsKept(kind, level)) {
        const value = dim === TOTAL ? "''" : `coalesce(e.${DIMENSIONS[dim - 1]!.column}, '')`
        parts.push(`INSERT INTO ${level.table} (scope, dim, t, value, clicks, scans)
  SELECT ${scopeExpr}, ${dim}, e.at / ${level.ms}, ${value}, sum(e.n), sum(e.n * e.scan) FROM click_events e ${join}
  GROUP BY 1, 3, 4;`)
      }
    }
  }
  return parts.join('\n')
}
