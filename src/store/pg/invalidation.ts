/**
 * Cache invalidation across nodes on PostgreSQL (docs/adr/0010): a writer calls `publish`
 * inside its own transaction, which bumps the channel's epoch row and sends `pg_notify` in
 * one statement, so every node hears the key at commit and never after a rollback. Each node
 * LISTENs on one dedicated connection. Notifications sent while it is disconnected are lost,
 * so a node flushes a channel whole ('*') when its LISTEN is acknowledged again (Bun.SQL's
 * `onlisten` runs after every reconnect), and polls the epoch rows as a safety net: an epoch
 * it never heard of flushes the channel.
 */
import { SQL } from 'bun'
import type { Logger } from '../../shared'

/** What a subscriber receives: a key the writer named, or '*' for "forget the whole channel". */
export type Invalidation = string

export interface InvalidationBusOptions {
  /** `postgres://…`, a direct connection: LISTEN does not work through pgbouncer in transaction mode. */
  url: string
  /** Channel names (PostgreSQL identifiers, at most 63 bytes), e.g. `links`, `domains`, `auth`. */
  channels: readonly string[]
  /** How often the epoch rows are read; an epoch never heard of flushes within two polls. */
  epochPollMs?: number
  log: Logger
}

export interface InvalidationBus {
  /**
   * Announces that `keys` changed on `channel`. Call it with the writer's transaction (or a
   * reserved connection in a transaction), ideally as its last statement: it locks the
   * channel's epoch row until commit. One key, or a list; a key too long for a payload, or
   * more than {@link MAX_KEYS_PER_PUBLISH} keys, becomes one '*'.
   */
  publish(tx: SQL, channel: string, keys: string | readonly string[]): Promise<void>
  /** Registers a subscriber; returns the function that removes it. */
  on(channel: string, subscriber: (key: Invalidation) => void): () => void
  /** Counters for health and metrics: epoch polls done, flushes for a re-subscription or a missed epoch. */
  stats(): InvalidationStats
  /** Stops polling and closes the bus's connections (the LISTEN one included). */
  close(): Promise<void>
}

export interface InvalidationStats {
  polls: number
  notifications: number
  flushes: { resubscribed: number; missedEpoch: number }
}

/** Whole-channel flush: sent for oversize keys and large batches, emitted on re-subscription. */
export const FLUSH = '*'
/** More keys than this in one publish become a single flush. */
export const MAX_KEYS_PER_PUBLISH = 100
/** PostgreSQL refuses payloads of 8000 bytes or more; the payload is `<epoch>:<key>`, the epoch up to 20 digits. */
export const MAX_KEY_BYTES = 7999 - 21

/** The table the bus needs; the PostgreSQL migrations create the same one. */
const EPOCHS_TABLE = 'CREATE TABLE IF NOT EXISTS cache_epochs (channel text PRIMARY KEY, epoch bigint NOT NULL)'

interface ChannelState {
  subscribers: Set<(key: Invalidation) => void>
  /** Every epoch up to this one is accounted for (heard, or covered by a flush). */
  base: number | null
  /** The epoch read by the previous poll: judged at the next one, once its notification had time to arrive. */
  lastRead: number | null
  /** Epochs above `base` heard through notifications. */
  heard: Set<number>
  /** Set by a flush on re-subscription: the next poll only records where the epoch is. */
  resync: boolean
}

export async function createInvalidationBus(options: InvalidationBusOptions): Promise<InvalidationBus> {
  const { url, channels, epochPollMs = 3000, log } = options
  // One pooled connection for the epoch polls; LISTEN gets a dedicated connection of its own.
  const sql = new SQL(url, { max: 1 })
  const state = new Map<string, ChannelState>()
  for (const channel of channels) state.set(channel, { subscribers: new Set(), base: null, lastRead: null, heard: new Set(), resync: false })
  let closed = false
  let pollTimer: ReturnType<typeof setTimeout> | undefined
  let polling: Promise<void> = Promise.resolve()
  let pollFailing = false
  const stats: InvalidationStats = { polls: 0, notifications: 0, flushes: { resubscribed: 0, missedEpoch: 0 } }

  const channelState = (channel: string) => {
    const s = state.get(channel)
    if (!s) throw new Error(`invalidation channel ${JSON.stringify(channel)} is not one of ${JSON.stringify(channels)}`)
    return s
  }

  const emit = (channel: string, s: ChannelState, key: Invalidation) => {
    for (const subscriber of s.subscribers) {
      try {
        subscriber(key)
      } catch (err) {
        log.error('cache invalidation subscriber failed', { channel, key, error: String(err) })
      }
    }
  }

  const onNotify = (channel: string, s: ChannelState) => (payload: string) => {
    if (closed) return
    stats.notifications++
    const colon = payload.indexOf(':')
    const epoch = Number(payload.slice(0, colon))
    // A payload not in our format (a NOTIFY from elsewhere) cannot be trusted to name a key.
    if (colon < 1 || !Number.isSafeInteger(epoch)) return emit(channel, s, FLUSH)
    if (s.base !== null && epoch > s.base) s.heard.add(epoch)
    emit(channel, s, payload.slice(colon + 1))
  }

  try {
    await createEpochsTable(sql)
    for (const [channel, s] of state) {
      let acknowledged = false
      await sql.listen(channel, onNotify(channel, s), () => {
        // The first acknowledgement is the subscription itself; any later one follows a lost connection.
        if (!acknowledged) {
          acknowledged = true
          return
        }
        if (closed) return
        log.warn('cache invalidation listener re-subscribed; flushing', { channel })
        s.resync = true
        stats.flushes.resubscribed++
        emit(channel, s, FLUSH)
      })
    }
    await pollEpochs()
  } catch (err) {
    closed = true
    await sql.close({ timeout: 0 }).catch(() => {})
    throw err
  }
  schedulePoll()

  function schedulePoll() {
    if (closed) return
    pollTimer = setTimeout(() => {
      polling = pollEpochs()
        .catch((err) => {
          if (!pollFailing) log.warn('cache epoch poll failed; retrying', { error: String(err) })
          pollFailing = true
        })
        .finally(schedulePoll)
    }, epochPollMs)
  }

  async function pollEpochs() {
    const resyncing = new Set<string>()
    for (const [channel, s] of state)
      if (s.resync) {
        s.resync = false
        resyncing.add(channel)
      }
    const rows: { channel: string; epoch: string }[] = await sql`
      SELECT channel, epoch::text AS epoch FROM cache_epochs WHERE channel IN ${sql([...state.keys()])}`
    if (closed) return
    stats.polls++
    if (pollFailing) log.info('cache epoch poll recovered')
    pollFailing = false
    const read = new Map(rows.map((r) => [r.channel, Number(r.epoch)]))
    for (const [channel, s] of state) {
      const epoch = read.get(channel) ?? 0
      if (s.base === null || resyncing.has(channel)) {
        // At start, or just after a flush that covered everything committed before this read.
        s.base = epoch
        s.lastRead = epoch
        dropHeard(s)
        continue
      }
      const judged = s.lastRead ?? s.base
      // Committed epochs have no gaps (the row lock orders the writers): each one up to `judged` must have been heard.
      let heard = 0
      for (const e of s.heard) if (e <= judged) heard++
      const missed = epoch < s.base || heard < judged - s.base // backwards: a restored database
      if (missed) {
        log.warn('cache invalidation missed; flushing', { channel, epoch })
        s.base = epoch
        stats.flushes.missedEpoch++
        emit(channel, s, FLUSH)
      } else {
        s.base = Math.max(s.base, judged)
      }
      s.lastRead = epoch
      dropHeard(s)
    }
  }

  return {
    async publish(tx, channel, keys) {
      channelState(channel)
      const list = typeof keys === 'string' ? [keys] : [...keys]
      const tooMany = list.length > MAX_KEYS_PER_PUBLISH
      const payloadKeys = tooMany || list.some((k) => !fitsPayload(k)) ? [FLUSH] : [...new Set(list)]
      if (payloadKeys.length === 0) return
      // One statement: the epoch row and the notifications commit (or roll back) together.
      // `::text` first: Bun.SQL JSON-encodes a string bound straight to `::json` (a JSON string, not our array).
      await tx`
        WITH bumped AS (
          INSERT INTO cache_epochs (channel, epoch) VALUES (${channel}, 1)
          ON CONFLICT (channel) DO UPDATE SET epoch = cache_epochs.epoch + 1
          RETURNING epoch
        )
        SELECT pg_notify(${channel}, bumped.epoch::text || ':' || k.key)
        FROM bumped, json_array_elements_text(${JSON.stringify(payloadKeys)}::text::json) AS k(key)`
    },
    on(channel, subscriber) {
      const s = channelState(channel)
      s.subscribers.add(subscriber)
      return () => s.subscribers.delete(subscriber)
    },
    stats: () => structuredClone(stats),
    async close() {
      if (closed) return
      closed = true
      clearTimeout(pollTimer)
      await polling.catch(() => {})
      // Closing the client ends the LISTEN connection too (and stops its reconnect attempts).
      await sql.close({ timeout: 0 })
    },
  }
}

function dropHeard(s: ChannelState) {
  for (const e of s.heard) if (s.base !== null && e <= s.base) s.heard.delete(e)
}

/** A key PostgreSQL can carry: under the payload limit in UTF-8, and no NUL (text cannot hold it). */
function fitsPayload(key: string): boolean {
  return Buffer.byteLength(key, 'utf8') <= MAX_KEY_BYTES && !key.includes('\0')
}

/** Nodes starting together may race on CREATE TABLE IF NOT EXISTS (a unique violation on the catalog). */
async function createEpochsTable(sql: SQL) {
  try {
    await sql.unsafe(EPOCHS_TABLE)
  } catch (err) {
    const errno = (err as { errno?: string }).errno
    if (errno !== '23505' && errno !== '42P07') throw err
  }
}
