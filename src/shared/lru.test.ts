import { expect, test } from 'bun:test'
import { LRU_ENTRY_OVERHEAD_BYTES, LruCache } from './lru'

test('evicts the least recently used entry beyond maxEntries; a hit keeps an entry', () => {
  const lru = new LruCache<number>({ maxEntries: 2 })
  lru.set('a', 1)
  lru.set('b', 2)
  expect(lru.get('a')).toBe(1)
  lru.set('c', 3)
  expect([lru.get('a'), lru.get('b'), lru.get('c')]).toEqual([1, undefined, 3])
})

test('16 KB keys: the estimated bytes never pass maxBytes, and the newest entries stay', () => {
  const maxBytes = 1024 * 1024
  const lru = new LruCache<true>({ maxEntries: 1_000_000, maxBytes })
  const key = (i: number) => `${i}:`.padEnd(16 * 1024, 'x')
  for (let i = 0; i < 500; i++) {
    lru.set(key(i), true)
    expect(lru.bytes).toBeLessThanOrEqual(maxBytes)
  }
  const perEntry = 2 * 16 * 1024 + LRU_ENTRY_OVERHEAD_BYTES
  expect(lru.size).toBe(Math.floor(maxBytes / perEntry))
  expect(lru.get(key(499))).toBe(true)
  expect(lru.get(key(0))).toBeUndefined()
})

test('an entry bigger than the whole budget is not kept and evicts nothing', () => {
  const lru = new LruCache<string>({ maxEntries: 10, maxBytes: 1000, sizeOf: (v) => 2 * v.length })
  lru.set('small', 'x')
  lru.set('big', 'y'.repeat(1000))
  expect(lru.get('big')).toBeUndefined()
  expect(lru.get('small')).toBe('x')
})

test('entries expire after their time to live; bytes are given back on delete and expiry', () => {
  let t = 0
  const lru = new LruCache<number>({ maxEntries: 10, ttlMs: 100, now: () => t })
  lru.set('a', 1)
  lru.set('b', 2)
  lru.delete('b')
  t = 101
  expect(lru.get('a')).toBeUndefined()
  expect([lru.size, lru.bytes]).toEqual([0, 0])
})

test('a hot key in the younger half stays without being moved, and is never the one evicted', () => {
  const lru = new LruCache<number>({ maxEntries: 100 })
  for (let i = 0; i < 100; i++) lru.set(`k${i}`, i)
  // k0 is the oldest: its first hit moves it to the end; hits while it is young leave it there.
  for (let i = 0; i < 1000; i++) {
    expect(lru.get('k0')).toBe(0)
    lru.set(`n${i}`, i)
  }
  expect(lru.get('k0')).toBe(0)
  expect(lru.size).toBe(100)
  expect(lru.get('k1')).toBeUndefined()
})

test('over many evictions, re-sets, deletes and clears, the evicted entry is always the least recently set', () => {
  const max = 50
  const c = new LruCache<number>({ maxEntries: max })
  // A model: keys in recency order, oldest first (peek does not touch recency; hits are the other tests' subject).
  let model: string[] = []
  let seed = 7
  const rand = (n: number) => {
    seed = (seed * 1103515245 + 12345) % 2 ** 31
    return seed % n
  }
  for (let i = 0; i < 20_000; i++) {
    const op = rand(10)
    const key = `k${rand(120)}`
    if (op < 6) {
      c.set(key, i)
      model = model.filter((k) => k !== key)
      model.push(key)
      if (model.length > max) model.shift()
    } else if (op < 9) {
      expect(c.peek(key) !== undefined).toBe(model.includes(key))
    } else if (i % 5000 < 10) {
      c.clear()
      model = []
    } else {
      c.delete(key)
      model = model.filter((k) => k !== key)
    }
    expect(c.size).toBe(model.length)
    if (i % 500 === 0) for (let k = 0; k < 120; k++) expect(c.peek(`k${k}`) !== undefined).toBe(model.includes(`k${k}`))
  }
})
