/**
 * Exact visit ordinals across nodes (number targeting: the n-th visit of a link over
 * all nodes gets n). One counter row per link, incremented and read in one statement:
 * PostgreSQL's row lock orders concurrent visits, so there is no gap and no repeat.
 * Only links that use number targeting touch it: a hot row serialises its own link's
 * visits and nothing else.
 */
import type { SQL } from 'bun'
import { ensureClusterTable } from './cluster-tables'

export function createVisitCounter(sql: SQL) {
  const ready = () => ensureClusterTable(sql, 'visit_counters')
  return {
    /** This visit's ordinal: 1 for the first visit of a link never counted here. One round trip. */
    async next(linkId: string): Promise<number> {
      await ready()
      const [row] = await sql`
        INSERT INTO visit_counters AS c (link_id, n) VALUES (${linkId}, 1)
        ON CONFLICT (link_id) DO UPDATE SET n = c.n + 1
        RETURNING n`
      return Number(row.n)
    },
    /**
     * Starts the count at `visits` (the link's counted visits so far: when number
     * targeting is switched on, or when a single node's data is moved here) unless the
     * link is counted already; returns the count in force.
     */
    async seed(linkId: string, visits: number): Promise<number> {
      await ready()
      const [row] = await sql`
        INSERT INTO visit_counters AS c (link_id, n) VALUES (${linkId}, ${visits})
        ON CONFLICT (link_id) DO UPDATE SET n = c.n
        RETURNING n`
      return Number(row.n)
    },
    /** Visits counted so far (0 if none). */
    async current(linkId: string): Promise<number> {
      await ready()
      const [row] = await sql`SELECT n FROM visit_counters WHERE link_id = ${linkId}`
      return row ? Number(row.n) : 0
    },
    /** The link was deleted: its count goes with it. */
    async forget(linkId: string): Promise<void> {
      await ready()
      await sql`DELETE FROM visit_counters WHERE link_id = ${linkId}`
    },
  }
}
export type VisitCounter = ReturnType<typeof createVisitCounter>
