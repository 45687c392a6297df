/**
 * Click capture off the hot path. A visit's fields are pushed into a preallocated buffer
 * (visit-buffer.ts): nothing else happens on the request. The flush side (`mergeBuffered`: at
 * every flush, and every `mergeAt` visits in a task of its own) merges the buffered visits
 * with identical ones (same link, kind, referer URL, and the same cached User-Agent, location
 * and UTM objects, compared by id; the referer URL by a number given to it), and the merged
 * rows are written in one batch per flush (every `flushMs`, or sooner at `maxBatch` rows) by the events engine
 * (events.engine.ts: the events in DuckDB, then each link's `clicks` and `lastClicked` in
 * SQLite), in its worker thread for a store file (inline for an in-memory store), one write at a
 * time: while one is written the rows keep merging, and the next write takes them all (up to
 * MAX_WRITE_ROWS), so a busy server writes fewer, larger batches. On
 * PostgreSQL (`createPgClickRecorder`) each node writes its batches inline (the writing is
 * I/O, click-writer.pg.ts), one transaction at a time, the next batch prepared meanwhile.
 *
 * No visit is dropped when the store falls behind or fails (`recorderOver`): rows beyond the
 * memory bound (MAX_HELD_ROWS, MAX_HELD_BYTES), rows of a failed write, and rows that waited a
 * flush window behind a write still in flight (or, prepared, for their turn) go to the click journal in the data dir
 * (click-journal.ts), which is written back to the store, chunk by chunk, exactly once, as it
 * keeps up. SIGTERM writes what it can and journals the rest; a kill -9 loses at most the
 * visits of one flush window (1 s by default).
 */
import type { Database } from 'bun:sqlite'
import { tmpdir } from 'node:os'
import { basename, dirname, join } from 'node:path'
import type { SQL } from 'bun'
import { metrics } from '../metrics'
import { AppError, diskFullLogOf, isDiskFull, type Logger, workerSpec } from '../shared'
import { columnsOf, transferOf } from './click-columns'
import type { ClickEvent } from './click-event'
import { type ClickJournal, type JournalChunk, type JournalMark, openClickJournal } from './click-journal'
import { parseWriterFault } from './click-writer.faults'
import { createPgEventWriter, type PgEventWriterOptions, pgJournalMark, type WriteTurn } from './click-writer.pg'
import { createSupervisedWriter, WriteFailedError, type WriterHealth } from './click-writer.supervisor'
import type { OpenMessage } from './click-writer.worker'
import { type EventsEngine, openEventsEngine, QueryTimeoutError, type ReadTx, type Rolled } from './events.engine'
import type { ResolvedExportSpec } from './events.export'
import { createPairRoller } from './stats.pairs.pg'
import type { EventsReadPort } from './stats.store.events'
import { TrackedIds } from './tracked-ids'
import { VisitBuffer } from './visit-buffer'

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
  /** Conversion tracking's click id (`sl_id`): it merges like any other visit, its id and time going into the row's `tracked`. */
  clickId?: string | null
  /** The A/B test variant the visit went to (its index in `testVariants`), else null/absent. */
  variant?: number | null
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

/**
 * Where rows go: written in this thread, or posted to the writer worker. With a `mark` (a
 * journal chunk, click-journal.ts) the store writes the rows and the mark in one transaction,
 * or nothing when the mark is already applied: it then answers false.
 */
interface RowSink {
  write(rows: ClickEvent[], mark?: JournalMark, turn?: WriteTurn): Promise<boolean | undefined>
  close(): Promise<void>
  /** Whether the writer can take batches (a writer thread that was lost and is being replaced cannot). */
  health?(): WriterHealth
  /** Write inline from now on: stop() uses it when no writer thread is ready, so held clicks still get written. */
  goInline?(why: string): void
}

/** A write handed to the sink and not yet ended. */
interface InFlightWrite {
  rows: ClickEvent[]
  done: Promise<void>
  /** When it was handed over (epoch ms). */
  since: number
  /** Rows read back from the journal. */
  chunk?: JournalChunk
  /** Ready for its transaction (writeAhead); `started`: in it, no longer cancellable. */
  prepared: boolean
  started: boolean
  /** Taken back before its transaction: its rows went to the journal, and the sink skips it. */
  cancelled: boolean
  cancel(): void
}

/**
 * Unwritten rows (pending and in flight) held in memory at most, by count and estimated bytes:
 * a store that keeps failing, or visits that each need a row of their own (random referers),
 * must not grow the heap without end. Beyond it, a visit that would need a new row goes to
 * the click journal in the data dir (click-journal.ts), written to the store once it keeps up
 * again; visits that merge into a held row still count. Without a journal (an in-memory store)
 * such a visit is dropped and counted in a warning.
 */
const MAX_HELD_ROWS = 100_000
const MAX_HELD_BYTES = 64 * 2 ** 20
/** One tracked click of a held row, as its `tracked` text will hold it (id and separator; bytes in TrackedIds until then). */
const TRACKED_CLICK_BYTES = 2 * 24

/** A row object, its map entry and merge key, without its variable strings. */
const ROW_OVERHEAD_BYTES = 400
/** Buffered visits merged into rows in a task of their own at most this many at a time (and at every flush). */
const MERGE_AT = 1024
/**
 * Referer URLs numbered for merge keys at most (the numbering starts again whenever the pending rows go to a
 * write); past it, it starts again while rows are held (numbers are never reused: a held row then only misses
 * visits of its URL merging into it).
 */
const MAX_REFERER_IDS = 100_000
/**
 * Rows per write at most: under load the pending rows pile up while a write is in flight, and one
 * transaction of 100,000 rows holds its locks (the all-links rollup rows every node shares) and
 * the writer's thread for seconds; the rest waits for the next write (or the journal).
 */
const MAX_WRITE_ROWS = 20_000
/**
 * On PostgreSQL a write pays ~0.3 s whatever its size (the rollup upserts, numbering new strings),
 * so one node wrote 31,320 clicks/s (median of 3) in writes of 20,000 rows and 41,441 in writes of
 * 50,000 (~1.1 s each; three nodes together 34,691 → 38,801): scripts/bench/pg-click-ingest.ts.
 */
const PG_MAX_WRITE_ROWS = 50_000
/** Bytes of journal lines read back per write (~15,000 rows of ~250 bytes). */
const JOURNAL_CHUNK_BYTES = 4 * 2 ** 20
/**
 * On PostgreSQL, a chunk about the size of a write from memory (~50,000 rows): 300,000 visits fed at
 * once (most of them through the journal) were written at 44.2k/s with chunks of 4 MB, 51.9k with
 * 12 (medians of 3 runs).
 */
const PG_JOURNAL_CHUNK_BYTES = 12 * 2 ** 20

const clicksDropped = metrics.counter(
  'shortlink_clicks_dropped_total',
  'Counted visits dropped because the unwritten clicks held in memory were at their bound and no click journal could take them.',
)

function rowBytes(key: string, r: ClickEvent): number {
  const strings = [
    key,
    r.domain,
    r.referer,
    r.refererUrl,
    r.region,
    r.city,
    r.utmSource,
    r.utmMedium,
    r.utmCampaign,
    r.utmTerm,
    r.utmContent,
    r.tracked ?? null,
  ]
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
  write(rows: ClickEvent[], mark?: JournalMark): Promise<boolean>
  /** The position up to which the click journal `journal` is in the store (null: none of it). */
  journalMark(journal: string): Promise<number | null>
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
  /** Copies the conversions recorded in SQLite since the last copy into the events store (statistics read them there). */
  syncConversions(): Promise<void>
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
 * instead of queueing). Every caller's promise settles with the batch its rows went in. A
 * journal chunk (with a mark) goes alone: its mark is applied with exactly its rows.
 */
function groupCommit(write: (rows: ClickEvent[], mark?: JournalMark) => Promise<boolean>): (rows: ClickEvent[], mark?: JournalMark) => Promise<boolean> {
  let inFlight = false
  const queue: { rows: ClickEvent[]; mark?: JournalMark; done: PromiseWithResolvers<boolean> }[] = []
  const pump = () => {
    const next = queue.shift()
    if (!next) return
    inFlight = true
    write(next.rows, next.mark)
      .then(next.done.resolve, next.done.reject)
      .finally(() => {
        inFlight = false
        pump()
      })
  }
  return (rows, mark) => {
    const last = queue.at(-1)
    let entry = last
    if (mark || !last || last.mark) {
      entry = { rows: [], mark, done: Promise.withResolvers<boolean>() }
      queue.push(entry)
    }
    for (const r of rows) entry!.rows.push(r)
    const settled = entry!.done.promise
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
    syncConversions: async () => (await open()).syncConversions(),
    moved: async () => (await open()).imported(),
    backup: async (dest, whilePaused) => (await open()).backup(dest, whilePaused),
    exportTo: async (spec, dest) => (await open()).exportTo(spec, dest),
    write: async (rows, mark) => (await open()).write(rows, mark),
    journalMark: async (journal) => (await open()).journalMark(journal),
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
  let closing: Promise<void> | null = null
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
    async write(rows, mark) {
      const { channel, inline } = await connect()
      if (inline) return inline.write(rows, mark)
      // As columns: the numbers' buffers move to the thread, and it makes the row objects (click-columns.ts).
      const columns = columnsOf(rows)
      return channel.ask<boolean>({ type: 'write', columns, mark }, { watched: true, transfer: transferOf(columns) })
    },
    async journalMark(journal) {
      const { channel, inline } = await connect()
      if (inline) return inline.journalMark(journal)
      return channel.ask<number | null>({ type: 'journal-mark', journal })
    },
    async compact() {
      const { channel, inline } = await connect()
      if (inline) return inline.compact()
      await channel.ask({ type: 'compact' })
    },
    async syncConversions() {
      const { channel, inline } = await connect()
      if (inline) return inline.syncConversions()
      await channel.ask({ type: 'sync-conversions' })
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
    // Once: the recorder's stop and the store's close both close it.
    close() {
      closing ??= writer.close().then((inline) => inline?.close())
      return closing
    },
  }
}

/** Ids of snapshots and backups in the worker (one numbering across writer threads). */
let snapshotIds = 1

export const toRow = (v: Visit): ClickEvent =>
  newRow(v.linkSeq, v.domain, v.at, v.scan, v.geo, v.visitor, v.utm, v.referer, v.refererUrl, v.clickId ?? null, v.variant ?? null)

/** A click row standing for one visit. */
function newRow(
  linkSeq: number,
  domain: string,
  at: number,
  scan: boolean,
  geo: Location,
  visitor: VisitDimensions['visitor'],
  utm: VisitDimensions['utm'],
  referer: string | null,
  refererUrl: string | null,
  clickId: string | null,
  variant: number | null,
): ClickEvent {
  return {
    linkSeq,
    domain,
    at,
    scan,
    continent: geo.continent,
    country: geo.country,
    region: geo.region,
    city: geo.city,
    os: visitor.os,
    browser: visitor.browser,
    device: visitor.device,
    referer,
    refererUrl,
    utmSource: utm.source,
    utmMedium: utm.medium,
    utmCampaign: utm.campaign,
    utmTerm: utm.term,
    utmContent: utm.content,
    n: 1,
    tracked: clickId,
    variant,
  }
}

export interface RecorderOptions {
  flushMs?: number
  maxBatch?: number
  maxHeldRows?: number
  maxHeldBytes?: number
  /** The click journal's directory (the data dir); none: visits beyond the memory bound are dropped. */
  journalDir?: string
  /** Bytes of journal lines read back per write. */
  journalChunkBytes?: number
  /** Rows per write at most (MAX_WRITE_ROWS). */
  maxWriteRows?: number
  /** Buffered visits merged into rows at most this many at a time (MERGE_AT, or maxBatch when smaller). */
  mergeAt?: number
}

/**
 * The recorder of a single node: batches written by the events engine (`events`,
 * createEventsHandle), which keeps a journal chunk's mark in DuckDB with its events. Its journal
 * in `journalDir` (the data dir; none for an in-memory store). One write at a time: DuckDB's cost
 * per batch (appender, commit, counters) is paid once for the rows of a whole write, not per
 * 1,000 rows queued behind it in the worker (figures: docs/bench/redirect.md, "Fifth step").
 */
export function createClickRecorder(events: EventsHandle, log: Logger, opts: RecorderOptions = {}) {
  return recorderOver(
    () => events,
    () => events,
    log,
    opts,
    { oneWriteAtATime: true, quietRetries: true, journalMark: (journal) => events.journalMark(journal) },
  )
}

/**
 * The recorder of a node on PostgreSQL: batches written inline through `sql`, one transaction at
 * a time; while one is written, the next batch is taken and prepared (writeAhead: the JavaScript
 * and PostgreSQL's work overlap on two cores), and further flushes wait (the rows keep merging). A failed
 * write keeps its rows for the next tick, and its errors are logged once per outage and
 * then once a minute, not every second. `stop()` writes what it can and does not close `sql`.
 * While it runs, the ended days are rolled up into pair rows (stats.pairs.pg.ts).
 */
export function createPgClickRecorder(sql: SQL, log: Logger, opts: RecorderOptions & PgEventWriterOptions & { stopWaitMs?: number } = {}): ClickRecorder {
  const write = createPgEventWriter(sql, opts)
  const pairs = createPairRoller(sql, log)
  const sink: RowSink = { write, close: () => pairs.stop() }
  const recorder = recorderOver(
    () => sink,
    () => sink,
    log,
    { ...opts, maxWriteRows: opts.maxWriteRows ?? PG_MAX_WRITE_ROWS, journalChunkBytes: opts.journalChunkBytes ?? PG_JOURNAL_CHUNK_BYTES },
    {
      oneWriteAtATime: true,
      writeAhead: true,
      quietRetries: true,
      stopWaitMs: opts.stopWaitMs ?? STOP_WAIT_MS,
      journalMark: (journal) => pgJournalMark(sql, journal),
    },
  )
  return {
    ...recorder,
    start() {
      recorder.start()
      pairs.start()
    },
  }
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
  mode: {
    oneWriteAtATime?: boolean
    /**
     * With oneWriteAtATime: once the write in flight is prepared (the sink's `prepared`), the
     * next one may start and prepare while it is written; the sink commits it after that one,
     * and a journal chunk only when that one was written (the marks go in order).
     */
    writeAhead?: boolean
    quietRetries?: boolean
    stopWaitMs?: number
    /** The store's mark of a journal (the position its rows are written up to), read before the journal's first chunk. */
    journalMark?: (journal: string) => number | null | Promise<number | null>
  } = {},
) {
  const flushMs = opts.flushMs ?? 1000
  const maxBatch = opts.maxBatch ?? 1000
  const maxHeldRows = opts.maxHeldRows ?? MAX_HELD_ROWS
  const maxHeldBytes = opts.maxHeldBytes ?? MAX_HELD_BYTES
  const chunkBytes = opts.journalChunkBytes ?? JOURNAL_CHUNK_BYTES
  const maxWriteRows = opts.maxWriteRows ?? MAX_WRITE_ROWS
  const mergeAt = opts.mergeAt ?? Math.min(MERGE_AT, maxBatch)
  /** Visits recorded and not yet merged into rows (the hot path's hand-off). */
  const buffer = new VisitBuffer()
  let mergeQueued = false
  /** Referer URLs → numbers, so a merge key holds a number instead of the URL. */
  let refererIds = new Map<string, number>()
  let nextRefererId = 1
  /** A flush asked for while a write was in flight (oneWriteAtATime): run when it succeeds. */
  let flushWanted = false
  /** Failed writes in a row, and when the last was logged (quietRetries). */
  let failures = 0
  let failureLoggedAt = 0
  /** Rows not yet handed to the writer, by merge key. */
  let pending = new Map<string, ClickEvent>()
  /** The click ids pending rows gathered since they were made (their `tracked` text is made as they leave: settleTracked). */
  const trackedOf = new Map<ClickEvent, TrackedIds>()
  const settleTracked = (row: ClickEvent, ids: TrackedIds) => {
    row.tracked = row.tracked ? `${row.tracked} ${ids.text()}` : ids.text()
  }
  let pendingBytes = 0
  /** Rows handed to the writer and not yet confirmed, with their write promises; `chunk`: rows read back from the journal. */
  const inFlight = new Set<InFlightWrite>()
  let inFlightRows = 0
  let inFlightBytes = 0
  /** Visits dropped (no journal) or put in the journal since the last warning, because the held rows were at their bound. */
  let dropped = 0
  let spilled = 0
  let timer: ReturnType<typeof setInterval> | null = null
  let flushQueued = false
  /** stop() has begun: no journal chunk is read any more (rows there stay for the next start). */
  let stopping = false
  /** After a write from memory, the next one takes a journal chunk (and the other way round), so both move. */
  let journalTurn = false
  const afterFlush: ((s: FlushSummary) => void)[] = []
  /** Held rows whose location was still being looked up when recorded (the first visits after a start). */
  const awaitingLocation = new Map<ClickEvent, Promise<Location>>()
  /** Appends to the journal that wait for a location. */
  const spilling = new Set<Promise<void>>()
  /** The journal, opened at the first need (start, or a row to put in it); null without a dir, or when it cannot be opened. */
  let journal: ClickJournal | null | undefined = opts.journalDir ? undefined : null
  /**
   * The store's mark has been read since the journal was opened: rows below it are skipped, so
   * none is written twice after a kill -9 between a chunk's commit and the journal's next step.
   */
  let marked = false
  let markRead: Promise<void> | null = null
  function journalOf(): ClickJournal | null {
    if (journal !== undefined) return journal
    try {
      journal = openClickJournal(opts.journalDir!)
      marked = journal.visits() === 0
      const held = journal.visits()
      if (held) log.info('click journal holds visits from before; writing them to the store', { visits: held })
    } catch (e) {
      journal = null
      log.error('cannot open the click journal; visits beyond the memory bound will be dropped', { dir: opts.journalDir, error: String(e) })
    }
    return journal
  }
  /** Reads the store's mark of the journal (at once on SQLite); false until it is read. */
  function readMark(j: ClickJournal): boolean {
    if (marked || !mode.journalMark) return true
    if (markRead) return false
    const skip = (upTo: number | null) => {
      if (upTo !== null) j.skipTo(upTo)
      marked = true
    }
    try {
      const upTo = mode.journalMark(j.id())
      if (!(upTo instanceof Promise)) {
        skip(upTo)
        return true
      }
      markRead = upTo.then(skip).finally(() => {
        markRead = null
        if (marked && !stopping) setImmediate(flush)
      })
      markRead.catch(() => {}) // the store is down: read again at a later flush
    } catch {}
    return false
  }

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

  /** Puts rows in the journal (once their location is known), or drops them when there is none. False when dropped. */
  function spill(rows: ClickEvent[]): boolean {
    const j = journalOf()
    if (!j) return false
    if (rows.some((r) => awaitingLocation.has(r))) {
      const appended = locate(rows).then(() => j.append(rows))
      spilling.add(appended)
      void appended.finally(() => spilling.delete(appended))
    } else j.append(rows)
    return true
  }

  /** Holds a new row in memory unless the bound is reached; past it, the row goes to the journal (or is dropped without one). */
  function hold(key: string, row: ClickEvent, resolved?: Promise<Location>): boolean {
    const bytes = rowBytes(key, row)
    if (pending.size + inFlightRows >= maxHeldRows || pendingBytes + inFlightBytes + bytes > maxHeldBytes) {
      if (resolved) awaitingLocation.set(row, resolved)
      if (spill([row])) spilled += row.n
      else {
        awaitingLocation.delete(row)
        dropped += row.n
        clicksDropped.inc(row.n)
      }
      return false
    }
    pending.set(key, row)
    pendingBytes += bytes
    if (resolved) awaitingLocation.set(row, resolved)
    return true
  }

  function refererIdOf(url: string): number {
    let id = refererIds.get(url)
    if (id === undefined) {
      if (refererIds.size >= MAX_REFERER_IDS) refererIds = new Map()
      id = nextRefererId++
      refererIds.set(url, id)
    }
    return id
  }

  /** A row's merge key with its referer's number of now (the numbering may have started again since the key was made). */
  function rekeyed(key: string, r: ClickEvent): string {
    return r.refererUrl === null ? key : `${key.slice(0, key.lastIndexOf('|') + 1)}${refererIdOf(r.refererUrl)}`
  }

  /**
   * The flush side of the hand-off: the buffered visits merged into the pending rows (by merge
   * key; a visit like the one before it joins that row without a key), new rows held within
   * the memory bound or put in the journal beyond it (hold). The buffer starts again empty.
   */
  function mergeBuffered(): void {
    mergeQueued = false
    const b = buffer
    const n = b.length
    if (n === 0) return
    const { linkSeq, at, scan } = b
    const { domain, referer, refererUrl, clickId, visitor, geo, utm, variant } = b.held
    /** The pending row of the visit before (null: none, or it went to the journal). */
    let last: ClickEvent | null = null
    /** The row whose tracked ids `ids` are (the last tracked visit's). */
    let idsRow: ClickEvent | null = null
    let ids: TrackedIds | undefined
    for (let i = 0; i < n; i++) {
      const seq = linkSeq[i]!
      const s = scan[i]!
      const v = visitor[i]!
      const g = geo[i]!
      const u = utm[i]!
      const url = refererUrl[i]!
      const t = at[i]!
      const id = clickId[i]
      const ab = variant[i] ?? null
      let row: ClickEvent | undefined
      const j = i - 1
      if (
        last !== null &&
        seq === linkSeq[j] &&
        s === scan[j] &&
        v === visitor[j] &&
        g === geo[j] &&
        u === utm[j] &&
        url === refererUrl[j] &&
        ab === variant[j]
      )
        row = last
      else {
        // The referer's number last: rekeyed() replaces it.
        const key = `${seq}|${s}|${v.id}|${g.id}|${u.id}|${ab ?? ''}|${url === null ? '' : refererIdOf(url)}`
        row = pending.get(key)
        if (row === undefined) {
          const fresh = newRow(seq, domain[i]!, t, s === 1, g, v, u, referer[i]!, url, id ?? null, ab)
          last = hold(key, fresh, g.resolved) ? fresh : null
          continue
        }
      }
      row.n++
      if (t > row.at) row.at = t
      // A tracked visit merges like any other (same dimensions); its click id (which carries its time) goes along, as bytes until the flush.
      if (id) {
        if (row !== idsRow) {
          idsRow = row
          ids = trackedOf.get(row)
          if (ids === undefined) {
            ids = new TrackedIds()
            trackedOf.set(row, ids)
          }
        }
        ids!.add(id)
        pendingBytes += TRACKED_CLICK_BYTES
      }
      last = row
    }
    b.clear()
    if (pending.size >= maxBatch && !flushQueued) {
      flushQueued = true
      setImmediate(flush)
    }
  }

  function add(key: string, row: ClickEvent) {
    const cur = pending.get(key)
    if (cur) {
      cur.n += row.n
      if (row.at > cur.at) cur.at = row.at
    } else hold(key, row)
  }

  /** The pending rows (at most `limit`, oldest first), taken out of memory's pending map. */
  function takePending(limit = Number.POSITIVE_INFINITY) {
    if (pending.size <= limit) {
      for (const [row, ids] of trackedOf) settleTracked(row, ids)
      trackedOf.clear()
      const batch = pending
      const bytes = pendingBytes
      pending = new Map()
      pendingBytes = 0
      // No pending key holds a referer number now: the numbering starts again (rows of a failed write come back re-keyed).
      refererIds = new Map()
      return { batch, bytes }
    }
    const batch = new Map<string, ClickEvent>()
    let bytes = 0
    for (const [k, r] of pending) {
      if (batch.size >= limit) break
      const ids = trackedOf.get(r)
      if (ids) {
        settleTracked(r, ids)
        trackedOf.delete(r)
      }
      batch.set(k, r)
      bytes += rowBytes(k, r)
    }
    for (const k of batch.keys()) pending.delete(k)
    pendingBytes -= bytes
    return { batch, bytes }
  }

  const allDone = () => Promise.all([...inFlight].map((b) => b.done)).then(() => {})

  /**
   * Hands rows to the writer: the pending rows, or the next journal chunk. While a write has
   * been in flight for a flush window or more, the pending rows go to the journal instead of
   * waiting in memory (a kill -9 then loses at most one window). Resolves when the write ends.
   */
  function flush(): Promise<void> {
    flushQueued = false
    mergeBuffered()
    if (dropped > 0) {
      log.warn('click capture at its memory bound; visits dropped', { visits: dropped, maxHeldRows, maxHeldBytes })
      dropped = 0
    }
    if (spilled > 0) {
      log.warn('click capture at its memory bound; visits put in the journal', { visits: spilled, maxHeldRows, maxHeldBytes })
      spilled = 0
    }
    const j = journal ?? null
    /** The write in flight, prepared and younger than a flush window, that the next one may follow (writeAhead). */
    let ahead: InFlightWrite | undefined
    if (inFlight.size > 0) {
      const now = Date.now()
      // Rows from memory still waiting for their turn a flush window after they were sent go to the journal, like pending rows.
      if (j) for (const b of inFlight) if (!b.chunk && b.prepared && !b.started && now - b.since >= flushMs) b.cancel()
      let since = Number.POSITIVE_INFINITY
      for (const b of inFlight) since = Math.min(since, b.since)
      if (pending.size && j && now - since >= flushMs) spill([...takePending().batch.values()])
      syncJournal(j)
      if (mode.writeAhead && inFlight.size === 1) ahead = [...inFlight].find((b) => b.prepared && now - b.since < flushMs)
      if (!ahead && (mode.oneWriteAtATime || [...inFlight].some((b) => b.chunk))) {
        flushWanted = true
        return allDone()
      }
    }
    syncJournal(j)
    const chunk = j && !stopping && (journalTurn || pending.size === 0) && readMark(j) ? j.read(chunkBytes, ahead?.chunk) : null
    if (chunk) return send(chunk.rows, chunkBytesOf(chunk), null, chunk)
    if (pending.size === 0) return Promise.resolve()
    // A batch goes ahead only once it is half a write: PostgreSQL's cost per write is much the same for 10,000 rows as for 50,000.
    if (ahead && pending.size < maxWriteRows / 2 && !stopping) {
      flushWanted = true
      return allDone()
    }
    const { batch, bytes } = takePending(maxWriteRows)
    // More than one write holds: the next goes as soon as this one is in.
    if (pending.size) flushWanted = true
    return send([...batch.values()], bytes, batch)
  }

  const chunkBytesOf = (chunk: JournalChunk) => chunk.rows.length * ROW_OVERHEAD_BYTES

  /** One write: rows from memory (`batch`, their merge keys) or a journal chunk. */
  function send(rows: ClickEvent[], bytes: number, batch: Map<string, ClickEvent> | null, chunk?: JournalChunk): Promise<void> {
    const release = () => {
      if (!inFlight.delete(entry)) return
      inFlightRows -= rows.length
      inFlightBytes -= bytes
    }
    const entry: InFlightWrite = {
      rows,
      done: Promise.resolve(),
      since: Date.now(),
      chunk,
      prepared: false,
      started: false,
      cancelled: false,
      cancel() {
        entry.cancelled = true
        release()
        spill(rows)
      },
    }
    inFlightRows += rows.length
    inFlightBytes += bytes
    // Alternating between memory and the journal by what was sent: with writeAhead the next write starts before this one ends.
    if (mode.writeAhead) journalTurn = !chunk
    const prepared = () => {
      entry.prepared = true
      if (!stopping && (flushWanted || (journal?.visits() ?? 0) > 0)) {
        flushWanted = false
        setImmediate(flush)
      }
    }
    const starting = () => {
      entry.started = !entry.cancelled
      return entry.started
    }
    const write = () => sinkOf().write(rows, chunk?.mark, { prepared, starting })
    entry.done = (awaitingLocation.size ? locate(rows).then(write) : write()).then(
      (applied) => {
        if (entry.cancelled) return
        release()
        if (failures > 0 && mode.quietRetries) log.info('click flush succeeded again', { failedFlushes: failures })
        if (failures > 0) diskFullLogOf(log).recovered('clicks')
        failures = 0
        if (chunk) journal?.applied(chunk)
        if (applied !== false) written(rows)
        if (!mode.writeAhead) journalTurn = !chunk
        if (!stopping && (flushWanted || (journal?.visits() ?? 0) > 0)) {
          flushWanted = false
          setImmediate(flush)
        }
      },
      (e) => {
        if (entry.cancelled) return
        // Kept for another attempt (e.g. the store was busy or down); never fail a redirect.
        // From memory: into the journal, or back among the pending rows without one. A journal
        // chunk stays where it is.
        release()
        if (batch && !spill(rows)) for (const [k, r] of batch) add(rekeyed(k, r), r)
        failures++
        const now = Date.now()
        // A full disk is one outage for the API and the clicks alike: said once a minute (shared/disk-full.ts).
        if (isDiskFull(e)) diskFullLogOf(log).report('clicks', e)
        else if (!mode.quietRetries || failures === 1 || now - failureLoggedAt >= RETRY_LOG_MS) {
          failureLoggedAt = now
          log.error('click flush failed; will retry', { rows: rows.length, failedFlushes: failures, error: String(e) })
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
  /** Visits held in memory: pending, and in flight from memory (a journal chunk's are counted by the journal). */
  const inMemory = (linkSeq?: number) =>
    (linkSeq === undefined ? buffer.length : buffer.visitsOf(linkSeq)) +
    visitsOf(pending.values(), linkSeq) +
    [...inFlight].reduce((n, b) => n + (b.chunk ? 0 : visitsOf(b.rows, linkSeq)), 0)

  /** Visits a stop() could neither write nor keep in the journal (a full disk): lost. */
  let lostAtStop = 0
  const pendingCount = () => inMemory() + (journal?.visits() ?? 0) + lostAtStop

  /** Writes the journal's buffered rows to its file; a failure (a full disk) keeps them buffered and is logged, never thrown. */
  function syncJournal(j: ClickJournal | null) {
    if (!j) return
    try {
      j.sync()
    } catch (e) {
      if (isDiskFull(e)) diskFullLogOf(log).report('clicks', e)
      else log.error('cannot write the click journal; its rows stay in memory', { error: String(e) })
    }
  }

  return {
    /** The hot path's hand-off: a push into the buffer; merging is the flush side's (at once only at the memory bound). */
    record(v: Visit) {
      buffer.push(v)
      if (buffer.length + pending.size + inFlightRows >= maxHeldRows || buffer.bytes + pendingBytes + inFlightBytes > maxHeldBytes) mergeBuffered()
      else if (buffer.length >= mergeAt && !mergeQueued) {
        mergeQueued = true
        setImmediate(mergeBuffered)
      }
    },
    flush,
    /**
     * Resolves once every visit recorded before the call is written (a backup's barrier), those
     * waiting in the journal included; it stops early when a write fails (the store is down).
     */
    async drain(): Promise<void> {
      // One write at a time: a flush while one is in flight only waits for it, so flush again until the
      // rows held at the call are written (one more write per MAX_WRITE_ROWS of them), not while new ones keep coming.
      const rounds = 2 + Math.ceil((pending.size + buffer.length) / maxWriteRows)
      for (let round = 0; round < rounds; round++) {
        await flush()
        await allDone()
        if ((pending.size === 0 && buffer.length === 0 && inFlight.size === 0) || failures > 0 || stopping) break
      }
      for (let round = 0; round < 10_000 && (journal?.visits() ?? 0) > 0 && failures === 0 && !stopping; round++) {
        await flush()
        await allDone()
      }
    },
    /** Visits recorded but not yet written (in memory or in the journal). */
    pendingCount,
    /** Visits pushed by the redirect and not yet merged into rows. */
    buffered: () => buffer.length,
    /** Rows held in memory (pending, the buffered visits merged, and in flight) and their estimated bytes. */
    held() {
      mergeBuffered()
      return { rows: pending.size + inFlightRows, bytes: pendingBytes + inFlightBytes }
    },
    /** Visits of one link recorded but not yet written (in memory or in the journal). */
    pendingFor: (linkSeq: number) => inMemory(linkSeq) + (journal?.visits(linkSeq) ?? 0),
    start() {
      journalOf()
      timer ??= setInterval(flush, flushMs)
      if (journal?.visits()) setImmediate(flush)
    },
    /**
     * Stops the timer, writes what is pending or in flight, puts what could not be written in the
     * journal (rows already there stay for the next start), and closes the writer.
     */
    async stop(): Promise<void> {
      if (timer) clearInterval(timer)
      timer = null
      stopping = true
      // No writer thread ready (lost and not replaced yet, or stuck on a batch), now or while
      // stopping: what is held is written on this thread instead of waiting for one. A thread still
      // opening is waited for (its open is bounded): terminating it while DuckDB opens its file
      // aborts the process (Bun 1.4.5).
      const sink = openedSink()
      const noWriter = () => {
        const h = sink?.health?.()
        if (h && !h.ok && h.state !== 'starting') sink!.goInline?.('stopping with no writer thread ready')
      }
      noWriter()
      const watch = sink?.health ? setInterval(noWriter, 100) : null
      const deadline = mode.stopWaitMs === undefined ? Number.POSITIVE_INFINITY : Date.now() + mode.stopWaitMs
      mergeBuffered()
      for (let round = 0; round < 5 && (pending.size || inFlight.size) && Date.now() < deadline; round++) {
        const written = (pending.size ? flush() : Promise.resolve()).then(allDone)
        await (deadline === Number.POSITIVE_INFINITY ? written : until(written, deadline))
      }
      mergeBuffered()
      if (pending.size && journalOf()) spill([...takePending().batch.values()])
      await Promise.all(spilling)
      if (watch) clearInterval(watch)
      syncJournal(journal ?? null)
      const unwritten = inMemory() + (journal?.unsynced() ?? 0)
      if (unwritten > 0) log.error('click capture stopped with visits it could not write', { visits: unwritten })
      const kept = (journal?.visits() ?? 0) - (journal?.unsynced() ?? 0)
      if (kept > 0) log.info('click journal keeps visits for the next start', { visits: kept })
      try {
        journal?.close()
      } catch {}
      journal = null
      lostAtStop = unwritten - inMemory()
      await openedSink()?.close()
    },
    /**
     * For /readyz and metrics: `ok` while the writer can take batches (a writer thread that
     * was lost and is being replaced, or one stuck on a batch, cannot; where batches are
     * written inline, while flushes succeed); the visits held (in memory and in the journal);
     * the flushes failed in a row (a full disk, an unreachable store).
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
