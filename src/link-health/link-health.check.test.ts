/**
 * One check against real HTTP servers on loopback (test/helpers/destination.ts): what passes,
 * what fails, HEAD then GET, redirects, deadlines, bodies never read, and the private-address
 * rules of POST /qr/scan on every hop.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { type Destination, startDestination } from '../../test/helpers/destination'
import { type CheckOptions, checkUrl, MAX_REDIRECTS } from './link-health.check'
import { type CheckPool, createCheckPool } from './link-health.pool'
import type { Outcome } from './link-health.rules'

let d: Destination
let other: Destination
beforeAll(() => {
  d = startDestination()
  other = startDestination('127.0.0.2')
})
afterAll(() => {
  d.stop()
  other.stop()
})

const free = async () => () => {}
const opts = (o: Partial<CheckOptions> = {}): CheckOptions => ({
  timeoutMs: 2000,
  allowPrivateNetworks: true,
  userAgent: 'shortlink-health/1 (+https://sl.test/api)',
  turn: free,
  ...o,
})

describe('a check', () => {
  test('up, 401/403/429 pass (a server that is up); 404, 410 and 5xx fail with their status', async () => {
    d.set('/down', 'down')
    d.set('/gone', 'gone')
    d.set('/missing', 'missing')
    d.set('/forbidden', 'forbidden')
    const answers = await Promise.all(['/up', '/forbidden', '/missing', '/gone', '/down'].map((p) => checkUrl(`${d.origin}${p}`, opts())))
    expect(answers).toEqual([
      { result: 'pass', httpStatus: 200, error: null },
      { result: 'pass', httpStatus: 403, error: null },
      { result: 'fail', httpStatus: 404, error: null },
      { result: 'fail', httpStatus: 410, error: null },
      { result: 'fail', httpStatus: 503, error: null },
    ])
  })

  test('asks with HEAD and its User-Agent; a HEAD refused (405) is asked again with GET, whose endless body is never read', async () => {
    d.set('/endless', 'head-refused')
    // A check that read the endless body would never return: the answers below are the proof, not a timing.
    expect(await checkUrl(`${d.origin}/up?x=1`, opts())).toEqual({ result: 'pass', httpStatus: 200, error: null })
    expect(d.requests('/up').at(-1)).toMatchObject({ method: 'HEAD', userAgent: 'shortlink-health/1 (+https://sl.test/api)' })
    expect(await checkUrl(`${d.origin}/endless`, opts())).toEqual({ result: 'pass', httpStatus: 200, error: null })
    expect(d.requests('/endless').map((r) => r.method)).toEqual(['HEAD', 'GET'])
    // The body is cancelled with its headers: at most what the socket buffers went out, and nothing waited for it.
    await Bun.sleep(200)
    const sent = d.bodyBytes()
    expect(sent).toBeLessThan(32 * 1024 * 1024)
    await Bun.sleep(200)
    expect(d.bodyBytes()).toBe(sent)
  })

  test(`follows up to ${MAX_REDIRECTS} redirects and judges the answer after them; a redirect into an app passes`, async () => {
    for (let i = 0; i < 6; i++) d.set(`/hop${i}`, { redirect: `/hop${i + 1}`, status: i % 2 ? 301 : 307 })
    d.set('/hop6', 'gone')
    d.set('/to-gone', { redirect: '/hop5' })
    // Two hops to a 410: followed, judged.
    expect(await checkUrl(`${d.origin}/to-gone`, opts())).toEqual({ result: 'fail', httpStatus: 410, error: null })
    // Six redirects before the 410: the sixth is the answer judged (a server that is up).
    const before = d.requests('/hop6').length
    expect(await checkUrl(`${d.origin}/hop0`, opts())).toEqual({ result: 'pass', httpStatus: 301, error: null })
    expect(d.requests('/hop6').length).toBe(before)
    d.set('/app', { redirect: 'itms-apps://apps.apple.com/app/id1' })
    expect(await checkUrl(`${d.origin}/app`, opts())).toEqual({ result: 'pass', httpStatus: 302, error: null })
  })

  test('a hanging server fails at the deadline; a closed port fails at once, naming the error', async () => {
    d.set('/hang', 'hang')
    // The answer names the deadline: the check ended there (one that waited on would hit the test's timeout).
    expect(await checkUrl(`${d.origin}/hang`, opts({ timeoutMs: 300 }))).toEqual({ result: 'fail', httpStatus: null, error: 'no answer within 0.3 s' })
    const closed = startDestination()
    closed.stop()
    const refused = await checkUrl(`${closed.origin}/`, opts())
    expect(refused).toMatchObject({ result: 'fail', httpStatus: null })
    expect(refused.error).toStartWith('could not connect: ')
  })

  test('private addresses are refused unless allowed: nothing is requested and the check says so', async () => {
    const before = d.requests().length
    const refused = await checkUrl(`${d.origin}/up`, opts({ allowPrivateNetworks: false }))
    expect(refused).toEqual({
      result: 'refused',
      httpStatus: null,
      error: "'destination' 127.0.0.1 resolves to a private, loopback or link-local address; such addresses are not fetched",
    })
    const viaName = await checkUrl(`http://intranet.test:${d.port}/up`, opts({ allowPrivateNetworks: false, resolveHost: async () => ['10.1.2.3'] }))
    expect(viaName.result).toBe('refused')
    expect(viaName.error).not.toContain('10.1.2.3')
    expect(d.requests().length).toBe(before)
  })

  test('every redirect hop passes the rules before it is requested: a hop into a refused address is not requested', async () => {
    // 127.0.0.1 stands for a public address here; 127.0.0.2 for the inside of the network.
    const rules = opts({ allowPrivateNetworks: false, isRefusedAddress: (ip) => ip !== '127.0.0.1' })
    d.set('/inward', { redirect: `${other.origin}/secret` })
    expect(await checkUrl(`${d.origin}/inward`, rules)).toMatchObject({ result: 'refused', httpStatus: null })
    expect(d.requests('/inward')).toHaveLength(1)
    expect(other.requests()).toEqual([])
  })

  test('a name is connected to at the address that was checked (pinned), keeping the Host header', async () => {
    const seenHosts: string[] = []
    const named = Bun.serve({
      hostname: '127.0.0.1',
      port: 0,
      fetch: (r) => {
        seenHosts.push(r.headers.get('host') ?? '')
        return new Response('ok')
      },
    })
    try {
      const rules = opts({ allowPrivateNetworks: false, isRefusedAddress: () => false, resolveHost: async () => ['127.0.0.1'] })
      expect(await checkUrl(`http://shop.example:${named.port}/p`, rules)).toMatchObject({ result: 'pass', httpStatus: 200 })
      expect(seenHosts).toEqual([`shop.example:${named.port}`])
    } finally {
      named.stop(true)
    }
  })
})

describe('the pool of checks', () => {
  test('at most 2 requests at a time per host; a host that hangs holds back only its own URLs', async () => {
    d.set('/slow', 'hang')
    let inFlight = 0
    let most = 0
    const pool: CheckPool<Outcome> = createCheckPool<Outcome>({
      concurrency: 8,
      perHost: 2,
      check: async (url, release) => {
        inFlight++
        most = Math.max(most, inFlight)
        try {
          return await checkUrl(url, opts({ timeoutMs: 1000, turn: (h) => pool.turn(h), firstTurnHeld: release }))
        } finally {
          inFlight--
        }
      },
    })
    let hangingEnded = 0
    const hanging = Array.from({ length: 6 }, (_, i) =>
      pool.submit(`${d.origin}/slow?${i}`).then((o) => {
        hangingEnded++
        return o
      }),
    )
    expect(await pool.submit(`${other.origin}/up`)).toMatchObject({ result: 'pass' })
    // The other host was not queued behind the six hanging URLs (three deadlines of 1 s): its check
    // ended before the first of theirs, with only the first two of them asked.
    expect(hangingEnded).toBe(0)
    expect(d.requests('/slow').length).toBeLessThanOrEqual(2)
    expect((await Promise.all(hanging)).map((o) => o?.result)).toEqual(Array(6).fill('fail'))
    expect(most).toBe(3)
    // Per host: six hanging checks of one host ran two by two.
    const slow = d.requests('/slow').map((r) => r.at)
    for (let i = 2; i < slow.length; i++) expect(slow[i]! - slow[i - 2]!).toBeGreaterThanOrEqual(900)
  })
})
