/**
 * The delivery engine of one node. Everything it works on waits in the store, never only in
 * memory: a tick fans new events out into deliveries (webhooks.store*.ts: one node at a time),
 * lists the webhooks with deliveries due, and each such webhook's pump leases a few of them,
 * sends them (webhooks.send.ts) and writes their outcomes in batches.
 *
 * - Each webhook has its own pump with at most `concurrency` attempts in flight (one while it
 *   is failing: a dead or slow endpoint gets a probe, not a flood), so it never holds up
 *   another webhook; its backlog stays in the store, and memory holds only what is in flight.
 * - A lease outlives the longest attempt; a node that dies mid-delivery leaves leases that run
 *   out, and another node (or this one, restarted) sends again: at least once.
 * - The store and the outbox are read on a timer (`pollMs`) and at once when this process
 *   appended events (`wake`).
 */
import type { Logger } from '../shared'
import { matchEvents } from './webhooks.fanout'
import type { DeliveryOutcome } from './webhooks.retry'
import type { AttemptResult } from './webhooks.send'
import type { ClaimedDelivery, DueWebhook, WebhookStorePort } from './webhooks.store'
import { DELIVERY_TIMEOUT_MS, MAX_ATTEMPTS } from './webhooks.values'

export interface DispatcherOptions {
  store: WebhookStorePort
  send: (target: { url: string; secret: string }, eventId: string, body: string) => Promise<AttemptResult>
  /** The envelope of a claimed delivery's event. */
  render: (c: ClaimedDelivery & { data: string; created_at: number }) => string
  log: Logger
  now?: () => number
  pollMs?: number
  /** Attempts in flight per webhook and node while it answers. */
  concurrency?: number
  /** One node on its own store (SQLite): leases left by a previous run of this node end at start. */
  soleNode?: boolean
}

/** Events read per fan-out transaction; a tick runs a few while there are more. */
const FANOUT_BATCH = 500
const FANOUT_ROUNDS = 20
/** Outcomes are written at most this often, or at once when this many wait. */
const FLUSH_MS = 20
const FLUSH_AT = 200
const PURGE_EVERY_MS = 60_000
/** A lease covers one attempt's deadline and the write of its outcome. */
const LEASE_MS = DELIVERY_TIMEOUT_MS + 10_000
/** Minimum time between two logs of a failing tick. */
const TICK_LOG_MS = 60_000

export interface DispatcherStats {
  /** Attempts made, by result: a 2xx, or anything else. */
  delivered: number
  failedAttempts: number
  /** Deliveries out of attempts. */
  failed: number
  /** Webhooks disabled for failing 5 days. */
  disabled: number
  inFlight: number
}

export function createDispatcher(opts: DispatcherOptions) {
  const { store, log } = opts
  const now = opts.now ?? Date.now
  const pollMs = opts.pollMs ?? 250
  const concurrency = opts.concurrency ?? 16
  const node = `node_${crypto.randomUUID()}`
  const stats: DispatcherStats = { delivered: 0, failedAttempts: 0, failed: 0, disabled: 0, inFlight: 0 }
  let running = false
  let timer: ReturnType<typeof setInterval> | undefined
  let ticking: Promise<void> | null = null
  let tickAgain = false
  let wakeQueued = false
  let lastPurge = 0
  let tickLoggedAt = 0
  const outcomes: DeliveryOutcome[] = []
  let flushTimer: ReturnType<typeof setTimeout> | undefined
  let flushing: Promise<void> | null = null
  const settled = new Set<() => void>()

  interface Pump {
    target: DueWebhook
    inFlight: number
    claiming: boolean
    /** Listed by the last tick as having deliveries due. */
    active: boolean
    /** Its last attempt failed (here, or the store says so): one attempt at a time. */
    failing: boolean
  }
  const pumps = new Map<string, Pump>()

  function flushSoon() {
    if (outcomes.length >= FLUSH_AT) void flush()
    else flushTimer ??= setTimeout(() => void flush(), FLUSH_MS)
  }

  /** Writes the outcomes waiting, one batch at a time; a failed write keeps them for the next. */
  function flush(): Promise<void> {
    if (flushTimer) clearTimeout(flushTimer)
    flushTimer = undefined
    if (flushing) return flushing.then(() => (outcomes.length ? flush() : undefined))
    if (outcomes.length === 0) return Promise.resolve()
    const batch = outcomes.splice(0)
    flushing = (async () => {
      try {
        const disabled = await store.recordOutcomes(batch, node, now())
        for (const id of disabled) log.warn('webhook disabled: its deliveries have failed for 5 days', { webhook: id })
        stats.disabled += disabled.length
      } catch (e) {
        outcomes.unshift(...batch)
        log.warn('webhook outcomes not written; will retry', { outcomes: batch.length, error: String(e) })
        flushTimer ??= setTimeout(() => void flush(), 1000)
      } finally {
        flushing = null
        for (const fn of settled) fn()
      }
    })()
    return flushing
  }

  async function attempt(pump: Pump, c: ClaimedDelivery) {
    let result: AttemptResult
    if (c.data === null || c.created_at === null) result = { ok: false, status: null, error: 'the event is no longer stored' }
    else {
      const body = opts.render({ ...c, data: c.data, created_at: c.created_at })
      result = await opts.send(pump.target, c.event_id, body)
    }
    const at = now()
    outcomes.push({ webhookId: c.webhook_id, eventSeq: c.event_seq, attempts: c.attempts, ok: result.ok, responseStatus: result.status, at })
    if (result.ok) stats.delivered++
    else {
      stats.failedAttempts++
      if (c.attempts + 1 >= MAX_ATTEMPTS) stats.failed++
    }
    pump.failing = !result.ok
    flushSoon()
  }

  /** Leases more of the webhook's due deliveries while it has room, and sends them. */
  async function kick(id: string, pump: Pump) {
    const cap = pump.failing ? 1 : concurrency
    const room = cap - pump.inFlight
    // Leases are taken in chunks (half the room at least) to keep claims few at high rates.
    if (!running || !pump.active || pump.claiming || room <= 0 || (pump.inFlight > 0 && room < cap / 2)) return
    pump.claiming = true
    let claimed: ClaimedDelivery[] = []
    try {
      const t = now()
      claimed = await store.claim(id, node, t, t + LEASE_MS, room)
    } catch (e) {
      log.warn('webhook deliveries could not be leased', { webhook: id, error: String(e) })
    } finally {
      pump.claiming = false
    }
    if (claimed.length === 0) {
      pump.active = false
      return
    }
    for (const c of claimed) {
      pump.inFlight++
      stats.inFlight++
      void attempt(pump, c).finally(() => {
        pump.inFlight--
        stats.inFlight--
        for (const fn of settled) fn()
        void kick(id, pump)
      })
    }
  }

  async function tick() {
    try {
      for (let round = 0; round < FANOUT_ROUNDS; round++) {
        const r = await store.fanOut(now(), FANOUT_BATCH, matchEvents)
        if (r.read < FANOUT_BATCH) break
      }
      const due = await store.dueWebhooks(now())
      const listed = new Set<string>()
      for (const target of due) {
        listed.add(target.id)
        const pump = pumps.get(target.id) ?? { target, inFlight: 0, claiming: false, active: true, failing: target.failing_since !== null }
        pumps.set(target.id, pump)
        pump.target = target
        pump.active = true
        if (pump.inFlight === 0) pump.failing = target.failing_since !== null
        void kick(target.id, pump)
      }
      for (const [id, pump] of pumps) {
        if (listed.has(id)) continue
        pump.active = false
        if (pump.inFlight === 0 && !pump.claiming) pumps.delete(id)
      }
      if (now() - lastPurge >= PURGE_EVERY_MS) {
        lastPurge = now()
        await store.purge(lastPurge)
      }
    } catch (e) {
      if (now() - tickLoggedAt >= TICK_LOG_MS) {
        tickLoggedAt = now()
        log.warn('webhook dispatch failed; will retry', { error: String(e) })
      }
    }
  }

  /** Runs a tick, or one more right after the one running. */
  function runTick(): Promise<void> {
    if (!running) return Promise.resolve()
    if (ticking) {
      tickAgain = true
      return ticking
    }
    ticking = tick().finally(() => {
      ticking = null
      if (tickAgain) {
        tickAgain = false
        void runTick()
      }
    })
    return ticking
  }

  return {
    node,
    stats: (): DispatcherStats => ({ ...stats }),
    async start() {
      if (running) return
      if (opts.soleNode) await store.releaseLeases(null)
      running = true
      timer = setInterval(() => void runTick(), pollMs)
      void runTick()
    },
    /** New events were committed in this process: read the outbox now. */
    wake() {
      if (!running || wakeQueued) return
      wakeQueued = true
      setTimeout(() => {
        wakeQueued = false
        void runTick()
      }, 0)
    },
    /** Stops leasing; waits for attempts in flight (each has its deadline) and writes every outcome. */
    async stop() {
      if (!running) return
      running = false
      clearInterval(timer)
      await ticking
      while (stats.inFlight > 0) await new Promise<void>((resolve) => settled.add(resolve)).finally(() => settled.clear())
      await flush()
      while (outcomes.length) await flush()
    },
    /** Settles when nothing is in flight or waiting to be written (tests). */
    async idle() {
      while (stats.inFlight > 0 || outcomes.length || flushing) await new Promise<void>((resolve) => settled.add(resolve)).finally(() => settled.clear())
    },
    /** One tick now (tests, and `wake`). */
    tick: runTick,
  }
}
export type Dispatcher = ReturnType<typeof createDispatcher>
