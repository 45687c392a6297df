/**
 * SQL for webhooks, their deliveries and the events they carry (migration 0013). Rows in,
 * rows out; the service and the dispatcher own the rules. PostgreSQL's adapter answers the
 * same (webhooks.store.pg.ts, docs/adr/0010).
 *
 * Positions in the outbox are opaque strings: here the event's seq (SQLite has one writer at
 * a time, so seq order is commit order), on PostgreSQL "<xid>:<seq>".
 */
import { appendEvents } from '../events'
import type { Awaitable } from '../shared'
import type { Db } from '../store'
import { type DeliveryOutcome, nextState, OUTAGE_MS } from './webhooks.retry'
import { DISABLE_AFTER_MS } from './webhooks.values'

export interface WebhookRow {
  id: string
  user_id: string
  url: string
  name: string | null
  /** JSON array of event types. */
  events: string
  /** JSON arrays of ids narrowing link events. */
  link_ids: string
  tag_ids: string
  secret: string
  disabled: number
  disabled_reason: string | null
  failing_since: number | null
  created_at: number
  updated_at: number
}

export interface DeliveryRow {
  webhook_id: string
  event_seq: number
  event_id: string
  event_type: string
  status: 'pending' | 'delivered' | 'failed'
  attempts: number
  response_status: number | null
  last_attempt_at: number | null
  next_attempt_at: number | null
  created_at: number
}

export interface EventRow {
  seq: number
  id: string
  type: string
  user_id: string | null
  link_id: string | null
  tag_ids: string | null
  webhook_id: string | null
  data: string
  created_at: number
  /** Where a reader stands after this event. */
  position: string
}

/** An enabled webhook as the fan-out matches events against it (its owner's role decides its scope). */
export interface HookTarget {
  id: string
  user_id: string
  role: string
  events: string
  link_ids: string
  tag_ids: string
  created_at: number
}

/** A delivery this node leased to send now, with its event. `data` null: the event is gone. */
export interface ClaimedDelivery {
  webhook_id: string
  event_seq: number
  event_id: string
  event_type: string
  attempts: number
  data: string | null
  created_at: number | null
}

/** What the live stream may read: one user's events (null: everyone's, for admins), of some types or links. */
export interface EventFilter {
  userId: string | null
  types?: readonly string[]
  linkIds?: readonly string[]
}

/** An enabled webhook with deliveries due now, and what sending to it needs. */
export interface DueWebhook {
  id: string
  url: string
  secret: string
  failing_since: number | null
}

/** The fan-out's choice: which webhook gets which event. */
export type Matcher = (events: EventRow[], hooks: HookTarget[]) => [string, EventRow][]

/** Rows purged per statement (a purge round repeats while rows were removed, up to a bound). */
const PURGE_BATCH = 5000
export const EVENT_RETENTION_MS = 24 * 3_600_000
/** Failed deliveries (and their events) stay this long, for a retry by hand; so does a disabled webhook's backlog. */
export const FAILED_RETENTION_MS = 7 * 86_400_000
const CURSOR = 'webhooks'

const EVENT_COLUMNS = 'seq, id, type, user_id, link_id, tag_ids, webhook_id, data, created_at'
/** What the fan-out matches on: not the data (read again when a delivery is sent). */
const FANOUT_COLUMNS = EVENT_COLUMNS.replace('data', "'' AS data")
const withPosition = (r: Omit<EventRow, 'position'>): EventRow => ({ ...r, position: String(r.seq) })

export function createWebhookStore(db: Db) {
  const byId = db.query<WebhookRow, [string]>('SELECT * FROM webhooks WHERE id = ?')
  const insertWebhook = db.query(`INSERT INTO webhooks (id, user_id, url, name, events, link_ids, tag_ids, secret, disabled, disabled_reason,
    failing_since, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`)
  const updateWebhook = db.query(`UPDATE webhooks SET url = ?, name = ?, events = ?, link_ids = ?, tag_ids = ?, disabled = ?, disabled_reason = ?,
    failing_since = ?, updated_at = ? WHERE id = ?`)
  const cursor = db.query<{ position: string }, [string]>('SELECT position FROM event_cursors WHERE name = ?')
  const setCursor = db.query('INSERT INTO event_cursors (name, position) VALUES (?, ?) ON CONFLICT (name) DO UPDATE SET position = excluded.position')
  const eventsAfter = db.query<Omit<EventRow, 'position'>, [number, number]>(`SELECT ${FANOUT_COLUMNS} FROM events WHERE seq > ? ORDER BY seq LIMIT ?`)
  const tail = db.query<{ seq: number | null }, []>('SELECT max(seq) AS seq FROM events')
  const hookTargets = db.query<HookTarget, []>(`SELECT w.id, w.user_id, u.role, w.events, w.link_ids, w.tag_ids, w.created_at
    FROM webhooks w JOIN users u ON u.id = w.user_id WHERE w.disabled = 0 AND u.disabled = 0 AND u.deleted_at IS NULL ORDER BY w.id`)
  const insertDelivery = db.query(`INSERT INTO webhook_deliveries (webhook_id, event_seq, event_id, event_type, next_attempt_at, created_at)
    VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING`)
  const due = db.query<DueWebhook, [number, number]>(`SELECT w.id, w.url, w.secret, w.failing_since FROM webhooks w JOIN users u ON u.id = w.user_id
    WHERE w.disabled = 0 AND u.disabled = 0 AND u.deleted_at IS NULL AND EXISTS (SELECT 1 FROM webhook_deliveries d
      WHERE d.webhook_id = w.id AND d.status = 'pending' AND d.next_attempt_at <= ? AND (d.lease_until IS NULL OR d.lease_until <= ?))`)
  const claim = db.query<Omit<ClaimedDelivery, 'data' | 'created_at'>, [string, number, string, string, number, number, number]>(
    `UPDATE webhook_deliveries SET lease_owner = ?, lease_until = ? WHERE webhook_id = ? AND event_seq IN (
      SELECT event_seq FROM webhook_deliveries WHERE webhook_id = ? AND status = 'pending' AND next_attempt_at <= ?
        AND (lease_until IS NULL OR lease_until <= ?) ORDER BY next_attempt_at, event_seq LIMIT ?)
    RETURNING webhook_id, event_seq, event_id, event_type, attempts`,
  )
  const eventData = db.query<{ seq: number; data: string; created_at: number }, [string]>(
    'SELECT seq, data, created_at FROM events WHERE seq IN (SELECT value FROM json_each(?))',
  )
  const recordOne = db.query(`UPDATE webhook_deliveries SET status = ?, attempts = attempts + 1, response_status = ?, last_attempt_at = ?,
    next_attempt_at = ?, lease_owner = NULL, lease_until = NULL WHERE webhook_id = ? AND event_seq = ? AND lease_owner = ?`)
  const failingSince = db.query<{ failing_since: number | null }, [string]>('SELECT failing_since FROM webhooks WHERE id = ?')
  const clearFailing = db.query('UPDATE webhooks SET failing_since = NULL WHERE id = ?')
  const markFailing = db.query('UPDATE webhooks SET failing_since = coalesce(failing_since, ?) WHERE id = ?')
  const disableFailing = db.query<{ id: string }, [number, string, number]>(
    `UPDATE webhooks SET disabled = 1, disabled_reason = 'failing', updated_at = ? WHERE id = ? AND disabled = 0 AND failing_since <= ? RETURNING id`,
  )
  const pullForward = db.query(`UPDATE webhook_deliveries SET next_attempt_at = max(?, coalesce(last_attempt_at, 0) + ?)
    WHERE webhook_id = ? AND status = 'pending' AND next_attempt_at > ?`)
  const deliveryOf = db.query<DeliveryRow, [string, number]>(`SELECT webhook_id, event_seq, event_id, event_type, status, attempts, response_status,
    last_attempt_at, next_attempt_at, created_at FROM webhook_deliveries WHERE webhook_id = ? AND event_seq = ?`)

  return {
    insertWebhook(r: WebhookRow): void {
      insertWebhook.run(
        r.id,
        r.user_id,
        r.url,
        r.name,
        r.events,
        r.link_ids,
        r.tag_ids,
        r.secret,
        r.disabled,
        r.disabled_reason,
        r.failing_since,
        r.created_at,
        r.updated_at,
      )
    },
    getWebhook: (id: string): WebhookRow | null => byId.get(id),
    updateWebhook(r: WebhookRow): void {
      updateWebhook.run(r.url, r.name, r.events, r.link_ids, r.tag_ids, r.disabled, r.disabled_reason, r.failing_since, r.updated_at, r.id)
    },
    /** The webhook and its deliveries; its events stay for the live stream until they age out. */
    deleteWebhook(id: string): boolean {
      return db.transaction(() => {
        db.run('DELETE FROM webhook_deliveries WHERE webhook_id = ?', [id])
        return db.run('DELETE FROM webhooks WHERE id = ?', [id]).changes > 0
      })()
    },
    /** One user's webhooks (null: everyone's), newest first, and how many there are. */
    listWebhooks(userId: string | null, limit: number, offset: number): { rows: WebhookRow[]; total: number } {
      const where = userId === null ? '' : 'WHERE user_id = ?'
      const args = userId === null ? [] : [userId]
      const total = db.query<{ n: number }, string[]>(`SELECT count(*) AS n FROM webhooks ${where}`).get(...args)!.n
      const rows = db
        .query<WebhookRow, (string | number)[]>(`SELECT * FROM webhooks ${where} ORDER BY created_at DESC, id DESC LIMIT ? OFFSET ?`)
        .all(...args, limit, offset)
      return { rows, total }
    },
    countWebhooks: (userId: string): number => db.query<{ n: number }, [string]>('SELECT count(*) AS n FROM webhooks WHERE user_id = ?').get(userId)!.n,
    /** Owners of the live links among `ids` (a webhook may name only links its owner sees). */
    linkOwners: (ids: readonly string[]) =>
      db
        .query<{ id: string; user_id: string }, [string]>('SELECT id, user_id FROM links WHERE deleted_at IS NULL AND id IN (SELECT value FROM json_each(?))')
        .all(JSON.stringify(ids)),
    tagOwners: (ids: readonly string[]) =>
      db.query<{ id: string; user_id: string }, [string]>('SELECT id, user_id FROM tags WHERE id IN (SELECT value FROM json_each(?))').all(JSON.stringify(ids)),

    /** A webhook's deliveries, newest first, maybe of one status, and how many match. */
    listDeliveries(webhookId: string, status: string | null, limit: number, offset: number): { rows: DeliveryRow[]; total: number } {
      const where = `WHERE webhook_id = ?${status ? ' AND status = ?' : ''}`
      const args = status ? [webhookId, status] : [webhookId]
      const total = db.query<{ n: number }, string[]>(`SELECT count(*) AS n FROM webhook_deliveries ${where}`).get(...args)!.n
      const rows = db
        .query<DeliveryRow, (string | number)[]>(
          `SELECT webhook_id, event_seq, event_id, event_type, status, attempts, response_status, last_attempt_at, next_attempt_at, created_at
           FROM webhook_deliveries ${where} ORDER BY event_seq DESC LIMIT ? OFFSET ?`,
        )
        .all(...args, limit, offset)
      return { rows, total }
    },
    /** Makes a delivery due now, whatever its state; null when the webhook never had that event. */
    retryDelivery(webhookId: string, eventId: string, now: number): DeliveryRow | null {
      return db
        .query<DeliveryRow, [number, string, string]>(
          `UPDATE webhook_deliveries SET status = 'pending', next_attempt_at = ? WHERE webhook_id = ? AND event_seq = (SELECT seq FROM events WHERE id = ?)
           RETURNING webhook_id, event_seq, event_id, event_type, status, attempts, response_status, last_attempt_at, next_attempt_at, created_at`,
        )
        .get(now, webhookId, eventId)
    },
    /** A webhook.test event for this webhook only, and its delivery, due now: one transaction. */
    testEvent(hook: Pick<WebhookRow, 'id' | 'user_id'>, data: unknown, now: number): DeliveryRow {
      return db.transaction(() => {
        const [id] = appendEvents(db, [{ type: 'webhook.test', userId: hook.user_id, webhookId: hook.id, data }], now)
        const seq = db.query<{ seq: number }, [string]>('SELECT seq FROM events WHERE id = ?').get(id!)!.seq
        insertDelivery.run(hook.id, seq, id!, 'webhook.test', now, now)
        return deliveryOf.get(hook.id, seq)!
      })()
    },

    /** The newest committed position (nothing after it yet). */
    tailPosition: (): string => String(tail.get()?.seq ?? 0),
    positionOf: (eventId: string): string | null => {
      const r = db.query<{ seq: number }, [string]>('SELECT seq FROM events WHERE id = ?').get(eventId)
      return r ? String(r.seq) : null
    },
    /** Events after `after` up to `upTo` that the filter lets through, oldest first. */
    readEvents(after: string, upTo: string, f: EventFilter, limit: number): EventRow[] {
      const parts = ['seq > ?', 'seq <= ?']
      const args: (string | number)[] = [Number(after), Number(upTo)]
      if (f.userId !== null) {
        parts.push('user_id = ?')
        args.push(f.userId)
      }
      if (f.types?.length) {
        parts.push('type IN (SELECT value FROM json_each(?))')
        args.push(JSON.stringify(f.types))
      }
      if (f.linkIds?.length) {
        parts.push('link_id IN (SELECT value FROM json_each(?))')
        args.push(JSON.stringify(f.linkIds))
      }
      return db
        .query<Omit<EventRow, 'position'>, (string | number)[]>(`SELECT ${EVENT_COLUMNS} FROM events WHERE ${parts.join(' AND ')} ORDER BY seq LIMIT ?`)
        .all(...args, limit)
        .map(withPosition)
    },
    /** A live stream wants link.clicked of one user (null: every link) until `expiresAt`. */
    touchListener(scope: string, userId: string | null, expiresAt: number): void {
      db.run(
        'INSERT INTO event_listeners (scope, user_id, expires_at) VALUES (?, ?, ?) ON CONFLICT (scope) DO UPDATE SET expires_at = max(expires_at, excluded.expires_at)',
        [scope, userId, expiresAt],
      )
    },

    /**
     * Reads the events after the fan-out's position and writes a delivery for each webhook that
     * wants one (a delivery already there is kept), then moves the position: one transaction.
     * Answers how many events it read and which webhooks got deliveries.
     */
    fanOut(now: number, limit: number, match: Matcher): { read: number; targets: string[] } {
      return db
        .transaction(() => {
          const from = Number(cursor.get(CURSOR)?.position ?? 0)
          const hooks = hookTargets.all()
          if (hooks.length === 0) {
            // Nobody to deliver to: skip to the end.
            const end = tail.get()?.seq ?? 0
            if (end > from) setCursor.run(CURSOR, String(end))
            return { read: end - from, targets: [] }
          }
          const events = eventsAfter.all(from, limit).map(withPosition)
          if (events.length === 0) return { read: 0, targets: [] }
          const targets = new Set<string>()
          for (const [hook, e] of match(events, hooks)) {
            insertDelivery.run(hook, e.seq, e.id, e.type, now, now)
            targets.add(hook)
          }
          setCursor.run(CURSOR, events.at(-1)!.position)
          return { read: events.length, targets: [...targets] }
        })
        .immediate()
    },
    dueWebhooks: (now: number): DueWebhook[] => due.all(now, now),
    /** Leases up to `limit` due deliveries of a webhook to `node` until `leaseUntil`, oldest due first. */
    claim(webhookId: string, node: string, now: number, leaseUntil: number, limit: number): ClaimedDelivery[] {
      const claimed = db.transaction(() => claim.all(node, leaseUntil, webhookId, webhookId, now, now, limit)).immediate()
      if (claimed.length === 0) return []
      const events = new Map(eventData.all(JSON.stringify(claimed.map((c) => c.event_seq))).map((e) => [e.seq, e]))
      return claimed
        .sort((a, b) => a.event_seq - b.event_seq)
        .map((c) => ({ ...c, data: events.get(c.event_seq)?.data ?? null, created_at: events.get(c.event_seq)?.created_at ?? null }))
    },
    /**
     * Writes attempts' outcomes (only for deliveries `node` still leases) and each webhook's
     * health, in one transaction: a success after an outage of OUTAGE_MS or more makes the
     * webhook's waiting deliveries due (at least 5 s after their last attempt); failures for
     * DISABLE_AFTER_MS disable it. Answers the webhooks it disabled.
     */
    recordOutcomes(outcomes: DeliveryOutcome[], node: string, now: number): string[] {
      const disabled: string[] = []
      db.transaction(() => {
        for (const o of outcomes) {
          const s = nextState(o)
          recordOne.run(s.status, o.responseStatus, o.at, s.nextAttemptAt, o.webhookId, o.eventSeq, node)
        }
        for (const [id, last] of lastOutcomes(outcomes)) {
          if (last.ok) {
            const since = failingSince.get(id)?.failing_since ?? null
            if (since === null) continue
            clearFailing.run(id)
            if (last.at - since >= OUTAGE_MS) pullForward.run(last.at, RETRY_FLOOR_MS, id, last.at)
          } else {
            markFailing.run(last.at, id)
            if (disableFailing.get(now, id, last.at - DISABLE_AFTER_MS)) disabled.push(id)
          }
        }
      }).immediate()
      return disabled
    },
    /** Leases held by `node` (or every lease: null, a single node starting again) end now. */
    releaseLeases(node: string | null): void {
      if (node === null) db.run('UPDATE webhook_deliveries SET lease_owner = NULL, lease_until = NULL WHERE lease_owner IS NOT NULL')
      else db.run('UPDATE webhook_deliveries SET lease_owner = NULL, lease_until = NULL WHERE lease_owner = ?', [node])
    },
    /** Deliveries waiting (the queue depth). */
    pendingCount: (): number =>
      db.query<{ n: number }, []>("SELECT count(*) AS n FROM webhook_deliveries INDEXED BY webhook_deliveries_due WHERE status = 'pending'").get()!.n,
    /**
     * Removes what has aged out: deliveries of events older than EVENT_RETENTION_MS that were
     * delivered, any delivery older than FAILED_RETENTION_MS (failed, or still waiting on a
     * webhook disabled that long: its retries would have ended after a day), then events with no
     * delivery left that the fan-out has read, and expired listeners. Answers the rows removed.
     */
    purge(now: number): number {
      const dayAgo = now - EVENT_RETENTION_MS
      const weekAgo = now - FAILED_RETENTION_MS
      let removed = 0
      for (let round = 0; round < 20; round++) {
        const n = db.transaction(() => {
          const fanned = Number(cursor.get(CURSOR)?.position ?? 0)
          const d = db.run(
            `DELETE FROM webhook_deliveries WHERE (webhook_id, event_seq) IN (SELECT d.webhook_id, d.event_seq FROM events e
              JOIN webhook_deliveries d ON d.event_seq = e.seq WHERE e.created_at < ? AND (d.status = 'delivered' OR e.created_at < ?)
              LIMIT ${PURGE_BATCH})`,
            [dayAgo, weekAgo],
          ).changes
          const e = db.run(
            `DELETE FROM events WHERE seq IN (SELECT e.seq FROM events e WHERE e.created_at < ? AND e.seq <= ?
              AND NOT EXISTS (SELECT 1 FROM webhook_deliveries d WHERE d.event_seq = e.seq) LIMIT ${PURGE_BATCH})`,
            [dayAgo, fanned],
          ).changes
          return d + e
        })()
        removed += n
        if (n < PURGE_BATCH) break
      }
      removed += db.run('DELETE FROM event_listeners WHERE expires_at < ?', [now]).changes
      return removed
    },
  }
}

/** Retries made due by an outage's end are not sooner than this after their last attempt. */
export const RETRY_FLOOR_MS = 5_000

/** Each webhook's latest outcome in a batch. */
export function lastOutcomes(outcomes: DeliveryOutcome[]): Map<string, DeliveryOutcome> {
  const last = new Map<string, DeliveryOutcome>()
  for (const o of outcomes) {
    const cur = last.get(o.webhookId)
    if (!cur || o.at >= cur.at) last.set(o.webhookId, o)
  }
  return new Map([...last].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
}

export type WebhookStore = ReturnType<typeof createWebhookStore>
/** The webhook store port: SQLite's with every answer allowed to be a promise. */
export type WebhookStorePort = Awaitable<WebhookStore>
