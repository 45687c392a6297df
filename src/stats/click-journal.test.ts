/**
 * The click journal (click-journal.ts) and the recorder's use of it on a SQLite store file with
 * its events engine (DuckDB, in its worker): visits beyond the memory bound, or refused by the
 * store, wait in the journal and are written exactly once when the store takes them again,
 * across a kill -9 of the recorder's process, even one that lands between a chunk's commit and
 * the journal's note of it (the mark is stored in the DuckDB file with the chunk's events).
 */
import { afterEach, beforeEach, expect, test } from 'bun:test'
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { until } from '../../test/helpers/poll'
import type { ClickEvent } from './click-event'
import { journalKey, markedSqliteWriter, openClickJournal } from './click-journal'
import { acceptAndDrain, distinctVisit, recorderOn, refuseClicks, storedClicks, storedCounters, storeWithLinks } from './click-journal.test-fixtures'
import { toRow } from './click-recorder'
import { createEventWriter } from './click-writer'
import { openEventsEngine } from './events.engine'

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

test('a chunk read ahead (after the one being written) holds the next rows; until that one is applied, a plain read gives it again', () => {
  const journal = openClickJournal(dir)
  const written = rows(0, 100)
  journal.append(written)
  const first = journal.read(4096)!
  const second = journal.read(4096, first)!
  expect(second.rows[0]).toEqual(written[first.rows.length])
  expect(second.mark.upTo).toBeGreaterThan(first.mark.upTo)
  // The first failed: nothing moved, it comes back as it was.
  expect(journal.read(4096)).toEqual(first)
  journal.applied(first)
  journal.applied(second)
  expect(journal.visits()).toBe(100 - first.rows.length - second.rows.length)
  const rest: ClickEvent[] = []
  for (let chunk = journal.read(4096); chunk; chunk = journal.read(4096)) {
    rest.push(...chunk.rows)
    journal.applied(chunk)
  }
  expect([...first.rows, ...second.rows, ...rest]).toEqual(written)
  journal.close()
})

test("a row's optional fields (click ids, A/B variant) come back in one tail after its visits; a plain row has no tail", () => {
  const journal = openClickJournal(dir)
  const written = rows(0, 4)
  const ids = `${'A'.repeat(22)}@${AT} ${'B'.repeat(22)}@${AT + 1}`
  written[1]!.tracked = ids
  written[2]!.variant = 0
  written[3]!.tracked = ids
  written[3]!.variant = 2
  journal.append(written)
  const chunk = journal.read(1 << 20)!
  expect(chunk.rows).toEqual(written)
  expect(chunk.rows.map((r) => [r.tracked, r.variant])).toEqual([
    [null, null],
    [ids, null],
    [null, 0],
    [ids, 2],
  ])
  const lines = readFileSync(join(dir, 'clicks.journal'), 'utf8')
    .split('\n')
    .slice(1, 5)
    .map((l) => JSON.parse(l) as unknown[])
  const plain = lines[0]!.length
  expect(lines[0]!.at(-1)).toBe(1) // the visits last, as every line before optional fields
  expect(lines.slice(1).map((l) => [l.length, l.at(-1)])).toEqual([
    [plain + 1, { t: ids }],
    [plain + 1, { v: 0 }],
    [plain + 1, { t: ids, v: 2 }],
  ])
  journal.close()
})

test('lines written before the tail (plain, or click ids as a bare string after the visits) read as they meant', () => {
  const journal = openClickJournal(dir)
  const written = rows(0, 2)
  journal.append(written)
  journal.close()
  // Rewrite the second line as the conversions-only journal wrote a tracked row: its ids as a string.
  const file = join(dir, 'clicks.journal')
  const [header, plainLine, oldLine] = readFileSync(file, 'utf8').split('\n')
  const ids = `${'C'.repeat(22)}@${AT}`
  const oldValues = JSON.parse(oldLine!) as unknown[]
  writeFileSync(file, `${header}\n${plainLine}\n${JSON.stringify([...oldValues, ids])}\n`)
  const again = openClickJournal(dir)
  const back = again.read(1 << 20)!.rows
  expect(back).toEqual([written[0]!, { ...written[1]!, tracked: ids }])
  expect(back.map((r) => [r.tracked, r.variant])).toEqual([
    [null, null],
    [ids, null],
  ])
  again.close()
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

test('a chunk offered twice is written once: its mark is kept with the rows (SQLite events, while an upgrade moves them)', () => {
  const db = storeWithLinks(join(dir, 'shortlink.db'))
  db.run(
    `CREATE TRIGGER refuse_events BEFORE INSERT ON click_events_compact WHEN (SELECT count(*) FROM kv WHERE key = 'refuse') > 0 BEGIN SELECT RAISE(ABORT, 'store refuses'); END`,
  )
  const write = markedSqliteWriter(db, createEventWriter(db))
  const mark = { journal: 'j1', upTo: 500 }
  expect(write(rows(0, 10), mark)).toBe(true)
  expect(write(rows(0, 10), mark)).toBe(false)
  expect(write(rows(0, 10), { journal: 'j1', upTo: 400 })).toBe(false)
  expect(db.query<{ n: number }, []>('SELECT sum(n) AS n FROM click_events').get()!.n).toBe(10)
  expect(storedCounters(db)).toBe(10)
  expect(db.query('SELECT value FROM kv WHERE key = ?').get(journalKey('j1'))).toEqual({ value: '500' })
  // A failed write leaves the mark where it was.
  db.run("INSERT INTO kv (key, value) VALUES ('refuse', '1')")
  expect(() => write(rows(10, 5), { journal: 'j1', upTo: 600 })).toThrow('store refuses')
  expect(db.query('SELECT value FROM kv WHERE key = ?').get(journalKey('j1'))).toEqual({ value: '500' })
  db.close()
})

test('a chunk offered twice is written once by the events engine: its mark is kept in DuckDB with the events', async () => {
  const db = storeWithLinks(join(dir, 'shortlink.db'))
  const engine = await openEventsEngine(db, { path: ':memory:', dataDir: dir, threads: 1 })
  const events = async () =>
    (await engine.snapshot(async (tx) => (await tx.run([{ sql: 'SELECT coalesce(sum(n), 0)::DOUBLE AS n FROM events', args: [] }]))[0]![0]!.n)) as number
  const mark = { journal: 'j1', upTo: 500 }
  expect(await engine.write(rows(0, 10), mark)).toBe(true)
  expect(await engine.write(rows(0, 10), mark)).toBe(false)
  expect(await engine.write(rows(0, 10), { journal: 'j1', upTo: 400 })).toBe(false)
  expect({ events: await events(), counters: storedCounters(db) }).toEqual({ events: 10, counters: 10 })
  expect(await engine.journalMark('j1')).toBe(500)
  expect(await engine.journalMark('j2')).toBeNull()
  // A failed write (a link this engine has not numbered yet, the store refusing) leaves the mark where it was.
  refuseClicks(db, true)
  const unnumbered = { ...rows(10, 1)[0]!, linkSeq: 4 }
  await expect(engine.write([unnumbered], { journal: 'j1', upTo: 600 })).rejects.toThrow('store refuses')
  expect(await engine.journalMark('j1')).toBe(500)
  expect(await events()).toBe(10)
  await engine.close()
  db.close()
})

test('thousands of visits beyond the memory bound, refused by the store, are each written once when it takes them again', async () => {
  const path = join(dir, 'shortlink.db')
  const db = storeWithLinks(path)
  refuseClicks(db, true)
  const recorder = recorderOn(db, path, { maxHeldRows: 50, maxBatch: 1_000_000 })
  const visits = 5000
  for (let i = 0; i < visits; i++) {
    recorder.record(distinctVisit(i))
    expect(recorder.held().rows).toBeLessThanOrEqual(50)
    if (i % 1000 === 999) await recorder.flush()
  }
  await recorder.flush()
  expect(recorder.pendingCount()).toBe(visits)
  expect(storedCounters(db)).toBe(0)
  expect(await acceptAndDrain(recorder, db, path)).toEqual({ events: visits, counters: visits })
  const perLink = db.query<{ seq: number; clicks: number }, []>('SELECT seq, clicks FROM links ORDER BY seq').all()
  expect(perLink).toEqual([0, 1, 2].map((k) => ({ seq: k + 1, clicks: Math.ceil((visits - k) / 3) })))
  db.close()
})

test('SIGTERM with the store refusing: what is held goes to the journal, and the next start writes it', async () => {
  const path = join(dir, 'shortlink.db')
  const db = storeWithLinks(path)
  refuseClicks(db, true)
  const recorder = recorderOn(db, path)
  for (let i = 0; i < 300; i++) recorder.record(distinctVisit(i))
  await recorder.stop()
  refuseClicks(db, false)
  const next = recorderOn(db, path)
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
  expect(await storedClicks(db, path)).toEqual({ events: 300, counters: 300 })
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
  expect(storedCounters(db)).toBe(0)
  refuseClicks(db, false)

  // Small chunks: hundreds of transactions, killed while some are written and others not.
  const draining = spawnRecorder('drain', path, '1024')
  expect(await draining.firstLine).toBe('started')
  const seen = await until(
    'some chunks written',
    async () => storedCounters(db),
    (n) => n > 0,
  )
  expect(seen).toBeLessThan(visits)
  draining.proc.kill('SIGKILL')
  await draining.proc.exited
  const afterKill = storedCounters(db)
  expect(afterKill).toBeLessThan(visits)

  // Larger chunks than the killed process read: the first one starts below the store's mark and ends past it.
  const recorder = recorderOn(db, path)
  recorder.start()
  await until(
    'the rest written',
    async () => recorder.pendingCount(),
    (n) => n === 0,
  )
  await recorder.stop()
  expect(await storedClicks(db, path)).toEqual({ events: visits, counters: visits })
  db.close()
})
