/**
 * GET /statistics: turns the query into a scope (which links), event filters, a time
 * range (and buckets), then answers from the coarsest rollups that hold the answer
 * exactly, and from raw events for the rest (see stats.rollup.ts for the layout).
 *
 * Decisions (documented in the OpenAPI description too):
 * - Range is [start, end); end defaults to now; without start the interval applies,
 *   default `all` (every click, so a link's count equals its `clicks`).
 * - Time buckets are clipped to the range, so the buckets sum to the count; `start` of a
 *   bucket is its nominal local start as a UTC instant.
 * - A null key means unknown or none: country/region/city not located, referer null =
 *   direct visit (no Referer), utm null = not in the landing URL.
 * - Clicks of links deleted later still count (statistics are history); groupBy=link
 *   lists them too, so rows always add up to the count.
 */
import { AppError, parameterError } from '../shared/errors'
import { isDateTime } from '../shared/formats'
import type { Caller } from '../auth/auth.service'
import type { Settings } from '../config/settings'
import { continentOfCountry } from '../geo/continents'
import { DIMENSIONS, GEO_COLUMNS, TOTAL, geoComponentSql, levelsFor, type GeoColumn, type Level } from './stats.rollup'
import { RAW_UNIT_MS, type DimRead, type KeyKind, type LinkInfo, type ReadRow, type Scope, type SqlArg, type StatsStore } from './stats.store'
import { bucketBoundaries, canonicalZone, type Granularity } from './stats.time'
import type { GroupBy, Interval, StatisticsQuery } from './stats.schema'

const INTERVAL_MS: Record<Exclude<Interval, 'all'>, number> = {
  '24h': 86_400_000, '7d': 7 * 86_400_000, '30d': 30 * 86_400_000, '90d': 90 * 86_400_000, '180d': 180 * 86_400_000, '1y': 365 * 86_400_000,
}
/** Above this many links, link totals are read in time order instead of a seek per link (measured). */
const WIDE_LINKS = 1000
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

/** Every ISO code of a continent (the continent filter reads the country rollups). */
const countriesOf = (() => {
  const cache = new Map<string, string[]>()
  return (continent: string): string[] => {
    let list = cache.get(continent)
    if (!list) {
      list = []
      for (let a = 65; a <= 90; a++) for (let b = 65; b <= 90; b++) {
        const code = String.fromCharCode(a, b)
        if (continentOfCountry(code) === continent) list.push(code)
      }
      cache.set(continent, list)
    }
    return list
  }
})()

function parseInstant(value: string, name: string): number {
  const v = /^\d{4}-\d{2}-\d{2}$/.test(value) ? `${value}T00:00:00Z` : value
  if (!isDateTime(v)) throw parameterError(`'${name}' must be an ISO 8601 timestamp with a zone, such as 2025-01-31T00:00:00Z (got '${value}')`)
  return Date.parse(v)
}

type Totals = { c: number; s: number }

export function createStatsService(deps: { store: StatsStore; settings: Settings; now?: () => number }) {
  const { store, settings } = deps
  const now = deps.now ?? Date.now

  function visibleLink(caller: Caller, link: LinkInfo | null | undefined, name: string, given: string): LinkInfo {
    if (!link) throw parameterError(`'${name}' no link ${given}`)
    if (caller.role !== 'admin' && link.user_id !== caller.userId) throw new AppError('forbidden', `link ${link.id} belongs to another user`)
    return link
  }

  /** The links the query is about, from the link-level filters and the caller's rights. */
  function scopeOf(caller: Caller, q: StatisticsQuery, perLink: boolean): Scope {
    const where: string[] = []
    const args: SqlArg[] = []
    const ids = [...(q.linkId ? [q.linkId] : []), ...(q.linkIds ?? [])]
    if (ids.length) {
      const seqs = ids.map((id, i) => visibleLink(caller, store.linkById(id), q.linkId && i === 0 ? 'linkId' : 'linkIds', id).seq)
      where.push(`l.seq IN (${seqs.map(() => '?').join(',')})`)
      args.push(...seqs)
    }
    if (q.url) {
      let domain: string
      let key: string
      try {
        const u = new URL(q.url)
        domain = u.hostname.toLowerCase()
        key = decodeURIComponent(u.pathname.replace(/^\/+/, ''))
      } catch {
        throw parameterError(`'url' must be a full short link such as ${settings.shortOrigin(settings.defaultDomains[0] ?? 'example.com')}/abc`)
      }
      where.push('l.seq = ?')
      args.push(visibleLink(caller, store.liveLinkAt(domain, key), 'url', q.url).seq)
    } else if (q.domain) {
      where.push('l.domain = ?')
      args.push(q.domain.trim().toLowerCase())
    }
    if (q.linkType) (where.push('l.link_type = ?'), args.push(q.linkType))
    if (q.destination) (where.push('l.destination = ?'), args.push(q.destination))
    if (q.tagIds) {
      if (caller.role !== 'admin')
        for (const t of store.tagOwners(q.tagIds)) if (t.user_id !== caller.userId) throw new AppError('forbidden', `tag ${t.id} belongs to another user`)
      where.push(`l.seq IN (SELECT link_seq FROM link_tags WHERE tag_id IN (${q.tagIds.map(() => '?').join(',')}))`)
      args.push(...q.tagIds)
    } else if (q.tagNames) {
      const own = caller.role === 'admin' ? '' : ' AND user_id = ?'
      where.push(`l.seq IN (SELECT link_seq FROM link_tags WHERE tag_id IN (SELECT id FROM tags WHERE name_key IN (${q.tagNames.map(() => '?').join(',')})${own}))`)
      args.push(...q.tagNames.map((n) => n.trim().toLowerCase()))
      if (own) args.push(caller.userId)
    }
    if (caller.role !== 'admin') (where.push('l.user_id = ?'), args.push(caller.userId))
    if (!perLink && where.length === 0) return { kind: 'all' }
    if (!perLink && where.length === 1 && caller.role !== 'admin') return { kind: 'group', column: 'user_id', value: caller.userId, num: store.groupNum(caller.userId) }
    if (!perLink && where.length === 1 && q.linkType) return { kind: 'group', column: 'link_type', value: q.linkType, num: store.groupNum(`type:${q.linkType}`) }
    const sql = `SELECT l.seq FROM links l${where.length ? ` WHERE ${where.join(' AND ')}` : ''}`
    // Every link (an admin's per-link groupBy): no membership check at all.
    if (where.length === 0) return { kind: 'link', sql, args, wide: true, everyLink: true }
    return { kind: 'link', sql, args, wide: store.countLinks(sql, args) > WIDE_LINKS }
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

  /**
   * The rollup read answering the event filters and groupBy, or null when only raw events
   * can (several dimensions, unless all are geo: a city row knows its region and country).
   */
  function dimReadOf(filters: Map<string, string[]>, groupColumn: string | null): DimRead | null {
    const involved = [...new Set([...filters.keys(), ...(groupColumn ? [groupColumn] : [])])]
    if (involved.length === 0) return { dim: TOTAL, conds: [], keyExpr: null }
    const geo = (c: string): c is GeoColumn => (GEO_COLUMNS as readonly string[]).includes(c)
    if (involved.every(geo)) {
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

  function rangeOf(q: StatisticsQuery): { start: number | null; end: number } {
    const end = q.end !== undefined ? parseInstant(q.end, 'end') : now()
    let start: number | null = null
    if (q.start !== undefined) start = parseInstant(q.start, 'start')
    else if (q.interval && q.interval !== 'all') start = end - INTERVAL_MS[q.interval]
    if (start !== null && start >= end) throw parameterError(`'start' must be before 'end' (${new Date(start).toISOString()} ≥ ${new Date(end).toISOString()})`)
    return { start, end }
  }

  /** [from, to) split into aligned units of the given levels (finest first) and raw edges. */
  function decompose(from: number, to: number, levels: Level[]): { level: Level | null; from: number; to: number }[] {
    if (from >= to) return []
    const level = levels[levels.length - 1]
    if (!level) return [{ level: null, from, to }]
    const a = Math.ceil(from / level.ms) * level.ms
    const b = Math.floor(to / level.ms) * level.ms
    const finer = levels.slice(0, -1)
    if (a >= b) return decompose(from, to, finer)
    return [...decompose(from, a, finer), { level, from: a, to: b }, ...decompose(b, to, finer)]
  }

  function answer(caller: Caller, q: StatisticsQuery) {
    const groupBy: GroupBy = q.groupBy ?? 'count'
    const byTime = groupBy === 'time'
    const granularity = q.granularity as Granularity | undefined
    if (byTime && !granularity) throw parameterError(`'granularity' is required when groupBy is time (one of hour, day, week, month)`)
    const zone = canonicalZone(q.timezone ?? 'UTC')
    if (!zone) throw parameterError(`'timezone' must be an IANA time zone such as Europe/Paris (got '${q.timezone}')`)
    const { start, end } = rangeOf(q)

    const perLink = groupBy === 'link' || groupBy === 'link_type' || groupBy === 'destination'
    const groupDim = DIMENSIONS.find((d) => d.groupBy === groupBy) ?? null
    const scope = scopeOf(caller, q, perLink)
    const filters = eventFiltersOf(q)

    const read = dimReadOf(filters, groupDim?.column ?? null)
    const key: KeyKind = perLink ? 'link' : groupDim ? 'value' : 'none'
    const empty = [...filters.values()].some((v) => v.length === 0)
    // Where the answer comes from: the scope's rollups; for an event dimension of chosen
    // links, the busy links' day rows plus the other links' (few) raw events; raw events
    // alone when several non-geo dimensions are involved.
    const sources: { scope: Scope; levels: Level[] }[] =
      read === null ? [{ scope, levels: [] }]
      : scope.kind === 'link' && read.dim !== TOTAL
        ? [{ scope: store.busyPart(scope, true), levels: levelsFor('busy', read.dim) }, { scope: store.busyPart(scope, false), levels: [] }]
        : [{ scope, levels: levelsFor(scope.kind, read.dim) }]

    // The pieces to sum: one per bucket for time, else the whole range.
    let from = start
    if (from === null) from = byTime ? store.firstClickHour(scope) : 0
    let bounds: number[] = []
    if (byTime) {
      if (from === null) return []
      const b = bucketBoundaries(zone, granularity!, from, end, MAX_BUCKETS)
      if (!b) throw parameterError(`'granularity' ${granularity} gives more than ${MAX_BUCKETS} buckets over this range: choose a coarser one or a shorter range`)
      bounds = b
    }
    const pieces = byTime ? bounds.slice(0, -1).map((b, i) => [Math.max(b, from!), Math.min(bounds[i + 1]!, end)] as const) : [[from!, end] as const]

    // Aligned ranges per level, merged where contiguous, read with one query each.
    const spansOf = (levels: Level[]) => {
      const spans = new Map<Level | null, { from: number; to: number }[]>()
      for (const [a, b] of pieces)
        for (const r of decompose(a, b, levels)) {
          const list = spans.get(r.level) ?? []
          const last = list[list.length - 1]
          if (last && last.to === r.from) last.to = r.to
          else list.push({ from: r.from, to: r.to })
          spans.set(r.level, list)
        }
      return spans
    }

    const sums = new Map<string | number | null, Totals>()
    const perBucket: Totals[] = byTime ? bounds.slice(0, -1).map(() => ({ c: 0, s: 0 })) : []
    const bucketOf = (t: number) => {
      let lo = 0
      let hi = bounds.length - 2
      while (lo < hi) {
        const mid = (lo + hi + 1) >> 1
        if (bounds[mid]! <= t) lo = mid
        else hi = mid - 1
      }
      return lo
    }
    const take = (rows: ReadRow[], unitMs: number, spanFrom: number) => {
      for (const r of rows) {
        const target = byTime ? perBucket[bucketOf(Math.max(r.u * unitMs, spanFrom))]! : (sums.get(r.k) ?? (sums.set(r.k, { c: 0, s: 0 }), sums.get(r.k)!))
        target.c += r.c
        target.s += r.s
      }
    }
    // qr=true: scans only; qr=false: clicks that are not scans.
    const measure = (t: Totals) => (q.qr === true ? { clicks: t.s, scans: t.s } : q.qr === false ? { clicks: t.c - t.s, scans: 0 } : { clicks: t.c, scans: t.s })

    // Per-link groupBys: every read summed per link and joined with the links in one statement.
    if (perLink && !byTime) {
      const parts: { sql: string; args: SqlArg[] }[] = []
      if (!empty)
        for (const src of sources)
          for (const [level, list] of spansOf(src.levels))
            for (const span of list)
              parts.push(level
                ? store.rollupSql(level, src.scope, read!, span.from / level.ms, span.to / level.ms, key, false)
                : store.rawSql(src.scope, span.from, span.to, filters, key, null, false))
      const linkRows = store.readPerLink(parts, groupBy === 'link' ? null : groupBy === 'link_type' ? 'link_type' : 'destination')
      const name = groupBy === 'link' ? 'linkId' : groupBy === 'link_type' ? 'linkType' : 'destination'
      const measured = linkRows.map((r) => ({ r, m: measure({ c: r.c, s: r.s }) })).filter((x) => x.m.clicks > 0)
      measured.sort((a, b) => b.m.clicks - a.m.clicks || compareKeys(groupBy === 'link' ? a.r.id : a.r.k, groupBy === 'link' ? b.r.id : b.r.k))
      return groupBy === 'link'
        ? measured.map(({ r, m }) => ({ linkId: r.id, shortLink: `${settings.shortOrigin(r.domain!)}/${r.key}`, destination: r.destination, ...m }))
        : measured.map(({ r, m }) => ({ [name]: r.k, ...m }))
    }

    if (!empty)
      for (const src of sources)
        for (const [level, list] of spansOf(src.levels))
          for (const span of list) {
            if (level) take(store.readRollup(level, src.scope, read!, span.from / level.ms, span.to / level.ms, key, byTime), level.ms, span.from)
            else take(store.readRaw(src.scope, span.from, span.to, filters, key, groupDim?.column ?? null, byTime), RAW_UNIT_MS, span.from)
          }

    if (byTime) return perBucket.map((t, i) => ({ start: new Date(bounds[i]!).toISOString(), ...measure(t) }))
    if (groupBy === 'count') return measure(sums.get(null) ?? { c: 0, s: 0 })
    const rows = [...sums].map(([k, t]) => ({ key: k, m: measure(t) }))
    const name = groupDim!.key
    return rows
      .filter((r) => r.m.clicks > 0)
      .sort((a, b) => b.m.clicks - a.m.clicks || compareKeys(a.key, b.key))
      .map((r) => ({ [name]: r.key, ...r.m }))
  }

  return {
    /** Every read of one answer in one snapshot of the store (the writer commits in between). */
    statistics: (caller: Caller, q: StatisticsQuery) => store.snapshot(() => answer(caller, q)),
  }
}
export type StatsService = ReturnType<typeof createStatsService>

/** Ties broken by key (nulls last), so equal counts come in a stable order. */
function compareKeys(a: unknown, b: unknown): number {
  if (a === b) return 0
  if (a === null) return 1
  if (b === null) return -1
  return String(a) < String(b) ? -1 : 1
}
