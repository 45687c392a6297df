/**
 * Fixed one-minute windows per caller (API key, or client IP for requests without a
 * valid key). In memory: one process serves a data dir, and a restart forgives.
 */
export interface RateState {
  limit: number
  remaining: number
  /** Seconds until the window resets. */
  reset: number
  allowed: boolean
}

export function createRateLimiter(perMinute: number, now: () => number = Date.now) {
  const windows = new Map<string, { start: number; count: number }>()
  const WINDOW_MS = 60_000
  let lastSweep = now()

  return {
    hit(bucket: string): RateState {
      const t = now()
      if (t - lastSweep > WINDOW_MS) {
        for (const [k, w] of windows) if (t - w.start >= WINDOW_MS) windows.delete(k)
        lastSweep = t
      }
      let w = windows.get(bucket)
      if (!w || t - w.start >= WINDOW_MS) {
        w = { start: t, count: 0 }
        windows.set(bucket, w)
      }
      w.count++
      const reset = Math.max(1, Math.ceil((w.start + WINDOW_MS - t) / 1000))
      return { limit: perMinute, remaining: Math.max(0, perMinute - w.count), reset, allowed: w.count <= perMinute }
    },
  }
}
/** What the API envelope needs: this process's windows, or the cluster's (rate-limit.cluster.ts). */
export interface RateLimiter {
  hit(bucket: string): RateState | Promise<RateState>
}

export function rateLimitHeaders(s: RateState): Record<string, string> {
  return {
    'RateLimit-Limit': String(s.limit),
    'RateLimit-Remaining': String(s.remaining),
    'RateLimit-Reset': String(s.reset),
  }
}
