/**
 * The click writer on its own thread: SQLite inserts of a busy redirect server would
 * otherwise block the event loop for milliseconds per batch. Its own connection to the
 * same WAL store. `onmessage` is registered before anything else (a compiled binary
 * needs that of a worker). The main thread watches it (click-writer.supervisor.ts).
 *
 * A test-only fault (`fault` in the open message, from SHORTLINK_TEST_WRITER_FAULT; see
 * click-writer.faults.ts) makes this writer fail the way a broken one would.
 */
import { connectStore, type Db } from '../store'
import type { ClickEvent } from './click-event'
import { createEventWriter } from './click-writer'
import type { WriterFault } from './click-writer.faults'

declare const self: Worker

let db: Db | null = null
let write: ((events: ClickEvent[]) => void) | null = null
let fault: WriterFault | null = null
let writes = 0

type Message = { type: 'open'; path: string; fault?: WriterFault } | { type: 'write'; id: number; events: ClickEvent[] } | { type: 'close' }

/** Fails as `kind` says: throws (an `error` event), exits the thread, or stops answering for good. */
function breakDown(kind: 'crash' | 'exit' | 'hang', when: string): never {
  if (kind === 'exit') process.exit(70)
  if (kind === 'hang') for (;;) {} // until the main thread terminates it
  throw new Error(`test fault: the click writer crashes ${when}`)
}

self.onmessage = (ev: MessageEvent<Message>) => {
  const msg = ev.data
  if (msg.type === 'open') {
    fault = msg.fault ?? null
    if (fault && fault.at === 'open') breakDown(fault.kind, 'while opening')
    try {
      db = connectStore(msg.path)
      write = createEventWriter(db)
      postMessage({ type: 'opened' })
    } catch (e) {
      postMessage({ type: 'open-failed', error: String(e), code: (e as { code?: string }).code })
    }
  } else if (msg.type === 'write') {
    // Before the batch is written: its rows must then be written once, by the next writer.
    if (fault && fault.at !== 'open' && writes >= fault.at) breakDown(fault.kind, `before write ${writes + 1}`)
    writes++
    try {
      write!(msg.events)
      postMessage({ type: 'written', id: msg.id })
    } catch (e) {
      postMessage({ type: 'failed', id: msg.id, error: String(e), code: (e as { code?: string }).code })
    }
  } else if (msg.type === 'close') {
    db?.close()
    postMessage({ type: 'closed' })
  }
}
