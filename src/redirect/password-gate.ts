/**
 * Password-protected links: a correct password sets a short-lived signed cookie scoped
 * to the link's path. The signature covers the link id, the expiry and the password
 * hash, so changing the password revokes it.
 *
 * Guessing is limited twice per window: per client IP and link (IPv6 per /64, which one
 * subscriber usually holds whole), and per link across all IPs, which stops guessing
 * spread over many addresses. The per-link budget is 10x the per-IP one, so a lone
 * attacker can lock a link's new visitors out for at most one window; visitors who hold
 * the cookie never reach this limit. An attempt is counted before the password is
 * checked (parallel guesses cannot slip past) and refunded when it was right, so only
 * wrong ones use the budget. Counters live in bounded LRUs that evict, never clear:
 * pairs that reached the limit are kept in their own LRU, which only blocked pairs
 * enter, so flooding the counters with fresh addresses does not unblock anyone.
 */
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto'
import type { SQL } from 'bun'
import { ipBucket, LruCache } from '../shared'
import type { ClusterRateLimiter, Db } from '../store'

const COOKIE_TTL_S = 3600
export const PASSWORD_LIMITS = {
  perIpAndLink: 10,
  perLink: 100,
  windowMs: 15 * 60_000,
} as const
/** Bounds of the counters: ~100 bytes each, so a few MB at most. */
const MAX_COUNTERS = 100_000
const MAX_COUNTER_BYTES = 16 * 2 ** 20

export type AttemptVerdict = { allowed: true } | { allowed: false; retryAfterS: number }

export function loadOrCreateSecret(db: Db, name: string): Buffer {
  const row = db.query<{ value: string }, [string]>('SELECT value FROM kv WHERE key = ?').get(name)
  if (row) return Buffer.from(row.value, 'base64')
  const secret = randomBytes(32)
  db.query('INSERT INTO kv (key, value) VALUES (?, ?) ON CONFLICT(key) DO NOTHING').run(name, secret.toString('base64'))
  return Buffer.from(db.query<{ value: string }, [string]>('SELECT value FROM kv WHERE key = ?').get(name)!.value, 'base64')
}

/**
 * `loadOrCreateSecret` on PostgreSQL: nodes starting together each offer a secret, the first
 * insert wins (ON CONFLICT DO NOTHING) and every node reads that one back, so cookies signed
 * by one node are valid on all.
 */
export async function loadOrCreateSecretPg(sql: SQL, name: string): Promise<Buffer> {
  await sql`INSERT INTO kv (key, value) VALUES (${name}, ${randomBytes(32).toString('base64')}) ON CONFLICT (key) DO NOTHING`
  const [row] = await sql`SELECT value FROM kv WHERE key = ${name}`
  return Buffer.from(row.value as string, 'base64')
}

interface Window {
  count: number
  since: number
}

/** Where guesses are counted: this process (the default), or the cluster's store (`createClusterPasswordLimits`). */
export interface PasswordAttemptLimits {
  allowAttempt(ip: string, linkSeq: number): AttemptVerdict | Promise<AttemptVerdict>
  succeeded(ip: string, linkSeq: number): void | Promise<void>
}

/**
 * The same two budgets for a cluster on PostgreSQL, counted in its rate-limit windows (one row
 * per bucket and window, aligned on the epoch): every node's guesses count against one budget.
 */
export function createClusterPasswordLimits(limiter: ClusterRateLimiter, now: () => number = Date.now): PasswordAttemptLimits {
  const { perIpAndLink, perLink, windowMs } = PASSWORD_LIMITS
  const linkBucket = (linkSeq: number) => `password:link:${linkSeq}`
  const pairBucket = (ip: string, linkSeq: number) => `password:ip:${ipBucket(ip)}|${linkSeq}`
  return {
    async allowAttempt(ip, linkSeq) {
      const t = now()
      const link = await limiter.hit(linkBucket(linkSeq), perLink, windowMs, t)
      if (!link.allowed) return { allowed: false, retryAfterS: link.reset }
      const pair = await limiter.hit(pairBucket(ip, linkSeq), perIpAndLink, windowMs, t)
      if (pair.allowed) return { allowed: true }
      // Refused for this address: the link's budget keeps this attempt.
      await limiter.refund(linkBucket(linkSeq), windowMs, t)
      return { allowed: false, retryAfterS: pair.reset }
    },
    async succeeded(ip, linkSeq) {
      const t = now()
      await limiter.refund(linkBucket(linkSeq), windowMs, t)
      await limiter.refund(pairBucket(ip, linkSeq), windowMs, t)
    },
  }
}

export function createPasswordGate(secret: Buffer, now: () => number = Date.now, limits?: PasswordAttemptLimits) {
  const { perIpAndLink, perLink, windowMs } = PASSWORD_LIMITS
  const lru = <V>() => new LruCache<V>({ maxEntries: MAX_COUNTERS, maxBytes: MAX_COUNTER_BYTES, ttlMs: windowMs, sizeOf: () => 32, now })
  /** Attempts per IP+link that have not reached the limit. */
  const tries = lru<Window>()
  /** IP+link pairs that reached the limit, until their window ends. */
  const blocked = lru<number>()
  /** Attempts per link across all IPs. */
  const linkTries = lru<Window>()

  const sign = (linkId: string, exp: number, passwordHash: string) =>
    createHmac('sha256', secret).update(`${linkId}|${exp}|${passwordHash}`).digest('base64url')
  const cookieName = (linkSeq: number) => `slpw_${linkSeq}`
  const retryAfter = (until: number): AttemptVerdict => ({ allowed: false, retryAfterS: Math.max(1, Math.ceil((until - now()) / 1000)) })
  /** Adds one to a window counter (a new window once the last one ended). */
  const bump = (map: LruCache<Window>, key: string, t: number): Window => {
    const w = map.get(key)
    if (w && t - w.since < windowMs) {
      w.count++
      return w
    }
    const fresh = { count: 1, since: t }
    map.set(key, fresh)
    return fresh
  }

  const local: PasswordAttemptLimits = {
    /** Counts an attempt before the password is checked; refused once this IP or the link has used its budget. */
    allowAttempt(ip: string, linkSeq: number): AttemptVerdict {
      const pair = `${ipBucket(ip)}|${linkSeq}`
      const t = now()
      const until = blocked.get(pair)
      if (until !== undefined) return retryAfter(until)
      const link = linkTries.get(String(linkSeq))
      if (link && t - link.since < windowMs && link.count >= perLink) return retryAfter(link.since + windowMs)
      bump(linkTries, String(linkSeq), t)
      const mine = bump(tries, pair, t)
      if (mine.count >= perIpAndLink) {
        // This was the last allowed attempt; later ones wait for the window to end.
        tries.delete(pair)
        blocked.set(pair, mine.since + windowMs, mine.since + windowMs - t)
      }
      return { allowed: true }
    },
    /** The attempt was right: it does not count against either budget. */
    succeeded(ip: string, linkSeq: number) {
      const pair = `${ipBucket(ip)}|${linkSeq}`
      tries.delete(pair)
      blocked.delete(pair)
      const link = linkTries.peek(String(linkSeq))
      if (link && link.count > 0) link.count--
    },
  }
  const counted = limits ?? local

  return {
    hasValidCookie(cookieHeader: string | null, link: { seq: number; id: string; passwordHash: string }): boolean {
      if (!cookieHeader) return false
      const name = cookieName(link.seq)
      const raw = cookieHeader
        .split(';')
        .map((c) => c.trim())
        .find((c) => c.startsWith(`${name}=`))
      if (!raw) return false
      const [expText, sig] = raw.slice(name.length + 1).split('.')
      const exp = Number(expText)
      if (!sig || !Number.isInteger(exp) || exp * 1000 < now()) return false
      const expected = Buffer.from(sign(link.id, exp, link.passwordHash))
      const given = Buffer.from(sig)
      return given.length === expected.length && timingSafeEqual(given, expected)
    },
    cookieFor(link: { seq: number; id: string; passwordHash: string; key: string }): string {
      const exp = Math.floor(now() / 1000) + COOKIE_TTL_S
      return `${cookieName(link.seq)}=${exp}.${sign(link.id, exp, link.passwordHash)}; Path=/${encodeURIComponent(link.key)}; Max-Age=${COOKIE_TTL_S}; HttpOnly; Secure; SameSite=Lax`
    },
    /** Counts an attempt before the password is checked; refused once this IP or the link has used its budget. */
    allowAttempt: (ip: string, linkSeq: number) => counted.allowAttempt(ip, linkSeq),
    /** The attempt was right: it does not count against either budget. */
    succeeded: (ip: string, linkSeq: number) => counted.succeeded(ip, linkSeq),
  }
}
export type PasswordGate = ReturnType<typeof createPasswordGate>
