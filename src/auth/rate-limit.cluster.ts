/**
 * The API rate limit and the sign-in limit for a cluster on PostgreSQL: the same answers as
 * this process's limiters (rate-limit.ts, session.limiter.ts), counted in one row per bucket
 * and window shared by every node (src/store's exact cluster limiter, one upsert per hit).
 * Windows are aligned on the epoch rather than started by a bucket's first hit, so every
 * node names the same window without asking.
 */
import { ipBucket } from '../shared'
import type { ClusterRateLimiter } from '../store'
import type { RateLimiter } from './rate-limit'
import { SIGN_IN_LIMITS, type SignInLimiterPort } from './session.limiter'

const MINUTE_MS = 60_000

/** `limiter`: the node's one exact cluster limiter (createClusterRateLimiter), shared by the cluster's limits. */
export function createClusterApiLimiter(limiter: ClusterRateLimiter, perMinute: number, now: () => number = Date.now): RateLimiter {
  return { hit: (bucket) => limiter.hit(`api:${bucket}`, perMinute, MINUTE_MS, now()) }
}

export function createClusterSignInLimiter(limiter: ClusterRateLimiter, now: () => number = Date.now): SignInLimiterPort {
  const { failures, windowMs } = SIGN_IN_LIMITS
  return {
    async attempt(ip) {
      const s = await limiter.hit(`sign-in:${ipBucket(ip)}`, failures, windowMs, now())
      return s.allowed ? { allowed: true } : { allowed: false, retryAfterS: s.reset }
    },
    succeeded: (ip) => limiter.refund(`sign-in:${ipBucket(ip)}`, windowMs, now()),
  }
}
