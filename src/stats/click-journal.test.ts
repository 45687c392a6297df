/**
 * The click journal (click-journal.ts) and the recorder's use of it on a SQLite store file:
 * visits beyond the memory bound, or refused by the store, wait in the journal and are written
 * exactly once when the store takes them again, across a kill -9 of the recorder's process,
 * even one that lands between a chunk's commit and the journal's note of it.
 */
import { afterEach, beforeEach, expect, test } from 'bun:test'
import { mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { until } from '../../test/helpers/poll'
import type { ClickEvent } from './click-event'
import { journalKey, markedSqliteWriter, openClickJournal } from './click-journal'
import { distinctVisit, quietLog, refuseClicks, storedClicks, storeWithLinks } from './click-journal.test-fixtures'
import { createClickRecorder, toRow } from './click-recorder'
import { createEventWriter } from './click-writer'

let dir: string
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'click-journal-'))
})
afterEach(() => rmSync(dir, { recursive: true, force: true }))

const AT = Date.parse('2026-03-01T12:00:00Z')
const rows = (from: number, count: number): ClickEvent[] => Array.from({ length: count }, (_, i) => toRow(distinctVisit(from + i, AT)))

test('rows come back as they went in, chunk by chunk, at positions that only grow, also after the file empties', () => {
  const journal = openClickJournal(dir)
  const written = rows(0, 300)
  written[7]!.refererUrl = 'https://odd.example/tab\there\\back\nline "quoted" ünïcode'
  journal.append(written)
  expect(journal.visits()).toBe(300)
  const back: ClickEvent[] = []
  let last = -1
  for (let chunk = journal.read(2048); chunk; chunk = journal.read(2048)) {
    expect(chunk.mark.journal).toBe(journal.id())
    expect(chunk.mark.upTo).toBeGreaterThan(last)
    last = chunk.mark.upTo
    back.push(...chunk.rows)
    journal.applied(chunk)
  }
  expect(back).toEqual(written)
  expect(journal.visits()).toBe(0)
  // Emptied: the file holds its header only, and the next rows are past every position used.
  expect(statSync(join(dir, 'clicks.journal')).size).toBeLessThan(100)
  journal.append(rows(300, 1))
  const next = journal.read(2048)!
  expect(next.mark.upTo).toBeGreaterThan(last)
  expect(next.rows).toEqual(rows(300, 1))
  journal.close()
})

test('reopened: every row is there again, a torn last line is cut, and rows the store already holds are skipped', () => {
  const journal = openClickJournal(dir)
  journal.append(rows(0, 100))
  const first = journal.read(1024)!
  journal.close() // killed before it heard that `first` was written
  // A kill -9 in the middle of an append: half a line at the end.
  writeFileSync(join(dir, 'clicks.journal'), '[1,"localhost",17', { flag: 'a' })
  const again = openClickJournal(dir)
  expect(again.id()).toBe(first.mark.journal)
  expect(again.visits()).toBe(100)
  // The store's mark says `first` is in: the rest, and only the rest, comes back.
  again.skipTo(first.mark.upTo)
  const left = rows(first.rows.length, 100 - first.rows.length)
  expect(again.visits()).toBe(left.length)
  expect(again.visits(1)).toBe(left.filter((r) => r.linkSeq === 1).length)
  const rest: ClickEvent[] = []
  for (let chunk = again.read(1 << 20); chunk; chunk = again.read(1 << 20)) {
    rest.push(...chunk.rows)
    again.applied(chunk)
  }
  expect(rest).toEqual(left)
  again.close()
})

test('a chunk offered twice is written once: its mark is kept with the rows', () => {
  const db = storeWithLinks(join(dir, 'shortlink.db'))
  const write = markedSqliteWriter(db, createEventWriter(db))
  const mark = { journal: 'j1', upTo: 500 }
  expect(write(rows(0, 10), mark)).toBe(true)
  expect(write(rows(0, 10), mark)).toBe(false)
  expect(write(rows(0, 10), { journal: 'j1', upTo: 400 })).toBe(false)
  expect(storedClicks(db)).toEqual({ events: 10, counters: 10 })
  expect(db.query('SELECT value FROM kv WHERE key = ?').get(journalKey('j1'))).toEqual({ value: '500' })
  // A failed write leaves the mark where it was.
  refuseClicks(db, true)
  expect(() => write(rows(10, 5), { journal: 'j1', upTo: 600 })).toThrow('store refuses')
  expect(db.query('SELECT value FROM kv WHERE key = ?').get(journalKey('j1'))).toEqual({ value: '500' })
  db.close()
})

test('thousands of visits beyond the memory bound, refused by the store, are each written once when it takes them again', async () => {
  const path = join(dir, 'shortlink.db')
  const db = storeWithLinks(path)
  refuseClicks(db, true)
  const recorder = createClickRecorder(db, path, quietLog, { maxHeldRows: 50, maxBatch: 1_000_000 })
  const visits = 5000
  for (let i = 0; i < visits; i++) {
    recorder.record(distinctVisit(i))
    expect(recorder.held().rows).toBeLessThanOrEqual(50)
    if (i % 1000 === 999) await recorder.flush()
  }
  await recorder.flush()
  expect(recorder.pendingCount()).toBe(visits)
  expect(storedClicks(db)).toEqual({ events: 0, counters: 0 })
  refuseClicks(db, false)
  recorder.start()
  await until(
    'every visit written',
    async () => recorder.pendingCount(),
    (n) => n === 0,
  )
  await recorder.stop()
  expect(storedClicks(db)).toEqual({ events: visits, counters: visits })
  const perLink = db.query<{ seq: number; clicks: number }, []>('SELECT seq, clicks FROM links ORDER BY seq').all()
  expect(perLink).toEqual([0, 1, 2].map((k) => ({ seq: k + 1, clicks: Math.ceil((visits - k) / 3) })))
  db.close()
})

test('SIGTERM with the store refusing: what is held goes to the journal, and the next start writes it', async () => {
  const path = join(dir, 'shortlink.db')
  const db = storeWithLinks(path)
  refuseClicks(db, true)
  const recorder = createClickRecorder(db, path, quietLog)
  for (let i = 0; i < 300; i++) recorder.record(distinctVisit(i))
  await recorder.stop()
  refuseClicks(db, false)
  const next = createClickRecorder(db, path, quietLog)
  expect(next.pendingCount()).toBe(0) // the journal is opened at start
  next.start()
  expect(next.pendingCount()).toBe(300)
  expect(next.pendingFor(1)).toBe(100)
  await until(
    'the journal written',
    async () => next.pendingCount(),
    (n) => n === 0,
  )
  await next.stop()
  expect(storedClicks(db)).toEqual({ events: 300, counters: 300 })
  db.close()
})

/** A fixture process (click-journal.test-fixtures.ts) and the first line it prints. */
function spawnRecorder(...args: string[]) {
  const proc = Bun.spawn(['bun', `${import.meta.dir}/click-journal.test-fixtures.ts`, ...args], { stdout: 'pipe', stderr: 'inherit' })
  const firstLine = (async () => {
    let text = ''
    for await (const chunk of proc.stdout.pipeThrough(new TextDecoderStream())) {
      text += chunk
      if (text.includes('\n')) return text.split('\n')[0]!
    }
    throw new Error(`the fixture exited (${await proc.exited}) before printing`)
  })()
  return { proc, firstLine }
}

test('kill -9 after the visits reached the journal, then kill -9 in the middle of writing it back: every visit stored once', async () => {
  const path = join(dir, 'shortlink.db')
  const db = storeWithLinks(path)
  refuseClicks(db, true)
  const visits = 3000
  const recording = spawnRecorder('record', path, String(visits))
  expect(await recording.firstLine).toBe(`journaled ${visits}`)
  recording.proc.kill('SIGKILL')
  await recording.proc.exited
  expect(storedClicks(db).events).toBe(0)
  refuseClicks(db, false)

  // Small chunks: hundreds of transactions, killed while some are written and others not.
  const draining = spawnRecorder('drain', path, '1024')
  expect(await draining.firstLine).toBe('started')
  const seen = await until(
    'some chunks written',
    async () => storedClicks(db).events,
    (n) => n > 0,
  )
  expect(seen).toBeLessThan(visits)
  draining.proc.kill('SIGKILL')
  await draining.proc.exited
  const afterKill = storedClicks(db).events
  expect(afterKill).toBeLessThan(visits)

  // Larger chunks than the killed process read: the first one starts below the store's mark and ends past it.
  const recorder = createClickRecorder(db, path, quietLog)
  recorder.start()
  await until(
    'the rest written',
    async () => recorder.pendingCount(),
    (n) => n === 0,
  )
  await recorder.stop()
  expect(storedClicks(db)).toEqual({ events: visits, counters: visits })
  db.close()
})
