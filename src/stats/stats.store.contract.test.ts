/**
 * The statistics store port on both adapters: the same click events are written through the
 * SQLite writer (events, rollups, busy-link promotion and backfill), the SQLite store is copied
 * into a fresh PostgreSQL database with `copySqliteToPostgres` (as `migrate-store` does), and
 * a broad matrix of GET /statistics queries goes through the service over each store. Every
 * answer (or error) must be the same.
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { SQL } from 'bun'
import { startMigratedDatabase } from '../../test/helpers/postgres'
import { seededRandom } from '../../test/helpers/random'
import type { Caller } from '../auth'
import { deriveSettings } from '../config'
import { buildConfig } from '../config/config.load'
import { AppError } from '../shared'
import { copySqliteToPostgres, openSqliteSource, openStore } from '../store'
import { type ClickEvent, createEventWriter } from './click-writer'
import { createPairRoller } from './stats.pairs.pg'
import { GROUP_BY, type StatisticsQuery } from './stats.schema'
import { createStatsService } from './stats.service'
import { createStatsStore, type StatsStorePort } from './stats.store'
import { createPgStatsStore } from './stats.store.pg'
import { event, T } from './stats.test-fixtures'

setDefaultTimeout(120_000)

const START = T('2025-01-20T00:00:00Z')
const SPAN = 70 * 86_400_000
/** The services' clock: a few days after the last event, so intervals reach into the data. */
const NOW = START + SPAN + 3 * 86_400_000 + 1234
const USERS = ['usr_a', 'usr_b', 'usr_c']
const TYPES = ['link', 'text', 'vcard']
const DOMAINS = ['s.test', 'go.test']

interface SeededLink {
  seq: number
  id: string
  user: string
  domain: string
  key: string
  type: string
  destination: string
}

const quietLog = { info() {}, warn() {}, error() {} }
const settings = deriveSettings(buildConfig({ domains: { defaults: ['s.test'] } }, {}))
const admin: Caller = { userId: 'admin', role: 'admin', keyId: null }
const member = (userId: string): Caller => ({ userId, role: 'member', keyId: null })

let dir: string
let closePg: (() => Promise<void>) | undefined
let pgSql: SQL
const links: SeededLink[] = []
const tags: { id: string; user: string; name: string }[] = []
let sqliteService: ReturnType<typeof createStatsService<StatsStorePort>>
let pgService: ReturnType<typeof createStatsService<StatsStorePort>>

/** Links of three owners, types and domains (one deleted later), tags, and ~6,000 clicks written in batches. */
function seedSqlite(path: string): void {
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

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'stats-contract-'))
  const path = join(dir, 'shortlink.db')
  seedSqlite(path)
  const started = await startMigratedDatabase('stats_contract')
  pgSql = started.sql
  closePg = started.close
  const source = openSqliteSource(path)
  try {
    await copySqliteToPostgres(source, pgSql)
  } finally {
    source.close()
  }
  // The first half of the span rolled up into pair rows (the rest read raw), as a server catching up would leave it.
  await createPairRoller(pgSql, quietLog, { now: () => START + SPAN / 2 }).roll()
  sqliteService = createStatsService<StatsStorePort>({ store: createStatsStore(openStore(path)), settings, now: () => NOW })
  pgService = createStatsService({ store: createPgStatsStore(pgSql), settings, now: () => NOW })
})
afterAll(async () => {
  await closePg?.()
  rmSync(dir, { recursive: true, force: true })
})

/** An answer, or the error a user would see. */
async function answer(service: ReturnType<typeof createStatsService>, caller: Caller, q: StatisticsQuery): Promise<unknown> {
  try {
    return await service.statistics(caller, q)
  } catch (e) {
    if (e instanceof AppError) return { error: e.code, message: e.message }
    throw e
  }
}

/** Every groupBy but the time series (read through the granularities below). */
const GROUP_BYS = GROUP_BY.filter((g) => g !== 'time')
const EVENT_FILTERS: StatisticsQuery[] = [
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
const iso = (t: number) => new Date(t).toISOString()
/** Ranges: the default (all), intervals to now, and explicit ranges with sub-hour, sub-day and millisecond edges. */
const RANGES: StatisticsQuery[] = [
  {},
  { interval: '24h' },
  { interval: '7d' },
  { interval: '30d' },
  { interval: '1y' },
  { start: iso(START + 10 * 86_400_000 + 1_234_567), end: iso(START + 40 * 86_400_000 + 3_333_333) },
  { start: iso(START + 5 * 86_400_000 + 17), end: iso(START + 5 * 86_400_000 + 2_700_017) },
  { start: '2025-02-03', end: '2025-03-03' },
]

function linkFilters(): StatisticsQuery[] {
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

describe('statistics on SQLite and on PostgreSQL (copied with migrate-store) answer the same', () => {
  test('the copy holds the same events and rollups', async () => {
    const [row] = await pgSql`SELECT count(*)::int AS n, sum(n)::int AS clicks FROM click_events`
    expect(row.n).toBeGreaterThan(5000)
    expect(await answer(pgService, admin, {})).toEqual(await answer(sqliteService, admin, {}))
    expect(((await answer(pgService, admin, {})) as { clicks: number }).clicks).toBe(row.clicks)
    const [busy] = await pgSql`SELECT count(*)::int AS n FROM stats_busy_links`
    expect(busy.n).toBeGreaterThan(0)
    // On SQLite the answer stays synchronous: every read inside one db.transaction, no microtask.
    expect(sqliteService.statistics(admin, { groupBy: 'country' })).not.toBeInstanceOf(Promise)
    expect(pgService.statistics(admin, { groupBy: 'country' })).toBeInstanceOf(Promise)
  })

  test('every groupBy × event filters × link filters × ranges, for an admin and for members', async () => {
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
    let differing = 0
    let withClicks = 0
    for (const [caller, q] of queries) {
      const [lite, pg] = [await answer(sqliteService, caller, q), await answer(pgService, caller, q)]
      if (!Bun.deepEquals(lite, pg) && differing++ < 5) expect({ caller: caller.userId, q, pg }).toEqual({ caller: caller.userId, q, pg: lite })
      if (Array.isArray(lite) ? lite.length > 0 : (lite as { clicks?: number }).clicks) withClicks++
    }
    expect(differing).toBe(0)
    expect(queries.length).toBeGreaterThan(1000)
    // The matrix is not a comparison of empty answers.
    expect(withClicks).toBeGreaterThan(queries.length / 2)
  })

  test('time series: every granularity, in UTC, DST zones and a :30 zone, with filters and link scopes', async () => {
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
    let differing = 0
    for (const [caller, q] of queries) {
      const [lite, pg] = [await answer(sqliteService, caller, q), await answer(pgService, caller, q)]
      if (!Bun.deepEquals(lite, pg) && differing++ < 5) expect({ caller: caller.userId, q, pg }).toEqual({ caller: caller.userId, q, pg: lite })
    }
    expect(differing).toBe(0)
  })

  test('cross-dimension: every event dimension filtered and grouped by every other, over every range, with days rolled up into pair rows or not', async () => {
    const filters: StatisticsQuery[] = [
      { continent: 'Europe' },
      { country: 'DE' },
      { region: 'Bavaria' },
      { city: 'Paris' },
      { os: 'IOS' },
      { browser: 'Safari' },
      { device: 'Mobile' },
      { referer: 't.co' },
      { refererUrl: 'https://t.co/x' },
      { utmSource: 'poster' },
      { utmMedium: 'print' },
      { utmCampaign: 'spring' },
      { utmTerm: 'shoes' },
      { utmContent: 'v1' },
    ]
    const eventGroupBys = GROUP_BYS.filter((g) => !['count', 'link', 'link_type', 'destination'].includes(g))
    const compare = async () => {
      let differing = 0
      let withClicks = 0
      let queries = 0
      for (const filter of filters)
        for (const groupBy of [...eventGroupBys, 'count' as const])
          for (const range of RANGES) {
            const q = { groupBy, ...filter, ...range }
            const [lite, pg] = [await answer(sqliteService, admin, q), await answer(pgService, admin, q)]
            queries++
            if (!Bun.deepEquals(lite, pg) && differing++ < 5) expect({ q, pg }).toEqual({ q, pg: lite })
            if (Array.isArray(lite) ? lite.length > 0 : (lite as { clicks?: number }).clicks) withClicks++
          }
      expect(differing).toBe(0)
      expect(withClicks).toBeGreaterThan(queries / 2)
    }
    const [{ upto }] = await pgSql`SELECT upto FROM stats_pairs_state`
    expect(upto).toBe(Math.floor((START + SPAN / 2) / 86_400_000)) // half the days rolled up
    const [{ rows }] = await pgSql`SELECT count(*)::int AS rows FROM stats_pairs`
    expect(rows).toBeGreaterThan(1000)
    await compare()
    // Every day rolled up: whole days from pair rows, partial days raw.
    await createPairRoller(pgSql, quietLog).roll()
    await compare()
  })

  test('errors are the same: unknown link, another user’s link or tag, too many buckets, a bad url', async () => {
    const other = links.find((l) => l.user === 'usr_b')!
    const cases: [Caller, StatisticsQuery][] = [
      [admin, { linkId: 'lnk_none' }],
      [member('usr_a'), { linkId: other.id }],
      [member('usr_a'), { linkIds: [links[0]!.id, other.id] }],
      [member('usr_a'), { tagIds: [tags.find((t) => t.user === 'usr_b')!.id] }],
      [member('usr_a'), { url: `${settings.shortOrigin(other.domain)}/${other.key}` }],
      [admin, { url: 'not a url' }],
      [admin, { groupBy: 'time', granularity: 'hour', start: '2000-01-01', end: '2025-01-01' }],
      [admin, { groupBy: 'time' }],
    ]
    for (const [caller, q] of cases) {
      const lite = await answer(sqliteService, caller, q)
      expect(lite).toHaveProperty('error')
      expect(await answer(pgService, caller, q)).toEqual(lite)
    }
  })
})
