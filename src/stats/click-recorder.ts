/**
 * Click capture off the hot path. A visit is merged in memory with identical visits
 * (same link, kind, referer, and the same cached User-Agent, location and UTM objects,
 * compared by id, so the key is cheap), and the merged rows are written in one
 * transaction per flush (every `flushMs`, or sooner at `maxBatch` rows) together with
 * each link's `clicks` and `lastClicked`, by a worker thread for a store file (inline
 * for an in-memory store). SIGTERM flushes everything; a kill -9 loses at most the
 * visits of one flush window (1 s by default).
 *
 * On PostgreSQL (`createPgClickRecorder`) each node writes its batches inline (the writing is
 * I/O, click-writer.pg.ts), one batch at a time. A failed write (PostgreSQL down) keeps its
 * rows, merged with the new ones, and the next flush tick writes them again, within the same
 * bound as SQLite (MAX_HELD_ROWS rows, MAX_HELD_BYTES bytes; beyond it visits are dropped and
 * counted in a warning).
 */
import type { Database } from 'bun:sqlite'
import type { SQL } from 'bun'
import { diskFullLogOf, isDiskFull, type Logger, workerSpec } from '../shared'
import type { ClickEvent } from './click-event'
import { createEventWriter } from './click-writer'
import { parseWriterFault } from './click-writer.faults'
import { createPgEventWriter, type PgEventWriterOptions } from './click-writer.pg'
import { createSupervisedWriter, type WriterHealth } from './click-writer.supervisor'

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
  /** The writer thread's state (SQLite); null where batches are written inline (PostgreSQL, in-memory stores). */
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

function rowBytes(key: string, r: ClickEvent): number {
  const strings = [key, r.domain, r.referer, r.refererUrl, r.region, r.city, r.utmSource, r.utmMedium, r.utmCampaign, r.utmTerm, r.utmContent]
  let n = ROW_OVERHEAD_BYTES
  for (const s of strings) n += 2 * (s?.length ?? 0)
  return n
}

function inlineSink(db: Database): RowSink {
  const write = createEventWriter(db)
  return { write: async (rows) => write(rows), close: async () => {} }
}

/** The worker thread's sink, watched: a writer that fails to open, dies or stops answering is replaced (click-writer.supervisor.ts). */
function workerSink(db: Database, path: string, log: Logger, opts: RecorderOptions): RowSink {
  const plan = parseWriterFault(opts.writerFault ?? process.env.SHORTLINK_TEST_WRITER_FAULT)
  return createSupervisedWriter<ClickEvent[]>({
    spawn: () => new Worker(workerSpec('stats/click-writer.worker.ts')),
    openMessage: (n) => ({ type: 'open', path, fault: plan && n <= plan.writers ? plan.fault : undefined }),
    inline: () => createEventWriter(db),
    log,
    name: 'click writer',
    answerMs: plan?.answerMs,
    stallMs: opts.writerStallMs,
  })
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
  }
}

export interface RecorderOptions {
  flushMs?: number
  maxBatch?: number
  maxHeldRows?: number
  maxHeldBytes?: number
  /** TEST ONLY: breaks the writer threads (click-writer.faults.ts); default SHORTLINK_TEST_WRITER_FAULT. */
  writerFault?: string
  /** How long a batch may wait for the writer thread before health() says it is stuck (tests shorten it). */
  writerStallMs?: number
}

export function createClickRecorder(db: Database, dbPath: string, log: Logger, opts: RecorderOptions = {}) {
  // The writer thread starts with the first batch.
  const sink: RowSink = dbPath === ':memory:' ? inlineSink(db) : workerSink(db, dbPath, log, opts)
  return recorderOver(
    () => sink,
    () => sink,
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
