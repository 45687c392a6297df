/**
 * A/B tests on PostgreSQL (migrations 0012, and 0014 for conversions' variants): as ab-tests.store.ts, with the click events in
 * `click_events` (every node's batches) and the verdict's key making it once per test whichever
 * node stores it.
 */
import type { SQL } from 'bun'
import { appendEventsPg, eventsAppended } from '../events'
import {
  type AbTestStorePort,
  type ConversionRow,
  talliesOf,
  type VerdictEventsOf,
  type VerdictRow,
  variantConversionsSql,
  variantVisitsSql,
  verdictRowOf,
} from './ab-tests.store'

export function createPgAbTestStore(sql: SQL): AbTestStorePort {
  const ENDS = "(l.options::jsonb ->> 'testCompletedAt')"
  return {
    async dueTests(now, limit) {
      const rows = await sql.unsafe(
        `SELECT l.seq::float8 AS seq, l.id, coalesce((l.options::jsonb ->> 'testStartedAt')::float8, 0) AS started_at FROM links l
         WHERE l.deleted_at IS NULL AND (l.options::jsonb ? 'testCompletedAt') AND ${ENDS} <= $1
           AND NOT EXISTS (SELECT 1 FROM link_tests t WHERE t.link_seq = l.seq AND t.started_at = coalesce((l.options::jsonb ->> 'testStartedAt')::bigint, 0))
         ORDER BY ${ENDS} LIMIT $2`,
        [new Date(now).toISOString(), limit],
      )
      return (rows as { seq: number; id: string; started_at: number }[]).map((r) => ({ seq: r.seq, id: r.id, startedAt: r.started_at }))
    },
    async tallies(seq, since) {
      const p = (i: number) => `$${i}`
      const visits = await sql.unsafe(variantVisitsSql('click_events', p), [seq, since])
      const conversions = (await sql.unsafe(variantConversionsSql(p), [seq, since])) as ConversionRow[]
      return talliesOf(visits as { variant: unknown; clicks: unknown }[], conversions)
    },
    async saveVerdict(v: VerdictRow, eventsOf?: VerdictEventsOf) {
      const stored = await sql.begin(async (tx) => {
        const rows = await tx`INSERT INTO link_tests (link_seq, started_at, status, winner, p_value, variants, judged_at)
          VALUES (${v.linkSeq}, ${v.startedAt}, ${v.status}, ${v.winner}, ${v.pValue}, ${JSON.stringify(v.variants)}, ${v.judgedAt})
          ON CONFLICT DO NOTHING RETURNING link_seq`
        if (rows.length === 1 && eventsOf) await appendEventsPg(tx, eventsOf(), v.judgedAt)
        return rows.length === 1
      })
      // Committed with events: this node's dispatcher and live stream wake (others poll).
      if (stored && eventsOf) eventsAppended()
      return stored
    },
    async verdictOf(seq, startedAt) {
      const [r] =
        await sql`SELECT link_seq::float8 AS link_seq, started_at::float8 AS started_at, status, winner, p_value, variants, judged_at::float8 AS judged_at
        FROM link_tests WHERE link_seq = ${seq} AND started_at = ${startedAt}`
      return r ? verdictRowOf(r) : null
    },
  }
}
