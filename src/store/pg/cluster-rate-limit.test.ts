import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { SQL } from 'bun'
import { startPostgres, type TestPostgres } from '../../../test/helpers/postgres'
import { createRateLimiter, rateLimitHeaders } from '../../auth'
import { type ClusterRateLimitOptions, createClusterRateLimiter } from './cluster-rate-limit'

let pg: TestPostgres
let nodes: SQL[]
beforeAll(async () => {
  pg = await startPostgres()
  nodes = [0, 1, 2].map(() => new SQL(pg.url))
})
afterAll(async () => {
  for (const sql of nodes ?? []) await sql.close()
  await pg?.destroy()
})

const MINUTE = 60_000
/** A window start of our choosing (aligned on the minute), 15 s into it. */
const T0 = 29_000_000 * MINUTE
const limiters = (options: Partial<ClusterRateLimitOptions> = {}) => nodes.map((sql) => createClusterRateLimiter(sql, options))
const windowRows = async (bucket: string) =>
  (await nodes[0]!`SELECT window_start, hits FROM rate_windows WHERE bucket = ${bucket} ORDER BY window_start`).map(
    (r: { window_start: string; hits: number }) => ({
      windowStart: Number(r.window_start),
      hits: r.hits,
    }),
  )

describe('cluster rate limit (exact, the default)', () => {
  test('limit 50: of 120 concurrent hits over 3 nodes exactly 50 pass; the next window allows again', async () => {
    const ls = limiters()
    const now = T0 + 15_000
    const answers = await Promise.all(Array.from({ length: 120 }, (_, i) => ls[i % 3]!.hit('key:k1', 50, MINUTE, now)))
    const allowed = answers.filter((a) => a.allowed)
    expect(allowed.length).toBe(50)
    expect(allowed.map((a) => a.remaining).toSorted((a, b) => a - b)).toEqual(Array.from({ length: 50 }, (_, i) => i))
    for (const a of answers) expect({ limit: a.limit, reset: a.reset }).toEqual({ limit: 50, reset: 45 })
    for (const a of answers.filter((a) => !a.allowed)) expect(a.remaining).toBe(0)
    // Refused hits are not written: the window stops at the limit.
    expect(await windowRows('key:k1')).toEqual([{ windowStart: T0, hits: 50 }])

    const next = await Promise.all(Array.from({ length: 60 }, (_, i) => ls[i % 3]!.hit('key:k1', 50, MINUTE, T0 + MINUTE + 1_000)))
    expect(next.filter((a) => a.allowed).length).toBe(50)
    expect(next[0]!.reset).toBe(59)
  })

  test('answers as the single-node limiter does for hits from the start of a window, so the RateLimit-* headers do too', async () => {
    const [cluster] = limiters()
    const t = T0 + 7 * MINUTE
    const single = createRateLimiter(10, () => t)
    for (let i = 0; i < 13; i++) {
      const ours = await cluster!.hit('key:same', 10, MINUTE, t)
      expect(rateLimitHeaders(ours)).toEqual(rateLimitHeaders(single.hit('key:same')))
      expect(ours.allowed).toBe(i < 10)
    }
  })

  test('buckets are counted apart', async () => {
    const [a, b] = limiters()
    const t = T0 + 9 * MINUTE
    for (let i = 0; i < 3; i++) await a!.hit('ip:192.0.2.1', 3, MINUTE, t)
    expect((await b!.hit('ip:192.0.2.1', 3, MINUTE, t)).allowed).toBe(false)
    expect(await b!.hit('ip:192.0.2.2', 3, MINUTE, t)).toMatchObject({ allowed: true, remaining: 2 })
  })

  test('a refunded hit (a sign-in that succeeded) gives its place back, on any node', async () => {
    const [a, b] = limiters()
    const t = T0 + 11 * MINUTE
    for (let i = 0; i < 3; i++) expect((await a!.hit('signin:198.51.100.7', 3, 15 * MINUTE, t)).allowed).toBe(true)
    expect((await b!.hit('signin:198.51.100.7', 3, 15 * MINUTE, t)).allowed).toBe(false)
    await b!.refund('signin:198.51.100.7', 15 * MINUTE, t)
    expect(await a!.hit('signin:198.51.100.7', 3, 15 * MINUTE, t)).toMatchObject({ allowed: true, remaining: 0 })
  })

  test('ended windows are deleted now and then by a hit, not on every hit', async () => {
    const limiter = createClusterRateLimiter(nodes[0]!, { sweepEveryMs: MINUTE })
    const t = T0 + 100 * MINUTE
    await limiter.hit('key:old', 5, MINUTE, t)
    await limiter.sweeping()
    const afterFirst = limiter.queries()
    for (let i = 0; i < 10; i++) await limiter.hit('key:old', 5, MINUTE, t + 1_000)
    expect(limiter.queries() - afterFirst).toBe(10) // one statement per hit, no sweep
    expect((await windowRows('key:old')).length).toBe(1)

    const later = t + 10 * MINUTE
    await limiter.hit('key:old', 5, MINUTE, later)
    await limiter.sweeping()
    expect(await windowRows('key:old')).toEqual([{ windowStart: Math.floor(later / MINUTE) * MINUTE, hits: 1 }])
  })

  test("a node that only counts one-minute windows sweeps none of another node's 15-minute windows before they end", async () => {
    const [signIns, api] = limiters({ sweepEveryMs: 0 })
    const t = T0 + 300 * MINUTE // a 15-minute window starts here
    await signIns!.hit('sign-in:203.0.113.9', 10, 15 * MINUTE, t)
    await api!.hit('api:key:k9', 600, MINUTE, t + 5 * MINUTE) // sweeps what ended two of its minutes ago
    await api!.sweeping()
    expect(await windowRows('sign-in:203.0.113.9')).toEqual([{ windowStart: Math.floor(t / (15 * MINUTE)) * 15 * MINUTE, hits: 1 }])
    expect((await signIns!.hit('sign-in:203.0.113.9', 10, 15 * MINUTE, t + 6 * MINUTE)).remaining).toBe(8)
  })
})

describe('cluster rate limit (precheck: not exact, fewer round trips)', () => {
  test('limit 50, 120 concurrent hits over 3 nodes: at least 50 and at most 50 + 3 × (batch − 1) pass', async () => {
    const ls = limiters({ mode: 'precheck', batch: 5 })
    const now = T0 + 20 * MINUTE
    const answers = await Promise.all(Array.from({ length: 120 }, (_, i) => ls[i % 3]!.hit('key:pre', 50, MINUTE, now)))
    const allowed = answers.filter((a) => a.allowed).length
    expect(allowed).toBeGreaterThanOrEqual(50)
    expect(allowed).toBeLessThanOrEqual(50 + 3 * 4)
  })

  test('a bucket used sparsely asks once per batch; an exhausted one is refused without asking; the next window allows again', async () => {
    const [limiter] = limiters({ mode: 'precheck', batch: 10 })
    const t = T0 + 30 * MINUTE
    await limiter!.hit('key:sparse', 100, MINUTE, t) // the first hit also starts a sweep
    await limiter!.sweeping()
    const start = limiter!.queries()
    for (let i = 1; i < 40; i++) expect((await limiter!.hit('key:sparse', 100, MINUTE, t)).allowed).toBe(true)
    // 40 hits: reported in batches of 10 while under half the limit.
    expect(limiter!.queries() - start).toBe(4)
    expect(await windowRows('key:sparse')).toEqual([{ windowStart: T0 + 30 * MINUTE, hits: 40 }])

    // Another node uses up the window; this one learns it on its next ask and then stops asking.
    const [, other] = limiters()
    for (let i = 0; i < 60; i++) await other!.hit('key:sparse', 100, MINUTE, t)
    const answers = []
    for (let i = 0; i < 30; i++) answers.push(await limiter!.hit('key:sparse', 100, MINUTE, t))
    expect(answers.filter((a) => a.allowed).length).toBeLessThanOrEqual(9)
    const beforeFlood = limiter!.queries()
    for (let i = 0; i < 100; i++) expect(await limiter!.hit('key:sparse', 100, MINUTE, t)).toMatchObject({ allowed: false, remaining: 0 })
    expect(limiter!.queries()).toBe(beforeFlood)

    expect((await limiter!.hit('key:sparse', 100, MINUTE, t + MINUTE)).allowed).toBe(true)
  })
})
