import { expect, test } from 'bun:test'
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
