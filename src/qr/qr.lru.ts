/** A small LRU map with a time to live per entry (Map keeps insertion order; a hit moves to the end). */
export class LruCache<V> {
  private readonly map = new Map<string, { value: V; expires: number }>()
  constructor(private readonly opts: { maxEntries: number; ttlMs: number }) {}

  get(key: string): V | undefined {
    const e = this.map.get(key)
    if (!e) return undefined
    this.map.delete(key)
    if (e.expires < Date.now()) return undefined
    this.map.set(key, e)
    return e.value
  }

  set(key: string, value: V, ttlMs = this.opts.ttlMs) {
    this.map.delete(key)
    this.map.set(key, { value, expires: Date.now() + ttlMs })
    while (this.map.size > this.opts.maxEntries) this.map.delete(this.map.keys().next().value!)
  }

  delete(key: string) {
    this.map.delete(key)
  }

  get size() {
    return this.map.size
  }
}
