/**
 * Click capture off the hot path: visits are appended to a flat in-memory batch and
 * written in one transaction per flush (every `flushMs`, or sooner at `maxBatch`
 * visits; identical visits merged into one row with a count) together
 * with each link's `clicks` and `lastClicked`, by a worker thread for a store file
 * (inline for an in-memory store). SIGTERM flushes everything; a kill -9 loses at most
 * the events of one flush window (1 s by default).
 */
import type { Database } from 'bun:sqlite'
import type { Logger } from '../shared/log'
import { workerSpec } from '../shared/worker-spec'
import { createEventWriter } from './click-writer'
import { DOMAIN_SLOT, STRIDE, appendVisit, mergeBatch, visitsIn, visitsOfLink, type VisitInput } from './click-batch'

export type { ClickEvent } from './click-writer'

export interface FlushSummary {
  events: number
  byDomain: Map<string, number>
}

/** Where batches (flat visit arrays) go: written in this thread, or posted to the writer worker. */
interface BatchSink {
  write(batch: unknown[]): Promise<void>
  close(): Promise<void>
}

/** Beyond this many unwritten events (a store that keeps failing), the oldest are dropped. */
const MAX_PENDING = 200_000

function inlineSink(db: Database): BatchSink {
  const write = createEventWriter(db)
  return { write: async (batch) => write(mergeBatch(batch)), close: async () => {} }
}

function workerSink(path: string): BatchSink {
  const worker = new Worker(workerSpec('stats/click-writer.worker.ts'))
  let nextId = 1
  const waiting = new Map<number, { resolve: () => void; reject: (e: Error) => void }>()
  let closed: (() => void) | null = null
  const opened = new Promise<void>((resolve, reject) => {
    worker.onmessage = (ev: MessageEvent) => {
      const m = ev.data
      if (m.type === 'opened') resolve()
      else if (m.type === 'open-failed') reject(new Error(m.error))
      else if (m.type === 'written') (waiting.get(m.id)?.resolve(), waiting.delete(m.id))
      else if (m.type === 'failed') (waiting.get(m.id)?.reject(new Error(m.error)), waiting.delete(m.id))
      else if (m.type === 'closed') closed?.()
    }
  })
  worker.postMessage({ type: 'open', path })
  return {
    async write(batch) {
      await opened
      const id = nextId++
      const done = new Promise<void>((resolve, reject) => waiting.set(id, { resolve, reject }))
      worker.postMessage({ type: 'write', id, batch })
      return done
    },
    async close() {
      await opened.catch(() => {})
      await new Promise<void>((resolve) => {
        closed = resolve
        worker.postMessage({ type: 'close' })
      })
      worker.terminate()
    },
  }
}

export function createClickRecorder(db: Database, dbPath: string, log: Logger, opts: { flushMs?: number; maxBatch?: number } = {}) {
  const flushMs = opts.flushMs ?? 1000
  const maxBatch = opts.maxBatch ?? 1000
  const sink = dbPath === ':memory:' ? inlineSink(db) : null
  let lazySink: BatchSink | null = sink
  const sinkOf = () => (lazySink ??= workerSink(dbPath))
  /** Visits not yet handed to the writer, flat (see click-batch.ts). */
  let pending: unknown[] = []
  /** Batches handed to the sink and not yet confirmed, with their write promises. */
  const inFlight = new Set<{ batch: unknown[]; done: Promise<void> }>()
  let timer: ReturnType<typeof setInterval> | null = null
  let flushQueued = false
  const afterFlush: ((s: FlushSummary) => void)[] = []

  function written(batch: unknown[]) {
    const byDomain = new Map<string, number>()
    for (let i = DOMAIN_SLOT; i < batch.length; i += STRIDE) byDomain.set(batch[i] as string, (byDomain.get(batch[i] as string) ?? 0) + 1)
    for (const hook of afterFlush) {
      try {
        hook({ events: visitsIn(batch), byDomain })
      } catch (e) {
        log.error('after-flush hook failed', { error: String(e) })
      }
    }
  }

  /** Hands the buffer to the sink; resolves when it is written (or re-queued on failure). */
  function flush(): Promise<void> {
    flushQueued = false
    if (pending.length === 0) return Promise.resolve()
    const batch = pending
    pending = []
    const entry = { batch, done: Promise.resolve() }
    entry.done = sinkOf()
      .write(batch)
      .then(
        () => written(batch),
        (e) => {
          // Keep them for the next attempt (e.g. the store was busy); never fail a redirect.
          pending = batch.concat(pending)
          if (visitsIn(pending) > MAX_PENDING) pending = pending.slice(pending.length - MAX_PENDING * STRIDE)
          log.error('click flush failed; will retry', { visits: visitsIn(batch), error: String(e) })
        },
      )
      .finally(() => inFlight.delete(entry))
    inFlight.add(entry)
    return entry.done
  }

  return {
    record(v: VisitInput) {
      appendVisit(pending, v)
      if (visitsIn(pending) >= maxBatch && !flushQueued) {
        flushQueued = true
        setImmediate(flush)
      }
    },
    flush,
    /** Visits recorded but not yet written. */
    pendingCount: () => visitsIn(pending) + [...inFlight].reduce((n, b) => n + visitsIn(b.batch), 0),
    /** Visits of one link recorded but not yet written. */
    pendingFor: (linkSeq: number) => visitsOfLink(pending, linkSeq) + [...inFlight].reduce((n, b) => n + visitsOfLink(b.batch, linkSeq), 0),
    start() {
      timer ??= setInterval(flush, flushMs)
    },
    /** Stops the timer, writes everything still buffered or in flight, and closes the writer. */
    async stop(): Promise<void> {
      if (timer) clearInterval(timer)
      timer = null
      for (let round = 0; round < 5 && (pending.length || inFlight.size); round++) {
        await flush()
        await Promise.all([...inFlight].map((b) => b.done))
      }
      await lazySink?.close()
    },
    onFlush(fn: (s: FlushSummary) => void) {
      afterFlush.push(fn)
    },
    flushMs,
  }
}
export type ClickRecorder = ReturnType<typeof createClickRecorder>
