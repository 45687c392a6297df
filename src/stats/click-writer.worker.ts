/**
 * The click writer on its own thread: SQLite inserts of a busy redirect server would
 * otherwise block the event loop for milliseconds per batch. Its own connection to the
 * same WAL store. `onmessage` is registered before anything else (a compiled binary
 * needs that of a worker).
 */
import { connectStore, type Db } from '../store'
import type { ClickEvent } from './click-event'
import { type JournalMark, markedSqliteWriter } from './click-journal'
import { createEventWriter } from './click-writer'

declare const self: Worker

let db: Db | null = null
let write: ((events: ClickEvent[], mark?: JournalMark) => boolean) | null = null

type Message = { type: 'open'; path: string } | { type: 'write'; id: number; events: ClickEvent[]; mark?: JournalMark } | { type: 'close' }

self.onmessage = (ev: MessageEvent<Message>) => {
  const msg = ev.data
  if (msg.type === 'open') {
    try {
      db = connectStore(msg.path)
      write = markedSqliteWriter(db, createEventWriter(db))
      postMessage({ type: 'opened' })
    } catch (e) {
      postMessage({ type: 'open-failed', error: String(e) })
    }
  } else if (msg.type === 'write') {
    try {
      const applied = write!(msg.events, msg.mark)
      postMessage({ type: 'written', id: msg.id, applied })
    } catch (e) {
      postMessage({ type: 'failed', id: msg.id, error: String(e) })
    }
  } else if (msg.type === 'close') {
    db?.close()
    postMessage({ type: 'closed' })
  }
}
