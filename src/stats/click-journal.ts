/**
 * The click journal: an append-only file in the data dir (`clicks.journal`) where the recorder
 * puts click rows it cannot hold in memory (the store is slower than the visits, or failing),
 * and from which it writes them to the store later, chunk by chunk.
 *
 * - Format: a header line `{"journal":"<id>","base":<n>}`, then one JSON array per row
 *   (ClickEvent's fields in FIELDS order, then an object of its optional fields when it has any). Appends are buffered in memory and written to the
 *   file at every flush tick (`sync`), so a kill -9 loses at most the rows of one flush window;
 *   a torn last line (killed mid-append) is cut off when the file is opened again.
 * - Exactly once: a chunk is written to the store with a mark `{ journal, upTo }` (its end as a
 *   position in the journal's byte stream), and the store keeps the highest mark applied per
 *   journal in `kv` in the same transaction as the rows; a chunk at or below it is skipped. After
 *   a restart the recorder reads that mark before the first chunk and skips the rows below it
 *   (`skipTo`): a kill -9 between a chunk's commit and the journal's next step costs nothing.
 * - Positions never go back: once every row is written the file is emptied and starts again at
 *   `base` = the position reached, under the same journal id (one `kv` row per data dir).
 */

import type { Database } from 'bun:sqlite'
import { closeSync, existsSync, fstatSync, ftruncateSync, openSync, readSync, writeSync } from 'node:fs'
import { join } from 'node:path'
import type { ClickEvent } from './click-event'
import { DIMENSIONS } from './stats.rollup'

/** Where a chunk of journal rows ends: the store applies a chunk once per journal and position. */
export interface JournalMark {
  journal: string
  upTo: number
}

/** The `kv` key holding the last position of `journal` applied to the store. */
export const journalKey = (journal: string) => `click_journal:${journal}`

/** A chunk read from the journal: its rows, its mark, and the visits of each link in it. */
export interface JournalChunk {
  rows: ClickEvent[]
  mark: JournalMark
  visits: number
}

/** A row's fields in journal order: the event's own, then its dimensions (stats.rollup.ts), then its visits. */
const FIELDS: readonly (keyof ClickEvent)[] = ['linkSeq', 'domain', 'at', 'scan', 'continent', ...DIMENSIONS.map((d) => d.key), 'n']

/**
 * A row's optional fields, each under a short key in one object after the visits (the line's tail),
 * present only when one of them is set: a plain row's line is FIELDS alone, as before either existed.
 * A new optional field is one more key here, never one more position. Lines written before the tail
 * (conversions alone) carry the click ids as a bare string in its place; they read the same.
 */
const TAIL = { t: 'tracked', v: 'variant' } as const satisfies Record<string, keyof ClickEvent>
const TAIL_KEYS = Object.keys(TAIL) as (keyof typeof TAIL)[]

const lineOf = (r: ClickEvent) => {
  const values: unknown[] = FIELDS.map((f) => r[f])
  const tail: Record<string, unknown> = {}
  let tailed = false
  for (const k of TAIL_KEYS) {
    const v = r[TAIL[k]]
    if (v == null) continue
    tail[k] = v
    tailed = true
  }
  if (tailed) values.push(tail)
  return `${JSON.stringify(values)}\n`
}

function rowOf(values: unknown[]): ClickEvent {
  const r = {} as Record<string, unknown>
  for (let i = 0; i < FIELDS.length; i++) r[FIELDS[i]!] = values[i]
  const last = values[FIELDS.length]
  const tail = (typeof last === 'string' ? { t: last } : (last ?? {})) as Record<string, unknown>
  for (const k of TAIL_KEYS) r[TAIL[k]] = tail[k] ?? null
  return r as unknown as ClickEvent
}

/** Bytes appended in memory before they are written to the file without waiting for the tick. */
const BUFFER_BYTES = 4 * 2 ** 20

export type ClickJournal = ReturnType<typeof openClickJournal>

/** Opens (or creates) the journal in `dir`, cutting a torn last line; reading starts at its first row (see skipTo). */
export function openClickJournal(dir: string) {
  const path = join(dir, 'clicks.journal')
  let id: string = crypto.randomUUID()
  /** Position of the file's first byte after the header. */
  let base = 0
  let headerBytes = 0
  /** Read position in the file (bytes), and the file's size on disk. */
  let readAt = 0
  let size = 0
  let buffer: string[] = []
  let bufferBytes = 0
  /** Visits of the buffered rows (not in the file yet). */
  let bufferVisits = 0
  /** Visits in the journal not yet written to the store: all, and per link. */
  let visits = 0
  const perLink = new Map<number, number>()
  const countRow = (r: ClickEvent, sign: 1 | -1) => {
    visits += sign * r.n
    const n = (perLink.get(r.linkSeq) ?? 0) + sign * r.n
    if (n > 0) perLink.set(r.linkSeq, n)
    else perLink.delete(r.linkSeq)
  }
  const count = (rows: Iterable<ClickEvent>, sign: 1 | -1) => {
    for (const r of rows) countRow(r, sign)
  }
  const fd = openSync(path, existsSync(path) ? 'r+' : 'w+', 0o600)

  function writeHeader() {
    const header = `${JSON.stringify({ journal: id, base })}\n`
    ftruncateSync(fd, 0)
    writeSync(fd, header, 0)
    headerBytes = Buffer.byteLength(header)
    size = headerBytes
    readAt = headerBytes
  }

  /** Reads [from, to) of the file. */
  function readRange(from: number, to: number): Buffer {
    const out = Buffer.allocUnsafe(to - from)
    let got = 0
    while (got < out.length) {
      const n = readSync(fd, out, got, out.length - got, from + got)
      if (n === 0) break
      got += n
    }
    return out.subarray(0, got)
  }

  /** Rows of complete lines in `bytes`, and how many bytes those lines take. */
  function parseLines(bytes: Buffer): { rows: ClickEvent[]; used: number } {
    const end = bytes.lastIndexOf(10)
    if (end < 0) return { rows: [], used: 0 }
    const text = bytes.subarray(0, end).toString('utf8')
    const rows = (JSON.parse(`[${text.replaceAll('\n', ',')}]`) as unknown[][]).map(rowOf)
    return { rows, used: end + 1 }
  }

  // Recovery: the header, the rows, a torn last line.
  size = fstatSync(fd).size
  const head = size ? readRange(0, Math.min(size, 4096)) : Buffer.alloc(0)
  const nl = head.indexOf(10)
  let header: { journal?: unknown; base?: unknown } | null = null
  try {
    if (nl > 0) header = JSON.parse(head.subarray(0, nl).toString('utf8'))
  } catch {}
  if (header && typeof header.journal === 'string' && typeof header.base === 'number') {
    id = header.journal
    base = header.base
    headerBytes = nl + 1
    readAt = headerBytes
    let at = readAt
    while (at < size) {
      const { rows, used } = parseLines(readRange(at, Math.min(size, at + BUFFER_BYTES)))
      if (used === 0) break
      count(rows, 1)
      at += used
    }
    if (at < size) {
      ftruncateSync(fd, at)
      size = at
    }
  } else writeHeader()

  /** Moves past `rows` (read at readAt): written to the store; an emptied journal starts again. */
  function advance(to: number, rows: ClickEvent[]) {
    readAt = to
    count(rows, -1)
    if (readAt >= size && !bufferBytes) {
      base += readAt - headerBytes
      writeHeader()
    }
  }

  /**
   * Writes the buffered rows to the file (not fsync'd: a kill -9 of the process keeps them; the
   * OS has them). A write that fails (a full disk) throws and keeps them buffered, the file cut
   * back to its last whole line.
   */
  function sync() {
    if (!bufferBytes) return
    const text = Buffer.from(buffer.join(''))
    let written = 0
    try {
      while (written < text.length) written += writeSync(fd, text, written, text.length - written, size + written)
    } catch (e) {
      try {
        ftruncateSync(fd, size)
      } catch {}
      throw e
    }
    size += written
    buffer = []
    bufferBytes = 0
    bufferVisits = 0
  }

  return {
    id: () => id,
    /** Appends rows (written to the file by the next `sync`, or at once past a few MB). */
    append(rows: Iterable<ClickEvent>) {
      for (const r of rows) {
        const line = lineOf(r)
        buffer.push(line)
        bufferBytes += line.length
        bufferVisits += r.n
        countRow(r, 1)
      }
      if (bufferBytes >= BUFFER_BYTES)
        try {
          sync()
        } catch {} // kept buffered; the next flush tick tries again and reports it
    },
    sync,
    /** Visits appended but not in the file yet (lost if the process ends before a sync). */
    unsynced: () => bufferVisits,
    /** Visits in the journal not yet written to the store (of one link). */
    visits: (linkSeq?: number) => (linkSeq === undefined ? visits : (perLink.get(linkSeq) ?? 0)),
    /**
     * The next chunk of at most about `maxBytes` (at least one row), or null when every row is written;
     * `after`: the chunk after that one, read while it is being written (applied in the order read).
     */
    read(maxBytes: number, after?: JournalChunk): JournalChunk | null {
      try {
        sync()
      } catch {} // what the file holds is read; the rest stays buffered
      const from = after ? Math.max(readAt, after.mark.upTo - base + headerBytes) : readAt
      if (from >= size) return null
      let bytes = readRange(from, Math.min(size, from + maxBytes))
      if (bytes.lastIndexOf(10) < 0) bytes = readRange(from, size)
      const { rows, used } = parseLines(bytes)
      if (!used) return null
      let n = 0
      for (const r of rows) n += r.n
      return { rows, mark: { journal: id, upTo: base + from - headerBytes + used }, visits: n }
    },
    /** The chunk `read` returned is in the store: move past it. */
    applied(chunk: JournalChunk) {
      const at = chunk.mark.upTo - base + headerBytes
      if (at > readAt) advance(at, chunk.rows)
    },
    /** The store holds every row up to `upTo` (its mark of this journal, after a restart): skip them. */
    skipTo(upTo: number) {
      const to = Math.min(size, upTo - base + headerBytes)
      if (to <= readAt) return
      const { rows, used } = parseLines(readRange(readAt, to))
      advance(readAt + used, rows)
    },
    close() {
      sync()
      closeSync(fd)
    },
  }
}

/**
 * SQLite's side of the marks: `write` (the event writer) runs inside one transaction with the
 * journal's position in `kv`, and is skipped when that position is already applied.
 */
export function markedSqliteWriter(db: Database, write: (rows: ClickEvent[]) => void): (rows: ClickEvent[], mark?: JournalMark) => boolean {
  const get = db.query<{ value: string }, [string]>('SELECT value FROM kv WHERE key = ?')
  const set = db.query('INSERT INTO kv (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value')
  const marked = db.transaction((rows: ClickEvent[], mark: JournalMark): boolean => {
    if (Number(get.get(journalKey(mark.journal))?.value ?? -1) >= mark.upTo) return false
    write(rows)
    set.run(journalKey(mark.journal), String(mark.upTo))
    return true
  })
  return (rows, mark) => {
    if (mark) return marked.immediate(rows, mark)
    write(rows)
    return true
  }
}

/** SQLite's mark of `journal`: the position its rows are written up to, or null. */
export function sqliteJournalMark(db: Database, journal: string): number | null {
  const row = db.query<{ value: string }, [string]>('SELECT value FROM kv WHERE key = ?').get(journalKey(journal))
  return row ? Number(row.value) : null
}
