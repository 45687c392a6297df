/**
 * In-memory cache of resolvable links by domain and key, emptied for a key on every
 * write to it, and a bounded negative cache so floods of random keys do not reach the
 * store. Both are plain Maps used as LRU-ish (oldest insertion evicted first).
 */
export interface LinkCache<T> {
  get(domain: string, key: string): T | null
  invalidate(domain: string, key: string): void
  clear(): void
  size(): { positive: number; negative: number }
}

export function createLinkCache<T>(
  load: (domain: string, key: string) => T | null,
  opts: { max?: number; negativeMax?: number; negativeTtlMs?: number; now?: () => number } = {},
): LinkCache<T> {
  const max = opts.max ?? 100_000
  const negativeMax = opts.negativeMax ?? 50_000
  const negativeTtl = opts.negativeTtlMs ?? 60_000
  const now = opts.now ?? Date.now
  const positive = new Map<string, T>()
  const negative = new Map<string, number>()

  const evictOldest = (m: Map<string, unknown>) => {
    const first = m.keys().next()
    if (!first.done) m.delete(first.value)
  }

  return {
    get(domain, key) {
      const k = `${domain}/${key}`
      const hit = positive.get(k)
      if (hit !== undefined) return hit
      const missUntil = negative.get(k)
      if (missUntil !== undefined) {
        if (missUntil > now()) return null
        negative.delete(k)
      }
      const loaded = load(domain, key)
      if (loaded === null) {
        if (negative.size >= negativeMax) evictOldest(negative)
        negative.set(k, now() + negativeTtl)
      } else {
        if (positive.size >= max) evictOldest(positive)
        positive.set(k, loaded)
      }
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
    size: () => ({ positive: positive.size, negative: negative.size }),
  }
}
