/**
 * In-memory cache of resolvable links by domain and key, emptied for a key on every
 * write to it, and a negative cache so floods of random keys do not reach the store.
 * Both are LRUs bounded by entries and by estimated bytes: anyone can send keys, so
 * what they pin must stay small. A key longer than any link key can be is answered
 * "not found" without a lookup and without being remembered.
 */
import { LruCache } from '../shared'

export interface LinkCache<T> {
  get(domain: string, key: string): T | null
  invalidate(domain: string, key: string): void
  clear(): void
  size(): { positive: number; negative: number; positiveBytes: number; negativeBytes: number }
}

export function createLinkCache<T>(
  load: (domain: string, key: string) => T | null,
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

  return {
    get(domain, key) {
      if (key.length > opts.maxKeyLength) return null
      const k = `${domain}/${key}`
      const hit = positive.get(k)
      if (hit !== undefined) return hit
      if (negative.get(k)) return null
      const loaded = load(domain, key)
      if (loaded === null) negative.set(k, true)
      else positive.set(k, loaded)
      return loaded
    },
    invalidate(domain, key) {
      const k = `${domain}/${key}`
      positive.delete(k)
      negative.delete(k)
    },
    clear() {
      positive.clear()
      negative.clear()
    },
    size: () => ({ positive: positive.size, negative: negative.size, positiveBytes: positive.bytes, negativeBytes: negative.bytes }),
  }
}
