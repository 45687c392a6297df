/**
 * Appending events to the outbox (the `events` table), inside the transaction of the change
 * they tell of: an event exists exactly when its change was committed. The webhook
 * dispatcher and the live stream read them from the store (src/webhooks), never from memory.
 */
import type { Database } from 'bun:sqlite'
import { newId } from '../shared'
import type { EventType } from './events.types'

export interface NewEvent {
  type: EventType
  /** Whose scope the event is in (a link's owner); null: admins only. */
  userId: string | null
  /** The link it is about, for webhooks' `linkIds`. */
  linkId?: string | null
  /** That link's tags, for webhooks' `tagIds`. */
  tagIds?: readonly string[] | null
  /** A test event: delivered to this webhook only. */
  webhookId?: string | null
  /** The envelope's `data`. */
  data: unknown
}

/** One row of `events` as written (ids made here). */
export interface EventRowValues {
  id: string
  type: string
  user_id: string | null
  link_id: string | null
  tag_ids: string | null
  webhook_id: string | null
  data: string
  created_at: number
}

export function eventRowOf(e: NewEvent, createdAt: number): EventRowValues {
  return {
    id: newId('evt'),
    type: e.type,
    user_id: e.userId,
    link_id: e.linkId ?? null,
    tag_ids: e.tagIds?.length ? JSON.stringify(e.tagIds) : null,
    webhook_id: e.webhookId ?? null,
    data: JSON.stringify(e.data ?? null),
    created_at: createdAt,
  }
}

const INSERT = 'INSERT INTO events (id, type, user_id, link_id, tag_ids, webhook_id, data, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)'

/** Writes rows into `events` on SQLite; call inside the caller's transaction. */
export function insertEventRows(db: Database, rows: readonly EventRowValues[]): void {
  if (rows.length === 0) return
  const insert = db.query(INSERT)
  for (const r of rows) insert.run(r.id, r.type, r.user_id, r.link_id, r.tag_ids, r.webhook_id, r.data, r.created_at)
  // A synchronous transaction commits before the microtask runs.
  queueMicrotask(eventsAppended)
}

/**
 * Appends events inside the caller's SQLite transaction (createdAt `now`); answers their ids.
 * Readers in this process are woken once it has committed.
 */
export function appendEvents(db: Database, events: readonly NewEvent[], now: number): string[] {
  const rows = events.map((e) => eventRowOf(e, now))
  insertEventRows(db, rows)
  return rows.map((r) => r.id)
}

const appendedListeners = new Set<() => void>()

/** Hears of events committed by this process (the readers poll the store for everyone else's). */
export function onEventsAppended(fn: () => void): () => void {
  appendedListeners.add(fn)
  return () => appendedListeners.delete(fn)
}

/** Wakes this process's readers: call after a transaction that appended events has committed. */
export function eventsAppended(): void {
  for (const fn of appendedListeners) fn()
}
