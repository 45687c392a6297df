/**
 * Statistics end to end: real visits through the redirect server (chosen User-Agents,
 * referers, UTM values, client IPs via trustProxy and the city database, ?qr=1 scans,
 * a bot), then every groupBy and filter of GET /statistics checked against the exact
 * numbers; back-dated events written through the store for the time-zone and DST edges.
 */

import { Database } from 'bun:sqlite'
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { SQL } from 'bun'
import { type ClickEvent, createEventWriter } from '../src/stats/click-writer'
import { createPgEventWriter } from '../src/stats/click-writer.pg'
import { CITY_DB, UA } from './helpers/agents'
import { queryStore, startServer, type TestServer } from './helpers/server'

/**
 * Writes back-dated click events into a server's store. PostgreSQL: with its writer, while it
 * runs. SQLite: the events engine's file belongs to the running server, so the server stops,
 * the events go into the SQLite tables of the previous release, and the server starts again
 * and moves them into its events engine (the upgrade path, statistics exact meanwhile).
 */
async function writeEvents(server: TestServer, events: ClickEvent[], toml: string): Promise<TestServer> {
  if (server.storeUrl) {
    const sql = new SQL(server.storeUrl, { max: 2 })
    try {
      await createPgEventWriter(sql)(events)
    } finally {
      await sql.close()
    }
    return server
  }
  expect(await server.stop()).toBe(0)
  const db = new Database(`${server.dir}/data/shortlink.db`, { strict: true })
  db.exec('PRAGMA busy_timeout = 5000')
  try {
    createEventWriter(db)(events)
  } finally {
    db.close()
  }
  return startServer({ dir: server.dir, toml, env: { SHORTLINK_ADMIN_KEY: server.adminKey } })
}

let s: TestServer
let a: any, b: any, c: any, dst: any
let tagId: string
const visit = (path: string, ua: string, ip: string, referer?: string) =>
  s.fetch(`https://localhost:${s.httpsPort}${path}`, { headers: { 'user-agent': ua, 'x-forwarded-for': ip, ...(referer ? { referer } : {}) } })
const stats = async (query: string) => {
  const r = await s.api(`/statistics?${query}`)
  const body = (await r.json()) as any
  if (r.status !== 200) throw new Error(`${query}: ${r.status} ${JSON.stringify(body)}`)
  return body
}
const make = async (type: string, data: unknown, linkOptions: Record<string, unknown>) => {
  const r = await s.api(`/links/${type}`, { method: 'POST', json: { data, linkOptions } })
  if (r.status !== 200) throw new Error(`create failed: ${r.status} ${await r.text()}`)
  return (await r.json()) as any
}
/** The real visits are the last 24 hours; the back-dated ones lie in 2025. */
const NOW = 'interval=24h'

const TOML = `trustProxy = ["127.0.0.1", "::1"]\n[geoip]\ndatabase = "${CITY_DB}"\n`

beforeAll(async () => {
  s = await startServer({ toml: TOML })
  tagId = ((await (await s.api('/tags', { method: 'POST', json: { name: 'Promo' } })).json()) as any).id
  a = await make(
    'link',
    { url: 'https://shop.example/a' },
    {
      key: 'st-a',
      tags: [tagId],
      utm: { source: 'newsletter', medium: 'email', campaign: 'launch', term: 'shoes', content: 'v1' },
    },
  )
  b = await make('text', { text: 'Opening hours: 9-5' }, { key: 'st-b' })
  c = await make('link', { url: 'https://blog.example/c' }, { key: 'st-c' })
  dst = await make('link', { url: 'https://dst.example/' }, { key: 'st-dst' })

  // Back-dated events around the Paris autumn change, written through the store like the writer does.
  const seq = (await queryStore<{ seq: number }>(s, `SELECT CAST(seq AS integer) AS seq FROM links WHERE id = '${dst.id}'`))[0]!.seq
  const ev = (at: string, over: Partial<ClickEvent> = {}): ClickEvent => ({
    linkSeq: seq,
    domain: 'localhost',
    at: Date.parse(at),
    scan: false,
    continent: 'Europe',
    country: 'FR',
    region: 'Île-de-France',
    city: 'Paris',
    os: 'IOS',
    browser: 'Safari',
    device: 'Mobile',
    referer: null,
    refererUrl: null,
    utmSource: null,
    utmMedium: null,
    utmCampaign: null,
    utmTerm: null,
    utmContent: null,
    n: 1,
    ...over,
  })
  const backDated = [
    ev('2025-10-25T21:59:59.999Z'), // 23:59:59.999 CEST, 25 October
    ev('2025-10-25T22:00:00Z'), // 00:00 CEST, 26 October
    ev('2025-10-26T00:30:00Z', { n: 2 }), // 02:30 CEST
    ev('2025-10-26T01:30:00Z', { scan: true }), // 02:30 CET: the hour that happens twice
    ev('2025-10-26T22:59:59Z'), // 23:59:59 CET, still 26 October
    ev('2025-10-26T23:00:00Z'), // 00:00 CET, 27 October
    ev('2025-10-27T23:30:00Z', { country: 'IN', continent: 'Asia', region: 'Maharashtra', city: 'Mumbai' }), // 05:00 IST, 28 October
  ]
  s = await writeEvents(s, backDated, TOML)
  // A restarted server listens on other ports: the links as it shows them now.
  const reread = async (l: { id: string }) => (await (await s.api(`/links/${l.id}`)).json()) as any
  ;[a, b, c, dst] = [await reread(a), await reread(b), await reread(c), await reread(dst)]

  const statuses = [
    await visit('/st-a', UA.iphone, '8.8.8.8', 'https://www.google.com/search?q=x'),
    await visit('/st-a', UA.iphone, '8.8.8.8', 'https://www.google.com/search?q=x'),
    await visit('/st-a?qr=1', UA.windows, '5.9.0.1'),
    await visit('/st-a?qr=1', UA.windows, '5.9.0.1'),
    await visit('/st-a?qr=1', UA.windows, '5.9.0.1'),
    await visit('/st-a', UA.mac, '81.2.69.142', 'https://t.co/abc'),
    await visit('/st-b', UA.pixel, '1.1.1.1'),
    await visit('/st-b?qr=1', UA.firefox, '2.2.2.2'),
    await visit('/st-c?utm_source=fb&utm_campaign=winter', UA.windows, '5.9.0.1', 'https://l.facebook.com/'),
    await visit('/st-a', UA.googlebot, '8.8.8.8'), // a bot: redirected, never counted
  ].map((r) => r.status)
  expect(statuses).toEqual([302, 302, 302, 302, 302, 302, 200, 200, 302, 302])
})
afterAll(async () => {
  await s?.stop()
})

describe('GET /statistics over real visits', () => {
  test('the visits become visible; count, qr', async () => {
    // Waits for the visits to be stored (bounded); how soon that is, is the click writer's flush window, not a test assertion.
    let got = await stats(NOW)
    for (const deadline = Date.now() + 15_000; got.clicks < 9 && Date.now() < deadline; await Bun.sleep(50)) got = await stats(NOW)
    expect(got).toEqual({ clicks: 9, scans: 4 })
    expect(await stats(`${NOW}&groupBy=count&qr=true`)).toEqual({ clicks: 4, scans: 4 })
    expect(await stats(`${NOW}&qr=false`)).toEqual({ clicks: 5, scans: 0 })
    expect(await stats('')).toEqual({ clicks: 17, scans: 5 }) // default interval all: the back-dated 8 too
    const link = (await (await s.api(`/links/${a.id}`)).json()) as any
    expect(link.clicks).toBe((await stats(`linkId=${a.id}`)).clicks)
  })

  test('groupBy link, link_type, destination', async () => {
    expect(await stats(`${NOW}&groupBy=link`)).toEqual([
      { linkId: a.id, shortLink: a.shortLink, destination: 'https://shop.example/a', clicks: 6, scans: 3 },
      { linkId: b.id, shortLink: b.shortLink, destination: b.destination, clicks: 2, scans: 1 },
      { linkId: c.id, shortLink: c.shortLink, destination: 'https://blog.example/c', clicks: 1, scans: 0 },
    ])
    expect(await stats(`${NOW}&groupBy=link_type`)).toEqual([
      { linkType: 'link', clicks: 7, scans: 3 },
      { linkType: 'text', clicks: 2, scans: 1 },
    ])
    expect(await stats(`${NOW}&groupBy=destination`)).toEqual([
      { destination: 'https://shop.example/a', clicks: 6, scans: 3 },
      { destination: b.destination, clicks: 2, scans: 1 },
      { destination: 'https://blog.example/c', clicks: 1, scans: 0 },
    ])
  })

  test('groupBy location, device, browser, os', async () => {
    expect(await stats(`${NOW}&groupBy=country`)).toEqual([
      { country: 'DE', clicks: 4, scans: 3 },
      { country: 'US', clicks: 3, scans: 1 },
      { country: 'AU', clicks: 1, scans: 0 },
      { country: 'GB', clicks: 1, scans: 0 },
    ])
    expect(await stats(`${NOW}&groupBy=region`)).toEqual([
      { region: 'Bavaria', clicks: 4, scans: 3 },
      { region: 'California', clicks: 2, scans: 0 },
      { region: 'District of Columbia', clicks: 1, scans: 1 },
      { region: 'England', clicks: 1, scans: 0 },
      { region: 'New South Wales', clicks: 1, scans: 0 },
    ])
    expect(await stats(`${NOW}&groupBy=city`)).toEqual([
      { city: 'Falkenstein', clicks: 4, scans: 3 },
      { city: 'Mountain View', clicks: 2, scans: 0 },
      { city: 'London', clicks: 1, scans: 0 },
      { city: 'Sydney', clicks: 1, scans: 0 },
      { city: 'Washington D.C.', clicks: 1, scans: 1 },
    ])
    expect(await stats(`${NOW}&groupBy=os`)).toEqual([
      { os: 'Windows', clicks: 4, scans: 3 },
      { os: 'IOS', clicks: 2, scans: 0 },
      { os: 'Android', clicks: 1, scans: 0 },
      { os: 'Linux', clicks: 1, scans: 1 },
      { os: 'MacOS', clicks: 1, scans: 0 },
    ])
    expect(await stats(`${NOW}&groupBy=browser`)).toEqual([
      { browser: 'Chrome', clicks: 5, scans: 3 },
      { browser: 'Safari', clicks: 3, scans: 0 },
      { browser: 'Firefox', clicks: 1, scans: 1 },
    ])
    expect(await stats(`${NOW}&groupBy=device`)).toEqual([
      { device: 'Desktop', clicks: 6, scans: 4 },
      { device: 'Mobile', clicks: 3, scans: 0 },
    ])
  })

  test('groupBy referer, refererUrl and every UTM field (null: direct, or not in the landing URL)', async () => {
    expect(await stats(`${NOW}&groupBy=referer`)).toEqual([
      { referer: null, clicks: 5, scans: 4 },
      { referer: 'www.google.com', clicks: 2, scans: 0 },
      { referer: 'l.facebook.com', clicks: 1, scans: 0 },
      { referer: 't.co', clicks: 1, scans: 0 },
    ])
    expect(await stats(`${NOW}&groupBy=referer_url`)).toEqual([
      { refererUrl: null, clicks: 5, scans: 4 },
      { refererUrl: 'https://www.google.com/search?q=x', clicks: 2, scans: 0 },
      { refererUrl: 'https://l.facebook.com/', clicks: 1, scans: 0 },
      { refererUrl: 'https://t.co/abc', clicks: 1, scans: 0 },
    ])
    expect(await stats(`${NOW}&groupBy=utm_source`)).toEqual([
      { utmSource: 'newsletter', clicks: 6, scans: 3 },
      { utmSource: null, clicks: 2, scans: 1 },
      { utmSource: 'fb', clicks: 1, scans: 0 },
    ])
    expect(await stats(`${NOW}&groupBy=utm_medium`)).toEqual([
      { utmMedium: 'email', clicks: 6, scans: 3 },
      { utmMedium: null, clicks: 3, scans: 1 },
    ])
    expect(await stats(`${NOW}&groupBy=utm_campaign`)).toEqual([
      { utmCampaign: 'launch', clicks: 6, scans: 3 },
      { utmCampaign: null, clicks: 2, scans: 1 },
      { utmCampaign: 'winter', clicks: 1, scans: 0 },
    ])
    expect(await stats(`${NOW}&groupBy=utm_term`)).toEqual([
      { utmTerm: 'shoes', clicks: 6, scans: 3 },
      { utmTerm: null, clicks: 3, scans: 1 },
    ])
    expect(await stats(`${NOW}&groupBy=utm_content`)).toEqual([
      { utmContent: 'v1', clicks: 6, scans: 3 },
      { utmContent: null, clicks: 3, scans: 1 },
    ])
  })

  test('every filter', async () => {
    const enc = encodeURIComponent
    const cases: [string, number, number][] = [
      [`linkId=${a.id}`, 6, 3],
      [`linkIds=${b.id}&linkIds=${c.id}`, 3, 1],
      [`url=${enc(b.shortLink)}`, 2, 1],
      [`url=${enc(b.shortLink)}&domain=elsewhere.example`, 2, 1],
      ['domain=localhost', 9, 4],
      ['domain=elsewhere.example', 0, 0],
      ['linkType=text', 2, 1],
      ['linkType=link', 7, 3],
      ['linkType=vcard', 0, 0],
      [`tagIds=${tagId}`, 6, 3],
      ['tagNames=promo', 6, 3],
      [`tagNames=nothing&tagIds=${tagId}`, 6, 3],
      ['qr=true', 4, 4],
      ['qr=false', 5, 0],
      ['continent=Europe', 5, 3],
      ['continent=Oceania', 1, 0],
      ['continent=North%20America', 3, 1],
      ['country=US', 3, 1],
      ['country=de', 4, 3],
      ['region=Bavaria', 4, 3],
      ['city=London', 1, 0],
      ['device=Mobile', 3, 0],
      ['browser=Firefox', 1, 1],
      ['os=IOS', 2, 0],
      ['referer=t.co', 1, 0],
      [`refererUrl=${enc('https://www.google.com/search?q=x')}`, 2, 0],
      [`destination=${enc('https://shop.example/a')}`, 6, 3],
      ['utmSource=fb', 1, 0],
      ['utmMedium=email', 6, 3],
      ['utmCampaign=launch', 6, 3],
      ['utmTerm=shoes', 6, 3],
      ['utmContent=v1', 6, 3],
      ['country=DE&os=Windows&qr=true', 3, 3],
      ['continent=Europe&referer=t.co', 1, 0],
      [`linkType=link&country=US&tagIds=${tagId}`, 2, 0],
    ]
    for (const [q, clicks, scans] of cases) expect([q, await stats(`${NOW}&${q}`)]).toEqual([q, { clicks, scans }])
    expect(await stats(`${NOW}&linkType=link&groupBy=country`)).toEqual([
      { country: 'DE', clicks: 4, scans: 3 },
      { country: 'US', clicks: 2, scans: 0 },
      { country: 'GB', clicks: 1, scans: 0 },
    ])
    // Geo filters with a geo groupBy (answered from the region/city rollups, which know their country).
    expect(await stats(`${NOW}&continent=Europe&groupBy=region`)).toEqual([
      { region: 'Bavaria', clicks: 4, scans: 3 },
      { region: 'England', clicks: 1, scans: 0 },
    ])
    expect(await stats(`${NOW}&country=US&groupBy=city`)).toEqual([
      { city: 'Mountain View', clicks: 2, scans: 0 },
      { city: 'Washington D.C.', clicks: 1, scans: 1 },
    ])
    expect(await stats(`${NOW}&city=London&groupBy=country`)).toEqual([{ country: 'GB', clicks: 1, scans: 0 }])
    expect(await stats(`${NOW}&tagNames=Promo&groupBy=os`)).toEqual([
      { os: 'Windows', clicks: 3, scans: 3 },
      { os: 'IOS', clicks: 2, scans: 0 },
      { os: 'MacOS', clicks: 1, scans: 0 },
    ])
  })

  test('time series of the last 24 hours: hourly buckets, empty ones included, adding up to the count', async () => {
    const series = await stats(`${NOW}&groupBy=time&granularity=hour`)
    expect(series.length === 24 || series.length === 25).toBe(true)
    for (let i = 1; i < series.length; i++) expect(Date.parse(series[i].start) - Date.parse(series[i - 1].start)).toBe(3_600_000)
    expect(series.reduce((n: number, b: any) => n + b.clicks, 0)).toBe(9)
    expect(series.reduce((n: number, b: any) => n + b.scans, 0)).toBe(4)
    expect(series.filter((b: any) => b.clicks === 0).length).toBeGreaterThanOrEqual(22)
  })

  test('time zones and DST edges (back-dated events)', async () => {
    const q = `linkId=${dst.id}&groupBy=time`
    expect(await stats(`${q}&granularity=day&timezone=Europe/Paris&start=2025-10-24T22:00:00Z&end=2025-10-28T23:00:00Z`)).toEqual([
      { start: '2025-10-24T22:00:00.000Z', clicks: 1, scans: 0 },
      { start: '2025-10-25T22:00:00.000Z', clicks: 5, scans: 1 }, // 26 October: 25 hours
      { start: '2025-10-26T23:00:00.000Z', clicks: 1, scans: 0 },
      { start: '2025-10-27T23:00:00.000Z', clicks: 1, scans: 0 },
    ])
    expect(await stats(`${q}&granularity=hour&timezone=Europe/Paris&start=2025-10-25T23:00:00Z&end=2025-10-26T03:00:00Z`)).toEqual([
      { start: '2025-10-25T23:00:00.000Z', clicks: 0, scans: 0 }, // 01:00 CEST
      { start: '2025-10-26T00:00:00.000Z', clicks: 2, scans: 0 }, // 02:00 CEST
      { start: '2025-10-26T01:00:00.000Z', clicks: 1, scans: 1 }, // 02:00 CET
      { start: '2025-10-26T02:00:00.000Z', clicks: 0, scans: 0 }, // 03:00 CET
    ])
    expect(await stats(`${q}&granularity=day&start=2025-10-25T00:00:00Z&end=2025-10-28T00:00:00Z`)).toEqual([
      { start: '2025-10-25T00:00:00.000Z', clicks: 2, scans: 0 },
      { start: '2025-10-26T00:00:00.000Z', clicks: 5, scans: 1 },
      { start: '2025-10-27T00:00:00.000Z', clicks: 1, scans: 0 },
    ])
    expect(await stats(`${q}&granularity=day&timezone=Asia/Kolkata&start=2025-10-26T18:30:00Z&end=2025-10-28T18:30:00Z`)).toEqual([
      { start: '2025-10-26T18:30:00.000Z', clicks: 2, scans: 0 }, // 27 October IST: 22:59:59 and 23:00 UTC on the 26th
      { start: '2025-10-27T18:30:00.000Z', clicks: 1, scans: 0 }, // 28 October IST: Mumbai at 05:00
    ])
    expect(await stats(`${q}&granularity=week&timezone=Europe/Paris&start=2025-10-20T00:00:00Z&end=2025-11-03T00:00:00Z`)).toEqual([
      { start: '2025-10-19T22:00:00.000Z', clicks: 6, scans: 1 }, // Monday 20 October, 00:00 CEST
      { start: '2025-10-26T23:00:00.000Z', clicks: 2, scans: 0 }, // Monday 27 October, 00:00 CET
      { start: '2025-11-02T23:00:00.000Z', clicks: 0, scans: 0 }, // Monday 3 November: one hour of it is in the range
    ])
    expect(await stats(`${q}&granularity=month&timezone=America/New_York&start=2025-10-01T04:00:00Z&end=2025-11-01T04:00:00Z`)).toEqual([
      { start: '2025-10-01T04:00:00.000Z', clicks: 8, scans: 1 },
    ])
    expect(await stats(`linkId=${dst.id}&start=2025-10-26T00:00:00Z&end=2025-10-26T01:30:00Z`)).toEqual({ clicks: 2, scans: 0 })
    expect(await stats(`linkId=${dst.id}&start=2025-10-26T00:00:00Z&end=2025-10-26T01:30:00.001Z`)).toEqual({ clicks: 3, scans: 1 })
    expect(await stats(`linkId=${dst.id}&groupBy=city&start=2025-10-01T00:00:00Z&end=2025-11-01T00:00:00Z`)).toEqual([
      { city: 'Paris', clicks: 7, scans: 1 },
      { city: 'Mumbai', clicks: 1, scans: 0 },
    ])
  })

  test("bad parameters are 422 naming them; another member's link is 403", async () => {
    for (const [q, name] of [
      ['groupBy=time', 'granularity'],
      ['timezone=Europe/Atlantis', 'timezone'],
      ['os=ios', 'os'],
      ['interval=3d', 'interval'],
    ]) {
      const r = await s.api(`/statistics?${q}`)
      const body = (await r.json()) as any
      expect([q, r.status, body.code, body.message.includes(name)]).toEqual([q, 422, 'parameter_error', true])
    }
    const bob = await s.run(['users', 'add', 'bob'])
    expect(bob.code).toBe(0)
    const created = await s.run(['keys', 'create', '--user', 'bob', '--role', 'member'])
    const key = /(sk_[A-Za-z0-9_-]+)/.exec(created.stdout)![1]!
    const own = await s.api('/statistics', { key })
    expect(await own.json()).toEqual({ clicks: 0, scans: 0 })
    const other = await s.api(`/statistics?linkId=${a.id}`, { key })
    expect([other.status, ((await other.json()) as any).code]).toEqual([403, 'forbidden'])
  })
})
