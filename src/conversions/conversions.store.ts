/**
 * Conversions on SQLite (migration 0016): the tracked clicks the events engine writes with its
 * click batches, customers, and leads and sales with their idempotency keys (unique indexes,
 * kept for ever). One synchronous transaction per call: the checks and the insert cannot
 * interleave with another call's, and the outbox event is written in it.
 */
import type { Database } from 'bun:sqlite'
import { appendEvents } from '../events'
import type { Awaitable } from '../shared'
import {
  CLICK_COLUMNS,
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
  click(clickId: string): TrackedClick | null
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

export function createConversionStore(db: Database): ConversionStorePort {
  const clickQuery = db.query<TrackedClick, [string]>(
    `SELECT c.click_id, c.link_seq, c.at, ${CLICK_COLUMNS.map((col) => `c.${col}`).join(', ')}, ${LINK_COLUMNS}
     FROM tracked_clicks c JOIN links l ON l.seq = c.link_seq WHERE c.click_id = ?`,
  )
  const leadSelect = (byOwner: boolean, byName: boolean) =>
    db.query<TrackedClick & { customerId: string }, string[]>(
      `SELECT v.click_id, v.link_seq, v.click_at AS at, ${CLICK_COLUMNS.map((col) => `v.${col}`).join(', ')}, ${LINK_COLUMNS}, v.customer_id AS customerId
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
    click: (clickId) => clickQuery.get(clickId),
    latestLead(externalId, ownerId, eventName) {
      const q = leadQueries[(ownerId === null ? 0 : 2) + (eventName === null ? 0 : 1)]!
      const args = [externalId, ...(ownerId === null ? [] : [ownerId]), ...(eventName === null ? [] : [eventName])]
      return q.get(...args)
    },
    record: (w) => record.immediate(w),
  }
}
