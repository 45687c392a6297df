/**
 * Conversions on SQLite (migration 0018): the tracked clicks the events engine writes with its
 * click batches, customers, and leads and sales with their idempotency keys (unique indexes,
 * kept for ever). One synchronous transaction per call: the checks and the insert cannot
 * interleave with another call's, and the outbox event is written in it.
 */
import type { Database } from 'bun:sqlite'
import { appendEvents } from '../events'
import type { Awaitable } from '../shared'
import { clickTimeOf, trackedClicksOf } from '../stats'
import {
  CLICK_COLUMNS,
  type ClickDimensions,
  CONVERSION_COLUMNS,
  type ConversionRow,
  type ConversionWrite,
  type CustomerRow,
  type LinkOfConversion,
  type RecordOutcome,
  type TrackedClick,
} from './conversions.types'

export interface ConversionStorePort {
  /** The tracked click with its link; null when unknown. */
  click(clickId: string): Promise<TrackedClick | null>
  /**
   * The most recent lead of the customer `externalId` among `ownerId`'s customers (null: any
   * owner's), of `eventName` when given: its click (dimensions as the lead recorded them).
   */
  latestLead(externalId: string, ownerId: string | null, eventName: string | null): (TrackedClick & { customerId: string }) | null
  /** Records a lead or sale once (its idempotency key), with its customer and outbox event. */
  record(write: ConversionWrite): RecordOutcome
}
export type ConversionStoreAsync = Awaitable<ConversionStorePort>

const LINK_COLUMNS =
  'l.id AS link_id, l.user_id AS link_user_id, l.domain AS link_domain, l.key AS link_key, l.link_type AS link_type, l.destination AS link_destination'

/** Where the click events are (the events engine of a single node, click-recorder.ts). */
export interface ClickEventsPort {
  snapshot<T>(read: (tx: { run(statements: { sql: string; args: readonly unknown[] }[]): Promise<Record<string, unknown>[][]> }) => Promise<T>): Promise<T>
}

/**
 * How long after its visit a click can be written: the recorder's flush window, or longer while
 * the events store refuses batches (they are held and written later). A click id names its visit's
 * time; its row is looked for in [time, time + this).
 */
const CLICK_WRITE_LAG_MS = 3_600_000

/** Event columns (DuckDB) → the tracked click's fields. */
const EVENT_DIMENSIONS = CLICK_COLUMNS.filter((c) => c !== 'scan')

export function createConversionStore(db: Database, events: ClickEventsPort): ConversionStorePort {
  const linkBySeq = db.query<Omit<TrackedClick, keyof ClickDimensions | 'click_id' | 'link_seq' | 'at' | 'variant'>, [number]>(
    `SELECT ${LINK_COLUMNS} FROM links l WHERE l.seq = ?`,
  )
  const leadSelect = (byOwner: boolean, byName: boolean) =>
    db.query<TrackedClick & { customerId: string }, string[]>(
      `SELECT v.click_id, v.link_seq, v.click_at AS at, ${CLICK_COLUMNS.map((col) => `v.${col}`).join(', ')}, v.variant, ${LINK_COLUMNS}, v.customer_id AS customerId
       FROM customers cu JOIN conversions v ON v.customer_id = cu.id AND v.kind = 'lead' JOIN links l ON l.seq = v.link_seq
       WHERE cu.external_id = ?${byOwner ? ' AND cu.user_id = ?' : ''}${byName ? ' AND v.event_name = ?' : ''}
       ORDER BY v.at DESC, v.seq DESC LIMIT 1`,
    )
  const leadQueries = [leadSelect(false, false), leadSelect(false, true), leadSelect(true, false), leadSelect(true, true)]
  const addCustomer = db.query(
    'INSERT OR IGNORE INTO customers (id, user_id, external_id, name, email, avatar, created_at) VALUES ($id, $user_id, $external_id, $name, $email, $avatar, $created_at)',
  )
  // Details a later call gives fill what the first left empty; they never overwrite.
  const fillCustomer = db.query(
    'UPDATE customers SET name = coalesce(name, ?), email = coalesce(email, ?), avatar = coalesce(avatar, ?) WHERE user_id = ? AND external_id = ?',
  )
  const customerOf = db.query<CustomerRow, [string, string]>('SELECT * FROM customers WHERE user_id = ? AND external_id = ?')
  const insert = db.query(`INSERT OR IGNORE INTO conversions (${CONVERSION_COLUMNS.join(', ')}) VALUES (${CONVERSION_COLUMNS.map((c) => `$${c}`).join(', ')})`)
  const sameLead = db.query<ConversionRow, [string, string]>("SELECT * FROM conversions WHERE kind = 'lead' AND customer_id = ? AND event_name = ?")
  const sameInvoice = db.query<ConversionRow, [string, string]>("SELECT * FROM conversions WHERE kind = 'sale' AND user_id = ? AND invoice_id = ?")
  const linkQuery = db.query<LinkOfConversion, [number]>('SELECT id, user_id, domain, key, link_type, destination FROM links WHERE seq = ?')
  const tagsOf = db.query<{ tag_id: string }, [number]>('SELECT tag_id FROM link_tags WHERE link_seq = ? ORDER BY pos')

  const record = db.transaction((w: ConversionWrite): RecordOutcome => {
    const c = w.customer
    addCustomer.run({
      $id: c.id,
      $user_id: c.user_id,
      $external_id: c.external_id,
      $name: c.name,
      $email: c.email,
      $avatar: c.avatar,
      $created_at: c.created_at,
    })
    fillCustomer.run(c.name, c.email, c.avatar, c.user_id, c.external_id)
    const customer = customerOf.get(c.user_id, c.external_id)!
    const row: ConversionRow = { ...w.row, customer_id: customer.id }
    const params = Object.fromEntries(CONVERSION_COLUMNS.map((col) => [`$${col}`, row[col]]))
    if (insert.run(params as never).changes > 0) {
      const link = linkQuery.get(row.link_seq)!
      appendEvents(
        db,
        [
          w.event(
            row,
            customer,
            link,
            tagsOf.all(row.link_seq).map((t) => t.tag_id),
          ),
        ],
        row.at,
      )
      return { outcome: 'created', row, customer, link }
    }
    const first = row.kind === 'lead' ? sameLead.get(customer.id, row.event_name) : sameInvoice.get(row.user_id, row.invoice_id!)
    if (!first) throw new Error(`conversion ${row.id} was neither written nor found`)
    const link = linkQuery.get(first.link_seq)!
    return { outcome: row.kind === 'sale' && first.body_hash !== row.body_hash ? 'conflict' : 'existing', row: first, customer, link }
  })

  return {
    /**
     * A click on a single node lives in the events engine with its visit (`events.tracked`, the ids
     * of the visits a row stands for). Its id carries its time: the read is pruned to the
     * row groups of that moment (DuckDB's zone maps on `at`), then the id is matched exactly.
     */
    async click(clickId) {
      const at = clickTimeOf(clickId)
      if (at === null) return null
      const rows = await events.snapshot(
        async (tx) =>
          (
            await tx.run([
              {
                sql: `SELECT link_seq::DOUBLE AS link_seq, scan, tracked, variant::DOUBLE AS variant, ${EVENT_DIMENSIONS.join(', ')} FROM events WHERE "at" >= ? AND "at" < ? AND contains(tracked, ?)`,
                args: [at, at + CLICK_WRITE_LAG_MS, clickId],
              },
            ])
          )[0]!,
      )
      for (const r of rows) {
        const visit = trackedClicksOf(r.tracked as string, at).find((t) => t.clickId === clickId)
        if (!visit) continue
        const link = linkBySeq.get(r.link_seq as number)
        if (!link) return null
        // The events store keeps an unknown value as '' (stats' events.engine.ts).
        const dims = Object.fromEntries(EVENT_DIMENSIONS.map((c) => [c, (r[c] as string | null) || null]))
        const variant = (r.variant as number | null) ?? null
        return { click_id: clickId, link_seq: r.link_seq as number, at: visit.at, scan: r.scan ? 1 : 0, ...dims, ...link, variant } as TrackedClick
      }
      return null
    },
    latestLead(externalId, ownerId, eventName) {
      const q = leadQueries[(ownerId === null ? 0 : 2) + (eventName === null ? 0 : 1)]!
      const args = [externalId, ...(ownerId === null ? [] : [ownerId]), ...(eventName === null ? [] : [eventName])]
      return q.get(...args)
    },
    record: (w) => record.immediate(w),
  }
}
