/**
 * The statistics view as the URL holds it (so a view can be bookmarked and the back button
 * undoes a choice), and the GET /statistics query it stands for. URL names are the API's
 * own (`interval`, `timezone`, `granularity`, `qr`, `device`, …) except `top` (the top
 * list's groupBy) and custom dates (`start`/`end` as days in the chosen time zone).
 */
import type { Query } from '../../api'
import { FILTER_LINK_TYPES } from '../../link-types'

export type GroupBy =
  | 'link'
  | 'link_type'
  | 'destination'
  | 'country'
  | 'region'
  | 'city'
  | 'device'
  | 'browser'
  | 'os'
  | 'referer'
  | 'referer_url'
  | 'utm_source'
  | 'utm_medium'
  | 'utm_campaign'
  | 'utm_term'
  | 'utm_content'
export type Granularity = 'hour' | 'day' | 'week' | 'month'

/** A top list: its groupBy, the key of its rows (also the filter's query name), its label. */
export interface Dimension {
  groupBy: GroupBy
  key: string
  label: string
}
export const DIMENSIONS: Dimension[] = [
  { groupBy: 'link', key: 'linkId', label: 'Links' },
  { groupBy: 'country', key: 'country', label: 'Countries' },
  { groupBy: 'region', key: 'region', label: 'Regions' },
  { groupBy: 'city', key: 'city', label: 'Cities' },
  { groupBy: 'device', key: 'device', label: 'Devices' },
  { groupBy: 'browser', key: 'browser', label: 'Browsers' },
  { groupBy: 'os', key: 'os', label: 'Operating systems' },
  { groupBy: 'referer', key: 'referer', label: 'Referrers' },
  { groupBy: 'referer_url', key: 'refererUrl', label: 'Referrer URLs' },
  { groupBy: 'utm_source', key: 'utmSource', label: 'UTM source' },
  { groupBy: 'utm_medium', key: 'utmMedium', label: 'UTM medium' },
  { groupBy: 'utm_campaign', key: 'utmCampaign', label: 'UTM campaign' },
  { groupBy: 'utm_term', key: 'utmTerm', label: 'UTM term' },
  { groupBy: 'utm_content', key: 'utmContent', label: 'UTM content' },
  { groupBy: 'link_type', key: 'linkType', label: 'Link types' },
  { groupBy: 'destination', key: 'destination', label: 'Destinations' },
]
export const dimensionOf = (groupBy: string) => DIMENSIONS.find((d) => d.groupBy === groupBy)

/** The seed's enums: the filters that take one of a fixed set of values. */
export const CHOICES: Record<string, readonly string[]> = {
  device: ['Desktop', 'Mobile', 'Tablet', 'Embedded', 'SmartTv', 'Wearable', 'XR', 'Others'],
  browser: ['Chrome', 'Edge', 'Safari', 'Firefox', 'Opera', 'Samsung Internet', 'Android Browser', 'Others'],
  os: ['IOS', 'Android', 'Windows', 'MacOS', 'Linux', 'HarmonyOS', 'Other'],
  continent: ['Africa', 'Asia', 'Europe', 'North America', 'South America', 'Oceania'],
  linkType: FILTER_LINK_TYPES,
}

/** Every filter the screen offers, in the order of the filter form; names are the API's query names. */
export const FILTERS: { name: string; label: string; hint?: string }[] = [
  { name: 'linkId', label: 'Link id' },
  { name: 'domain', label: 'Short domain', hint: 'e.g. go.example.com' },
  { name: 'tagNames', label: 'Tag' },
  { name: 'linkType', label: 'Link type' },
  { name: 'destination', label: 'Destination URL' },
  { name: 'continent', label: 'Continent' },
  { name: 'country', label: 'Country', hint: 'Two-letter code, e.g. DE' },
  { name: 'region', label: 'Region' },
  { name: 'city', label: 'City' },
  { name: 'device', label: 'Device' },
  { name: 'browser', label: 'Browser' },
  { name: 'os', label: 'Operating system' },
  { name: 'referer', label: 'Referrer', hint: 'Host, e.g. www.google.com' },
  { name: 'refererUrl', label: 'Referrer URL' },
  { name: 'utmSource', label: 'UTM source' },
  { name: 'utmMedium', label: 'UTM medium' },
  { name: 'utmCampaign', label: 'UTM campaign' },
  { name: 'utmTerm', label: 'UTM term' },
  { name: 'utmContent', label: 'UTM content' },
]
export const filterLabel = (name: string) => FILTERS.find((f) => f.name === name)?.label ?? name

export const INTERVALS: { value: string; label: string; days: number }[] = [
  { value: '24h', label: 'Last 24 hours', days: 1 },
  { value: '7d', label: 'Last 7 days', days: 7 },
  { value: '30d', label: 'Last 30 days', days: 30 },
  { value: '90d', label: 'Last 90 days', days: 90 },
  { value: '180d', label: 'Last 180 days', days: 180 },
  { value: '1y', label: 'Last 12 months', days: 365 },
  { value: 'all', label: 'All time', days: Number.POSITIVE_INFINITY },
]
export const DEFAULT_INTERVAL = '30d'
export const GRANULARITIES: Granularity[] = ['hour', 'day', 'week', 'month']

export type Audience = 'all' | 'scans' | 'clicks'

export interface StatsView {
  /** The one link of /links/:id/stats, else null. */
  linkId: string | null
  /** An interval, or 'custom' when `start` is set. */
  interval: string
  /** Custom range: days (YYYY-MM-DD), both inclusive, in `timezone`. */
  startDay: string | null
  endDay: string | null
  timezone: string
  granularity: Granularity
  /** Whether the granularity came from the URL (else it follows the range). */
  granularityChosen: boolean
  audience: Audience
  top: GroupBy
  /** Active filters by API query name (one value each; tagNames may hold one name). */
  filters: Record<string, string>
}

export const browserTimeZone = () => Intl.DateTimeFormat().resolvedOptions().timeZone || 'UTC'

/** A zone the browser knows (a hand-edited URL may name none; dates are computed with it before the API sees it). */
function knownZone(zone: string | null): string | null {
  if (!zone) return null
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: zone })
    return zone
  } catch {
    return null
  }
}

const DAY_RE = /^\d{4}-\d{2}-\d{2}$/

export function readView(query: URLSearchParams, linkId: string | null): StatsView {
  const startDay = query.get('start')
  const endDay = query.get('end')
  const custom = startDay !== null
  const interval = custom ? 'custom' : (INTERVALS.find((i) => i.value === query.get('interval'))?.value ?? DEFAULT_INTERVAL)
  const g = query.get('granularity')
  const granularityChosen = (GRANULARITIES as string[]).includes(g ?? '')
  const filters: Record<string, string> = {}
  for (const f of FILTERS) {
    if (f.name === 'linkId' && linkId) continue
    const v = query.get(f.name)
    if (v) filters[f.name] = v
  }
  const top = dimensionOf(query.get('top') ?? '')?.groupBy ?? (linkId ? 'country' : 'link')
  const qr = query.get('qr')
  const timezone = knownZone(query.get('timezone')) ?? browserTimeZone()
  const view: StatsView = {
    linkId,
    interval,
    startDay: custom ? startDay : null,
    endDay: custom ? (endDay ?? todayIn(timezone)) : null,
    timezone,
    granularity: 'day',
    granularityChosen,
    audience: qr === 'true' ? 'scans' : qr === 'false' ? 'clicks' : 'all',
    top: linkId && top === 'link' ? 'country' : top,
    filters,
  }
  view.granularity = granularityChosen ? (g as Granularity) : defaultGranularity(view)
  return view
}

/** Days the range spans (Infinity for all time). */
export function rangeDays(v: StatsView): number {
  if (v.interval !== 'custom') return INTERVALS.find((i) => i.value === v.interval)!.days
  if (!v.startDay || !v.endDay || !DAY_RE.test(v.startDay) || !DAY_RE.test(v.endDay)) return 30
  return Math.max(1, (Date.parse(v.endDay) - Date.parse(v.startDay)) / 86_400_000 + 1)
}

/** A unit that gives a readable number of points: hours for a day, days up to a quarter, weeks up to a year. */
export function defaultGranularity(v: StatsView): Granularity {
  const days = rangeDays(v)
  if (days <= 2) return 'hour'
  if (days <= 92) return 'day'
  if (days <= 366) return 'week'
  return 'month'
}

/** Why the custom range cannot be asked for, or null. */
export function rangeError(v: StatsView): string | null {
  if (v.interval !== 'custom') return null
  if (!v.startDay || !DAY_RE.test(v.startDay) || Number.isNaN(Date.parse(v.startDay))) return 'Choose a valid start date'
  if (!v.endDay || !DAY_RE.test(v.endDay) || Number.isNaN(Date.parse(v.endDay))) return 'Choose a valid end date'
  if (v.endDay < v.startDay) return 'The end date is before the start date'
  return null
}

/** The query every statistics request of this view shares (range, zone, scope, filters). */
export function baseQuery(v: StatsView): Query {
  const q: Query = { timezone: v.timezone, ...v.filters }
  if (v.interval === 'custom') {
    q.start = new Date(zonedMidnight(v.startDay!, v.timezone)).toISOString()
    q.end = new Date(zonedMidnight(nextDay(v.endDay!), v.timezone)).toISOString()
  } else q.interval = v.interval
  if (v.linkId) q.linkId = v.linkId
  if (v.filters.tagNames) q.tagNames = [v.filters.tagNames]
  if (v.audience !== 'all') q.qr = v.audience === 'scans'
  return q
}

/** How far `zone` is ahead of UTC at instant t, in ms. */
function zoneOffset(t: number, zone: string): number {
  const parts = new Intl.DateTimeFormat('en-US', {
    timeZone: zone,
    hourCycle: 'h23',
    year: 'numeric',
    month: 'numeric',
    day: 'numeric',
    hour: 'numeric',
    minute: 'numeric',
    second: 'numeric',
  }).formatToParts(new Date(t))
  const n = (type: string) => Number(parts.find((p) => p.type === type)?.value)
  return Date.UTC(n('year'), n('month') - 1, n('day'), n('hour'), n('minute'), n('second')) - (t - (t % 1000))
}

/** The instant a day (YYYY-MM-DD) begins in `zone` (twice corrected, for a DST change between guess and answer). */
export function zonedMidnight(day: string, zone: string): number {
  const wall = Date.parse(`${day}T00:00:00Z`)
  let t = wall - zoneOffset(wall, zone)
  t = wall - zoneOffset(t, zone)
  return t
}

export function nextDay(day: string): string {
  return new Date(Date.parse(`${day}T00:00:00Z`) + 86_400_000).toISOString().slice(0, 10)
}

/** Today's date (YYYY-MM-DD) in `zone`. */
export function todayIn(zone: string, daysBack = 0): string {
  const t = Date.now() - daysBack * 86_400_000
  try {
    return new Intl.DateTimeFormat('en-CA', { timeZone: zone, year: 'numeric', month: '2-digit', day: '2-digit' }).format(t)
  } catch {
    return new Date(t).toISOString().slice(0, 10)
  }
}

let regionNames: Intl.DisplayNames | null = null
/** "DE" → "Germany" in the browser's language (the code itself when unknown). */
export function countryName(code: string): string {
  try {
    regionNames ??= new Intl.DisplayNames(undefined, { type: 'region' })
    return regionNames.of(code.toUpperCase()) ?? code
  } catch {
    return code
  }
}

/** Time zones for the picker: UTC first, then every zone the browser knows. */
export function timeZones(current: string): string[] {
  let zones: string[] = []
  try {
    zones = (Intl as unknown as { supportedValuesOf(k: string): string[] }).supportedValuesOf('timeZone')
  } catch {
    zones = []
  }
  return [...new Set(['UTC', current, ...zones])]
}

/**
 * Like the router's setQuery, but a new history entry: a choice (a range, a filter, a tab)
 * is undone by the back button. The router follows popstate, so that tells it; the page
 * does not scroll, so clicking a bar low on the page keeps it in view.
 */
export function pushQuery(values: Record<string, string | null | undefined>) {
  const q = new URLSearchParams(location.search)
  for (const [k, v] of Object.entries(values)) {
    q.delete(k)
    if (v !== null && v !== undefined && v !== '') q.set(k, v)
  }
  const s = q.toString()
  const url = `${location.pathname}${s ? `?${s}` : ''}`
  if (url === location.pathname + location.search) return
  history.pushState(null, '', url)
  dispatchEvent(new PopStateEvent('popstate'))
}
