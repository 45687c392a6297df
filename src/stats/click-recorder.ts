/**
 * Click capture off the hot path. A visit is merged in memory with identical visits
 * (same link, kind, referer, and the same cached User-Agent, location and UTM objects,
 * compared by id, so the key is cheap), and the merged rows are written in one
 * transaction per flush (every `flushMs`, or sooner at `maxBatch` rows) together with
 * each link's `clicks` and `lastClicked`, by a worker thread for a store file (inline
 * for an in-memory store). SIGTERM flushes everything; a kill -9 loses at most the
 * visits of one flush window (1 s by default).
 */
import type { Database } from 'bun:sqlite'
import type { Logger } from '../shared/log'
import { workerSpec } from '../shared/worker-spec'
import { createEventWriter, type ClickEvent } from './click-writer'

export type { ClickEvent } from './click-writer'

/** Dimensions shared by many visits; `id` tells equal objects apart without comparing fields. */
export interface VisitDimensions {
  visitor: { id: number; os: string; browser: string; device: string }
  geo: { id: number; continent: string | null; country: string | null; region: string | null; city: string | null }
  utm: { id: number; source: string | null; medium: string | null; campaign: string | null; term: string | null; content: string | null }
}

export interface Visit extends VisitDimensions {
  linkSeq: number
  domain: string
  at: number
  scan: boolean
  referer: string | null
  refererUrl: string | null
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

/** Beyond this many unwritten rows (a store that keeps failing), the oldest are dropped. */
const MAX_PENDING = 200_000

function inlineSink(db: Database): RowSink {
  const write = createEventWriter(db)
  return { write: async (rows) => write(rows), close: async () => {} }
}

function workerSink(path: string): RowSink {
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
    async write(rows) {
      await opened
      const id = nextId++
      const done = new Promise<void>((resolve, reject) => waiting.set(id, { resolve, reject }))
      worker.postMessage({ type: 'write', id, events: rows })
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

export function createClickRecorder(db: Database, dbPath: string, log: Logger, opts: { flushMs?: number; maxBatch?: number } = {}) {
  const flushMs = opts.flushMs ?? 1000
  const maxBatch = opts.maxBatch ?? 1000
  let sink: RowSink | null = dbPath === ':memory:' ? inlineSink(db) : null
  const sinkOf = () => (sink ??= workerSink(dbPath))
  /** Rows not yet handed to the writer, by merge key. */
  let pending = new Map<string, ClickEvent>()
  /** Rows handed to the writer and not yet confirmed, with their write promises. */
  const inFlight = new Set<{ rows: ClickEvent[]; done: Promise<void> }>()
  let timer: ReturnType<typeof setInterval> | null = null
  let flushQueued = false
  const afterFlush: ((s: FlushSummary) => void)[] = []

  function written(rows: ClickEvent[]) {
    const byDomain = new Map<string, number>()
    let visits = 0
    for (const r of rows) (byDomain.set(r.domain, (byDomain.get(r.domain) ?? 0) + r.n), (visits += r.n))
    for (const hook of afterFlush) {
      try {
        hook({ visits, byDomain })
      } catch (e) {
        log.error('after-flush hook failed', { error: String(e) })
      }
    }
  }

  function add(key: string, row: ClickEvent) {
    const cur = pending.get(key)
    if (cur) {
      cur.n += row.n
      if (row.at > cur.at) cur.at = row.at
    } else pending.set(key, row)
  }

  /** Hands the pending rows to the writer; resolves when they are written (or re-queued on failure). */
  function flush(): Promise<void> {
    flushQueued = false
    if (pending.size === 0) return Promise.resolve()
    const batch = pending
    pending = new Map()
    const rows = [...batch.values()]
    const entry = { rows, done: Promise.resolve() }
    entry.done = sinkOf()
      .write(rows)
      .then(
        () => written(rows),
        (e) => {
          // Keep them for the next attempt (e.g. the store was busy); never fail a redirect.
          for (const [k, r] of batch) if (pending.size < MAX_PENDING) add(k, r)
          log.error('click flush failed; will retry', { rows: rows.length, error: String(e) })
        },
      )
      .finally(() => inFlight.delete(entry))
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
      const key = `${v.linkSeq}|${v.scan ? 1 : 0}|${v.visitor.id}|${v.geo.id}|${v.utm.id}|${v.refererUrl ?? ''}`
      const cur = pending.get(key)
      if (cur) {
        cur.n++
        cur.at = v.at
        return
      }
      pending.set(key, toRow(v))
      if (pending.size >= maxBatch && !flushQueued) {
        flushQueued = true
        setImmediate(flush)
      }
    },
    flush,
    /** Visits recorded but not yet written. */
    pendingCount: () => visitsOf(pending.values()) + [...inFlight].reduce((n, b) => n + visitsOf(b.rows), 0),
    /** Visits of one link recorded but not yet written. */
    pendingFor: (linkSeq: number) => visitsOf(pending.values(), linkSeq) + [...inFlight].reduce((n, b) => n + visitsOf(b.rows, linkSeq), 0),
    start() {
      timer ??= setInterval(flush, flushMs)
    },
    /** Stops the timer, writes everything still pending or in flight, and closes the writer. */
    async stop(): Promise<void> {
      if (timer) clearInterval(timer)
      timer = null
      for (let round = 0; round < 5 && (pending.size || inFlight.size); round++) {
        await flush()
        await Promise.all([...inFlight].map((b) => b.done))
      }
      await sink?.close()
    },
    onFlush(fn: (s: FlushSummary) => void) {
      afterFlush.push(fn)
    },
    flushMs,
  }
}
export type ClickRecorder = ReturnType<typeof createClickRecorder>
