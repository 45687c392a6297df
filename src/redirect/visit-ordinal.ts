/**
 * Number targeting across nodes (PostgreSQL): the n-th counted visit of a link over every
 * node gets n, from the store's visit counter. A link's counter starts at its stored clicks
 * the first time any node counts it (`seed` leaves a counter that exists alone).
 */
import { LruCache, orStoreUnavailable } from '../shared'

/** What this needs of `createVisitCounter(sql)` (src/store/pg/visit-counter.ts). */
export interface VisitCounterPort {
  seed(linkId: string, visits: number): Promise<number>
  next(linkId: string): Promise<number>
}

/** The redirect handler's `visitOrdinal`. */
export function visitOrdinalFrom(counter: VisitCounterPort, storedClicks: (seq: number) => number | Promise<number>) {
  /** Links this process has seeded: a seed is a round trip, needed once per link (again after eviction, harmlessly). */
  const seeded = new LruCache<true>({ maxEntries: 100_000 })
  return async (link: { id: string; seq: number }): Promise<number> => {
    try {
      if (!seeded.get(link.id)) {
        await counter.seed(link.id, await storedClicks(link.seq))
        seeded.set(link.id, true)
      }
      return await counter.next(link.id)
    } catch (e) {
      throw orStoreUnavailable(e)
    }
  }
}
