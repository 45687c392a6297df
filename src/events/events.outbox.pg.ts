/**
 * Appending events on PostgreSQL, inside the caller's transaction (events.outbox.ts). Each
 * row records its transaction id (the column's default) so readers follow commit order.
 * Call `eventsAppended()` after the transaction commits to wake this node's readers.
 */
import type { SQL } from 'bun'
import { type EventRowValues, eventRowOf, type NewEvent } from './events.outbox'

/** PostgreSQL text cannot hold NUL (a visitor controls UTM values and referers). */
const clean = (s: string) => (s.includes('\0') ? s.replaceAll('\0', '') : s)
/** JSON escapes NUL as \u0000, which jsonb and text reject alike. */
const cleanJson = (s: string) => (s.includes('\\u0000') ? s.replaceAll('\\u0000', '') : s)

export async function insertEventRowsPg(tx: SQL, rows: readonly EventRowValues[]): Promise<void> {
  if (rows.length === 0) return
  await tx.unsafe(
    `INSERT INTO events (id, type, user_id, link_id, tag_ids, webhook_id, data, created_at)
     SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[], $8::bigint[])`,
    [
      rows.map((r) => r.id),
      rows.map((r) => r.type),
      rows.map((r) => r.user_id),
      rows.map((r) => r.link_id),
      rows.map((r) => r.tag_ids),
      rows.map((r) => r.webhook_id),
      rows.map((r) => clean(cleanJson(r.data))),
      rows.map((r) => r.created_at),
    ],
  )
}

/** Appends events inside the caller's PostgreSQL transaction (createdAt `now`); answers their ids. */
export async function appendEventsPg(tx: SQL, events: readonly NewEvent[], now: number): Promise<string[]> {
  const rows = events.map((e) => eventRowOf(e, now))
  await insertEventRowsPg(tx, rows)
  return rows.map((r) => r.id)
}
