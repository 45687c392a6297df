/**
 * A rate limit that holds for the whole cluster: fixed windows per bucket (API key,
 * client address, sign-in address) counted in one PostgreSQL row per bucket and window.
 * The answer means what src/auth/rate-limit.ts's does (so the API's RateLimit-* headers
 * are made the same way), with one difference: windows are aligned on the epoch
 * (floor(now / windowMs)), not started by a bucket's first hit, so every node names the
 * same window without asking. Nodes' clocks must agree (NTP) to well under a window.
 *
 * Two modes:
 * - `exact` (the default): one round trip per hit. A hit on an exhausted window writes
 *   nothing (the row is not updated past the limit), so a flood costs reads, not writes.
 * - `precheck`: a node answers alone while its estimate (last count seen in PostgreSQL
 *   plus hits it has not reported) is under `nearFraction` of the limit, it holds fewer
 *   than `batch` unreported hits and none of its asks for the bucket is in flight; else
 *   it asks, reporting its unreported hits in the same statement. It refuses alone once
 *   it has seen the window exhausted (a flood costs no round trip). NOT exact: each
 *   node may allow up to batch − 1 hits on stale knowledge, so the cluster may allow up
 *   to nodes × (batch − 1) hits over the limit per window; unreported hits of a node
 *   that stops, or of a bucket it drops from memory, are never counted. It saves round
 *   trips for buckets used sparsely (one per `batch` hits) and for exhausted ones; a
 *   burst on one bucket asks on nearly every hit.
 */
import type { SQL } from 'bun'
import { LruCache } from '../../shared'
import { ensureClusterTable } from './cluster-tables'

/** The same shape as auth's RateState, so `rateLimitHeaders` takes it. */
export interface ClusterRateState {
  limit: number
  remaining: number
  /** Seconds until the window resets (at least 1). */
  reset: number
  allowed: boolean
}

export interface ClusterRateLimitOptions {
  mode: 'exact' | 'precheck'
  /** precheck: unreported hits a node may answer alone per bucket (default limit/20, at least 1). */
  batch?: number
  /** precheck: past this fraction of the limit (by the node's estimate) every hit asks PostgreSQL. */
  nearFraction: number
  /** How often a node deletes windows that ended (at most; triggered by a hit, not awaited by it). */
  sweepEveryMs: number
  /** precheck: buckets tracked per node (least recently used are dropped with their unreported hits). */
  maxBuckets: number
}

const DEFAULTS: ClusterRateLimitOptions = { mode: 'exact', nearFraction: 0.5, sweepEveryMs: 60_000, maxBuckets: 100_000 }

interface LocalWindow {
  windowStart: number
  /** Hits in PostgreSQL for this window when this node last asked. */
  known: number
  /** Hits this node allowed and has not reported yet. */
  pending: number
  /** Asks in flight. */
  asking: number
}

export function createClusterRateLimiter(sql: SQL, options: Partial<ClusterRateLimitOptions> = {}) {
  const o = { ...DEFAULTS, ...options }
  const local = new LruCache<LocalWindow>({ maxEntries: o.maxBuckets })
  let lastSweepAt = Number.NEGATIVE_INFINITY
  let sweeping: Promise<void> = Promise.resolve()
  let queries = 0

  const state = (limit: number, count: number, allowed: boolean, windowEnd: number, now: number): ClusterRateState => ({
    limit,
    remaining: Math.max(0, limit - count),
    reset: Math.max(1, Math.ceil((windowEnd - now) / 1000)),
    allowed,
  })

  function maybeSweep(now: number) {
    if (now - lastSweepAt < o.sweepEveryMs) return
    lastSweepAt = now
    // Each row by its own window length: anything that ended more than a whole window ago. A node
    // sweeps every node's rows, also of windows it never counts itself (sign-ins' 15 minutes).
    queries++
    sweeping = sql`DELETE FROM rate_windows WHERE window_start < ${now} - 2 * window_ms`.then(
      () => {},
      () => {}, // the next sweep tries again
    )
  }

  /** Adds `inc` hits to the window and returns its count. Exact mode stops counting at the limit. */
  async function add(bucket: string, windowStart: number, windowMs: number, inc: number, capAt: number | null): Promise<number | null> {
    queries++
    const rows =
      capAt === null
        ? await sql`
            INSERT INTO rate_windows AS w (bucket, window_start, hits, window_ms) VALUES (${bucket}, ${windowStart}, ${inc}, ${windowMs})
            ON CONFLICT (bucket, window_start) DO UPDATE SET hits = w.hits + excluded.hits
            RETURNING hits`
        : await sql`
            INSERT INTO rate_windows AS w (bucket, window_start, hits, window_ms) VALUES (${bucket}, ${windowStart}, ${inc}, ${windowMs})
            ON CONFLICT (bucket, window_start) DO UPDATE SET hits = w.hits + excluded.hits WHERE w.hits < ${capAt}
            RETURNING hits`
    return rows[0] ? Number(rows[0].hits) : null
  }

  async function hit(bucket: string, limit: number, windowMs: number, now = Date.now()): Promise<ClusterRateState> {
    if (!(windowMs > 0) || !(limit >= 0)) throw new RangeError('windowMs must be positive and limit not negative')
    await ensureClusterTable(sql, 'rate_windows')
    const windowStart = Math.floor(now / windowMs) * windowMs
    const windowEnd = windowStart + windowMs
    maybeSweep(now)

    if (o.mode === 'exact') {
      const hits = await add(bucket, windowStart, windowMs, 1, limit)
      // No row: the window had reached the limit and this hit was not counted.
      return hits === null ? state(limit, limit, false, windowEnd, now) : state(limit, hits, hits <= limit, windowEnd, now)
    }

    let w = local.get(bucket)
    if (!w || w.windowStart !== windowStart) {
      w = { windowStart, known: 0, pending: 0, asking: 0 }
      local.set(bucket, w)
    }
    if (w.known >= limit) return state(limit, limit, false, windowEnd, now)
    w.pending++
    const estimate = w.known + w.pending
    const batch = o.batch ?? Math.max(1, Math.floor(limit / 20))
    // Alone only on fresh knowledge: while an ask is out, the count may be moving.
    if (w.asking === 0 && w.pending < batch && estimate < limit * o.nearFraction) return state(limit, estimate, true, windowEnd, now)
    const inc = w.pending
    w.pending = 0
    w.asking++
    try {
      const hits = (await add(bucket, windowStart, windowMs, inc, null))!
      w.known = Math.max(w.known, hits)
      return state(limit, hits, hits <= limit, windowEnd, now)
    } catch (e) {
      w.pending += inc - 1 // still unreported, except this hit, which fails
      throw e
    } finally {
      w.asking--
    }
  }

  return {
    hit,
    /** Gives a hit back (a sign-in that succeeded does not count against the address). */
    async refund(bucket: string, windowMs: number, now = Date.now()): Promise<void> {
      await ensureClusterTable(sql, 'rate_windows')
      const windowStart = Math.floor(now / windowMs) * windowMs
      const w = local.peek(bucket)
      if (w && w.windowStart === windowStart && w.pending > 0) {
        w.pending--
        return
      }
      queries++
      await sql`UPDATE rate_windows SET hits = hits - 1 WHERE bucket = ${bucket} AND window_start = ${windowStart} AND hits > 0`
      if (w && w.windowStart === windowStart && w.known > 0) w.known--
    },
    /** The sweep of ended windows started by the last hit that triggered one (for tests and shutdown). */
    sweeping: () => sweeping,
    /** Statements sent to PostgreSQL so far (hits, refunds and sweeps), to compare the modes. */
    queries: () => queries,
  }
}
export type ClusterRateLimiter = ReturnType<typeof createClusterRateLimiter>
