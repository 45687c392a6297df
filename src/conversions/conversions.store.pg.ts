/**
 * Conversions on PostgreSQL (migrations 0013 and 0014), as conversions.store.ts on SQLite. Several nodes
 * may take the same call at once: the customer and the conversion go in with `ON CONFLICT DO
 * NOTHING` on their unique keys, so the second transaction waits for the first and then finds
 * its row (read committed: each statement sees what committed before it).
 */
import type { SQL } from 'bun'
import { appendEventsPg, eventsAppended } from '../events'
import type { ConversionStoreAsync } from './conversions.store'
import {
  CLICK_COLUMNS,
  CONVERSION_COLUMNS,
  type ConversionRow,
  type CustomerRow,
  type LinkOfConversion,
  type RecordOutcome,
  type TrackedClick,
} from './conversions.types'

const LINK_COLUMNS =
  'l.id AS link_id, l.user_id AS link_user_id, l.domain AS link_domain, l.key AS link_key, l.link_type AS link_type, l.destination AS link_destination'
const DIMS = (alias: string) => CLICK_COLUMNS.map((c) => (c === 'scan' ? `${alias}.scan::int AS scan` : `${alias}.${c}`)).join(', ')
const ROW_NUMBERS =
  'link_seq::float8 AS link_seq, quantity::int AS quantity, amount::float8 AS amount, at::float8 AS at, click_at::float8 AS click_at, scan::int AS scan, variant::int AS variant'
const CONVERSION_SELECT = `SELECT *, ${ROW_NUMBERS} FROM conversions`
const CONVERSION_TYPES: Record<string, string> = {
  link_seq: 'bigint',
  quantity: 'int',
  amount: 'bigint',
  at: 'bigint',
  click_at: 'bigint',
  scan: 'smallint',
  variant: 'smallint',
}

export function createPgConversionStore(sql: SQL): ConversionStoreAsync {
  async function linkOf(tx: SQL, seq: number): Promise<LinkOfConversion> {
    const [link] = await tx`SELECT id, user_id, domain, key, link_type, destination FROM links WHERE seq = ${seq}`
    return link as LinkOfConversion
  }
  return {
    async click(clickId) {
      const [row] = await sql.unsafe(
        `SELECT c.click_id, c.link_seq::float8 AS link_seq, c.at::float8 AS at, ${DIMS('c')}, c.variant::int AS variant, ${LINK_COLUMNS}
         FROM tracked_clicks c JOIN links l ON l.seq = c.link_seq WHERE c.click_id = $1`,
        [clickId],
      )
      return (row as TrackedClick | undefined) ?? null
    },
    async latestLead(externalId, ownerId, eventName) {
      const args: string[] = [externalId]
      let where = 'cu.external_id = $1'
      if (ownerId !== null) where += ` AND cu.user_id = $${args.push(ownerId)}`
      if (eventName !== null) where += ` AND v.event_name = $${args.push(eventName)}`
      const [row] = await sql.unsafe(
        `SELECT v.click_id, v.link_seq::float8 AS link_seq, v.click_at::float8 AS at, ${DIMS('v')}, v.variant::int AS variant, ${LINK_COLUMNS}, v.customer_id AS "customerId"
         FROM customers cu JOIN conversions v ON v.customer_id = cu.id AND v.kind = 'lead' JOIN links l ON l.seq = v.link_seq
         WHERE ${where} ORDER BY v.at DESC, v.seq DESC LIMIT 1`,
        args,
      )
      return (row as (TrackedClick & { customerId: string }) | undefined) ?? null
    },
    async record(w): Promise<RecordOutcome> {
      const result = await sql.begin(async (tx) => {
        const c = w.customer
        await tx`INSERT INTO customers (id, user_id, external_id, name, email, avatar, created_at)
          VALUES (${c.id}, ${c.user_id}, ${c.external_id}, ${c.name}, ${c.email}, ${c.avatar}, ${c.created_at}) ON CONFLICT (user_id, external_id) DO NOTHING`
        await tx`UPDATE customers SET name = coalesce(name, ${c.name}), email = coalesce(email, ${c.email}), avatar = coalesce(avatar, ${c.avatar})
          WHERE user_id = ${c.user_id} AND external_id = ${c.external_id}`
        const [found] =
          await tx`SELECT id, user_id, external_id, name, email, avatar, created_at::float8 AS created_at FROM customers WHERE user_id = ${c.user_id} AND external_id = ${c.external_id}`
        const customer = found as CustomerRow
        const row: ConversionRow = { ...w.row, customer_id: customer.id }
        const inserted = await tx.unsafe(
          `INSERT INTO conversions (${CONVERSION_COLUMNS.join(', ')}) VALUES (${CONVERSION_COLUMNS.map((col, i) => `$${i + 1}${CONVERSION_TYPES[col] ? `::${CONVERSION_TYPES[col]}` : ''}`).join(', ')})
           ON CONFLICT DO NOTHING RETURNING seq`,
          CONVERSION_COLUMNS.map((col) => row[col]),
        )
        if (inserted.length > 0) {
          const link = await linkOf(tx, row.link_seq)
          const tags = (await tx`SELECT tag_id FROM link_tags WHERE link_seq = ${row.link_seq} ORDER BY pos`) as { tag_id: string }[]
          await appendEventsPg(
            tx,
            [
              w.event(
                row,
                customer,
                link,
                tags.map((t) => t.tag_id),
              ),
            ],
            row.at,
          )
          return { outcome: 'created' as const, row, customer, link }
        }
        const [first] =
          row.kind === 'lead'
            ? await tx.unsafe(`${CONVERSION_SELECT} WHERE kind = 'lead' AND customer_id = $1 AND event_name = $2`, [customer.id, row.event_name])
            : await tx.unsafe(`${CONVERSION_SELECT} WHERE kind = 'sale' AND user_id = $1 AND invoice_id = $2`, [row.user_id, row.invoice_id])
        if (!first) throw new Error(`conversion ${row.id} was neither written nor found`)
        const existing = first as ConversionRow
        const link = await linkOf(tx, existing.link_seq)
        return {
          outcome: row.kind === 'sale' && existing.body_hash !== row.body_hash ? ('conflict' as const) : ('existing' as const),
          row: existing,
          customer,
          link,
        }
      })
      if (result.outcome === 'created') eventsAppended()
      return result
    },
  }
}
