/**
 * The API rate limit and the sign-in limit for a cluster on PostgreSQL: the same answers as
 * this process's limiters (rate-limit.ts, session.limiter.ts), counted in one row per bucket
 * and window shared by every node (src/store's exact cluster limiter, one upsert per hit).
 * Windows are aligned on the epoch rather than started by a bucket's first hit, so every
 * node names the same window without asking.
 */
import type { SQL } from 'bun'
import { ipBucket } from '../shared'
import { createClusterRateLimiter } from '../store'
import type { RateLimiter } from './rate-limit'
import { SIGN_IN_LIMITS, type SignInLimiterPort } from './session.limiter'

const MINUTE_MS = 60_000

export function createClusterApiLimiter(sql: SQL, perMinute: number, now: () => number = Date.now): RateLimiter {
  const limiter = createClusterRateLimiter(sql, { mode: 'exact' })
  return { hit: (bucket) => limiter.hit(`api:${bucket}`, perMinute, MINUTE_MS, now()) }
}

export function createClusterSignInLimiter(sql: SQL, now: () => number = Date.now): SignInLimiterPort {
  const limiter = createClusterRateLimiter(sql, { mode: 'exact' })
  const { failures, windowMs } = SIGN_IN_LIMITS
  return {
    async attempt(ip) {
      const s = await limiter.hit(`sign-in:${ipBucket(ip)}`, failures, windowMs, now())
      return s.allowed ? { allowed: true } : { allowed: false, retryAfterS: s.reset }
    },
    succeeded: (ip) => limiter.refund(`sign-in:${ipBucket(ip)}`, windowMs, now()),
  }
}
