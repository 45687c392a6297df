/**
 * The click writer on its own thread: SQLite inserts of a busy redirect server would
 * otherwise block the event loop for milliseconds per batch. Its own connection to the
 * same WAL store. `onmessage` is registered before anything else (a compiled binary
 * needs that of a worker).
 */
import { Database } from 'bun:sqlite'
import { createEventWriter } from './click-writer'
import type { ClickEvent } from './click-event'

declare const self: Worker

let db: Database | null = null
let write: ((events: ClickEvent[]) => void) | null = null

type Message = { type: 'open'; path: string } | { type: 'write'; id: number; events: ClickEvent[] } | { type: 'close' }

self.onmessage = (ev: MessageEvent<Message>) => {
  const msg = ev.data
  if (msg.type === 'open') {
    try {
      db = new Database(msg.path, { strict: true })
      db.exec('PRAGMA journal_mode = WAL')
      db.exec('PRAGMA busy_timeout = 5000')
      db.exec('PRAGMA synchronous = NORMAL')
      write = createEventWriter(db)
      postMessage({ type: 'opened' })
    } catch (e) {
      postMessage({ type: 'open-failed', error: String(e) })
    }
  } else if (msg.type === 'write') {
    try {
      write!(msg.events)
      postMessage({ type: 'written', id: msg.id })
    } catch (e) {
      postMessage({ type: 'failed', id: msg.id, error: String(e) })
    }
  } else if (msg.type === 'close') {
    db?.close()
    postMessage({ type: 'closed' })
  }
}
