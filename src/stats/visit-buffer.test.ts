/**
 * The hot path's hand-off (visit-buffer.ts) and the recorder's flush-side merge of it
 * (click-recorder.ts): the buffer grows, is reused from slot 0 after each merge, and the rows the
 * recorder writes are the rows the former merge-on-record gave (its key, with the whole referer
 * URL, is the reference below), visits beyond the memory bound going to the journal.
 */
import { afterEach, beforeEach, expect, test } from 'bun:test'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { ClickEvent } from './click-event'
import { acceptAndDrain, distinctVisit, recorderOn, refuseClicks, storeWithLinks } from './click-journal.test-fixtures'
import { createClickRecorder, type EventsHandle, toRow, type Visit } from './click-recorder'
import { VisitBuffer } from './visit-buffer'

let dir: string
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'visit-buffer-'))
})
afterEach(() => rmSync(dir, { recursive: true, force: true }))

const quiet = { info() {}, warn() {}, error() {} }

test('the buffer grows past its first capacity keeping every visit, and after clear() starts again at slot 0 without the old references', () => {
  const b = new VisitBuffer(4)
  const visits = Array.from({ length: 11 }, (_, i) => distinctVisit(i))
  for (const v of visits) b.push(v)
  expect(b.capacity).toBe(16)
  expect(b.length).toBe(11)
  for (let i = 0; i < 11; i++) {
    expect([b.linkSeq[i], b.at[i], b.scan[i], b.held.refererUrl[i], b.held.geo[i]]).toEqual([
      visits[i]!.linkSeq,
      visits[i]!.at,
      visits[i]!.scan ? 1 : 0,
      visits[i]!.refererUrl,
      visits[i]!.geo,
    ])
  }
  expect(b.visitsOf(1)).toBe(4)
  expect(b.bytes).toBeGreaterThan(11 * 2 * 'https://ref.example/0'.length)
  b.clear()
  expect([b.length, b.bytes, b.capacity]).toEqual([0, 0, 16])
  expect(b.held.refererUrl.slice(0, 11).every((r) => r === null)).toBe(true)
  // Reused from slot 0: the next visits overwrite the first slots, the rest stay empty.
  b.push(visits[5]!)
  expect([b.length, b.held.refererUrl[0], b.held.refererUrl[1], b.linkSeq[0]]).toEqual([1, visits[5]!.refererUrl, null, visits[5]!.linkSeq])
})

/** Rows as the recorder merged them before the buffer: on record, by a key holding the whole referer URL. */
function mergedOnRecord(visits: Visit[]): ClickEvent[] {
  const rows = new Map<string, ClickEvent>()
  for (const v of visits) {
    const key = `${v.linkSeq}|${v.scan ? 1 : 0}|${v.visitor.id}|${v.geo.id}|${v.utm.id}|${v.refererUrl ?? ''}${v.variant == null ? '' : `|v${v.variant}`}`
    const cur = rows.get(key)
    if (!cur) {
      rows.set(key, toRow(v))
      continue
    }
    cur.n++
    cur.at = v.at
    if (v.clickId) cur.tracked = cur.tracked ? `${cur.tracked} ${v.clickId}` : v.clickId
  }
  return [...rows.values()]
}

const sorted = (rows: ClickEvent[]) => rows.map((r) => JSON.stringify(r)).sort()

/** Visits over a few links, kinds, visitors, places, UTM sets, referers and A/B variants, some tracked: runs of equal visits and interleaved ones. */
function mixedVisits(count: number, seed: number): Visit[] {
  let x = seed
  const rnd = (n: number) => {
    x = (Math.imul(x, 1103515245) + 12345) >>> 0
    return (x >>> 8) % n
  }
  const visitors = [1, 2, 3].map((id) => ({ id, os: ['IOS', 'Android', 'Windows'][id - 1]!, browser: 'Chrome', device: 'Mobile' }))
  const geos = [0, 1, 2].map((id) => ({ id, continent: id ? 'EU' : null, country: id ? ['DE', 'FR'][id - 1]! : null, region: null, city: null }))
  const utms = [0, 1].map((id) => ({ id, source: id ? 'qr' : null, medium: null, campaign: null, term: null, content: null }))
  const referers = [null, 'https://a.example/', 'https://b.example/x?y=1', `https://long.example/${'p'.repeat(1500)}`]
  const out: Visit[] = []
  let prev: Visit | null = null
  for (let i = 0; i < count; i++) {
    // Half the time the same visitor again (a run), else any combination.
    const url = referers[rnd(referers.length)]!
    const v: Visit =
      prev && rnd(2) === 0
        ? { ...prev, at: prev.at + 1, clickId: rnd(4) === 0 ? `click${i}` : null }
        : {
            linkSeq: 1 + rnd(3),
            domain: 'localhost',
            at: 1_700_000_000_000 + i,
            scan: rnd(3) === 0,
            referer: url === null ? null : new URL(url).hostname,
            // A new string each time, as the redirect hands over.
            refererUrl: url === null ? null : url.slice(0, -1) + url.slice(-1),
            visitor: visitors[rnd(3)]!,
            geo: geos[rnd(3)]!,
            utm: utms[rnd(2)]!,
            clickId: rnd(5) === 0 ? `click${i}` : null,
            // A/B tests: most visits none, others variant 0 or 1.
            variant: [null, null, 0, 1][rnd(4)],
          }
    v.at = 1_700_000_000_000 + i
    out.push(v)
    prev = v
  }
  return out
}

/** A recorder writing into `written` (the events engine is not what is under test here). */
function capturingRecorder(opts: Parameters<typeof createClickRecorder>[2] = {}) {
  const written: ClickEvent[] = []
  const events = {
    write: async (rows: ClickEvent[]) => {
      written.push(...rows.map((r) => ({ ...r })))
      return true
    },
    journalMark: async () => null,
    close: async () => {},
  } as unknown as EventsHandle
  return { recorder: createClickRecorder(events, quiet, { maxBatch: 1_000_000, ...opts }), written }
}

test('merged on the flush side, in any number of steps, the rows are those of the merge on record', async () => {
  const visits = mixedVisits(5000, 7)
  const expected = sorted(mergedOnRecord(visits))
  // One merge at the flush; merges every 64 visits; a merge task per 1024 visits.
  for (const mergeAt of [1_000_000, 64, 1024]) {
    const { recorder, written } = capturingRecorder({ mergeAt })
    for (const v of visits) recorder.record(v)
    expect(recorder.pendingCount()).toBe(5000)
    expect(recorder.pendingFor(2)).toBe(visits.filter((v) => v.linkSeq === 2).length)
    await recorder.drain()
    expect(recorder.pendingCount()).toBe(0)
    expect(sorted(written)).toEqual(expected)
  }
})

test('a merge task runs on its own once mergeAt visits are buffered (no flush needed); a flush writes the merged rows', async () => {
  const { recorder, written } = capturingRecorder({ mergeAt: 100 })
  const nextTask = () => new Promise((resolve) => setImmediate(resolve))
  for (let i = 0; i < 250; i++) recorder.record(distinctVisit(i % 3)) // three distinct rows over and over
  // Nothing is merged on the request; the task queued at the 100th visit merges all 250.
  expect(recorder.buffered()).toBe(250)
  await nextTask()
  expect(recorder.buffered()).toBe(0)
  for (let i = 0; i < 50; i++) recorder.record(distinctVisit(i % 3))
  await nextTask()
  expect(recorder.buffered()).toBe(50) // fewer than mergeAt: they wait for the flush
  expect(written).toEqual([])
  await recorder.flush()
  expect(recorder.buffered()).toBe(0)
  expect(written.map((r) => r.n).sort((a, b) => a - b)).toEqual([99, 100, 101])
})

test('beyond the memory bound buffered visits go to the journal, and are each written once when the store takes them', async () => {
  const path = join(dir, 'shortlink.db')
  const db = storeWithLinks(path)
  refuseClicks(db, true)
  const recorder = recorderOn(db, path, { maxHeldRows: 40 })
  const visits = 1200
  for (let i = 0; i < visits; i++) {
    recorder.record(distinctVisit(i))
    // Repeats of held rows merge and count without a row of their own.
    if (i % 10 === 9) recorder.record(distinctVisit(i))
    expect(recorder.held().rows).toBeLessThanOrEqual(40)
    if (i % 300 === 299) await recorder.flush()
  }
  const total = visits + visits / 10
  expect(recorder.pendingCount()).toBe(total)
  expect(await acceptAndDrain(recorder, db, path)).toEqual({ events: total, counters: total })
  db.close()
})
