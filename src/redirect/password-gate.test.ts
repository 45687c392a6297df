import { expect, test } from 'bun:test'
import { ipBucket } from '../shared'
import { type AttemptVerdict, createPasswordGate, PASSWORD_LIMITS, type PasswordGate } from './password-gate'

const { perIpAndLink, perLink, windowMs } = PASSWORD_LIMITS
/** The gate counting in this process (no cluster limits): its verdicts are synchronous. */
type LocalPasswordGate = Omit<PasswordGate, 'allowAttempt'> & { allowAttempt(ip: string, linkSeq: number): AttemptVerdict }
const gate = (now: () => number = () => 0) => createPasswordGate(Buffer.alloc(32, 1), now) as LocalPasswordGate
const tryN = (g: ReturnType<typeof gate>, ip: string, seq: number, n: number) => {
  for (let i = 0; i < n; i++) expect(g.allowAttempt(ip, seq)).toEqual({ allowed: true })
}

test('an IP gets its attempts on a link, then waits for the window to end', () => {
  let t = 1_000_000
  const g = gate(() => t)
  tryN(g, '198.51.100.7', 1, perIpAndLink)
  expect(g.allowAttempt('198.51.100.7', 1)).toEqual({ allowed: false, retryAfterS: windowMs / 1000 })
  expect(g.allowAttempt('198.51.100.8', 1).allowed).toBe(true) // another IP
  expect(g.allowAttempt('198.51.100.7', 2).allowed).toBe(true) // another link
  t += windowMs
  expect(g.allowAttempt('198.51.100.7', 1).allowed).toBe(true)
})

test('flooding the counters with 100k+ other IPs and links resets no count: a blocked IP stays blocked, the link keeps counting', () => {
  const g = gate()
  const victim = '203.0.113.10'
  tryN(g, victim, 7, perIpAndLink) // used up
  for (let i = 0; i < perLink - perIpAndLink - 5; i++) g.allowAttempt(`198.51.100.${i}`, 7)
  // 120k other IP+link pairs, spread over links so that no link reaches its own budget.
  for (let i = 0; i < 120_000; i++) g.allowAttempt(`10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}`, 1000 + (i % 2000))
  expect(g.allowAttempt(victim, 7).allowed).toBe(false)
  // The link's budget across IPs still holds its count: 5 more, then none.
  tryN(g, '192.0.2.1', 7, 5)
  expect(g.allowAttempt('192.0.2.2', 7).allowed).toBe(false)
})

test('guesses spread over many IPs stop at the per-link budget, with Retry-After; other links are untouched', () => {
  let t = 5_000_000
  const g = gate(() => t)
  for (let i = 0; i < perLink; i++) expect(g.allowAttempt(`192.0.2.${i % 250}`, 3).allowed).toBe(i < perLink)
  t += 60_000
  expect(g.allowAttempt('198.51.100.200', 3)).toEqual({ allowed: false, retryAfterS: (windowMs - 60_000) / 1000 })
  expect(g.allowAttempt('198.51.100.200', 4).allowed).toBe(true)
  t += windowMs
  expect(g.allowAttempt('198.51.100.200', 3).allowed).toBe(true) // a new window: the owner's visitors get in again
})

test('right answers do not use the budgets', () => {
  const g = gate()
  for (let i = 0; i < 3 * perLink; i++) {
    const ip = `192.0.2.${i % 250}`
    expect(g.allowAttempt(ip, 9).allowed).toBe(true)
    g.succeeded(ip, 9)
  }
  tryN(g, '198.51.100.1', 9, perIpAndLink)
})

test('IPv6 addresses count per /64', () => {
  expect(ipBucket('2001:db8:1:2:aaaa::1')).toBe('2001:db8:1:2::/64')
  expect(ipBucket('2001:DB8:0001:2:ffff:ffff:ffff:ffff')).toBe('2001:db8:1:2::/64')
  expect(ipBucket('2001:db8::1')).toBe('2001:db8:0:0::/64')
  expect(ipBucket('2001::5:6:7:8:9')).toBe('2001:0:0:5::/64')
  expect(ipBucket('::1')).toBe('0:0:0:0::/64')
  expect(ipBucket('203.0.113.9')).toBe('203.0.113.9')
  const g = gate()
  for (let i = 0; i < perIpAndLink; i++) g.allowAttempt(`2001:db8:1:2::${i.toString(16)}`, 1)
  expect(g.allowAttempt('2001:db8:1:2:ffff::1', 1).allowed).toBe(false)
})
