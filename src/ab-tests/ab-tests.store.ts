/**
 * What A/B tests keep and read on one node: verdicts in SQLite (`link_tests`, migration 0017),
 * the tests due (an index on the links' `testCompletedAt`), visits per variant from the events
 * engine (DuckDB: each click event carries its variant), conversions per variant from SQLite's
 * `conversions` (each carries its click's variant).
 */
import type { Database } from 'bun:sqlite'
import { appendEvents, type NewEvent } from '../events'

/** A stored verdict: the test of link `linkSeq` that started at `startedAt`, judged once. */
export interface VerdictRow {
  linkSeq: number
  startedAt: number
  status: 'completed' | 'inconclusive'
  winner: number | null
  pValue: number | null
  /** The counts the verdict was taken on (JSON of `VariantResult[]` without url and percentage). */
  variants: VariantTally[]
  judgedAt: number
}

/** A variant's counts since its test started. */
export interface VariantTally {
  clicks: number
  leads: number
  sales: number
  /** Visits with at least one lead. */
  leadVisits: number
  /** Visits with at least one sale. */
  saleVisits: number
}

/** A test whose end time has come and that has no verdict yet. */
export interface DueTest {
  seq: number
  id: string
  startedAt: number
}

export interface AbTestStorePort {
  dueTests(now: number, limit: number): Promise<DueTest[]>
  /** Counts per variant index of link `seq` since `since` (ms); a variant without visits is absent. */
  tallies(seq: number, since: number): Promise<Map<number, VariantTally>>
  /**
   * Stores the verdict unless one is stored for that test already: true when this call stored it.
   * Then, in the same transaction, appends `eventsOf()` (its `link.test_completed`): a verdict
   * and its events commit together, and a verdict stored already gets none.
   */
  saveVerdict(v: VerdictRow, eventsOf?: VerdictEventsOf): Promise<boolean>
  verdictOf(seq: number, startedAt: number): Promise<VerdictRow | null>
}

/** The events of a verdict this call stores (made by the caller: the service, wired in deps.ts). */
export type VerdictEventsOf = () => readonly NewEvent[]

/** Where the visits are on SQLite: the events engine's snapshot reader (stats' EventsHandle). */
export interface EventsReader {
  snapshot<T>(read: (tx: { run(statements: { sql: string; args: readonly unknown[] }[]): Promise<Record<string, unknown>[][]> }) => Promise<T>): Promise<T>
}

/** Visits per variant over the click events (both engines: `events` in DuckDB, `click_events` on PostgreSQL). */
export const variantVisitsSql = (table: string, p: (i: number) => string) =>
  `SELECT variant::FLOAT8 AS variant, sum(n)::FLOAT8 AS clicks FROM ${table} WHERE link_seq = ${p(1)} AND "at" >= ${p(2)} AND variant IS NOT NULL GROUP BY variant`

/**
 * Conversions per variant, from the conversions module's `conversions` table (SQLite 0019,
 * PostgreSQL 0014): each lead and sale carries the variant of the click it matched by its click
 * id (`sl_id`), never a variant guessed from a URL. A visit converts once however many leads or
 * sales it brought (`lead_visits`, `sale_visits`: the contract's conversion rate).
 */
export const variantConversionsSql = (p: (i: number) => string) =>
  `SELECT variant, sum(CASE WHEN kind = 'lead' THEN quantity ELSE 0 END) AS leads, sum(CASE WHEN kind = 'sale' THEN 1 ELSE 0 END) AS sales,
     count(DISTINCT CASE WHEN kind = 'lead' THEN click_id END) AS lead_visits, count(DISTINCT CASE WHEN kind = 'sale' THEN click_id END) AS sale_visits
   FROM conversions WHERE link_seq = ${p(1)} AND click_at >= ${p(2)} AND variant IS NOT NULL GROUP BY variant`

export const emptyTally = (): VariantTally => ({ clicks: 0, leads: 0, sales: 0, leadVisits: 0, saleVisits: 0 })

export interface ConversionRow {
  variant: number
  leads: number
  sales: number
  lead_visits: number
  sale_visits: number
}

/** Visits and conversions per variant, merged. */
export function talliesOf(visits: { variant: unknown; clicks: unknown }[], conversions: ConversionRow[]): Map<number, VariantTally> {
  const out = new Map<number, VariantTally>()
  const at = (i: number) => {
    const t = out.get(i) ?? emptyTally()
    out.set(i, t)
    return t
  }
  for (const r of visits) at(Number(r.variant)).clicks = Number(r.clicks)
  for (const r of conversions) {
    const t = at(Number(r.variant))
    t.leads = Number(r.leads)
    t.sales = Number(r.sales)
    t.leadVisits = Number(r.lead_visits)
    t.saleVisits = Number(r.sale_visits)
  }
  return out
}

interface StoredVerdict {
  link_seq: number
  started_at: number
  status: 'completed' | 'inconclusive'
  winner: number | null
  p_value: number | null
  variants: string
  judged_at: number
}

export const verdictRowOf = (r: StoredVerdict): VerdictRow => ({
  linkSeq: Number(r.link_seq),
  startedAt: Number(r.started_at),
  status: r.status,
  winner: r.winner === null ? null : Number(r.winner),
  pValue: r.p_value === null ? null : Number(r.p_value),
  variants: JSON.parse(r.variants) as VariantTally[],
  judgedAt: Number(r.judged_at),
})

export function createAbTestStore(db: Database, events: EventsReader): AbTestStorePort {
  const ENDS = "json_extract(options, '$.testCompletedAt')"
  const due = db.query<{ seq: number; id: string; started_at: number | null }, [string, number]>(
    `SELECT l.seq, l.id, json_extract(l.options, '$.testStartedAt') AS started_at FROM links l
     WHERE ${ENDS} IS NOT NULL AND ${ENDS} <= ? AND l.deleted_at IS NULL
       AND NOT EXISTS (SELECT 1 FROM link_tests t WHERE t.link_seq = l.seq AND t.started_at = coalesce(json_extract(l.options, '$.testStartedAt'), 0))
     ORDER BY ${ENDS} LIMIT ?`,
  )
  const insert = db.query('INSERT OR IGNORE INTO link_tests (link_seq, started_at, status, winner, p_value, variants, judged_at) VALUES (?, ?, ?, ?, ?, ?, ?)')
  const byTest = db.query<StoredVerdict, [number, number]>('SELECT * FROM link_tests WHERE link_seq = ? AND started_at = ?')
  const conversions = db.query<ConversionRow, [number, number]>(variantConversionsSql(() => '?'))

  return {
    async dueTests(now, limit) {
      return due.all(new Date(now).toISOString(), limit).map((r) => ({ seq: r.seq, id: r.id, startedAt: r.started_at ?? 0 }))
    },
    async tallies(seq, since) {
      const [visits] = await events.snapshot((tx) => tx.run([{ sql: variantVisitsSql('events', () => '?'), args: [seq, since] }]))
      return talliesOf(visits as { variant: unknown; clicks: unknown }[], conversions.all(seq, since))
    },
    async saveVerdict(v, eventsOf) {
      return db
        .transaction(() => {
          const stored = insert.run(v.linkSeq, v.startedAt, v.status, v.winner, v.pValue, JSON.stringify(v.variants), v.judgedAt).changes === 1
          if (stored && eventsOf) appendEvents(db, eventsOf(), v.judgedAt)
          return stored
        })
        .immediate()
    },
    async verdictOf(seq, startedAt) {
      const r = byTest.get(seq, startedAt)
      return r ? verdictRowOf(r) : null
    },
  }
}
