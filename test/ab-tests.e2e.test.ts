/**
 * A/B tests against the compiled binary: the contract's rules on the test's fields, the split
 * after targeting with its sticky cookie, the variant recorded on every counted visit (GET
 * /links/{id}/test counts them from the click events), and the verdict when the test ends
 * early (PATCH testCompletedAt to now): a lead reported on one visit's `sl_id` counts for
 * that visit's variant only (a targeted visit's lead for none), one lead is no winner, so it is
 * inconclusive, the link keeps its URL, `link.test_completed` reaches a webhook receiver
 * started here once and the split stops. The raw events export gives every visit's and lead's
 * variant with `variant=true`. (A winner's promotion: src/ab-tests/ab-tests.test.ts
 * in process, test/cluster-ab-tests.e2e.test.ts on three nodes.)
 * Runs again on PostgreSQL with the rest of the suite.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { loadDuckDb } from '../src/stats/events.duckdb'
import { landingOf } from './helpers/landing'
import { until } from './helpers/poll'
import { json, startServer, type TestServer } from './helpers/server'
import { type Receiver, startReceiver } from './helpers/webhook-receiver'

const BROWSER_UA = 'Mozilla/5.0 (X11; Linux x86_64; rv:125.0) Gecko/20100101 Firefox/125.0'
const IPHONE_UA = 'Mozilla/5.0 (iPhone; CPU iPhone OS 17_4 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4 Mobile/15E148 Safari/604.1'
const A = 'https://a.example/landing'
const B = 'https://b.example/landing'

const landing = (r: Response) => landingOf(r.headers.get('location'))

let server: TestServer
let receiver: Receiver
beforeAll(async () => {
  receiver = startReceiver()
  server = await startServer({ toml: '[webhooks]\nallowPrivateNetworks = true\n' })
})
afterAll(async () => {
  if (process.env.DEBUG_AB || server?.proc.exitCode !== null) console.error(server?.output())
  await server?.stop()
  receiver?.stop()
})

const inAnHour = () => new Date(Date.now() + 3600_000).toISOString()
const variants = [
  { url: A, percentage: 50 },
  { url: B, percentage: 50 },
]
const create = (key: string, linkOptions: object) =>
  server.api('/links/link', { method: 'POST', json: { data: { url: 'https://plain.example/' }, linkOptions: { key, ...linkOptions } } })
const visit = (shortLink: string, headers: Record<string, string> = {}) => server.fetch(shortLink, { headers: { 'user-agent': BROWSER_UA, ...headers } })

describe('A/B tests', () => {
  test('the fields follow the contract: 2-4 variants of 10-90 % summing to 100, an end within a year, conversion tracking on', async () => {
    const refused = async (linkOptions: object) => {
      const r = await json(await create(`bad${Math.random().toString(36).slice(2, 8)}`, linkOptions))
      expect(r.status).toBe(422)
      expect(r.body.code).toBe('parameter_error')
      return r.body.message as string
    }
    const ok = { trackConversion: true, testVariants: variants, testCompletedAt: inAnHour() }
    expect(
      await refused({
        ...ok,
        testVariants: [
          { url: A, percentage: 50 },
          { url: B, percentage: 40 },
        ],
      }),
    ).toContain('sum to 100')
    await refused({ ...ok, testVariants: [{ url: A, percentage: 100 }] })
    await refused({
      ...ok,
      testVariants: [
        { url: A, percentage: 95 },
        { url: B, percentage: 5 },
      ],
    })
    await refused({
      ...ok,
      testVariants: [
        { url: 'ftp://a.example/', percentage: 50 },
        { url: B, percentage: 50 },
      ],
    })
    expect(await refused({ ...ok, trackConversion: undefined })).toContain('trackConversion')
    expect(await refused({ ...ok, testCompletedAt: undefined })).toContain('testCompletedAt')
    await refused({ ...ok, testCompletedAt: new Date(Date.now() - 3600_000).toISOString() })
    await refused({ ...ok, testCompletedAt: new Date(Date.now() + 400 * 86400_000).toISOString() })
    await refused({ ...ok, testGoal: 'clicks' })
    const text = await json(await server.api('/links/text', { method: 'POST', json: { data: { text: 'hi' }, linkOptions: ok } }))
    expect(text.status).toBe(422)
    // A link without a test: GET /links/{id}/test is not_found.
    const plain = await json(await create('plain-no-test', {}))
    expect((await json(await server.api(`/links/${plain.body.id}/test`))).status).toBe(404)
  })

  test('split by percentage after targeting, a sticky cookie, every visit recorded with its variant; ended early: inconclusive, announced once, the split stops', async () => {
    const hook = await json(
      await server.api('/webhooks', { method: 'POST', json: { url: receiver.url('/ab'), events: ['link.test_completed', 'link.updated'] } }),
    )
    expect(hook.status).toBe(200)
    receiver.secrets.set('/ab', hook.body.secret)
    const ends = inAnHour()
    const made = await json(
      await create('ab', {
        trackConversion: true,
        testVariants: variants,
        testCompletedAt: ends,
        Targeting: { targetType: 'device', targetDatas: { ios: 'https://ios.example/', android: 'https://android.example/' } },
      }),
    )
    expect(made.status).toBe(200)
    expect(made.body).toMatchObject({ trackConversion: true, testVariants: variants, testCompletedAt: ends, testGoal: 'leads' })
    const link = made.body as { id: string; key: string; shortLink: string }

    // Visitors without a cookie: drawn by percentage (40 visits at 50/50 all on one side: p = 2^-39).
    const seen: Record<string, number> = { [A]: 0, [B]: 0 }
    let cookieOfA = ''
    let clickOfA = ''
    for (let i = 0; i < 40; i++) {
      const r = await visit(link.shortLink)
      expect(r.status).toBe(302)
      const { url: to, clickId } = landing(r)
      expect(clickId).toMatch(/^[A-Za-z0-9_-]{22}$/)
      seen[to]!++
      if (to === A) clickOfA = clickId!
      const cookie = r.headers.get('set-cookie')!
      expect(cookie).toMatch(/^sl_variant=\d+\.[01]; /)
      expect(cookie).toContain(`Path=/${link.key}`)
      expect(cookie).toContain(`Expires=${new Date(ends).toUTCString()}`)
      for (const flag of ['HttpOnly', 'Secure', 'SameSite=Lax']) expect(cookie).toContain(flag)
      if (to === A) cookieOfA = cookie.split(';')[0]!
    }
    expect(seen[A]! + seen[B]!).toBe(40)
    expect(seen[A]).toBeGreaterThan(0)
    expect(seen[B]).toBeGreaterThan(0)
    // A returning visitor keeps their variant, and is not given a new cookie.
    for (let i = 0; i < 10; i++) {
      const r = await visit(link.shortLink, { cookie: cookieOfA })
      expect(landing(r).url).toBe(A)
      expect(r.headers.get('set-cookie')).toBeNull()
    }
    seen[A]! += 10
    // Targeting comes first: an iPhone goes to its target, outside the test (counted, no variant).
    const ios = await visit(link.shortLink, { 'user-agent': IPHONE_UA })
    const iosLanding = landing(ios)
    expect(iosLanding.url).toBe('https://ios.example/')
    expect(ios.headers.get('set-cookie')).toBeNull()

    // Every counted visit recorded its variant: the test counts them from the click events, and a
    // lead by the visit's click id counts for its variant (the targeted visit's lead for none).
    await server.clicksFlushed()
    for (const [clickId, customer] of [
      [clickOfA, 'on-a'],
      [iosLanding.clickId!, 'on-ios'],
    ] as const) {
      const lead = await server.api('/track/lead', { method: 'POST', json: { clickId, eventName: 'Sign up', customerExternalId: customer } })
      expect(lead.status).toBe(200)
    }
    const running = await json(await server.api(`/links/${link.id}/test`))
    expect(running.status).toBe(200)
    expect(running.body).toMatchObject({ status: 'running', goal: 'leads', completedAt: ends, winner: null })
    expect(running.body.variants).toEqual([
      { url: A, percentage: 50, clicks: seen[A], leads: 1, sales: 0, conversionRate: 1 / seen[A]! },
      { url: B, percentage: 50, clicks: seen[B], leads: 0, sales: 0, conversionRate: 0 },
    ])
    expect(((await json(await server.api(`/links/${link.id}`))).body as { clicks: number }).clicks).toBe(51)
    // The raw events export gives each visit's and each lead's variant when asked (variant=true): index in testVariants, null outside the test.
    const exported = async (event: string) =>
      (await (await server.api(`/statistics/events?linkId=${link.id}&event=${event}&format=ndjson&variant=true`)).text())
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l) as { variant: number | null; count: number; clickId?: string })
    const perVariant: Record<string, number> = {}
    for (const row of await exported('clicks')) perVariant[String(row.variant)] = (perVariant[String(row.variant)] ?? 0) + row.count
    expect(perVariant).toEqual({ '0': seen[A]!, '1': seen[B]!, null: 1 })
    // Parquet too (on PostgreSQL it goes through a CSV file DuckDB converts), read back by DuckDB's Parquet reader.
    const dir = mkdtempSync(join(tmpdir(), 'ab-export-'))
    try {
      const file = join(dir, 'events.parquet')
      await Bun.write(file, await server.api(`/statistics/events?linkId=${link.id}&format=parquet&variant=true`))
      const db = await (await loadDuckDb(dir)).DuckDBInstance.create(':memory:')
      const c = await db.connect()
      const rows = (
        await c.runAndReadAll(`SELECT variant::VARCHAR AS variant, sum("count")::INTEGER AS n FROM read_parquet('${file}') GROUP BY 1 ORDER BY 1`)
      ).getRowObjectsJS()
      expect(rows).toEqual([
        { variant: '0', n: seen[A]! },
        { variant: '1', n: seen[B]! },
        { variant: null, n: 1 },
      ])
      c.closeSync()
      db.closeSync()
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
    const leads = await until(
      'both leads in the export',
      () => exported('leads'),
      (rows) => rows.length === 2,
    )
    expect(leads.map((r) => [r.clickId, r.variant]).sort()).toEqual(
      [
        [clickOfA, 0],
        [iosLanding.clickId, null],
      ].sort(),
    )

    // Ended early: judged within 5 seconds; one lead is no significant difference, so inconclusive.
    const updatesBefore = receiver.arrivals.filter((a) => a.type === 'link.updated').length
    expect((await server.api(`/links/${link.id}`, { method: 'PATCH', json: { linkOptions: { testCompletedAt: new Date().toISOString() } } })).status).toBe(200)
    const judged = await until(
      'the verdict',
      async () => (await json(await server.api(`/links/${link.id}/test`))).body,
      (b) => b.status !== 'running',
      15_000,
    )
    expect(judged).toMatchObject({ status: 'inconclusive', winner: null })
    expect(judged.pValue).toBeGreaterThan(0.05)
    expect(judged.variants.map((v: { clicks: number }) => v.clicks)).toEqual([seen[A], seen[B]])
    const completed = await until(
      'link.test_completed',
      async () => receiver.arrivals.filter((a) => a.type === 'link.test_completed'),
      (l) => l.length > 0,
    )
    expect(completed).toHaveLength(1)
    expect(completed[0]!.envelope.data.link.id).toBe(link.id)
    expect(completed[0]!.envelope.data.test).toMatchObject({ status: 'inconclusive', winner: null })
    // The link keeps its URL: only the PATCH's own link.updated went out.
    const after = (await json(await server.api(`/links/${link.id}`))).body
    expect(after.data.url).toBe('https://plain.example/')
    expect(receiver.arrivals.filter((a) => a.type === 'link.updated').length).toBe(updatesBefore + 1)
    expect(receiver.unverified).toEqual([])
    // The split stops: visitors (with or without a cookie) go to the link's URL.
    const later = await visit(link.shortLink, { cookie: cookieOfA })
    expect(landing(later).url).toBe('https://plain.example/')
    expect(later.headers.get('set-cookie')).toBeNull()
    // Announced once, though the verdict loop kept looking while the visits above were made.
    expect(receiver.arrivals.filter((a) => a.type === 'link.test_completed')).toHaveLength(1)
  })

  test('testVariants: null removes the test without a verdict', async () => {
    const made = await json(await create('ab-removed', { trackConversion: true, testVariants: variants, testCompletedAt: inAnHour() }))
    expect((await server.api(`/links/${made.body.id}`, { method: 'PATCH', json: { linkOptions: { testVariants: null } } })).status).toBe(200)
    const after = (await json(await server.api(`/links/${made.body.id}`))).body
    expect(after).toMatchObject({ testVariants: null, testCompletedAt: null, testGoal: null })
    expect((await json(await server.api(`/links/${made.body.id}/test`))).status).toBe(404)
    expect(landing(await visit(made.body.shortLink)).url).toBe('https://plain.example/')
  })
})
