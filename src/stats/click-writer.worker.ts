/**
 * The events engine on its own thread (events.engine.ts): it owns the DuckDB file (one
 * process, one thread may hold it) and its own connection to the SQLite store for the links'
 * counters. Batches of clicks arrive to be written; statistics reads arrive as snapshots
 * (begin, statements, end) and their rows go back. The JavaScript of both (CSV of a batch,
 * rows of an answer) runs here, so the redirect server's thread stays free. `onmessage` is
 * registered before anything else (a compiled binary needs that of a worker). The main thread
 * watches it and replaces it when it is lost (click-writer.supervisor.ts): every request
 * carries a `req`, answered by `answer` or `failed`.
 *
 * A test-only fault (`fault` in the open message, from SHORTLINK_TEST_WRITER_FAULT; see
 * click-writer.faults.ts) makes this writer fail the way a broken one would.
 */
import { connectStore, type Db } from '../store'
import { type ClickColumns, rowsOf } from './click-columns'
import type { JournalMark } from './click-journal'
import type { WriterFault } from './click-writer.faults'
import { type EventsEngine, openEventsEngine, type ReadTx } from './events.engine'
import type { ResolvedExportSpec } from './events.export'

declare const self: Worker

let db: Db | null = null
let engine: EventsEngine | null = null
let fault: WriterFault | null = null
let writes = 0
/** Open snapshots by id: their reads, and how to end them. */
const snapshots = new Map<number, { tx: ReadTx; end: () => void }>()
/** Backups waiting for the main thread's copy of SQLite before writing resumes. */
const resumes = new Map<number, () => void>()

export interface OpenMessage {
  type: 'open'
  path: string
  eventsPath: string
  dataDir: string
  memoryLimit: string
  threads: number
  busyLinkClicks?: number
  fault?: WriterFault
}

type Message =
  | OpenMessage
  | { type: 'write'; id: number; req: number; columns: ClickColumns; mark?: JournalMark }
  | { type: 'journal-mark'; id: number; req: number; journal: string }
  | { type: 'compact'; id: number; req: number }
  | { type: 'sync-conversions'; id: number; req: number }
  | { type: 'backup'; id: number; req: number; dest: string }
  | { type: 'resume'; id: number }
  | { type: 'export'; id: number; req: number; spec: ResolvedExportSpec; dest: string }
  | { type: 'begin'; id: number; req: number }
  | { type: 'run'; id: number; req: number; statements: { sql: string; args: unknown[] }[] }
  | { type: 'interrupt'; id: number }
  | { type: 'end'; id: number }
  | { type: 'close' }

/** Fails as `kind` says: throws (an `error` event), exits the thread, or stops answering for good. */
function breakDown(kind: 'crash' | 'exit' | 'hang', when: string): never {
  if (kind === 'exit') process.exit(70)
  if (kind === 'hang') for (;;) {} // until the main thread terminates it
  throw new Error(`test fault: the click writer crashes ${when}`)
}

/** Answers request `req` with the outcome of `work`. */
function answer(req: number, work: Promise<unknown>) {
  work.then(
    (value) => postMessage({ type: 'answer', req, value }),
    (e) => postMessage({ type: 'failed', req, error: String(e), code: (e as { code?: string }).code }),
  )
}

self.onmessage = (ev: MessageEvent<Message>) => {
  const msg = ev.data
  if (msg.type === 'open') {
    fault = msg.fault ?? null
    if (fault && fault.at === 'open') breakDown(fault.kind, 'while opening')
    try {
      db = connectStore(msg.path)
    } catch (e) {
      postMessage({ type: 'open-failed', error: String(e), code: (e as { code?: string }).code })
      return
    }
    openEventsEngine(db, {
      path: msg.eventsPath,
      dataDir: msg.dataDir,
      memoryLimit: msg.memoryLimit,
      threads: msg.threads,
      busyLinkClicks: msg.busyLinkClicks,
      log: (message, fields) => postMessage({ type: 'log', message, fields }),
    }).then(
      (e) => {
        engine = e
        postMessage({ type: 'opened' })
        void e.imported().then(() => postMessage({ type: 'imported' }))
      },
      (e) => postMessage({ type: 'open-failed', error: String(e), code: (e as { code?: string }).code }),
    )
  } else if (msg.type === 'write') {
    // Before the batch is written: its rows must then be written once, by the next writer.
    if (fault && fault.at !== 'open' && writes >= fault.at) breakDown(fault.kind, `before write ${writes + 1}`)
    writes++
    answer(msg.req, engine!.write(rowsOf(msg.columns), msg.mark))
  } else if (msg.type === 'journal-mark') answer(msg.req, engine!.journalMark(msg.journal))
  else if (msg.type === 'compact') answer(msg.req, engine!.compact())
  else if (msg.type === 'sync-conversions') answer(msg.req, engine!.syncConversions())
  else if (msg.type === 'backup') {
    // Paused between the copy and the reply until the main thread has copied SQLite too.
    answer(
      msg.req,
      engine!.backup(
        msg.dest,
        () =>
          new Promise<void>((resume) => {
            resumes.set(msg.id, resume)
            postMessage({ type: 'paused', id: msg.id })
          }),
      ),
    )
  } else if (msg.type === 'export') answer(msg.req, engine!.exportTo(msg.spec, msg.dest))
  else if (msg.type === 'resume') {
    resumes.get(msg.id)?.()
    resumes.delete(msg.id)
  } else if (msg.type === 'begin') {
    engine!
      .snapshot(
        (tx) =>
          new Promise<void>((end) => {
            snapshots.set(msg.id, { tx, end })
            postMessage({ type: 'answer', req: msg.req, value: { rolled: tx.rolled, legacy: tx.legacy } })
          }),
      )
      .catch((e) => postMessage({ type: 'failed', req: msg.req, error: String(e) }))
  } else if (msg.type === 'run') {
    const snap = snapshots.get(msg.id)
    if (!snap) postMessage({ type: 'failed', req: msg.req, error: 'no such snapshot' })
    else answer(msg.req, snap.tx.run(msg.statements))
  } else if (msg.type === 'interrupt') snapshots.get(msg.id)?.tx.interrupt()
  else if (msg.type === 'end') {
    snapshots.get(msg.id)?.end()
    snapshots.delete(msg.id)
  } else if (msg.type === 'close') {
    for (const s of snapshots.values()) s.end()
    snapshots.clear()
    Promise.resolve(engine?.close())
      .catch(() => {})
      .finally(() => {
        db?.close()
        postMessage({ type: 'closed' })
      })
  }
}
