/**
 * A bounded LRU map: at most `maxEntries` entries and, when `maxBytes` is set, at most
 * that many estimated bytes; the least recently used entries are evicted first, never
 * the whole map. Entries may expire after `ttlMs`. Map keeps insertion order; a hit
 * moves the entry to the end, unless it is in the younger half of the map already or at the
 * end: such an entry is far from eviction, and moving it costs a delete and an insert on every
 * hit of a hot key (the redirect path reads four caches per visit; in a map of one or two
 * entries every hit was in the "older half").
 *
 * Bytes are an estimate of what an entry holds on the heap: the key (2 bytes per UTF-16
 * unit, a safe upper bound for JS strings), `sizeOf(value)` and a fixed per-entry overhead.
 */
export const LRU_ENTRY_OVERHEAD_BYTES = 64

export interface LruOptions<V> {
  maxEntries: number
  maxBytes?: number
  /** Time to live of an entry; no expiry when absent. */
  ttlMs?: number
  /** Estimated heap bytes of a value (default 0: values are small and fixed-size). */
  sizeOf?: (value: V) => number
  now?: () => number
}

interface Entry<V> {
  value: V
  expires: number
  bytes: number
  /** When the entry was last inserted or moved to the end (a count of such moves). */
  tick: number
}

export class LruCache<V> {
  private readonly map = new Map<string, Entry<V>>()
  /** Where eviction resumes (see evictOldest). */
  private oldest: MapIterator<string> | null = null
  private used = 0
  private tick = 0
  private readonly now: () => number

  constructor(private readonly opts: LruOptions<V>) {
    this.now = opts.now ?? Date.now
  }

  get(key: string): V | undefined {
    const e = this.map.get(key)
    if (!e) return undefined
    if (e.expires !== Number.POSITIVE_INFINITY && e.expires <= this.now()) {
      this.map.delete(key)
      this.used -= e.bytes
      return undefined
    }
    if (e.tick !== this.tick && this.tick - e.tick >= this.map.size >> 1) {
      this.map.delete(key)
      e.tick = ++this.tick
      this.map.set(key, e)
    }
    return e.value
  }

  /** The value without touching its recency (still undefined once expired). */
  peek(key: string): V | undefined {
    const e = this.map.get(key)
    return e && e.expires > this.now() ? e.value : undefined
  }

  set(key: string, value: V, ttlMs = this.opts.ttlMs) {
    this.delete(key)
    const bytes = 2 * key.length + LRU_ENTRY_OVERHEAD_BYTES + (this.opts.sizeOf?.(value) ?? 0)
    const maxBytes = this.opts.maxBytes ?? Infinity
    // An entry bigger than the whole budget would evict everything and still not fit.
    if (bytes > maxBytes) return
    this.map.set(key, { value, expires: ttlMs === undefined ? Number.POSITIVE_INFINITY : this.now() + ttlMs, bytes, tick: ++this.tick })
    this.used += bytes
    while (this.map.size > this.opts.maxEntries || this.used > maxBytes) this.evictOldest()
  }

  /**
   * Deletes the least recently used entry. A Map keeps deleted entries' slots until it is
   * rehashed, and a new iterator starts at the first slot: `map.keys().next()` walked over every
   * entry evicted so far, which made an insert into a full cache of 50,000 cost 100-180 µs
   * (a GeoIP lookup per new client address; /tmp bench in docs/bench/redirect.md). One iterator
   * kept across evictions resumes where it stopped. It stays on the oldest entry: inserts and
   * moves only ever append, so nothing is added before it; it is renewed when it reaches the end.
   */
  private evictOldest() {
    let next = this.oldest?.next()
    if (!next || next.done) {
      this.oldest = this.map.keys()
      next = this.oldest.next()
    }
    if (!next.done) this.delete(next.value)
  }

  delete(key: string) {
    const e = this.map.get(key)
    if (!e) return
    this.map.delete(key)
    this.used -= e.bytes
  }

  clear() {
    this.map.clear()
    this.oldest = null
    this.used = 0
  }

  get size() {
    return this.map.size
  }

  /** Estimated bytes held (see the class comment). */
  get bytes() {
    return this.used
  }
}
