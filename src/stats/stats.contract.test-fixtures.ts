/**
 * The seeded store and the query matrix the statistics store contracts share
 * (stats.store.contract.test.ts: SQLite against PostgreSQL; stats.store.events.test.ts: the
 * SQLite rollups against the events engine): links of three owners, types and domains, tags,
 * ~6,000 clicks written in batches through the SQLite writer, and queries over every groupBy,
 * filter, link filter, range, time zone and granularity.
 */

import { seededRandom } from '../../test/helpers/random'
import type { Caller } from '../auth'
import { deriveSettings } from '../config'
import { buildConfig } from '../config/config.load'
import { AppError } from '../shared'
import { type Db, openStore } from '../store'
import { type ClickEvent, createEventWriter } from './click-writer'
import { GROUP_BY, type StatisticsQuery } from './stats.schema'
import type { createStatsService } from './stats.service'
import { event, T } from './stats.test-fixtures'

export const START = T('2025-01-20T00:00:00Z')
export const SPAN = 70 * 86_400_000
/** The services' clock: a few days after the last event, so intervals reach into the data. */
export const NOW = START + SPAN + 3 * 86_400_000 + 1234
export const USERS = ['usr_a', 'usr_b', 'usr_c']
export const TYPES = ['link', 'text', 'vcard']
export const DOMAINS = ['s.test', 'go.test']

export interface SeededLink {
  seq: number
  id: string
  user: string
  domain: string
  key: string
  type: string
  destination: string
}

export const settings = deriveSettings(buildConfig({ domains: { defaults: ['s.test'] } }, {}))
export const admin: Caller = { userId: 'admin', role: 'admin', keyId: null }
export const member = (userId: string): Caller => ({ userId, role: 'member', keyId: null })

export const links: SeededLink[] = []
export const tags: { id: string; user: string; name: string }[] = []

/** Links of three owners, types and domains (one deleted later), tags, and ~6,000 clicks written in batches. */
export function seedSqlite(path: string): void {
  // Bun runs every test file in one process: a second file's seed starts from empty lists, not the first's links.
  links.length = 0
  tags.length = 0
  const db = openStore(path)
  const random = seededRandom(14)
  const pick = <V>(list: readonly V[]) => list[Math.floor(random() * list.length)]!
  const at0 = START - 86_400_000
  for (const id of ['admin', ...USERS]) db.run('INSERT INTO users (id, created_at, role) VALUES (?, ?, ?)', [id, at0, id === 'admin' ? 'admin' : 'member'])
  for (let i = 0; i < 24; i++) {
    const user = USERS[i % 3]!
    const type = TYPES[i % TYPES.length]!
    const domain = DOMAINS[i % 5 === 0 ? 1 : 0]!
    const key = `k${i}`
    const destination = `https://dest.example/${i % 7}`
    const id = `lnk_${String(i).padStart(3, '0')}`
    const seq = db
      .query<{ seq: number }, [string, string, string, string, string, string, string, string, number, number]>(
        `INSERT INTO links (id, user_id, domain, key, link_type, destination, match_key, data, created_at, updated_at)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING seq`,
      )
      .get(id, user, domain, key, type, destination, destination, JSON.stringify({ url: destination }), at0, at0)!.seq
    links.push({ seq, id, user, domain, key, type, destination })
  }
  for (const [i, user] of USERS.entries())
    for (const name of ['Summer', 'Winter']) {
      const id = `tag_${user}_${name}`
      db.run('INSERT INTO tags (id, user_id, name, name_key, color, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?)', [
        id,
        user,
        name,
        name.toLowerCase(),
        'teal',
        at0,
        at0,
      ])
      tags.push({ id, user, name })
      const own = links.filter((l) => l.user === user)
      for (const [pos, l] of own.entries())
        if ((pos + i + (name === 'Summer' ? 0 : 1)) % 2 === 0) db.run('INSERT INTO link_tags (tag_id, link_seq, pos) VALUES (?, ?, ?)', [id, l.seq, pos])
    }
  // A few links take most clicks (they become busy: dimension rollups from then on, backfilled).
  const weights = links.map((_, i) => (i < 3 ? 40 : i < 8 ? 6 : 1))
  const total = weights.reduce((a, b) => a + b, 0)
  const weightedLink = () => {
    let x = random() * total
    for (const [i, w] of weights.entries()) {
      x -= w
      if (x < 0) return links[i]!
    }
    return links[0]!
  }
  const places = [
    { continent: 'Europe', country: 'DE', region: 'Bavaria', city: 'Munich' },
    { continent: 'Europe', country: 'DE', region: 'Berlin', city: 'Berlin' },
    { continent: 'Europe', country: 'FR', region: 'Île-de-France', city: 'Paris' },
    { continent: 'North America', country: 'US', region: 'California', city: 'Mountain View' },
    { continent: 'Asia', country: 'IN', region: 'Karnataka', city: 'Bengaluru' },
    { continent: 'Europe', country: 'GB', region: null, city: null },
    { continent: null, country: null, region: null, city: null },
  ]
  const agents = [
    { os: 'Android', browser: 'Chrome', device: 'Mobile' },
    { os: 'IOS', browser: 'Safari', device: 'Mobile' },
    { os: 'Windows', browser: 'Edge', device: 'Desktop' },
    { os: 'MacOS', browser: 'Firefox', device: 'Desktop' },
    { os: 'IOS', browser: 'Safari', device: 'Tablet' },
  ] as const
  const referers = [
    { referer: null, refererUrl: null },
    { referer: 'www.google.com', refererUrl: 'https://www.google.com/search' },
    { referer: 't.co', refererUrl: 'https://t.co/x' },
  ]
  const write = createEventWriter(db, { busyLinkClicks: 400 })
  let at = START
  for (let batch = 0; batch < 30; batch++) {
    const events: ClickEvent[] = []
    for (let i = 0; i < 200; i++) {
      at += Math.floor(random() * (SPAN / 6000) * 2)
      const utm = random() < 0.3
      events.push(
        event(weightedLink().seq, at, {
          ...pick(places),
          ...pick(agents),
          ...pick(referers),
          scan: random() < 0.3,
          n: random() < 0.1 ? 2 + Math.floor(random() * 3) : 1,
          utmSource: utm ? pick(['poster', 'mail']) : null,
          utmMedium: utm ? 'print' : null,
          utmCampaign: utm ? pick(['spring', 'summer']) : null,
          utmTerm: utm && random() < 0.5 ? 'shoes' : null,
          utmContent: utm && random() < 0.5 ? 'v1' : null,
        } as Partial<ClickEvent>),
      )
    }
    write(events)
  }
  // Statistics are history: a deleted link's clicks still count.
  db.run('UPDATE links SET deleted_at = ? WHERE seq = ?', [NOW - 86_400_000, links[4]!.seq])
  db.close()
}

/** An answer, or the error a user would see. */
export async function answer(service: ReturnType<typeof createStatsService>, caller: Caller, q: StatisticsQuery): Promise<unknown> {
  try {
    return await service.statistics(caller, q)
  } catch (e) {
    if (e instanceof AppError) return { error: e.code, message: e.message }
    throw e
  }
}

/** Every groupBy but the time series (read through the granularities below). */
export const GROUP_BYS = GROUP_BY.filter((g) => g !== 'time')
export const EVENT_FILTERS: StatisticsQuery[] = [
  {},
  { country: 'de' },
  { continent: 'Europe' },
  { region: 'Bavaria' },
  { city: 'Paris' },
  { os: 'IOS' },
  { referer: 'T.CO' },
  { utmSource: 'poster' },
  { country: 'DE', os: 'Android' },
  { device: 'Mobile', browser: 'Safari' },
  { continent: 'Europe', country: 'US' },
]
export const iso = (t: number) => new Date(t).toISOString()
/** Ranges: the default (all), intervals to now, and explicit ranges with sub-hour, sub-day and millisecond edges. */
export const RANGES: StatisticsQuery[] = [
  {},
  { interval: '24h' },
  { interval: '7d' },
  { interval: '30d' },
  { interval: '1y' },
  { start: iso(START + 10 * 86_400_000 + 1_234_567), end: iso(START + 40 * 86_400_000 + 3_333_333) },
  { start: iso(START + 5 * 86_400_000 + 17), end: iso(START + 5 * 86_400_000 + 2_700_017) },
  { start: '2025-02-03', end: '2025-03-03' },
]

export function linkFilters(): StatisticsQuery[] {
  const a = links.filter((l) => l.user === 'usr_a')
  const busy = links[0]!
  return [
    {},
    { linkId: busy.id },
    { linkId: links[10]!.id },
    { linkIds: [a[0]!.id, a[1]!.id, links[1]!.id] },
    { url: `${settings.shortOrigin(links[5]!.domain)}/${links[5]!.key}` },
    { domain: 'GO.test' },
    { linkType: 'text' },
    { tagIds: [tags[0]!.id] },
    { tagNames: ['summer'] },
    { destination: 'https://dest.example/3' },
    { linkType: 'vcard', domain: 's.test' },
  ]
}

/** Every groupBy × event filters × link filters × ranges, for an admin and for members (~1,700 queries). */
export function groupByMatrix(): [Caller, StatisticsQuery][] {
  const queries: [Caller, StatisticsQuery][] = []
  for (const groupBy of GROUP_BYS)
    for (const [i, filter] of EVENT_FILTERS.entries())
      for (const [j, range] of RANGES.entries()) {
        queries.push([admin, { groupBy, ...filter, ...range }])
        if ((i + j) % 3 === 0) queries.push([member('usr_a'), { groupBy, ...filter, ...range, qr: (i + j) % 2 === 0 }])
      }
  for (const lf of linkFilters())
    for (const groupBy of GROUP_BYS)
      for (const range of [RANGES[0]!, RANGES[3]!, RANGES[5]!]) {
        queries.push([admin, { groupBy, ...lf, ...range }])
        queries.push([admin, { groupBy, ...lf, ...range, country: 'DE' }])
        queries.push([member('usr_b'), { groupBy, ...lf, ...range, qr: false }])
      }
  return queries
}

/** Time series: every granularity, in UTC, DST zones and a :30 zone, with filters and link scopes. */
export function timeMatrix(): [Caller, StatisticsQuery][] {
  const zones = ['UTC', 'Europe/Paris', 'America/New_York', 'Asia/Kolkata', 'Australia/Adelaide']
  const queries: [Caller, StatisticsQuery][] = []
  for (const timezone of zones)
    for (const granularity of ['hour', 'day', 'week', 'month'] as const)
      for (const [i, extra] of (
        [
          {},
          { country: 'DE' },
          { os: 'IOS', device: 'Mobile' },
          { linkId: links[0]!.id },
          { linkId: links[12]!.id, qr: true },
          { linkType: 'text' },
          { tagNames: ['winter'] },
        ] as StatisticsQuery[]
      ).entries())
        for (const range of granularity === 'hour' ? [RANGES[2]!, RANGES[6]!] : [RANGES[0]!, RANGES[3]!, RANGES[5]!]) {
          queries.push([admin, { groupBy: 'time', granularity, timezone, ...extra, ...range }])
          if (i % 2 === 0) queries.push([member('usr_c'), { groupBy: 'time', granularity, timezone, ...extra, ...range }])
        }
  return queries
}

/** Unknown link, another user's link or tag, too many buckets, a bad url, no granularity. */
export function errorCases(): [Caller, StatisticsQuery][] {
  const other = links.find((l) => l.user === 'usr_b')!
  return [
    [admin, { linkId: 'lnk_none' }],
    [member('usr_a'), { linkId: other.id }],
    [member('usr_a'), { linkIds: [links[0]!.id, other.id] }],
    [member('usr_a'), { tagIds: [tags.find((t) => t.user === 'usr_b')!.id] }],
    [member('usr_a'), { url: `${settings.shortOrigin(other.domain)}/${other.key}` }],
    [admin, { url: 'not a url' }],
    [admin, { groupBy: 'time', granularity: 'hour', start: '2000-01-01', end: '2025-01-01' }],
    [admin, { groupBy: 'time' }],
  ]
}

/** How many of `queries` answer differently on the two services (the first few fail `expect` with their answers). */
export async function countDifferences(
  a: ReturnType<typeof createStatsService>,
  b: ReturnType<typeof createStatsService>,
  queries: [Caller, StatisticsQuery][],
  expectSame: (got: unknown, want: unknown) => void,
): Promise<{ differing: number; withClicks: number }> {
  let differing = 0
  let withClicks = 0
  for (const [caller, q] of queries) {
    const [want, got] = [await answer(a, caller, q), await answer(b, caller, q)]
    if (!Bun.deepEquals(want, got) && differing++ < 5) expectSame({ caller: caller.userId, q, got }, { caller: caller.userId, q, got: want })
    if (Array.isArray(want) ? want.length > 0 : (want as { clicks?: number }).clicks) withClicks++
  }
  return { differing, withClicks }
}

/** The stored events of the SQLite store in write order, in its writer's batches of 200 rows. */
export function storedBatches(db: Db): ClickEvent[][] {
  const rows = db
    .query<Record<string, unknown>, []>(
      `SELECT link_seq, at, scan, n, continent, country, region, city, os, browser, device, referer, referer_url,
       utm_source, utm_medium, utm_campaign, utm_term, utm_content FROM click_events ORDER BY id`,
    )
    .all()
  const events = rows.map(
    (r) =>
      ({
        linkSeq: r.link_seq,
        domain: '',
        at: r.at,
        scan: r.scan === 1,
        n: r.n,
        continent: r.continent,
        country: r.country,
        region: r.region,
        city: r.city,
        os: r.os,
        browser: r.browser,
        device: r.device,
        referer: r.referer,
        refererUrl: r.referer_url,
        utmSource: r.utm_source,
        utmMedium: r.utm_medium,
        utmCampaign: r.utm_campaign,
        utmTerm: r.utm_term,
        utmContent: r.utm_content,
      }) as ClickEvent,
  )
  const batches: ClickEvent[][] = []
  for (let i = 0; i < events.length; i += 200) batches.push(events.slice(i, i + 200))
  return batches
}
