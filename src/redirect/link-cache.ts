/**
 * In-memory cache of resolvable links by domain and key, emptied for a key on every
 * write to it, and a negative cache so floods of random keys do not reach the store.
 * Both are LRUs bounded by entries and by estimated bytes: anyone can send keys, so
 * what they pin must stay small. A key longer than any link key can be is answered
 * "not found" without a lookup and without being remembered.
 *
 * A hit is answered synchronously. A loader may return a promise (PostgreSQL): then a miss
 * answers one, and concurrent misses of a key share one load. A failed load is not
 * remembered and evicts nothing (the cache keeps serving what it holds while the store is
 * down); an unreachable store becomes AppError service_unavailable (503 + Retry-After).
 */
import { metrics } from '../metrics'
import { LruCache, orStoreUnavailable } from '../shared'

const hits = metrics.counter('shortlink_link_cache_hits_total', 'Short-link lookups answered from memory (a known link, or a key known not to exist).')
const misses = metrics.counter('shortlink_link_cache_misses_total', 'Short-link lookups that read the store.')

export interface LinkCache<T> {
  get(domain: string, key: string): T | null | Promise<T | null>
  invalidate(domain: string, key: string): void
  clear(): void
  size(): { positive: number; negative: number; positiveBytes: number; negativeBytes: number }
}

export function createLinkCache<T>(
  load: (domain: string, key: string) => T | null | Promise<T | null>,
  opts: {
    maxKeyLength: number
    max?: number
    maxBytes?: number
    negativeMax?: number
    negativeMaxBytes?: number
    negativeTtlMs?: number
    /** Estimated heap bytes of a loaded link (rows carry JSON data of varying size). */
    sizeOf?: (value: T) => number
    now?: () => number
  },
): LinkCache<T> {
  const positive = new LruCache<T>({ maxEntries: opts.max ?? 100_000, maxBytes: opts.maxBytes ?? 64 * 2 ** 20, sizeOf: opts.sizeOf, now: opts.now })
  const negative = new LruCache<true>({
    maxEntries: opts.negativeMax ?? 50_000,
    maxBytes: opts.negativeMaxBytes ?? 8 * 2 ** 20,
    ttlMs: opts.negativeTtlMs ?? 60_000,
    now: opts.now,
  })

  /** Loads under way, by key; an invalidation drops its key's, so a load that read the old row is not kept. */
  const loading = new Map<string, Promise<T | null>>()
  const remember = (k: string, loaded: T | null) => {
    if (loaded === null) negative.set(k, true)
    else positive.set(k, loaded)
  }

  /** A miss: one load per key at a time; kept unless invalidated meanwhile; a failure is not kept. */
  function miss(k: string, domain: string, key: string): T | null | Promise<T | null> {
    const shared = loading.get(k)
    if (shared) return shared
    let loaded: T | null | Promise<T | null>
    try {
      loaded = load(domain, key)
    } catch (e) {
      throw orStoreUnavailable(e)
    }
    if (!(loaded instanceof Promise)) {
      remember(k, loaded)
      return loaded
    }
    const pending: Promise<T | null> = loaded.then(
      (value) => {
        if (loading.get(k) === pending) {
          loading.delete(k)
          remember(k, value)
        }
        return value
      },
      (e) => {
        if (loading.get(k) === pending) loading.delete(k)
        throw orStoreUnavailable(e)
      },
    )
    loading.set(k, pending)
    return pending
  }

  return {
    // The hit path stays as small as it was: the redirect's hot path.
    get(domain, key) {
      if (key.length > opts.maxKeyLength) return null
      const k = `${domain}/${key}`
      const hit = positive.get(k)
      if (hit !== undefined) {
        hits.inc()
        return hit
      }
      if (negative.get(k)) {
        hits.inc()
        return null
      }
      misses.inc()
      return miss(k, domain, key)
    },
    invalidate(domain, key) {
      const k = `${domain}/${key}`
      positive.delete(k)
      negative.delete(k)
      loading.delete(k)
    },
    clear() {
      positive.clear()
      negative.clear()
      loading.clear()
    },
    size: () => ({ positive: positive.size, negative: negative.size, positiveBytes: positive.bytes, negativeBytes: negative.bytes }),
  }
}
