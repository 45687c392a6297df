/**
 * A/B verdicts in process, on the real SQLite store and events engine: visits through the
 * redirect handler (each keeps the variant its cookie names and gets its click id as `sl_id`),
 * leads and sales reported with POST /track/lead and /track/sale on those click ids (each
 * conversion carries its click's variant), then the test ended and judged: a clear winner is
 * promoted (the link's URL, `link.updated`, `link.test_completed`), a flat test is inconclusive
 * (the URL kept, only `link.test_completed`), a test whose goal is sales is judged on sales, and
 * a second look judges nothing again.
 */
import { beforeAll, describe, expect, test } from 'bun:test'
import { type ApiHarness, createHarness } from '../../test/helpers/in-process'
import { landingOf } from '../../test/helpers/landing'
import { until } from '../../test/helpers/poll'
import { redirectHandlerFor } from '../redirect/redirect.test-fixtures'

const BROWSER = 'Mozilla/5.0 (X11; Linux x86_64; rv:125.0) Gecko/20100101 Firefox/125.0'
const A = 'https://a.example/'
const B = 'https://b.example/'

let h: ApiHarness
let visit: (key: string, cookie: string) => Promise<string | null>
beforeAll(() => {
  h = createHarness()
  const { deps } = h
  const handler = redirectHandlerFor(deps)
  deps.links.onChange((c) => handler.invalidate(c.domain, c.key))
  visit = async (key, cookie) => {
    const answer = await handler.handle(
      new Request(`https://localhost/${key}`, { headers: { 'user-agent': BROWSER, cookie } }),
      `/${key}`,
      '',
      'localhost',
      () => '192.0.2.7',
    )
    return answer.headers.get('location')
  }
})

/** The Location a visit was sent to without its click id, and the click id (every visit here is tracked). */
function landing(location: string | null): { url: string; clickId: string } {
  const { url, clickId } = landingOf(location)
  expect(clickId).toMatch(/^[A-Za-z0-9_-]{22}$/)
  return { url, clickId: clickId! }
}

/**
 * A link under test with `visits[i]` visits on variant i, `leads[i]` of them with a lead and
 * `sales[i]` others with a sale (POST /track/lead, /track/sale with the visit's `sl_id`); answers its id.
 */
async function testedLink(key: string, visits: number[], leads: number[], sales: number[] = [], goal?: 'leads' | 'sales'): Promise<string> {
  const made = await h.call('POST', '/links/link', {
    key: h.keys.member,
    json: {
      data: { url: 'https://plain.example/' },
      linkOptions: {
        key,
        trackConversion: true,
        testVariants: [
          { url: A, percentage: 50 },
          { url: B, percentage: 50 },
        ],
        testCompletedAt: new Date(Date.now() + 3600_000).toISOString(),
        ...(goal ? { testGoal: goal } : {}),
      },
    },
  })
  expect(made.status).toBe(200)
  const row = (await h.deps.links.findLiveRow('localhost', key))!
  const startedAt = JSON.parse(row.options).testStartedAt as number
  // The harness's clock steps 1 ms per call ahead of the wall clock the redirect stamps visits with:
  // a test counts visits from its start, so the visits begin once the wall clock is past it.
  await until(
    'the wall clock past the test start',
    async () => Date.now(),
    (t) => t > startedAt,
  )
  const clicks: string[][] = visits.map(() => [])
  for (const [variant, n] of visits.entries())
    for (let i = 0; i < n; i++) {
      const { url, clickId } = landing(await visit(key, `sl_variant=${startedAt}.${variant}`))
      expect(url).toBe(variant === 0 ? A : B)
      clicks[variant]!.push(clickId)
    }
  await h.deps.recorder.drain()
  for (const [variant, ids] of clicks.entries()) {
    const nLeads = leads[variant] ?? 0
    for (const [i, clickId] of ids.slice(0, nLeads).entries()) {
      const r = await h.call('POST', '/track/lead', {
        key: h.keys.member,
        json: { clickId, eventName: 'Sign up', customerExternalId: `${key}-lead-${variant}-${i}` },
      })
      expect(r.status).toBe(200)
    }
    for (const [i, clickId] of ids.slice(nLeads, nLeads + (sales[variant] ?? 0)).entries()) {
      const r = await h.call('POST', '/track/sale', {
        key: h.keys.member,
        json: { clickId, customerExternalId: `${key}-sale-${variant}-${i}`, amount: 1900, currency: 'eur' },
      })
      expect(r.status).toBe(200)
    }
  }
  return made.body.id
}

/** Ends the test now (PATCH), then one look of the verdict loop. */
async function endAndJudge(id: string) {
  expect((await h.call('PATCH', `/links/${id}`, { key: h.keys.member, json: { linkOptions: { testCompletedAt: new Date().toISOString() } } })).status).toBe(200)
  await h.deps.abTests.judgeDue()
}
const eventsOf = (id: string) =>
  h.deps.db
    .query<{ type: string; data: string }, [string]>(
      "SELECT type, data FROM events WHERE link_id = ? AND type IN ('link.updated', 'link.test_completed') ORDER BY seq",
    )
    .all(id)

describe('A/B verdicts', () => {
  test('a clear winner (10 % against 30 % of 200 visits each) is promoted: its URL becomes the link’s, link.updated and link.test_completed go out once', async () => {
    const id = await testedLink('clear', [200, 200], [20, 60])
    const running = await h.call('GET', `/links/${id}/test`, { key: h.keys.member })
    expect(running.body).toMatchObject({ status: 'running', goal: 'leads', winner: null })
    expect(running.body.variants).toEqual([
      { url: A, percentage: 50, clicks: 200, leads: 20, sales: 0, conversionRate: 0.1 },
      { url: B, percentage: 50, clicks: 200, leads: 60, sales: 0, conversionRate: 0.3 },
    ])
    expect(running.body.pValue).toBeLessThan(0.05)

    await endAndJudge(id)
    const judged = await h.call('GET', `/links/${id}/test`, { key: h.keys.member })
    expect(judged.body).toMatchObject({ status: 'completed', winner: 1 })
    expect(judged.body.pValue).toBeLessThan(0.001)
    const link = (await h.call('GET', `/links/${id}`, { key: h.keys.member })).body
    expect(link.data.url).toBe(B)
    expect(link.destination).toBe(B)
    // The PATCH's own link.updated, then the promotion's, then link.test_completed.
    const events = eventsOf(id)
    expect(events.map((e) => e.type)).toEqual(['link.updated', 'link.updated', 'link.test_completed'])
    expect(JSON.parse(events[1]!.data).destination).toBe(B)
    expect(JSON.parse(events[2]!.data)).toMatchObject({ link: { id, destination: B }, test: { status: 'completed', winner: 1 } })
    // The split stopped: the plain visitor goes to the winner; a second look judges nothing.
    expect(landing(await visit('clear', '')).url).toBe(B)
    await h.deps.abTests.judgeDue()
    expect(eventsOf(id)).toHaveLength(3)
  })

  test('a flat test (10 % against 12 %) is inconclusive: the URL stays, only link.test_completed goes out', async () => {
    const id = await testedLink('flat', [200, 200], [20, 24])
    await endAndJudge(id)
    const judged = await h.call('GET', `/links/${id}/test`, { key: h.keys.member })
    expect(judged.body).toMatchObject({ status: 'inconclusive', winner: null })
    expect(judged.body.pValue).toBeGreaterThan(0.05)
    expect((await h.call('GET', `/links/${id}`, { key: h.keys.member })).body.data.url).toBe('https://plain.example/')
    expect(eventsOf(id).map((e) => e.type)).toEqual(['link.updated', 'link.test_completed'])
    await h.deps.abTests.judgeDue()
    expect(eventsOf(id)).toHaveLength(2)
  })

  test('goal sales: judged on sales matched by click id, whatever the leads say', async () => {
    // Leads favour A (40 against 5 of 150 visits), sales favour B (3 against 30).
    const id = await testedLink('by-sales', [150, 150], [40, 5], [3, 30], 'sales')
    const running = await h.call('GET', `/links/${id}/test`, { key: h.keys.member })
    expect(running.body).toMatchObject({ status: 'running', goal: 'sales' })
    expect(
      running.body.variants.map((v: { clicks: number; leads: number; sales: number; conversionRate: number }) => [
        v.clicks,
        v.leads,
        v.sales,
        v.conversionRate,
      ]),
    ).toEqual([
      [150, 40, 3, 0.02],
      [150, 5, 30, 0.2],
    ])
    await endAndJudge(id)
    const judged = await h.call('GET', `/links/${id}/test`, { key: h.keys.member })
    expect(judged.body).toMatchObject({ status: 'completed', winner: 1 })
    expect((await h.call('GET', `/links/${id}`, { key: h.keys.member })).body.data.url).toBe(B)
  })

  test("another member's link: forbidden; an admin reads it", async () => {
    const id = (await h.call('GET', '/links?search=clear', { key: h.keys.member })).body.links[0].id
    expect((await h.call('GET', `/links/${id}/test`, { key: h.keys.other })).status).toBe(403)
    expect((await h.call('GET', `/links/${id}/test`, { key: h.keys.admin })).status).toBe(200)
  })
})
