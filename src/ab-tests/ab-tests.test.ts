/**
 * A/B verdicts in process, on the real SQLite store and events engine: visits through the
 * redirect handler (each keeps the variant its cookie names), leads per variant in the store's
 * `conversions` table as the conversions module keeps them (one row per lead, carrying its
 * click's variant; the table is made here because that module is not on this branch), then
 * the test ended and judged: a clear winner is promoted (the link's URL, `link.updated`,
 * `link.test_completed`), a flat test is inconclusive (the URL kept, only `link.test_completed`),
 * and a second look judges nothing again.
 */
import { beforeAll, describe, expect, test } from 'bun:test'
import { type ApiHarness, createHarness } from '../../test/helpers/in-process'
import { createRedirectHandler } from '../redirect'

const BROWSER = 'Mozilla/5.0 (X11; Linux x86_64; rv:125.0) Gecko/20100101 Firefox/125.0'
const A = 'https://a.example/'
const B = 'https://b.example/'

let h: ApiHarness
let visit: (key: string, cookie: string) => Promise<string | null>
beforeAll(() => {
  h = createHarness()
  const { deps } = h
  const handler = createRedirectHandler({
    settings: deps.settings,
    findLiveRow: deps.links.findLiveRow,
    domainOf: (host) => deps.domains.lookup(host),
    storedClicks: () => 0,
    recorder: deps.recorder,
    geo: deps.geo,
    passwords: deps.passwords,
    renderHosted: () => new Response('hosted'),
    serveFile: () => null,
  })
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
  // The conversions module's table, as far as the A/B read uses it (its migration makes the real one, with `variant` copied from the click).
  deps.db.run(`CREATE TABLE IF NOT EXISTS conversions (
    seq INTEGER PRIMARY KEY AUTOINCREMENT, kind TEXT NOT NULL, click_id TEXT NOT NULL, link_seq INTEGER NOT NULL,
    quantity INTEGER NOT NULL DEFAULT 1, click_at INTEGER NOT NULL, variant INTEGER)`)
})

/** A link under test with `visits[i]` visits and `leads[i]` leads on variant i; answers its id. */
async function testedLink(key: string, visits: number[], leads: number[]): Promise<string> {
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
      },
    },
  })
  expect(made.status).toBe(200)
  const row = (await h.deps.links.findLiveRow('localhost', key))!
  const startedAt = JSON.parse(row.options).testStartedAt as number
  for (const [variant, n] of visits.entries())
    for (let i = 0; i < n; i++) expect(await visit(key, `sl_variant=${startedAt}.${variant}`)).toBe(variant === 0 ? A : B)
  await h.deps.recorder.drain()
  const insert = h.deps.db.query('INSERT INTO conversions (kind, click_id, link_seq, click_at, variant) VALUES (?, ?, ?, ?, ?)')
  for (const [variant, n] of leads.entries()) for (let i = 0; i < n; i++) insert.run('lead', `${key}-${variant}-${i}`, row.seq, startedAt + 1, variant)
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
    expect(await visit('clear', '')).toBe(B)
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

  test("another member's link: forbidden; an admin reads it", async () => {
    const id = (await h.call('GET', '/links?search=clear', { key: h.keys.member })).body.links[0].id
    expect((await h.call('GET', `/links/${id}/test`, { key: h.keys.other })).status).toBe(403)
    expect((await h.call('GET', `/links/${id}/test`, { key: h.keys.admin })).status).toBe(200)
  })
})
