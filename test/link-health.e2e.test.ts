/**
 * Link health against the compiled binary with its scheduled checks on (`[health] every = "1s"`):
 * a destination server started here on loopback, switched up, down (503), gone (410) and
 * hanging; a link goes broken, serves its fallback (the visit still counts) and recovers; two
 * links on one URL cost one request per interval; a check waiting on a destination held by the test
 * does not hold up redirects or the API (they answer before it is released); a private destination is refused without
 * `allowPrivateNetworks`; a node killed (SIGKILL) right after a link went broken still delivers
 * its link.broken once after the restart. Runs again on PostgreSQL with the rest of the suite.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { type Destination, startDestination } from './helpers/destination'
import { until } from './helpers/poll'
import { queryStore, startServer, type TestServer } from './helpers/server'
import { startReceiver } from './helpers/webhook-receiver'

const BROWSER_UA = 'Mozilla/5.0 (X11; Linux x86_64; rv:125.0) Gecko/20100101 Firefox/125.0'
const HEALTH = '[health]\nevery = "1s"\ntimeout = "1s"\n'

let d: Destination
let server: TestServer
let strict: TestServer | undefined
beforeAll(async () => {
  d = startDestination()
  server = await startServer({ toml: `${HEALTH}allowPrivateNetworks = true\n` })
})
afterAll(async () => {
  for (const s of [server, strict]) if (s && (process.env.DEBUG_HEALTH || s.proc.exitCode !== null)) console.error(s.output())
  await server?.stop()
  await strict?.stop()
  d?.stop()
})

interface Health {
  status: 'unknown' | 'ok' | 'broken'
  checkedAt: string | null
  brokenUrls: { url: string; httpStatus: number | null; error: string | null }[]
  urls: { url: string; status: string; httpStatus: number | null; error: string | null }[]
}

async function createLink(s: TestServer, key: string, path: string, extra: object = {}) {
  const r = await s.api('/links/link', { method: 'POST', json: { data: { url: `${d.origin}${path}` }, linkOptions: { key, ...extra } } })
  expect(r.status).toBe(200)
  return (await r.json()) as { id: string; shortLink: string }
}
const healthOf = async (s: TestServer, id: string) => ((await (await s.api(`/links/${id}`)).json()) as { health: Health }).health
const becomes = (s: TestServer, id: string, status: Health['status']) =>
  until(
    `link ${id} ${status}`,
    () => healthOf(s, id),
    (h) => h.status === status,
  )
const visit = async (s: TestServer, shortLink: string) => (await s.fetch(shortLink, { headers: { 'user-agent': BROWSER_UA } })).headers.get('location')

describe('scheduled link-health checks', () => {
  test('up → ok; down (503) → broken after 2 checks, visits go to the fallback and count; up again → ok at the next check', async () => {
    const fallback = 'https://brand.example/sorry'
    const link = await createLink(server, 'flaky', '/flaky', { healthFallbackUrl: fallback })
    await becomes(server, link.id, 'ok')
    expect(await visit(server, link.shortLink)).toBe(`${d.origin}/flaky`)

    d.set('/flaky', 'down')
    const broken = await becomes(server, link.id, 'broken')
    expect(broken.brokenUrls).toEqual([{ url: `${d.origin}/flaky`, httpStatus: 503, error: null }])
    // Two failed checks in a row before it broke: 503 was answered at least twice.
    const answered = d.requests('/flaky')
    expect(answered.length).toBeGreaterThanOrEqual(3)
    expect(answered.every((r) => r.method === 'HEAD' && r.userAgent === `shortlink-health/1 (+${server.baseUrl})`)).toBe(true)
    expect(await visit(server, link.shortLink)).toBe(fallback)
    expect(await visit(server, link.shortLink)).toBe(fallback)
    await server.clicksFlushed()
    expect(((await (await server.api(`/links/${link.id}`)).json()) as { clicks: number }).clicks).toBe(3)
    const listed = (await (await server.api('/links?health=broken')).json()) as { links: { id: string }[] }
    expect(listed.links.map((l) => l.id)).toContain(link.id)

    d.set('/flaky', 'up')
    await becomes(server, link.id, 'ok')
    expect(await visit(server, link.shortLink)).toBe(`${d.origin}/flaky`)
  })

  test('gone (410) and hanging destinations break their links, each with its answer', async () => {
    d.set('/gone', 'gone')
    d.set('/hang', 'hang')
    const gone = await createLink(server, 'gone', '/gone')
    const hang = await createLink(server, 'hang', '/hang')
    expect((await becomes(server, gone.id, 'broken')).brokenUrls).toEqual([{ url: `${d.origin}/gone`, httpStatus: 410, error: null }])
    expect((await becomes(server, hang.id, 'broken')).brokenUrls).toEqual([{ url: `${d.origin}/hang`, httpStatus: null, error: 'no answer within 1 s' }])
  })

  test('a check waiting on a destination slows nothing else: redirects and the API answer while it waits', async () => {
    // A node whose checks wait up to a minute, and a destination that answers only when the test lets it:
    // what answers before the release answered while the check was waiting (an order, not a stopwatch).
    const patient = await startServer({ toml: '[health]\nevery = "1s"\ntimeout = "60s"\nallowPrivateNetworks = true\n' })
    let release = () => {}
    try {
      d.set('/held', { heldUntil: new Promise((r) => (release = () => r(undefined))), after: 'up' })
      const held = await createLink(patient, 'held', '/held')
      const other = await createLink(patient, 'other', '/elsewhere')
      await until(
        'the check of /held waiting for its answer',
        async () => d.requests('/held').length,
        (n) => n > 0,
      )
      expect(await visit(patient, other.shortLink)).toBe(`${d.origin}/elsewhere`)
      expect(await visit(patient, held.shortLink)).toBe(`${d.origin}/held`)
      expect((await patient.api('/links/count?health=broken')).status).toBe(200)
      // Still waiting: no answer was given, so the check has not ended.
      expect((await healthOf(patient, held.id)).checkedAt).toBeNull()
      release()
      await becomes(patient, held.id, 'ok')
    } finally {
      release()
      await patient.stop()
    }
  })

  test('two links on one URL: one request per interval for it, as for a URL only one link uses', async () => {
    await createLink(server, 'shared-1', '/shared')
    await createLink(server, 'shared-2', '/shared')
    await createLink(server, 'solo', '/solo')
    await until(
      'five checks of the shared URL',
      async () => d.requests('/shared').length,
      (n) => n >= 5,
    )
    const shared = d.requests('/shared').map((r) => r.at)
    const solo = d.requests('/solo').map((r) => r.at)
    // Never two checks of it within half an interval (two links checked apart would make pairs).
    for (let i = 1; i < shared.length; i++) expect(shared[i]! - shared[i - 1]!).toBeGreaterThanOrEqual(450)
    // Over the same rounds, as many requests as for the URL of one link.
    const window = (times: number[]) => times.filter((t) => t <= shared.at(-1)! + 100).length
    expect(Math.abs(window(shared) - window(solo))).toBeLessThanOrEqual(1)
  })
})

describe('private destinations', () => {
  test('without [health] allowPrivateNetworks a loopback destination is never requested and stays unknown', async () => {
    strict = await startServer({ toml: HEALTH })
    const link = await createLink(strict, 'inside', '/inside')
    const first = await until(
      'a check',
      () => healthOf(strict!, link.id),
      (h) => h.checkedAt !== null,
    )
    // Two more rounds.
    await until(
      'two more checks',
      () => healthOf(strict!, link.id),
      (h) => Date.parse(h.checkedAt!) >= Date.parse(first.checkedAt!) + 1500,
    )
    const health = await healthOf(strict, link.id)
    expect(health).toMatchObject({ status: 'unknown', brokenUrls: [], urls: [{ status: 'unknown', httpStatus: null }] })
    expect(health.urls[0]!.error).toContain('resolves to a private, loopback or link-local address')
    expect(d.requests('/inside')).toEqual([])
  })
})

describe('a crash', () => {
  test('kill -9 right after a link went broken: after the restart its link.broken arrives, once, with the record', async () => {
    const toml = `${HEALTH}allowPrivateNetworks = true\n[webhooks]\nallowPrivateNetworks = true\n`
    const r = startReceiver()
    const node = await startServer({ toml })
    let again: TestServer | undefined
    try {
      const hook = (await (await node.api('/webhooks', { method: 'POST', json: { url: r.url('/h'), events: ['link.broken', 'link.recovered'] } })).json()) as {
        secret: string
      }
      r.secrets.set('/h', hook.secret)
      // Nothing is delivered before the crash: after it, the event can only come from the store.
      r.answer = () => 503
      d.set('/crash', 'down')
      const link = await createLink(node, 'crash', '/crash')
      await becomes(node, link.id, 'broken')
      node.proc.kill('SIGKILL')
      await node.proc.exited
      expect(r.delivered().size).toBe(0)

      r.answer = () => 204
      again = await startServer({ dir: node.dir, toml, env: { SHORTLINK_ADMIN_KEY: '' } })
      const [delivered] = await until(
        'link.broken delivered after the restart',
        async () => [...r.delivered()],
        (ids) => ids.length > 0,
        60_000,
      )
      // Three more checks of the destination, still down, after the restart: still broken, no second event.
      const checked = d.requests('/crash').length
      await until(
        'three more checks',
        async () => d.requests('/crash').length,
        (n) => n >= checked + 3,
      )
      const stored = await queryStore<{ id: string; type: string }>(again, "SELECT id, type FROM events WHERE type IN ('link.broken', 'link.recovered')")
      expect(stored).toEqual([{ id: delivered!, type: 'link.broken' }])
      expect([...r.delivered()]).toEqual([delivered!])
      expect(r.duplicates()).toEqual([])
      expect(r.unverified).toEqual([])
      const envelope = r.arrivals.find((a) => a.id === delivered && a.answered === 204)!.envelope
      expect(envelope.type).toBe('link.broken')
      expect(envelope.data).toMatchObject({
        id: link.id,
        key: 'crash',
        shortLink: link.shortLink,
        health: { status: 'broken', brokenUrls: [{ url: `${d.origin}/crash`, httpStatus: 503, error: null }] },
      })
    } finally {
      r.stop()
      await node.stop()
      await again?.stop()
    }
  })
})
