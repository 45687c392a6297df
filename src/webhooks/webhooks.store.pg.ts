/**
 * The webhook store on PostgreSQL (docs/adr/0010): the SQLite store's methods and answers,
 * written for several nodes at once.
 *
 * - The outbox is read in (xid, seq) order, only up to transactions older than every one still
 *   running (migration 0005): a position, "<xid>:<seq>", never has a row appear behind it.
 * - The fan-out holds its cursor row with FOR UPDATE SKIP LOCKED: one node at a time reads and
 *   fans out, the others skip the turn. Deliveries are leased with FOR UPDATE SKIP LOCKED and a
 *   lease time: each goes out from one node, and a dead node's leases run out and are taken.
 * - A batch of outcomes takes its locks in one order (each webhook's row by id, then its
 *   deliveries) and runs again after a deadlock.
 */
import type { SQL } from 'bun'
import { appendEventsPg, eventsAppended } from '../events'
import { type DeliveryOutcome, nextState, OUTAGE_MS } from './webhooks.retry'
import type { WebhookStorePort } from './webhooks.store'
import {
  type ClaimedDelivery,
  type DeliveryRow,
  type DueWebhook,
  EVENT_RETENTION_MS,
  type EventFilter,
  type EventRow,
  FAILED_RETENTION_MS,
  type HookTarget,
  lastOutcomes,
  type Matcher,
  RETRY_FLOOR_MS,
  type WebhookRow,
} from './webhooks.store'
import { DISABLE_AFTER_MS } from './webhooks.values'

const CURSOR = 'webhooks'
const PURGE_BATCH = 5000
/** The advisory lock of the purge (any fixed number no other code uses). */
const PURGE_LOCK_KEY = 7_240_514_021n
/** Transactions older than every one still running: their rows can no longer appear. */
const SETTLED = 'xid < pg_snapshot_xmin(pg_current_snapshot())'

const WEBHOOK_COLUMNS = `id, user_id, url, name, events, link_ids, tag_ids, secret, disabled::int AS disabled, disabled_reason,
  failing_since::float8 AS failing_since, created_at::float8 AS created_at, updated_at::float8 AS updated_at`
const DELIVERY_COLUMNS = `webhook_id, event_seq::float8 AS event_seq, event_id, event_type, status, attempts, response_status,
  last_attempt_at::float8 AS last_attempt_at, next_attempt_at::float8 AS next_attempt_at, created_at::float8 AS created_at`
const EVENT_COLUMNS = `seq::float8 AS seq, id, type, user_id, link_id, tag_ids, webhook_id, data, created_at::float8 AS created_at,
  xid::text || ':' || seq AS position`
/** What the fan-out matches on: not the data (read again when a delivery is sent). */
const FANOUT_COLUMNS = EVENT_COLUMNS.replace('data,', "'' AS data,")

const parsePosition = (p: string): [string, number] => {
  const colon = p.indexOf(':')
  return colon < 0 ? ['0', 0] : [p.slice(0, colon), Number(p.slice(colon + 1))]
}

const isDeadlock = (e: unknown) => (e as { errno?: unknown })?.errno === '40P01'

export function createPgWebhookStore(sql: SQL): WebhookStorePort {
  let cursorMade: Promise<unknown> | null = null
  const ensureCursor = () => (cursorMade ??= sql`INSERT INTO event_cursors (name, position) VALUES (${CURSOR}, '0:0') ON CONFLICT DO NOTHING`)
  const tailOf = async (db: SQL): Promise<string | null> => {
    const [row] = await db.unsafe(`SELECT xid::text || ':' || seq AS position FROM events WHERE ${SETTLED} ORDER BY xid DESC, seq DESC LIMIT 1`)
    return (row?.position as string | undefined) ?? null
  }
  const deliveryOf = async (db: SQL, webhookId: string, seq: number) =>
    (await db.unsafe(`SELECT ${DELIVERY_COLUMNS} FROM webhook_deliveries WHERE webhook_id = $1 AND event_seq = $2`, [webhookId, seq]))[0] as DeliveryRow

  return {
    async insertWebhook(r: WebhookRow): Promise<void> {
      await sql`INSERT INTO webhooks ${sql(r)}`
    },
    async getWebhook(id: string): Promise<WebhookRow | null> {
      const [row] = await sql.unsafe(`SELECT ${WEBHOOK_COLUMNS} FROM webhooks WHERE id = $1`, [id])
      return (row as WebhookRow | undefined) ?? null
    },
    async updateWebhook(r: WebhookRow): Promise<void> {
      await sql`UPDATE webhooks SET url = ${r.url}, name = ${r.name}, events = ${r.events}, link_ids = ${r.link_ids}, tag_ids = ${r.tag_ids},
        disabled = ${r.disabled}, disabled_reason = ${r.disabled_reason}, failing_since = ${r.failing_since}, updated_at = ${r.updated_at}
        WHERE id = ${r.id}`
    },
    async deleteWebhook(id: string): Promise<boolean> {
      return sql.begin(async (tx) => {
        // The row first: another node's fan-out inserting a delivery for it (its foreign key takes a share
        // lock on this row) now waits for this commit instead of slipping in between the two deletes.
        await tx`SELECT 1 FROM webhooks WHERE id = ${id} FOR UPDATE`
        await tx`DELETE FROM webhook_deliveries WHERE webhook_id = ${id}`
        return (await tx`DELETE FROM webhooks WHERE id = ${id} RETURNING 1`).length > 0
      })
    },
    async listWebhooks(userId: string | null, limit: number, offset: number): Promise<{ rows: WebhookRow[]; total: number }> {
      const where = userId === null ? '' : 'WHERE user_id = $1'
      const args = userId === null ? [] : [userId]
      const [{ n }] = await sql.unsafe(`SELECT count(*)::float8 AS n FROM webhooks ${where}`, args)
      const rows = await sql.unsafe(
        `SELECT ${WEBHOOK_COLUMNS} FROM webhooks ${where} ORDER BY created_at DESC, id COLLATE "C" DESC LIMIT $${args.length + 1} OFFSET $${args.length + 2}`,
        [...args, limit, offset],
      )
      return { rows: [...rows] as WebhookRow[], total: n as number }
    },
    async countWebhooks(userId: string): Promise<number> {
      const [{ n }] = await sql`SELECT count(*)::float8 AS n FROM webhooks WHERE user_id = ${userId}`
      return n as number
    },
    linkOwners: async (ids: readonly string[]) =>
      [...(await sql`SELECT id, user_id FROM links WHERE deleted_at IS NULL AND id = ANY(${[...ids]}::text[])`)] as { id: string; user_id: string }[],
    tagOwners: async (ids: readonly string[]) =>
      [...(await sql`SELECT id, user_id FROM tags WHERE id = ANY(${[...ids]}::text[])`)] as { id: string; user_id: string }[],

    async listDeliveries(webhookId: string, status: string | null, limit: number, offset: number): Promise<{ rows: DeliveryRow[]; total: number }> {
      const where = `WHERE webhook_id = $1${status ? ' AND status = $2' : ''}`
      const args: (string | number)[] = status ? [webhookId, status] : [webhookId]
      const [{ n }] = await sql.unsafe(`SELECT count(*)::float8 AS n FROM webhook_deliveries ${where}`, args)
      const rows = await sql.unsafe(
        `SELECT ${DELIVERY_COLUMNS} FROM webhook_deliveries ${where} ORDER BY event_seq DESC LIMIT $${args.length + 1} OFFSET $${args.length + 2}`,
        [...args, limit, offset],
      )
      return { rows: [...rows] as DeliveryRow[], total: n as number }
    },
    async retryDelivery(webhookId: string, eventId: string, now: number): Promise<DeliveryRow | null> {
      const [row] = await sql.unsafe(
        `UPDATE webhook_deliveries SET status = 'pending', next_attempt_at = $1 WHERE webhook_id = $2 AND event_seq = (SELECT seq FROM events WHERE id = $3)
         RETURNING ${DELIVERY_COLUMNS}`,
        [now, webhookId, eventId],
      )
      return (row as DeliveryRow | undefined) ?? null
    },
    async testEvent(hook: Pick<WebhookRow, 'id' | 'user_id'>, data: unknown, now: number): Promise<DeliveryRow> {
      const row = await sql.begin(async (tx) => {
        const [id] = await appendEventsPg(tx, [{ type: 'webhook.test', userId: hook.user_id, webhookId: hook.id, data }], now)
        const [{ seq }] = await tx`SELECT seq::float8 AS seq FROM events WHERE id = ${id!}`
        await tx`INSERT INTO webhook_deliveries (webhook_id, event_seq, event_id, event_type, next_attempt_at, created_at)
          VALUES (${hook.id}, ${seq}, ${id!}, 'webhook.test', ${now}, ${now})`
        return deliveryOf(tx, hook.id, seq as number)
      })
      eventsAppended()
      return row
    },

    tailPosition: async (): Promise<string> => (await tailOf(sql)) ?? '0:0',
    async positionOf(eventId: string): Promise<string | null> {
      const [row] = await sql`SELECT xid::text || ':' || seq AS position FROM events WHERE id = ${eventId}`
      return (row?.position as string | undefined) ?? null
    },
    async readEvents(after: string, upTo: string, f: EventFilter, limit: number): Promise<EventRow[]> {
      const [ax, as] = parsePosition(after)
      const [ux, us] = parsePosition(upTo)
      const args: unknown[] = [ax, as, ux, us]
      const parts = ['(xid, seq) > ($1::xid8, $2::bigint)', '(xid, seq) <= ($3::xid8, $4::bigint)']
      if (f.userId !== null) {
        args.push(f.userId)
        parts.push(`user_id = $${args.length}`)
      }
      if (f.types?.length) {
        args.push([...f.types])
        parts.push(`type = ANY($${args.length}::text[])`)
      }
      if (f.linkIds?.length) {
        args.push([...f.linkIds])
        parts.push(`link_id = ANY($${args.length}::text[])`)
      }
      args.push(limit)
      return [
        ...(await sql.unsafe(`SELECT ${EVENT_COLUMNS} FROM events WHERE ${parts.join(' AND ')} ORDER BY xid, seq LIMIT $${args.length}`, args)),
      ] as EventRow[]
    },
    async touchListener(scope: string, userId: string | null, expiresAt: number): Promise<void> {
      await sql`INSERT INTO event_listeners (scope, user_id, expires_at) VALUES (${scope}, ${userId}, ${expiresAt})
        ON CONFLICT (scope) DO UPDATE SET expires_at = greatest(event_listeners.expires_at, excluded.expires_at)`
    },

    async fanOut(now: number, limit: number, match: Matcher): Promise<{ read: number; targets: string[] }> {
      await ensureCursor()
      return sql.begin(async (tx) => {
        const [cur] = await tx`SELECT position FROM event_cursors WHERE name = ${CURSOR} FOR UPDATE SKIP LOCKED`
        // Another node is fanning out now.
        if (!cur) return { read: 0, targets: [] }
        const from = cur.position as string
        const hooks = (await tx`SELECT w.id, w.user_id, u.role, w.events, w.link_ids, w.tag_ids, w.created_at::float8 AS created_at
          FROM webhooks w JOIN users u ON u.id = w.user_id WHERE w.disabled = 0 AND u.disabled = 0 AND u.deleted_at IS NULL
          ORDER BY w.id COLLATE "C"`) as HookTarget[]
        if (hooks.length === 0) {
          const end = await tailOf(tx)
          if (end && end !== from) await tx`UPDATE event_cursors SET position = ${end} WHERE name = ${CURSOR}`
          return { read: 0, targets: [] }
        }
        const [fx, fs] = parsePosition(from)
        const events = [
          ...(await tx.unsafe(`SELECT ${FANOUT_COLUMNS} FROM events WHERE (xid, seq) > ($1::xid8, $2::bigint) AND ${SETTLED} ORDER BY xid, seq LIMIT $3`, [
            fx,
            fs,
            limit,
          ])),
        ] as EventRow[]
        if (events.length === 0) return { read: 0, targets: [] }
        const pairs = match(events, hooks)
        if (pairs.length)
          await tx.unsafe(
            `INSERT INTO webhook_deliveries (webhook_id, event_seq, event_id, event_type, next_attempt_at, created_at)
             SELECT w, s, i, t, $5, $5 FROM unnest($1::text[], $2::bigint[], $3::text[], $4::text[]) AS u(w, s, i, t) ON CONFLICT DO NOTHING`,
            [pairs.map(([w]) => w), pairs.map(([, e]) => e.seq), pairs.map(([, e]) => e.id), pairs.map(([, e]) => e.type), now],
          )
        await tx`UPDATE event_cursors SET position = ${events.at(-1)!.position} WHERE name = ${CURSOR}`
        return { read: events.length, targets: [...new Set(pairs.map(([w]) => w))] }
      })
    },
    async dueWebhooks(now: number): Promise<DueWebhook[]> {
      return [
        ...(await sql`SELECT w.id, w.url, w.secret, w.failing_since::float8 AS failing_since FROM webhooks w JOIN users u ON u.id = w.user_id
          WHERE w.disabled = 0 AND u.disabled = 0 AND u.deleted_at IS NULL AND EXISTS (SELECT 1 FROM webhook_deliveries d
            WHERE d.webhook_id = w.id AND d.status = 'pending' AND d.next_attempt_at <= ${now} AND (d.lease_until IS NULL OR d.lease_until <= ${now}))`),
      ] as DueWebhook[]
    },
    async claim(webhookId: string, node: string, now: number, leaseUntil: number, limit: number): Promise<ClaimedDelivery[]> {
      const rows = await sql`WITH claimed AS (
          UPDATE webhook_deliveries d SET lease_owner = ${node}, lease_until = ${leaseUntil}
          FROM (SELECT webhook_id, event_seq FROM webhook_deliveries WHERE webhook_id = ${webhookId} AND status = 'pending'
                AND next_attempt_at <= ${now} AND (lease_until IS NULL OR lease_until <= ${now})
                ORDER BY next_attempt_at, event_seq LIMIT ${limit} FOR UPDATE SKIP LOCKED) c
          WHERE d.webhook_id = c.webhook_id AND d.event_seq = c.event_seq
          RETURNING d.webhook_id, d.event_seq, d.event_id, d.event_type, d.attempts)
        SELECT c.webhook_id, c.event_seq::float8 AS event_seq, c.event_id, c.event_type, c.attempts, e.data, e.created_at::float8 AS created_at
        FROM claimed c LEFT JOIN events e ON e.seq = c.event_seq ORDER BY c.event_seq`
      return [...rows] as ClaimedDelivery[]
    },
    async recordOutcomes(outcomes: DeliveryOutcome[], node: string, now: number): Promise<string[]> {
      for (let attempt = 1; ; attempt++) {
        try {
          return await sql.begin(async (tx) => {
            const disabled: string[] = []
            const pulled: [string, number][] = []
            // Each webhook's row first, in id order (lastOutcomes sorts): the one lock order of every batch.
            for (const [id, last] of lastOutcomes(outcomes)) {
              if (last.ok) {
                const [w] = await tx`SELECT failing_since::float8 AS since FROM webhooks WHERE id = ${id} FOR UPDATE`
                if (w?.since == null) continue
                await tx`UPDATE webhooks SET failing_since = NULL WHERE id = ${id}`
                if (last.at - (w.since as number) >= OUTAGE_MS) pulled.push([id, last.at])
              } else {
                await tx`UPDATE webhooks SET failing_since = coalesce(failing_since, ${last.at}) WHERE id = ${id}`
                const [off] = await tx`UPDATE webhooks SET disabled = 1, disabled_reason = 'failing', updated_at = ${now}
                  WHERE id = ${id} AND disabled = 0 AND failing_since <= ${last.at - DISABLE_AFTER_MS} RETURNING id`
                if (off) disabled.push(id)
              }
            }
            const states = outcomes.map(nextState)
            await tx.unsafe(
              `UPDATE webhook_deliveries d SET status = u.status, attempts = d.attempts + 1, response_status = u.response_status,
                 last_attempt_at = u.at, next_attempt_at = u.next, lease_owner = NULL, lease_until = NULL
               FROM unnest($1::text[], $2::bigint[], $3::text[], $4::int[], $5::bigint[], $6::bigint[]) AS u(webhook_id, event_seq, status, response_status, at, next)
               WHERE d.webhook_id = u.webhook_id AND d.event_seq = u.event_seq AND d.lease_owner = $7`,
              [
                outcomes.map((o) => o.webhookId),
                outcomes.map((o) => o.eventSeq),
                states.map((s) => s.status),
                outcomes.map((o) => o.responseStatus),
                outcomes.map((o) => o.at),
                states.map((s) => s.nextAttemptAt),
                node,
              ],
            )
            for (const [id, at] of pulled)
              await tx`UPDATE webhook_deliveries SET next_attempt_at = greatest(${at}::bigint, coalesce(last_attempt_at, 0) + ${RETRY_FLOOR_MS})
                WHERE webhook_id = ${id} AND status = 'pending' AND next_attempt_at > ${at}`
            return disabled
          })
        } catch (e) {
          if (attempt >= 5 || !isDeadlock(e)) throw e
        }
      }
    },
    async releaseLeases(node: string | null): Promise<void> {
      if (node === null) await sql`UPDATE webhook_deliveries SET lease_owner = NULL, lease_until = NULL WHERE lease_owner IS NOT NULL`
      else await sql`UPDATE webhook_deliveries SET lease_owner = NULL, lease_until = NULL WHERE lease_owner = ${node}`
    },
    async pendingCount(): Promise<number> {
      const [{ n }] = await sql`SELECT count(*)::float8 AS n FROM webhook_deliveries WHERE status = 'pending'`
      return n as number
    },
    async purge(now: number): Promise<number> {
      const dayAgo = now - EVENT_RETENTION_MS
      const weekAgo = now - FAILED_RETENTION_MS
      let removed = 0
      for (let round = 0; round < 20; round++) {
        const n = await sql.begin(async (tx) => {
          // One node purges at a time (the others would only wait on the same rows).
          const [{ mine }] = await tx`SELECT pg_try_advisory_xact_lock(${PURGE_LOCK_KEY}) AS mine`
          if (!mine) return 0
          const [cur] = await tx`SELECT position FROM event_cursors WHERE name = ${CURSOR}`
          const [fx, fs] = parsePosition((cur?.position as string | undefined) ?? '0:0')
          const d = await tx.unsafe(
            `DELETE FROM webhook_deliveries WHERE (webhook_id, event_seq) IN (SELECT d.webhook_id, d.event_seq FROM events e
              JOIN webhook_deliveries d ON d.event_seq = e.seq WHERE e.created_at < $1 AND (d.status = 'delivered' OR e.created_at < $2)
              LIMIT ${PURGE_BATCH}) RETURNING 1`,
            [dayAgo, weekAgo],
          )
          const e = await tx.unsafe(
            `DELETE FROM events WHERE seq IN (SELECT e.seq FROM events e WHERE e.created_at < $1 AND (e.xid, e.seq) <= ($2::xid8, $3::bigint)
              AND NOT EXISTS (SELECT 1 FROM webhook_deliveries d WHERE d.event_seq = e.seq) LIMIT ${PURGE_BATCH}) RETURNING 1`,
            [dayAgo, fx, fs],
          )
          return d.length + e.length
        })
        removed += n
        if (n < PURGE_BATCH) break
      }
      removed += (await sql`DELETE FROM event_listeners WHERE expires_at < ${now} RETURNING 1`).length
      return removed
    },
  }
}
