import { describe, expect, test } from 'bun:test'
import { AppError } from '../shared'
import { createLinkCache } from './link-cache'

test('hits skip the loader; invalidation reloads; misses are cached with a TTL and a bound', () => {
  let loads = 0
  let t = 0
  const store = new Map([['d/a', 'A']])
  const cache = createLinkCache<string>(
    (d, k) => {
      loads++
      return store.get(`${d}/${k}`) ?? null
    },
    {
      maxKeyLength: 190,
      negativeMax: 2,
      negativeTtlMs: 1000,
      now: () => t,
    },
  )
  expect(cache.get('d', 'a')).toBe('A')
  expect(cache.get('d', 'a')).toBe('A')
  expect(loads).toBe(1)
  store.set('d/a', 'A2')
  cache.invalidate('d', 'a')
  expect(cache.get('d', 'a')).toBe('A2')
  expect(cache.get('d', 'x')).toBeNull()
  expect(cache.get('d', 'x')).toBeNull()
  expect(loads).toBe(3) // the second miss came from the negative cache
  store.set('d/x', 'X')
  cache.invalidate('d', 'x') // a create under that key
  expect(cache.get('d', 'x')).toBe('X')
  for (const k of ['m1', 'm2', 'm3']) cache.get('d', k)
  expect(cache.size().negative).toBe(2)
  t = 2000
  const before = loads
  cache.get('d', 'm3')
  expect(loads).toBe(before + 1) // expired miss is looked up again
})

test('a key longer than any link key is not found, without a lookup and without being remembered', () => {
  let loads = 0
  const cache = createLinkCache<string>(
    () => {
      loads++
      return null
    },
    { maxKeyLength: 190 },
  )
  expect(cache.get('d', 'k'.repeat(16 * 1024))).toBeNull()
  expect(cache.get('d', 'k'.repeat(191))).toBeNull()
  expect(loads).toBe(0)
  expect(cache.size()).toMatchObject({ negative: 0, negativeBytes: 0 })
  expect(cache.get('d', 'k'.repeat(190))).toBeNull()
  expect(loads).toBe(1)
})

test('the not-found cache stays within its byte cap under a flood of long keys', () => {
  const negativeMaxBytes = 256 * 1024
  const cache = createLinkCache<string>(() => null, { maxKeyLength: 16 * 1024, negativeMaxBytes })
  for (let i = 0; i < 2000; i++) {
    cache.get('d', `${i}-`.padEnd(16 * 1024, 'k'))
    expect(cache.size().negativeBytes).toBeLessThanOrEqual(negativeMaxBytes)
  }
  expect(cache.size().negative).toBeGreaterThan(0)
})

test('the link cache stays within its byte cap when links are large', () => {
  const maxBytes = 1024 * 1024
  const cache = createLinkCache<string>((_d, k) => k.padEnd(64 * 1024, '.'), { maxKeyLength: 190, maxBytes, sizeOf: (v) => 2 * v.length })
  for (let i = 0; i < 200; i++) cache.get('d', `k${i}`)
  expect(cache.size().positiveBytes).toBeLessThanOrEqual(maxBytes)
  expect(cache.size().positive).toBeGreaterThan(0)
})

describe('a loader that answers promises (PostgreSQL)', () => {
  /** A loader whose loads wait until the test settles them. */
  function deferredLoader() {
    const waiting: { key: string; resolve(v: string | null): void; reject(e: unknown): void }[] = []
    const load = (_d: string, key: string) =>
      new Promise<string | null>((resolve, reject) => {
        waiting.push({ key, resolve, reject })
      })
    return { load, waiting }
  }
  /** The error Bun.SQL raises when PostgreSQL is down. */
  const connectionClosed = () => Object.assign(new Error('Connection closed'), { code: 'ERR_POSTGRES_CONNECTION_CLOSED' })

  test('a hit answers at once, not a promise; concurrent misses of a key share one load', async () => {
    const { load, waiting } = deferredLoader()
    const cache = createLinkCache<string>(load, { maxKeyLength: 190 })
    const first = cache.get('d', 'a')
    const second = cache.get('d', 'a')
    const other = cache.get('d', 'b')
    expect(waiting.map((w) => w.key)).toEqual(['a', 'b'])
    expect(second).toBe(first)
    waiting[0]!.resolve('A')
    waiting[1]!.resolve(null)
    expect(await first).toBe('A')
    expect(await other).toBeNull()
    expect(cache.get('d', 'a')).toBe('A')
    expect(cache.get('d', 'b')).toBeNull()
    expect(waiting.length).toBe(2)
  })

  test('a failed load is not remembered, evicts nothing, and an unreachable store is service_unavailable with Retry-After', async () => {
    const { load, waiting } = deferredLoader()
    const cache = createLinkCache<string>(load, { maxKeyLength: 190 })
    const a = cache.get('d', 'a')
    waiting[0]!.resolve('A')
    await a
    // The store goes down: a miss fails, the cached link is still served.
    const miss = cache.get('d', 'x')
    const again = cache.get('d', 'x')
    waiting[1]!.reject(connectionClosed())
    const error = await (miss as Promise<unknown>).catch((e) => e)
    expect(error).toBeInstanceOf(AppError)
    expect(error).toMatchObject({ code: 'service_unavailable', status: 503, headers: { 'Retry-After': expect.any(String) } })
    expect(await (again as Promise<unknown>).catch((e) => e)).toBe(error)
    expect(cache.get('d', 'a')).toBe('A')
    expect(cache.size()).toMatchObject({ positive: 1, negative: 0 })
    // Back up: the key is loaded again, not answered from a remembered failure.
    const retry = cache.get('d', 'x')
    expect(waiting.length).toBe(3)
    waiting[2]!.resolve('X')
    expect(await retry).toBe('X')
    // An error that is not about reaching the store stays itself.
    const bug = cache.get('d', 'y')
    waiting[3]!.reject(new TypeError('bug'))
    expect(await (bug as Promise<unknown>).catch((e) => e)).toBeInstanceOf(TypeError)
  })

  test('a load that began before an invalidation is not remembered (it may have read the old row)', async () => {
    const { load, waiting } = deferredLoader()
    const cache = createLinkCache<string>(load, { maxKeyLength: 190 })
    const stale = cache.get('d', 'a')
    cache.invalidate('d', 'a')
    const fresh = cache.get('d', 'a')
    expect(waiting.length).toBe(2)
    waiting[1]!.resolve('A2')
    waiting[0]!.resolve('A1')
    expect(await stale).toBe('A1')
    expect(await fresh).toBe('A2')
    expect(cache.get('d', 'a')).toBe('A2')
    const cleared = cache.get('d', 'c')
    cache.clear()
    waiting[2]!.resolve('C')
    await cleared
    expect(cache.size().positive).toBe(0)
  })
})
