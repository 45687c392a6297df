/**
 * The click writer on its own thread: SQLite inserts of a busy redirect server would
 * otherwise block the event loop for milliseconds per batch. Its own connection to the
 * same WAL store. `onmessage` is registered before anything else (a compiled binary
 * needs that of a worker).
 */
import { connectStore, type Db } from '../store'
import type { ClickEvent } from './click-event'
import { createEventWriter } from './click-writer'

declare const self: Worker

let db: Db | null = null
let write: ((events: ClickEvent[]) => void) | null = null

type Message = { type: 'open'; path: string } | { type: 'write'; id: number; events: ClickEvent[] } | { type: 'close' }

self.onmessage = (ev: MessageEvent<Message>) => {
  const msg = ev.data
  if (msg.type === 'open') {
    try {
      db = connectStore(msg.path)
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
