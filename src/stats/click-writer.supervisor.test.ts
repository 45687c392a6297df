/**
 * A click writer thread that fails to open, throws, exits or stops answering is noticed at
 * once (an error in the log, health() not ok), replaced, and every visit of the run is still
 * written exactly once: the links' counters in SQLite and the events in DuckDB. The threads are
 * real (the events engine's worker, click-writer.worker.ts, on a store file), broken by the
 * test-only fault hook (click-writer.faults.ts).
 */
import { afterAll, expect, test } from 'bun:test'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { until } from '../../test/helpers/poll'
import { createApiApp } from '../app'
import { buildConfig } from '../config/config.load'
import { createDeps } from '../deps'
import type { Logger } from '../shared/log'
import { storePath } from '../store/db'
import { createClickRecorder, createEventsHandle, eventsPathOf, type Visit } from './click-recorder'
import { createSupervisedWriter, errorLine } from './click-writer.supervisor'
import { inspectEventsStore } from './events.engine'
import { visitFromPage } from './visit.test-fixtures'

const root = mkdtempSync(join(tmpdir(), 'shortlink-writer-'))
afterAll(() => rmSync(root, { recursive: true, force: true }))

let stores = 0
/** A store file with one link, a recorder on it broken by `fault`, and what it logs. */
async function setup(fault: string, writerStallMs?: number) {
  const dataDir = join(root, `store-${++stores}`)
  const lines: { level: string; msg: string; fields: Record<string, unknown> }[] = []
  const log: Logger = {
    info: (msg, fields = {}) => void lines.push({ level: 'info', msg, fields }),
    warn: (msg, fields = {}) => void lines.push({ level: 'warn', msg, fields }),
    error: (msg, fields = {}) => void lines.push({ level: 'error', msg, fields }),
  }
  const deps = createDeps(buildConfig({ server: { dataDir } }, {}), storePath(dataDir), log)
  const app = createApiApp(deps)
  const key = deps.auth.createKey('usr_admin', 'admin').key
  const made = await app.handle(
    new Request(`https://localhost${deps.settings.apiPrefix}/links/link`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ data: { url: 'https://dest.example/' } }),
    }),
    '127.0.0.1',
  )
  expect(made.status).toBe(200)
  const { id } = (await made.json()) as { id: string }
  const { seq } = deps.db.query<{ seq: number }, [string]>('SELECT seq FROM links WHERE id = ?').get(id)!
  const events = createEventsHandle(deps.db, storePath(dataDir), log, { writerFault: fault, writerStallMs })
  const recorder = createClickRecorder(events, log, { maxBatch: 1_000_000 })
  let visits = 0
  /** `n` visits, each its own row (a different referer), then a flush. */
  const visitAndFlush = async (n: number) => {
    for (let i = 0; i < n; i++) recorder.record(visit(seq, ++visits))
    await recorder.flush()
  }
  const stored = () => deps.db.query<{ clicks: number }, [number]>('SELECT clicks FROM links WHERE seq = ?').get(seq)!.clicks
  /** Flushes until nothing is held (a new writer may still be starting), then checks every visit is counted once. */
  const allStored = async () => {
    await until('every visit written', async () => {
      await recorder.flush()
      return recorder.pendingCount() === 0
    })
    expect(stored()).toBe(visits)
  }
  /** After stop(): the events file holds every visit once, as the counters do. */
  const eventsStoredOnce = async () => {
    const inFile = await inspectEventsStore(eventsPathOf(storePath(dataDir)), dataDir)
    expect({ clicks: stored(), events: inFile.clicks }).toEqual({ clicks: visits, events: visits })
  }
  const errors = () => lines.filter((l) => l.level === 'error').map((l) => l.msg)
  return { recorder, events, visitAndFlush, allStored, eventsStoredOnce, errors, lines, close: () => deps.db.close() }
}

const visit = (linkSeq: number, i: number): Visit => visitFromPage(linkSeq, Date.now() - 60_000 + i, i)

for (const [fault, said] of [
  ['crash@2', /^the click writer thread failed: test fault: the click writer crashes before write 3; starting a new one$/],
  ['exit@2', /^the click writer thread ended \(exit code 70\); starting a new one$/],
  ['hang@2;answerMs=3000', /^the click writer thread did not answer a write within 3000 ms; starting a new one$/],
] as const) {
  test(`a writer that ${fault.split('@')[0]}s after two batches is replaced at once, and every visit is written once`, async () => {
    const s = await setup(fault)
    await s.visitAndFlush(5)
    await s.visitAndFlush(5)
    expect(s.recorder.health()).toMatchObject({ ok: true, writer: { state: 'ready', restarts: 0 } })
    await s.visitAndFlush(7) // the third batch breaks it: its rows are kept
    expect(s.errors()).toContainEqual(expect.stringMatching(said))
    expect(s.recorder.health()).toMatchObject({ ok: false, writer: { state: 'restarting', restarts: 1 } })
    expect(s.recorder.pendingCount()).toBe(7)
    await s.visitAndFlush(3)
    await s.allStored()
    expect(s.recorder.health()).toMatchObject({ ok: true, writer: { state: 'ready', restarts: 1 } })
    await s.recorder.stop()
    await s.eventsStoredOnce()
    s.close()
  })
}

test('a writer stuck on a batch makes health() not ok before it is given up', async () => {
  const s = await setup('hang@0;answerMs=5000', 300)
  await s.events.compact() // as below
  const flushed = s.visitAndFlush(4)
  // Stuck for longer than the stall bound (300 ms): not ok, while still "ready"; given up after 5 s.
  await until(
    'the stuck batch to show in health()',
    async () => s.recorder.health(),
    (h) => !h.ok && h.writer?.state === 'ready',
  )
  await flushed
  await s.allStored()
  await s.recorder.stop()
  await s.eventsStoredOnce()
  s.close()
})

test('writers that cannot even open, one after another, end in writes on the main thread; nothing is lost', async () => {
  const s = await setup('crash@open*99')
  await s.visitAndFlush(6)
  await s.allStored()
  expect(s.errors().filter((m) => m.startsWith('the click writer thread failed: test fault: the click writer crashes while opening'))).toHaveLength(3)
  expect(s.lines).toContainEqual(expect.objectContaining({ level: 'warn', msg: 'click writer: writing on the main thread from now on' }))
  expect(s.recorder.health()).toMatchObject({ ok: true, writer: { state: 'inline', restarts: 3 } })
  await s.recorder.stop()
  await s.eventsStoredOnce()
  s.close()
})

test('stop() with a writer stuck on a batch writes what is held on the main thread instead of waiting for it', async () => {
  // It would answer in ten minutes; after 300 ms it counts as stuck.
  const s = await setup('hang@0;answerMs=600000', 300)
  // The roll-up an empty store starts when it opens is done first: a thread terminated while
  // DuckDB works for it takes the process down (Bun 1.4.5, a native callback into a dead thread).
  await s.events.compact()
  const flushed = s.visitAndFlush(9)
  await until(
    'the batch to be in the writer',
    async () => s.recorder.health(),
    (h) => (h.writer?.waitingMs ?? 0) > 0,
  )
  await s.recorder.stop()
  await flushed
  expect(s.recorder.pendingCount()).toBe(0)
  expect(s.lines).toContainEqual(
    expect.objectContaining({ msg: 'click writer: writing on the main thread from now on', fields: { reason: 'stopping with no writer thread ready' } }),
  )
  await s.allStored()
  await s.eventsStoredOnce()
  s.close()
})

test("a worker's error report is cut to its error line (Bun adds a source listing)", () => {
  const reported = "1 | self.onmessage = () => {\n2 |   throw new Error('boom')\n                  ^\nerror: boom\n      at <anonymous> (/x/worker.ts:2:9)\n"
  expect(errorLine(reported)).toBe('boom')
  expect(errorLine('Error: plain')).toBe('Error: plain')
})

test('closing twice (the recorder stops, then the store closes) ends at once the second time', async () => {
  let worker!: Worker
  const source = `self.onmessage = (e) => {
    if (e.data.type === 'open') postMessage({ type: 'opened' })
    if (e.data.type === 'close') postMessage({ type: 'closed' })
  }`
  const quiet: Logger = { info: () => {}, warn: () => {}, error: () => {} }
  const writer = createSupervisedWriter({
    spawn: () => {
      worker = new Worker(URL.createObjectURL(new Blob([source], { type: 'application/javascript' })))
      return worker
    },
    openMessage: () => ({ type: 'open' }),
    log: quiet,
  })
  expect('channel' in (await writer.connect())).toBe(true)
  const ended = new Promise((resolve) => worker.addEventListener('close', resolve))
  await writer.close()
  await ended
  // The thread is gone: a second close that asked it again waited out the 60 s answer bound (the test's 10 s limit fails it).
  expect(await writer.close()).toBeNull()
}, 10_000)
