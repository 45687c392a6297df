import { expect, test } from 'bun:test'
import { createRateLimiter } from './rate-limit'

test('a fixed one-minute window per bucket', () => {
  let now = 1_000_000
  const rl = createRateLimiter(3, () => now)
  expect([1, 2, 3].map(() => rl.hit('a').allowed)).toEqual([true, true, true])
  const over = rl.hit('a')
  expect(over).toMatchObject({ allowed: false, remaining: 0, limit: 3, reset: 60 })
  expect(rl.hit('b').allowed).toBe(true)
  now += 30_000
  expect(rl.hit('a').reset).toBe(30)
  now += 30_000
  expect(rl.hit('a')).toMatchObject({ allowed: true, remaining: 2 })
})
