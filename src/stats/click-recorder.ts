/**
 * Click capture off the hot path. A visit is merged in memory with identical visits
 * (same link, kind, referer, and the same cached User-Agent, location and UTM objects,
 * compared by id, so the key is cheap), and the merged rows are written in one
 * batch per flush (every `flushMs`, or sooner at `maxBatch` rows) by the events engine
 * (events.engine.ts: the events in DuckDB, then each link's `clicks` and `lastClicked` in
 * SQLite), in its worker thread for a store file (inline for an in-memory store). SIGTERM flushes everything; a kill -9 loses at most the
 * visits of one flush window (1 s by default).
 *
 * On PostgreSQL (`createPgClickRecorder`) each node writes its batches inline (the writing is
 * I/O, click-writer.pg.ts), one batch at a time. A failed write (PostgreSQL down) keeps its
 * rows, merged with the new ones, and the next flush tick writes them again, within the same
 * bound as SQLite (MAX_HELD_ROWS rows, MAX_HELD_BYTES bytes; beyond it visits are dropped and
 * counted in a warning).
 */
import type { Database } from 'bun:sqlite'
import { tmpdir } from 'node:os'
import { basename, dirname, join } from 'node:path'
import type { SQL } from 'bun'
import { metrics } from '../metrics'
import { AppError, type Logger, workerSpec } from '../shared'
import type { ClickEvent } from './click-event'
import { createPgEventWriter, type PgEventWriterOptions } from './click-writer.pg'
import type { OpenMessage } from './click-writer.worker'
import { type EventsEngine, openEventsEngine, QueryTimeoutError, type ReadTx, type Rolled } from './events.engine'
import type { ResolvedExportSpec } from './events.export'
import type { EventsReadPort } from './stats.store.events'

export type { ClickEvent } from './click-event'

/** Dimensions shared by many visits; `id` tells equal objects apart without comparing fields. */
export interface VisitDimensions {
  visitor: { id: number; os: string; browser: string; device: string }
  geo: Location & { id: number; resolved?: Promise<Location> }
  utm: { id: number; source: string | null; medium: string | null; campaign: string | null; term: string | null; content: string | null }
}

/** Where a visit came from; `resolved` (see geo's GeoLocation) when still being looked up. */
type Location = { continent: string | null; country: string | null; region: string | null; city: string | null }

export interface Visit extends VisitDimensions {
  linkSeq: number
  domain: string
  at: number
  scan: boolean
  referer: string | null
  refererUrl: string | null
  /** The A/B test variant the visit went to (its index in `testVariants`), else null/absent. */
  variant?: number | null
}

export interface FlushSummary {
  visits: number
  byDomain: Map<string, number>
}

/** Where rows go: written in this thread, or posted to the writer worker. */
interface RowSink {
  write(rows: ClickEvent[]): Promise<void>
  close(): Promise<void>
}

/**
 * Unwritten rows (pending and in flight) held at most, by count and estimated bytes: a
 * store that keeps failing, or visits that each need a row of their own (random
 * referers), must not grow the heap without end. Beyond it, a visit that would need a
 * new row is dropped and counted in a warning; visits that merge into a held row still count.
 */
const MAX_HELD_ROWS = 100_000
const MAX_HELD_BYTES = 64 * 2 ** 20
/** A row object, its map entry and merge key, without its variable strings. */
const ROW_OVERHEAD_BYTES = 400

const clicksDropped = metrics.counter(
  'shortlink_clicks_dropped_total',
  'Counted visits dropped because the unwritten clicks held in memory were at their bound.',
)

function rowBytes(key: string, r: ClickEvent): number {
  const strings = [key, r.domain, r.referer, r.refererUrl, r.region, r.city, r.utmSource, r.utmMedium, r.utmCampaign, r.utmTerm, r.utmContent]
  let n = ROW_OVERHEAD_BYTES
  for (const s of strings) n += 2 * (s?.length ?? 0)
  return n
}

/** The events engine's options from the config ([stats]). */
export interface EventsOptions {
  memoryLimit?: string
  threads?: number
  /** Tests: clicks from which a link gets per-day dimension rollups. */
  busyLinkClicks?: number
}

/**
 * The events engine of a single node (events.engine.ts), as the recorder's sink and the
 * statistics' reads: in this thread for an in-memory store (tests), else in its worker. Opened
 * on first use (a CLI command that never records or reads statistics never opens the DuckDB
 * file a running server holds), or by `warm()`.
 */
export interface EventsHandle extends RowSink, EventsReadPort {
  warm(): void
  /** Rolls up the hours closed since the last time and promotes busy links now (benchmarks, tests). */
  compact(): Promise<void>
  /** Settles once open and, after an upgrade, once the previous release's events are all moved in. */
  moved(): Promise<void>
  /**
   * A consistent copy of the events store at `dest` (a new file), taken between two batches;
   * `whilePaused` runs after the copy and before writing resumes (copy SQLite there: both then
   * hold the same batches). Restore with `restoreEventsStore`.
   */
  backup(dest: string, whilePaused?: () => Promise<void> | void): Promise<{ bytes: number; batch: number }>
  /** Writes the raw export of `spec` into the file `dest` (GET /statistics/events). */
  exportTo(spec: ResolvedExportSpec, dest: string): Promise<void>
}

/** The DuckDB file of a SQLite store: `events.duckdb` beside `shortlink.db` (any other name: `<name>.events.duckdb`). */
export function eventsPathOf(dbPath: string): string {
  const name = basename(dbPath)
  return join(dirname(dbPath), name === 'shortlink.db' ? 'events.duckdb' : `${name.replace(/\.db$/, '')}.events.duckdb`)
}

export function createEventsHandle(db: Database, dbPath: string, log: Logger, opts: EventsOptions = {}): EventsHandle {
  const handle = dbPath === ':memory:' ? inlineSink(db, opts) : workerSink(dbPath, log, opts)
  return { ...handle, write: groupCommit(handle.write) }
}

/**
 * One batch in flight at a time; the rows handed over meanwhile go together in the next one
 * (each batch costs a DuckDB and a SQLite commit whatever its size: under load, batches grow
 * instead of queueing). Every caller's promise settles with the batch its rows went in.
 */
function groupCommit(write: (rows: ClickEvent[]) => Promise<void>): (rows: ClickEvent[]) => Promise<void> {
  let inFlight = false
  let queued: ClickEvent[] = []
  let next: PromiseWithResolvers<void> | null = null
  const pump = () => {
    const rows = queued
    const done = next!
    queued = []
    next = null
    inFlight = true
    write(rows)
      .then(done.resolve, done.reject)
      .finally(() => {
        inFlight = false
        if (queued.length) pump()
      })
  }
  return (rows) => {
    for (const r of rows) queued.push(r)
    next ??= Promise.withResolvers<void>()
    const settled = next.promise
    if (!inFlight) pump()
    return settled
  }
}

/** The engine in this thread, on an in-memory DuckDB (tests). */
function inlineSink(db: Database, opts: EventsOptions): EventsHandle {
  let engine: Promise<EventsEngine> | null = null
  const open = () => {
    engine ??= openEventsEngine(db, {
      path: ':memory:',
      dataDir: tmpdir(),
      threads: opts.threads ?? 1,
      memoryLimit: opts.memoryLimit,
      busyLinkClicks: opts.busyLinkClicks,
    })
    return engine
  }
  return {
    warm: () => void open(),
    compact: async () => void (await (await open()).compact()),
    moved: async () => (await open()).imported(),
    backup: async (dest, whilePaused) => (await open()).backup(dest, whilePaused),
    exportTo: async (spec, dest) => (await open()).exportTo(spec, dest),
    write: async (rows) => (await open()).write(rows),
    snapshot: async (read, timeoutMs) => (await open()).snapshot(read, timeoutMs),
    close: async () => {
      if (engine) await (await engine).close()
      engine = null
    },
  }
}

/** A store the events engine could not open: statistics answer 503 saying so. */
const eventsUnavailable = (error: string) => new AppError('service_unavailable', `the events store cannot be opened: ${error}`, { 'Retry-After': '5' })

function workerSink(path: string, log: Logger, opts: EventsOptions): EventsHandle {
  let worker: Worker | null = null
  let opened: Promise<void> | null = null
  let nextId = 1
  const waiting = new Map<number, { resolve: (v: unknown) => void; reject: (e: Error) => void }>()
  let closed: (() => void) | null = null
  let movedIn: () => void = () => {}
  /** Backups paused in the worker until `whilePaused` has run here. */
  const pausedFor = new Map<number, () => void>()
  const moved = new Promise<void>((resolve) => {
    movedIn = resolve
  })
  const settle = (id: number, value: unknown, error?: string) => {
    const w = waiting.get(id)
    waiting.delete(id)
    if (error === undefined) w?.resolve(value)
    else w?.reject(new Error(error))
  }
  const ask = <T>(message: Record<string, unknown>, id = nextId++): Promise<T> =>
    new Promise<T>((resolve, reject) => {
      waiting.set(id, { resolve: resolve as (v: unknown) => void, reject })
      worker!.postMessage({ ...message, id: message.id ?? id, req: id })
    })
  const open = () => {
    opened ??= new Promise<void>((resolve, reject) => {
      worker = new Worker(workerSpec('stats/click-writer.worker.ts'))
      worker.onmessage = (ev: MessageEvent) => {
        const m = ev.data
        if (m.type === 'opened') resolve()
        else if (m.type === 'open-failed') reject(new Error(m.error))
        else if (m.type === 'written') settle(m.id, undefined)
        else if (m.type === 'failed') settle(m.id, undefined, m.error)
        else if (m.type === 'begun') settle(m.id, { rolled: m.rolled, legacy: m.legacy })
        else if (m.type === 'begin-failed') settle(m.id, undefined, m.error)
        else if (m.type === 'rows') settle(m.req, m.rows)
        else if (m.type === 'run-failed') settle(m.req, undefined, m.error)
        else if (m.type === 'log') log.info(m.message, m.fields)
        else if (m.type === 'imported') movedIn()
        else if (m.type === 'paused') pausedFor.get(m.id)?.()
        else if (m.type === 'backed-up') settle(m.id, m.result)
        else if (m.type === 'closed') closed?.()
      }
      const msg: OpenMessage = {
        type: 'open',
        path,
        eventsPath: eventsPathOf(path),
        dataDir: dirname(path),
        memoryLimit: opts.memoryLimit ?? '256MB',
        threads: opts.threads ?? 2,
        busyLinkClicks: opts.busyLinkClicks,
      }
      worker.postMessage(msg)
    })
    return opened
  }
  return {
    warm: () => void open().catch((e) => log.error('cannot open the events store', { file: eventsPathOf(path), error: String(e) })),
    async write(rows) {
      await open()
      const id = nextId++
      await ask({ type: 'write', events: rows }, id)
    },
    async compact() {
      await open()
      await ask({ type: 'compact' })
    },
    async moved() {
      await open()
      await moved
    },
    async exportTo(spec, dest) {
      await open()
      const id = nextId++
      await ask({ type: 'export', spec, dest }, id)
    },
    async backup(dest, whilePaused) {
      await open()
      const id = nextId++
      let failed: unknown = null
      pausedFor.set(id, () => {
        pausedFor.delete(id)
        Promise.resolve()
          .then(whilePaused)
          .catch((e) => {
            failed = e
          })
          .finally(() => worker!.postMessage({ type: 'resume', id }))
      })
      const result = await ask<{ bytes: number; batch: number }>({ type: 'backup', dest }, id)
      if (failed) throw failed
      return result
    },
    async snapshot(read, timeoutMs = 0) {
      try {
        await open()
      } catch (e) {
        throw eventsUnavailable((e as Error).message)
      }
      const id = nextId++
      const { rolled, legacy } = await ask<{ rolled: Rolled; legacy: boolean }>({ type: 'begin' }, id)
      let timedOut = false
      const timer =
        timeoutMs > 0
          ? setTimeout(() => {
              timedOut = true
              worker!.postMessage({ type: 'interrupt', id })
            }, timeoutMs)
          : null
      const tx: ReadTx = {
        rolled,
        legacy,
        interrupt: () => worker!.postMessage({ type: 'interrupt', id }),
        run: (statements) => ask({ type: 'run', id, statements }),
      }
      try {
        return await read(tx)
      } catch (e) {
        if (timedOut) throw new QueryTimeoutError(timeoutMs)
        throw e
      } finally {
        if (timer) clearTimeout(timer)
        worker!.postMessage({ type: 'end', id })
      }
    },
    async close() {
      if (!opened) return
      await opened.catch(() => {})
      await new Promise<void>((resolve) => {
        closed = resolve
        worker!.postMessage({ type: 'close' })
      })
      worker!.terminate()
      opened = null
    },
  }
}

export function toRow(v: Visit): ClickEvent {
  return {
    linkSeq: v.linkSeq,
    domain: v.domain,
    at: v.at,
    scan: v.scan,
    continent: v.geo.continent,
    country: v.geo.country,
    region: v.geo.region,
    city: v.geo.city,
    os: v.visitor.os,
    browser: v.visitor.browser,
    device: v.visitor.device,
    referer: v.referer,
    refererUrl: v.refererUrl,
    utmSource: v.utm.source,
    utmMedium: v.utm.medium,
    utmCampaign: v.utm.campaign,
    utmTerm: v.utm.term,
    utmContent: v.utm.content,
    n: 1,
    variant: v.variant ?? null,
  }
}

export interface RecorderOptions {
  flushMs?: number
  maxBatch?: number
  maxHeldRows?: number
  maxHeldBytes?: number
}

/** The recorder of a single node: batches written by the events engine (`events`, createEventsHandle). */
export function createClickRecorder(events: EventsHandle, log: Logger, opts: RecorderOptions = {}) {
  return recorderOver(
    () => events,
    () => events,
    log,
    opts,
  )
}

/**
 * The recorder of a node on PostgreSQL: batches written inline through `sql`, one at a time
 * (while one is being written, the next flush waits for it; the rows keep merging). A failed
 * write keeps its rows for the next tick, and its errors are logged once per outage and
 * then once a minute, not every second. `stop()` writes what it can and does not close `sql`.
 */
export function createPgClickRecorder(sql: SQL, log: Logger, opts: RecorderOptions & PgEventWriterOptions & { stopWaitMs?: number } = {}): ClickRecorder {
  const write = createPgEventWriter(sql, opts)
  const sink: RowSink = { write, close: async () => {} }
  return recorderOver(
    () => sink,
    () => sink,
    log,
    opts,
    { oneWriteAtATime: true, quietRetries: true, stopWaitMs: opts.stopWaitMs ?? STOP_WAIT_MS },
  )
}

/**
 * How long stop() waits for PostgreSQL on a SIGTERM: a write stuck on an unanswering server
 * must not keep the process from exiting (what is still held is logged as lost).
 */
const STOP_WAIT_MS = 10_000

/** `promise`, or nothing once `deadline` (epoch ms) has passed. */
function until(promise: Promise<unknown>, deadline: number): Promise<unknown> {
  let timer: ReturnType<typeof setTimeout> | undefined
  const expired = new Promise((resolve) => {
    timer = setTimeout(resolve, Math.max(0, deadline - Date.now()))
  })
  return Promise.race([promise, expired]).finally(() => clearTimeout(timer))
}

/** Minimum time between two logs of the same failing streak (quietRetries). */
const RETRY_LOG_MS = 60_000

function recorderOver(
  sinkOf: () => RowSink,
  openedSink: () => RowSink | null,
  log: Logger,
  opts: RecorderOptions,
  mode: { oneWriteAtATime?: boolean; quietRetries?: boolean; stopWaitMs?: number } = {},
) {
  const flushMs = opts.flushMs ?? 1000
  const maxBatch = opts.maxBatch ?? 1000
  const maxHeldRows = opts.maxHeldRows ?? MAX_HELD_ROWS
  const maxHeldBytes = opts.maxHeldBytes ?? MAX_HELD_BYTES
  /** A flush asked for while a write was in flight (oneWriteAtATime): run when it succeeds. */
  let flushWanted = false
  /** Failed writes in a row, and when the last was logged (quietRetries). */
  let failures = 0
  let failureLoggedAt = 0
  /** Rows not yet handed to the writer, by merge key. */
  let pending = new Map<string, ClickEvent>()
  let pendingBytes = 0
  /** Rows handed to the writer and not yet confirmed, with their write promises. */
  const inFlight = new Set<{ rows: ClickEvent[]; bytes: number; done: Promise<void> }>()
  let inFlightRows = 0
  let inFlightBytes = 0
  /** Visits dropped since the last warning because the held rows were at their bound. */
  let dropped = 0
  let timer: ReturnType<typeof setInterval> | null = null
  let flushQueued = false
  const afterFlush: ((s: FlushSummary) => void)[] = []
  /** Held rows whose location was still being looked up when recorded (the first visits after a start). */
  const awaitingLocation = new Map<ClickEvent, Promise<Location>>()

  /** Fills in the locations of the rows that were recorded before the GeoIP database was loaded. */
  async function locate(rows: ClickEvent[]): Promise<void> {
    const waits: Promise<void>[] = []
    for (const r of rows) {
      const resolved = awaitingLocation.get(r)
      if (!resolved) continue
      awaitingLocation.delete(r)
      waits.push(
        resolved.then((g) => {
          r.continent = g.continent
          r.country = g.country
          r.region = g.region
          r.city = g.city
        }),
      )
    }
    await Promise.all(waits)
  }

  function written(rows: ClickEvent[]) {
    const byDomain = new Map<string, number>()
    let visits = 0
    for (const r of rows) {
      byDomain.set(r.domain, (byDomain.get(r.domain) ?? 0) + r.n)
      visits += r.n
    }
    for (const hook of afterFlush) {
      try {
        hook({ visits, byDomain })
      } catch (e) {
        log.error('after-flush hook failed', { error: String(e) })
      }
    }
  }

  /** Holds a new row unless the bound is reached; false when it was dropped. */
  function hold(key: string, row: ClickEvent): boolean {
    const bytes = rowBytes(key, row)
    if (pending.size + inFlightRows >= maxHeldRows || pendingBytes + inFlightBytes + bytes > maxHeldBytes) {
      dropped += row.n
      clicksDropped.inc(row.n)
      return false
    }
    pending.set(key, row)
    pendingBytes += bytes
    return true
  }

  function add(key: string, row: ClickEvent) {
    const cur = pending.get(key)
    if (cur) {
      cur.n += row.n
      if (row.at > cur.at) cur.at = row.at
    } else hold(key, row)
  }

  /** Hands the pending rows to the writer; resolves when they are written (or re-queued on failure). */
  function flush(): Promise<void> {
    flushQueued = false
    if (dropped > 0) {
      log.warn('click capture at its memory bound; visits dropped', { visits: dropped, maxHeldRows, maxHeldBytes })
      dropped = 0
    }
    if (pending.size === 0) return Promise.resolve()
    if (mode.oneWriteAtATime && inFlight.size > 0) {
      flushWanted = true
      return Promise.all([...inFlight].map((b) => b.done)).then(() => {})
    }
    const batch = pending
    const entry = { rows: [...batch.values()], bytes: pendingBytes, done: Promise.resolve() }
    pending = new Map()
    pendingBytes = 0
    inFlightRows += entry.rows.length
    inFlightBytes += entry.bytes
    const release = () => {
      if (!inFlight.delete(entry)) return
      inFlightRows -= entry.rows.length
      inFlightBytes -= entry.bytes
    }
    const write = () => sinkOf().write(entry.rows)
    entry.done = (awaitingLocation.size ? locate(entry.rows).then(write) : write()).then(
      () => {
        release()
        if (failures > 0 && mode.quietRetries) log.info('click flush succeeded again', { failedFlushes: failures })
        failures = 0
        written(entry.rows)
        if (flushWanted) {
          flushWanted = false
          setImmediate(flush)
        }
      },
      (e) => {
        // Keep them for the next attempt (e.g. the store was busy); never fail a redirect.
        release()
        for (const [k, r] of batch) add(k, r)
        failures++
        const now = Date.now()
        if (!mode.quietRetries || failures === 1 || now - failureLoggedAt >= RETRY_LOG_MS) {
          failureLoggedAt = now
          log.error('click flush failed; will retry', { rows: entry.rows.length, failedFlushes: failures, error: String(e) })
        }
      },
    )
    inFlight.add(entry)
    return entry.done
  }

  const visitsOf = (rows: Iterable<ClickEvent>, linkSeq?: number) => {
    let n = 0
    for (const r of rows) if (linkSeq === undefined || r.linkSeq === linkSeq) n += r.n
    return n
  }

  return {
    record(v: Visit) {
      const key = `${v.linkSeq}|${v.scan ? 1 : 0}|${v.visitor.id}|${v.geo.id}|${v.utm.id}|${v.refererUrl ?? ''}${v.variant == null ? '' : `|v${v.variant}`}`
      const cur = pending.get(key)
      if (cur) {
        cur.n++
        cur.at = v.at
        return
      }
      const row = toRow(v)
      if (!hold(key, row)) return
      if (v.geo.resolved) awaitingLocation.set(row, v.geo.resolved)
      if (pending.size >= maxBatch && !flushQueued) {
        flushQueued = true
        setImmediate(flush)
      }
    },
    flush,
    /** Resolves once every visit recorded before the call is written (a backup's barrier). */
    async drain(): Promise<void> {
      await flush()
      await Promise.all([...inFlight].map((b) => b.done))
    },
    /** Visits recorded but not yet written. */
    pendingCount: () => visitsOf(pending.values()) + [...inFlight].reduce((n, b) => n + visitsOf(b.rows), 0),
    /** Rows held in memory (pending and in flight) and their estimated bytes. */
    held: () => ({ rows: pending.size + inFlightRows, bytes: pendingBytes + inFlightBytes }),
    /** Visits of one link recorded but not yet written. */
    pendingFor: (linkSeq: number) => visitsOf(pending.values(), linkSeq) + [...inFlight].reduce((n, b) => n + visitsOf(b.rows, linkSeq), 0),
    start() {
      timer ??= setInterval(flush, flushMs)
    },
    /** Stops the timer, writes everything still pending or in flight, and closes the writer. */
    async stop(): Promise<void> {
      if (timer) clearInterval(timer)
      timer = null
      const deadline = mode.stopWaitMs === undefined ? Number.POSITIVE_INFINITY : Date.now() + mode.stopWaitMs
      for (let round = 0; round < 5 && (pending.size || inFlight.size) && Date.now() < deadline; round++) {
        const written = flush().then(() => Promise.all([...inFlight].map((b) => b.done)))
        await (deadline === Number.POSITIVE_INFINITY ? written : until(written, deadline))
      }
      const unwritten = visitsOf(pending.values()) + [...inFlight].reduce((n, b) => n + visitsOf(b.rows), 0)
      if (unwritten > 0) log.error('click capture stopped with visits it could not write', { visits: unwritten })
      await openedSink()?.close()
    },
    onFlush(fn: (s: FlushSummary) => void) {
      afterFlush.push(fn)
    },
    flushMs,
  }
}
export type ClickRecorder = ReturnType<typeof recorderOver>
