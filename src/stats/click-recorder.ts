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
import { AppError, diskFullLogOf, isDiskFull, type Logger, workerSpec } from '../shared'
import type { ClickEvent } from './click-event'
import { parseWriterFault } from './click-writer.faults'
import { createPgEventWriter, type PgEventWriterOptions } from './click-writer.pg'
import { createSupervisedWriter, WriteFailedError, type WriterHealth } from './click-writer.supervisor'
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
}

export interface RecorderHealth {
  ok: boolean
  /** The writer thread's state (the events engine's worker); null where batches are written inline (PostgreSQL, in-memory stores). */
  writer: WriterHealth | null
  /** Visits recorded and not yet written. */
  pendingVisits: number
  /** Flushes failed in a row. */
  failedFlushes: number
}

export interface FlushSummary {
  visits: number
  byDomain: Map<string, number>
}

/** Where rows go: written in this thread, or posted to the writer worker. */
interface RowSink {
  write(rows: ClickEvent[]): Promise<void>
  close(): Promise<void>
  /** Whether the writer can take batches (a writer thread that was lost and is being replaced cannot). */
  health?(): WriterHealth
  /** Write inline from now on: stop() uses it when no writer thread is ready, so held clicks still get written. */
  goInline?(why: string): void
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
  /** TEST ONLY: breaks the writer threads (click-writer.faults.ts); default SHORTLINK_TEST_WRITER_FAULT. */
  writerFault?: string
  /** How long a batch may wait for the writer thread before health() says it is stuck (tests shorten it). */
  writerStallMs?: number
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
  const handle = dbPath === ':memory:' ? inlineSink(db, opts) : workerSink(db, dbPath, log, opts)
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

/**
 * The engine in this thread: on an in-memory DuckDB (tests), or on the store's events file when
 * its writer threads kept failing (click-writer.supervisor.ts).
 */
function inlineSink(db: Database, opts: EventsOptions, path = ':memory:', dataDir = tmpdir()): EventsHandle {
  let engine: Promise<EventsEngine> | null = null
  const open = () => {
    if (!engine) {
      const opening = openEventsEngine(db, {
        path,
        dataDir,
        threads: opts.threads ?? 1,
        memoryLimit: opts.memoryLimit,
        busyLinkClicks: opts.busyLinkClicks,
      })
      engine = opening
      // An open that failed (a full disk) is tried again by the next batch or read.
      opening.catch(() => {
        if (engine === opening) engine = null
      })
    }
    return engine
  }
  return {
    warm: () => void open().catch(() => {}),
    compact: async () => void (await (await open()).compact()),
    moved: async () => (await open()).imported(),
    backup: async (dest, whilePaused) => (await open()).backup(dest, whilePaused),
    exportTo: async (spec, dest) => (await open()).exportTo(spec, dest),
    write: async (rows) => (await open()).write(rows),
    async snapshot(read, timeoutMs) {
      let e: EventsEngine
      try {
        e = await open()
      } catch (err) {
        throw eventsUnavailable((err as Error).message)
      }
      return e.snapshot(read, timeoutMs)
    },
    close: async () => {
      if (engine) await (await engine).close()
      engine = null
    },
  }
}

/** A store the events engine could not open: statistics answer 503 saying so. */
const eventsUnavailable = (error: string) => new AppError('service_unavailable', `the events store cannot be opened: ${error}`, { 'Retry-After': '5' })

/**
 * The engine in its worker thread, watched (click-writer.supervisor.ts): a thread that fails to
 * open, dies or stops answering a batch is replaced, its unanswered batches are kept by the
 * recorder and written again, and after three lost in a row the engine runs on this thread.
 * Reads, backups and exports go to the same thread as the batches, and fail with it (503).
 */
function workerSink(db: Database, path: string, log: Logger, opts: EventsOptions): EventsHandle {
  const plan = parseWriterFault(opts.writerFault ?? process.env.SHORTLINK_TEST_WRITER_FAULT)
  let movedIn: () => void = () => {}
  const moved = new Promise<void>((resolve) => {
    movedIn = resolve
  })
  /** Backups paused in the worker until `whilePaused` has run here. */
  const pausedFor = new Map<number, () => void>()
  const writer = createSupervisedWriter<EventsHandle>({
    spawn: () => new Worker(workerSpec('stats/click-writer.worker.ts')),
    openMessage: (n): OpenMessage => ({
      type: 'open',
      path,
      eventsPath: eventsPathOf(path),
      dataDir: dirname(path),
      memoryLimit: opts.memoryLimit ?? '256MB',
      threads: opts.threads ?? 2,
      busyLinkClicks: opts.busyLinkClicks,
      fault: plan && n <= plan.writers ? plan.fault : undefined,
    }),
    inline: () => {
      const inline = inlineSink(db, opts, eventsPathOf(path), dirname(path))
      void inline.moved().then(movedIn, () => {})
      return inline
    },
    onMessage: (m) => {
      if (m.type === 'log') log.info(m.message as string, m.fields as Record<string, unknown>)
      else if (m.type === 'imported') movedIn()
      else if (m.type === 'paused') pausedFor.get(m.id as number)?.()
    },
    log,
    name: 'click writer',
    answerMs: plan?.answerMs,
    stallMs: opts.writerStallMs,
  })
  /** A writer thread's channel, or the engine on this thread. */
  const connect = async () => {
    const c = await writer.connect()
    return 'channel' in c ? { channel: c.channel, inline: null } : { channel: null, inline: c.inline }
  }
  return {
    warm: () =>
      void connect()
        .then((c) => c.inline?.warm())
        .catch((e) => log.error('cannot open the events store', { file: eventsPathOf(path), error: String(e) })),
    async write(rows) {
      const { channel, inline } = await connect()
      if (inline) return inline.write(rows)
      await channel.ask({ type: 'write', events: rows }, { watched: true })
    },
    async compact() {
      const { channel, inline } = await connect()
      if (inline) return inline.compact()
      await channel.ask({ type: 'compact' })
    },
    async moved() {
      const { inline } = await connect()
      if (inline) return inline.moved()
      await moved
    },
    async exportTo(spec, dest) {
      const { channel, inline } = await connect()
      if (inline) return inline.exportTo(spec, dest)
      await channel.ask({ type: 'export', spec, dest })
    },
    async backup(dest, whilePaused) {
      const { channel, inline } = await connect()
      if (inline) return inline.backup(dest, whilePaused)
      const id = snapshotIds++
      let failed: unknown = null
      pausedFor.set(id, () => {
        pausedFor.delete(id)
        Promise.resolve()
          .then(whilePaused)
          .catch((e) => {
            failed = e
          })
          .finally(() => channel.post({ type: 'resume', id }))
      })
      try {
        const result = await channel.ask<{ bytes: number; batch: number }>({ type: 'backup', dest, id })
        if (failed) throw failed
        return result
      } finally {
        pausedFor.delete(id)
      }
    },
    async snapshot(read, timeoutMs = 0) {
      const { channel, inline } = await connect()
      if (inline) return inline.snapshot(read, timeoutMs)
      let begun: { id: number; rolled: Rolled; legacy: boolean }
      const id = snapshotIds++
      try {
        begun = { id, ...(await channel.ask<{ rolled: Rolled; legacy: boolean }>({ type: 'begin', id })) }
      } catch (e) {
        // The events store could not open, or its thread was lost: 503, tried again by the next read.
        if (e instanceof WriteFailedError) throw eventsUnavailable(e.message)
        throw e
      }
      let timedOut = false
      const timer =
        timeoutMs > 0
          ? setTimeout(() => {
              timedOut = true
              channel.post({ type: 'interrupt', id })
            }, timeoutMs)
          : null
      const tx: ReadTx = {
        rolled: begun.rolled,
        legacy: begun.legacy,
        interrupt: () => channel.post({ type: 'interrupt', id }),
        run: (statements) => channel.ask({ type: 'run', id, statements }),
      }
      try {
        return await read(tx)
      } catch (e) {
        if (timedOut) throw new QueryTimeoutError(timeoutMs)
        if (e instanceof WriteFailedError && /thread/.test(e.message)) throw eventsUnavailable(e.message)
        throw e
      } finally {
        if (timer) clearTimeout(timer)
        channel.post({ type: 'end', id })
      }
    },
    health: () => writer.health(),
    goInline: (why) => writer.goInline(why),
    async close() {
      const inline = await writer.close()
      await inline?.close()
    },
  }
}

/** Ids of snapshots and backups in the worker (one numbering across writer threads). */
let snapshotIds = 1

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
    { quietRetries: true },
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
        if (failures > 0) diskFullLogOf(log).recovered('clicks')
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
        // A full disk is one outage for the API and the clicks alike: said once a minute (shared/disk-full.ts).
        if (isDiskFull(e)) diskFullLogOf(log).report('clicks', e)
        else if (!mode.quietRetries || failures === 1 || now - failureLoggedAt >= RETRY_LOG_MS) {
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

  const pendingCount = () => visitsOf(pending.values()) + [...inFlight].reduce((n, b) => n + visitsOf(b.rows), 0)

  return {
    record(v: Visit) {
      const key = `${v.linkSeq}|${v.scan ? 1 : 0}|${v.visitor.id}|${v.geo.id}|${v.utm.id}|${v.refererUrl ?? ''}`
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
    pendingCount,
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
      // No writer thread ready (lost, still starting, or stuck on a batch), now or while stopping:
      // what is held is written on this thread instead of waiting for one.
      const sink = openedSink()
      const noWriter = () => {
        if (sink?.health && !sink.health().ok) sink.goInline?.('stopping with no writer thread ready')
      }
      noWriter()
      const watch = sink?.health ? setInterval(noWriter, 100) : null
      const deadline = mode.stopWaitMs === undefined ? Number.POSITIVE_INFINITY : Date.now() + mode.stopWaitMs
      for (let round = 0; round < 5 && (pending.size || inFlight.size) && Date.now() < deadline; round++) {
        const written = flush().then(() => Promise.all([...inFlight].map((b) => b.done)))
        await (deadline === Number.POSITIVE_INFINITY ? written : until(written, deadline))
      }
      if (watch) clearInterval(watch)
      const unwritten = pendingCount()
      if (unwritten > 0) log.error('click capture stopped with visits it could not write', { visits: unwritten })
      await openedSink()?.close()
    },
    /**
     * For /readyz and metrics: `ok` while the writer can take batches (a writer thread that
     * was lost and is being replaced, or one stuck on a batch, cannot; where batches are
     * written inline, while flushes succeed); the visits held in memory; the flushes failed in
     * a row (a full disk, an unreachable store).
     */
    health(): RecorderHealth {
      const writer = openedSink()?.health?.() ?? null
      return { ok: writer?.ok ?? failures === 0, writer, pendingVisits: pendingCount(), failedFlushes: failures }
    },
    onFlush(fn: (s: FlushSummary) => void) {
      afterFlush.push(fn)
    },
    flushMs,
  }
}
export type ClickRecorder = ReturnType<typeof recorderOver>
