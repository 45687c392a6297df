import { expect, test } from 'bun:test'
import { createLinkCache } from './link-cache'

test('hits skip the loader; invalidation reloads; misses are cached with a TTL and a bound', () => {
  let loads = 0
  let t = 0
  const store = new Map([['d/a', 'A']])
  const cache = createLinkCache<string>((d, k) => (loads++, store.get(`${d}/${k}`) ?? null), { negativeMax: 2, negativeTtlMs: 1000, now: () => t })
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
