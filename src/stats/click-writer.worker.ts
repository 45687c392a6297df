/**
 * The events engine on its own thread (events.engine.ts): it owns the DuckDB file (one
 * process, one thread may hold it) and its own connection to the SQLite store for the links'
 * counters. Batches of clicks arrive to be written; statistics reads arrive as snapshots
 * (begin, statements, end) and their rows go back. The JavaScript of both (CSV of a batch,
 * rows of an answer) runs here, so the redirect server's thread stays free. `onmessage` is
 * registered before anything else (a compiled binary needs that of a worker).
 */
import { connectStore, type Db } from '../store'
import type { ClickEvent } from './click-event'
import { type EventsEngine, openEventsEngine, type ReadTx } from './events.engine'
import type { ResolvedExportSpec } from './events.export'

declare const self: Worker

let db: Db | null = null
let engine: EventsEngine | null = null
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
}

type Message =
  | OpenMessage
  | { type: 'write'; id: number; events: ClickEvent[] }
  | { type: 'compact'; id: number }
  | { type: 'backup'; id: number; dest: string }
  | { type: 'resume'; id: number }
  | { type: 'export'; id: number; spec: ResolvedExportSpec; dest: string }
  | { type: 'begin'; id: number }
  | { type: 'run'; id: number; req: number; statements: { sql: string; args: unknown[] }[] }
  | { type: 'interrupt'; id: number }
  | { type: 'end'; id: number }
  | { type: 'close' }

self.onmessage = (ev: MessageEvent<Message>) => {
  const msg = ev.data
  if (msg.type === 'open') {
    try {
      db = connectStore(msg.path)
    } catch (e) {
      postMessage({ type: 'open-failed', error: String(e) })
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
      (e) => postMessage({ type: 'open-failed', error: String(e) }),
    )
  } else if (msg.type === 'write') {
    engine!.write(msg.events).then(
      () => postMessage({ type: 'written', id: msg.id }),
      (e) => postMessage({ type: 'failed', id: msg.id, error: String(e) }),
    )
  } else if (msg.type === 'compact') {
    engine!.compact().then(
      () => postMessage({ type: 'written', id: msg.id }),
      (e) => postMessage({ type: 'failed', id: msg.id, error: String(e) }),
    )
  } else if (msg.type === 'backup') {
    // Paused between the copy and the reply until the main thread has copied SQLite too.
    engine!
      .backup(
        msg.dest,
        () =>
          new Promise<void>((resume) => {
            resumes.set(msg.id, resume)
            postMessage({ type: 'paused', id: msg.id })
          }),
      )
      .then(
        (r) => postMessage({ type: 'backed-up', id: msg.id, result: r }),
        (e) => postMessage({ type: 'failed', id: msg.id, error: String(e) }),
      )
  } else if (msg.type === 'export') {
    engine!.exportTo(msg.spec, msg.dest).then(
      () => postMessage({ type: 'written', id: msg.id }),
      (e) => postMessage({ type: 'failed', id: msg.id, error: String(e) }),
    )
  } else if (msg.type === 'resume') {
    resumes.get(msg.id)?.()
    resumes.delete(msg.id)
  } else if (msg.type === 'begin') {
    engine!
      .snapshot(
        (tx) =>
          new Promise<void>((end) => {
            snapshots.set(msg.id, { tx, end })
            postMessage({ type: 'begun', id: msg.id, rolled: tx.rolled, legacy: tx.legacy })
          }),
      )
      .catch((e) => postMessage({ type: 'begin-failed', id: msg.id, error: String(e) }))
  } else if (msg.type === 'run') {
    const snap = snapshots.get(msg.id)
    if (!snap) postMessage({ type: 'run-failed', req: msg.req, error: 'no such snapshot' })
    else
      snap.tx.run(msg.statements).then(
        (rows) => postMessage({ type: 'rows', req: msg.req, rows }),
        (e) => postMessage({ type: 'run-failed', req: msg.req, error: String(e) }),
      )
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
