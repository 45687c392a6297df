/** The GET /statistics queries the statistics benchmarks time (scripts/bench/stats.ts, its --store mode). */
import { GROUP_BY } from '../../src/stats/stats.schema'
export type BenchCaller = 'admin' | 'bigMember' | 'smallMember'
export interface BenchQuery {
  label: string
  query: string
  caller: BenchCaller
}

/** `end`: the hour the seed ran (kv bench_end); the data covers the year before it. */
export function statsQueries(end: number, links: { top: string; median: number }): BenchQuery[] {
  const start = end - 365 * 24 * 3_600_000
  const iso = (t: number) => new Date(t).toISOString()
  const last30 = `start=${iso(end - 30 * 86_400_000)}&end=${iso(end)}`
  const lastYear = `start=${iso(start)}&end=${iso(end)}`
  const q: BenchQuery[] = []
  const add = (label: string, query: string, caller: BenchCaller = 'admin') => q.push({ label, query, caller })
  add('admin count, 30 days', `${last30}`)
  add('admin count, all time (default interval)', '')
  add('admin count, interval=30d (to now: hour and raw edges)', 'interval=30d')
  add('admin count, 30 days, qr=true', `${last30}&qr=true`)
  // Every event dimension (the groupBys that are not time, links or link properties).
  for (const g of GROUP_BY.filter((g) => !['count', 'time', 'link', 'link_type', 'destination'].includes(g)))
    add(`admin groupBy=${g}, 30 days`, `groupBy=${g}&${last30}`)
  add('admin groupBy=link, 30 days', `groupBy=link&${last30}`)
  add('admin groupBy=link_type, 30 days', `groupBy=link_type&${last30}`)
  add('admin groupBy=destination, 30 days', `groupBy=destination&${last30}`)
  add('admin time day, 1 year, UTC', `groupBy=time&granularity=day&${lastYear}`)
  add('admin time day, 1 year, Europe/Paris', `groupBy=time&granularity=day&timezone=Europe/Paris&${lastYear}`)
  add('admin time day, 1 year, Asia/Kolkata (:30 zone)', `groupBy=time&granularity=day&timezone=Asia/Kolkata&${lastYear}`)
  add('admin time hour, 30 days, America/New_York', `groupBy=time&granularity=hour&timezone=America/New_York&${last30}`)
  add('admin time week, 1 year, Europe/Paris', `groupBy=time&granularity=week&timezone=Europe/Paris&${lastYear}`)
  add('admin time month, all, UTC', `groupBy=time&granularity=month`)
  add('admin groupBy=city, 1 year', `groupBy=city&${lastYear}`)
  // A referer URL's series in zones: all links' hour rows of it serve days that are not UTC's (without them, a year
  // of raw events: 23.7 → 81.6 ms at 10M).
  const googleSearch = `refererUrl=${encodeURIComponent('https://www.google.com/search')}`
  add('refererUrl time day, 1 year, Europe/Paris', `${googleSearch}&groupBy=time&granularity=day&timezone=Europe/Paris&${lastYear}`)
  add('refererUrl time hour, 30 days, America/New_York', `${googleSearch}&groupBy=time&granularity=hour&timezone=America/New_York&${last30}`)
  add('refererUrl count, 30 days', `${googleSearch}&${last30}`)
  add('big member (u0) count, 30 days', `${last30}`, 'bigMember')
  add('big member groupBy=city, 30 days', `groupBy=city&${last30}`, 'bigMember')
  add('big member groupBy=link, 30 days', `groupBy=link&${last30}`, 'bigMember')
  add('big member time day, 1 year, Europe/Paris', `groupBy=time&granularity=day&timezone=Europe/Paris&${lastYear}`, 'bigMember')
  add('small member (u40) groupBy=country, 30 days', `groupBy=country&${last30}`, 'smallMember')
  add('linkId (top link) count, 30 days', `linkId=${links.top}&${last30}`)
  add('linkId (top link) time day, 1 year, Europe/Paris', `linkId=${links.top}&groupBy=time&granularity=day&timezone=Europe/Paris&${lastYear}`)
  add('linkId (top link, busy) groupBy=country, 30 days', `linkId=${links.top}&groupBy=country&${last30}`)
  add('linkId (median link, not busy) groupBy=city, 30 days (raw)', `linkId=lnk_b${links.median}&groupBy=city&${last30}`)
  add('tagIds (1 tag of u0) groupBy=os, 30 days', `tagIds=tag_u0_3&groupBy=os&${last30}`)
  add('linkType=menu count, 30 days', `linkType=menu&${last30}`)
  add('linkType=menu time day, 1 year', `linkType=menu&groupBy=time&granularity=day&${lastYear}`)
  add('linkType=menu groupBy=country, 30 days', `linkType=menu&groupBy=country&${last30}`)
  add('country=DE count, 30 days (country rollup)', `country=DE&${last30}`)
  add('continent=Europe time day, 1 year (country rollup)', `continent=Europe&groupBy=time&granularity=day&${lastYear}`)
  add('country=DE groupBy=city, 30 days (city paths)', `country=DE&groupBy=city&${last30}`)
  add('continent=Europe groupBy=region, 30 days (region paths)', `continent=Europe&groupBy=region&${last30}`)
  add('linkId (top link) country=DE groupBy=city, 1 year', `linkId=${links.top}&country=DE&groupBy=city&${lastYear}`)
  add('big member linkType=menu groupBy=os, 30 days', `linkType=menu&groupBy=os&${last30}`, 'bigMember')
  add('tagIds (1 tag of u0) groupBy=country, 1 year', `tagIds=tag_u0_3&groupBy=country&${lastYear}`)
  add('admin groupBy=link, 30 days, country=DE', `groupBy=link&country=DE&${last30}`)
  add('device=Mobile&os=IOS groupBy=browser, 7 days (raw events)', `device=Mobile&os=IOS&groupBy=browser&start=${iso(end - 7 * 86_400_000)}&end=${iso(end)}`)
  q.push(...crossDimensionQueries(end))
  return q
}

/** The cross-dimension set's filters (query parameter, a common value) and groupBys. */
export const CROSS_FILTERS: [string, string][] = [
  ['device', 'Mobile'],
  ['os', 'Android'],
  ['browser', 'Safari'],
  ['country', 'US'],
  ['referer', 'www.google.com'],
  ['utmSource', 'newsletter'],
]
export const CROSS_GROUPS = ['country', 'city', 'os', 'browser', 'device', 'referer', 'utm_source', 'utm_campaign']

/**
 * The cross-dimension set (what a bar click on the statistics screen sends): each event
 * dimension filtered by a common value, grouped by each other one, over 7 days, 30 days, a
 * year and all time.
 */
export function crossDimensionQueries(end: number): BenchQuery[] {
  const iso = (t: number) => new Date(t).toISOString()
  const [filters, groups] = [CROSS_FILTERS, CROSS_GROUPS]
  const ranges: [string, string][] = [
    ['7 days', `start=${iso(end - 7 * 86_400_000)}&end=${iso(end)}`],
    ['30 days', `start=${iso(end - 30 * 86_400_000)}&end=${iso(end)}`],
    ['1 year', `start=${iso(end - 365 * 86_400_000)}&end=${iso(end)}`],
    ['all time', ''],
  ]
  const q: BenchQuery[] = []
  for (const [param, value] of filters)
    for (const g of groups) {
      if (g.replace('_s', 'S') === param || g === param) continue
      for (const [label, range] of ranges)
        q.push({
          label: `cross ${param}=${value} by ${g}, ${label}`,
          query: `${param}=${encodeURIComponent(value)}&groupBy=${g}${range ? `&${range}` : ''}`,
          caller: 'admin',
        })
    }
  return q
}

/** One typical value per event filter of the seed (scripts/bench/stats.ts), for the cross-dimension set. */
const FULL_CROSS_FILTERS: [param: string, value: string, dimension: string][] = [
  ['continent', 'Europe', 'country'],
  ['country', 'US', 'country'],
  ['region', 'Bavaria', 'region'],
  ['city', 'London', 'city'],
  ['os', 'Android', 'os'],
  ['browser', 'Safari', 'browser'],
  ['device', 'Mobile', 'device'],
  ['referer', 'www.google.com', 'referer'],
  ['refererUrl', 'https://www.google.com/search', 'referer_url'],
  ['utmSource', 'newsletter', 'utm_source'],
  ['utmMedium', 'email', 'utm_medium'],
  ['utmCampaign', 'campaign-7', 'utm_campaign'],
  ['utmTerm', 'shoes', 'utm_term'],
  ['utmContent', 'v1', 'utm_content'],
]
const EVENT_GROUP_BYS = GROUP_BY.filter((g) => !['count', 'time', 'link', 'link_type', 'destination'].includes(g))

/**
 * The full cross-dimension set (stats-store.ts --set cross): every event dimension filtered (a
 * typical value) and grouped by every other event dimension, over the last 7 days, 30 days, a
 * year, and all time (admin, every link). `ranges` picks some of the four (by their label: 7d,
 * 30d, 1y, all). `crossDimensionQueries` above is the smaller set of the default bench.
 */
export function fullCrossDimensionSet(end: number, ranges: string[] = ['7d', '30d', '1y', 'all']): BenchQuery[] {
  const iso = (t: number) => new Date(t).toISOString()
  const spans: [string, string][] = [
    ['7d', `start=${iso(end - 7 * 86_400_000)}&end=${iso(end)}`],
    ['30d', `start=${iso(end - 30 * 86_400_000)}&end=${iso(end)}`],
    ['1y', `start=${iso(end - 365 * 86_400_000)}&end=${iso(end)}`],
    ['all', ''],
  ]
  const q: BenchQuery[] = []
  for (const [range, span] of spans.filter(([r]) => ranges.includes(r)))
    for (const [param, value, dimension] of FULL_CROSS_FILTERS)
      for (const g of EVENT_GROUP_BYS.filter((g) => g !== dimension))
        q.push({
          label: `x ${range} ${param}=${value} by ${g}`,
          query: `${param}=${encodeURIComponent(value)}&groupBy=${g}${span ? `&${span}` : ''}`,
          caller: 'admin',
        })
  return q
}
