/**
 * Failed dashboard sign-ins per client address (IPv4, or the /64 of IPv6, which one
 * subscriber usually holds whole). An attempt is counted before the credentials are
 * checked, so parallel guesses cannot slip past, and refunded when it succeeds. Counters
 * live in bounded LRUs that evict, never clear; addresses that used their budget sit in a
 * second LRU that only they enter, so a flood of fresh addresses does not unblock anyone.
 */
import { ipBucket, LruCache } from '../shared'

export const SIGN_IN_LIMITS = { failures: 10, windowMs: 15 * 60_000 } as const
/** ~100 bytes per counter: a few MB at most under a flood. */
const MAX_COUNTERS = 100_000
const MAX_COUNTER_BYTES = 16 * 2 ** 20

export type SignInVerdict = { allowed: true } | { allowed: false; retryAfterS: number }

interface Window {
  count: number
  since: number
}

export function createSignInLimiter(now: () => number = Date.now, { maxCounters = MAX_COUNTERS }: { maxCounters?: number } = {}) {
  const { failures, windowMs } = SIGN_IN_LIMITS
  const lru = <V>() => new LruCache<V>({ maxEntries: maxCounters, maxBytes: MAX_COUNTER_BYTES, ttlMs: windowMs, sizeOf: () => 32, now })
  const tries = lru<Window>()
  /** Addresses that used their budget → when their window ends. */
  const blocked = lru<number>()

  return {
    /** Counts an attempt before the credentials are checked; refused once the address has used its budget. */
    attempt(ip: string): SignInVerdict {
      const bucket = ipBucket(ip)
      const t = now()
      const until = blocked.get(bucket)
      if (until !== undefined) return { allowed: false, retryAfterS: Math.max(1, Math.ceil((until - t) / 1000)) }
      let w = tries.get(bucket)
      if (!w || t - w.since >= windowMs) {
        w = { count: 0, since: t }
        tries.set(bucket, w)
      }
      if (++w.count >= failures) {
        // This is the last attempt the window allows; later ones wait for it to end.
        tries.delete(bucket)
        blocked.set(bucket, w.since + windowMs, w.since + windowMs - t)
      }
      return { allowed: true }
    },
    /** The attempt was right: it does not count. */
    succeeded(ip: string) {
      const bucket = ipBucket(ip)
      const w = tries.peek(bucket)
      if (w && w.count > 0) w.count--
      else if (blocked.peek(bucket) !== undefined) {
        // The budget's last attempt was this one: unblock, with the other failures still counted.
        blocked.delete(bucket)
        tries.set(bucket, { count: failures - 1, since: now() })
      }
    },
    size: () => tries.size + blocked.size,
  }
}
export type SignInLimiter = ReturnType<typeof createSignInLimiter>

/** What the session service needs: this process's limiter, or the cluster's (src/auth/rate-limit.cluster.ts). */
export interface SignInLimiterPort {
  attempt(ip: string): SignInVerdict | Promise<SignInVerdict>
  succeeded(ip: string): void | Promise<void>
}
