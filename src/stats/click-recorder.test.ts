import { expect, test } from 'bun:test'
import { createHarness } from '../../test/helpers/in-process'
import { until } from '../../test/helpers/poll'
import type { Logger } from '../shared/log'
import { newClickId } from './click-id'
import { createClickRecorder, createEventsHandle, type EventsHandle, type Visit } from './click-recorder'
import { visitFromPage } from './visit.test-fixtures'

const warnings: Record<string, unknown>[] = []
const log: Logger = { info() {}, error() {}, warn: (_m, fields) => void warnings.push(fields ?? {}) }

function setup(opts: { maxHeldRows?: number; maxHeldBytes?: number }) {
  const h = createHarness()
  const db = h.deps.db
  // A store that keeps refusing a batch (numbering its link's groups fails before any event is written),
  // so every flush fails and its rows stay held.
  db.run(`CREATE TRIGGER refuse_clicks BEFORE INSERT ON stats_groups BEGIN SELECT RAISE(ABORT, 'store refuses'); END`)
  const recorder = createClickRecorder(createEventsHandle(db, ':memory:', log), log, { maxBatch: 1_000_000, ...opts })
  const visit = (i: number, refererUrl: string): Visit => ({ ...visitFromPage(1, 1_700_000_000_000 + i, i), refererUrl })
  return { recorder, visit, db }
}

test('visits that each need a row stay within the held-rows bound while the store fails; merges still count', async () => {
  warnings.length = 0
  const { recorder, visit } = setup({ maxHeldRows: 50 })
  for (let i = 0; i < 500; i++) {
    recorder.record(visit(i, `https://ref.example/${i}`))
    if (i % 20 === 19) await recorder.flush()
    expect(recorder.held().rows).toBeLessThanOrEqual(50)
  }
  await recorder.flush()
  expect(warnings.some((w) => typeof w.visits === 'number' && w.visits > 0)).toBe(true)
  const before = recorder.pendingCount()
  recorder.record(visit(1000, 'https://ref.example/0')) // the same row as the first visit
  expect(recorder.pendingCount()).toBe(before + 1)
})

test('long referers stay within the held-bytes bound', async () => {
  const maxHeldBytes = 256 * 1024
  const { recorder, visit } = setup({ maxHeldBytes })
  for (let i = 0; i < 2000; i++) {
    recorder.record(visit(i, `https://ref.example/${i}/`.padEnd(2000, 'r')))
    if (i % 100 === 99) await recorder.flush()
    expect(recorder.held().bytes).toBeLessThanOrEqual(maxHeldBytes)
  }
  expect(recorder.held().rows).toBeGreaterThan(0)
})

test('a visit recorded while its location is still being looked up is written with that location', async () => {
  const h = createHarness()
  const made = await h.call('POST', '/links/link', { key: h.keys.member, json: { data: { url: 'https://dest.example/' }, linkOptions: { key: 'early' } } })
  const { seq } = h.deps.db.query('SELECT seq FROM links WHERE id = ?').get(made.body.id) as { seq: number }
  const recorder = createClickRecorder(h.deps.events, log)
  type Location = { continent: string; country: string; region: string; city: string }
  let located: (g: Location) => void = () => {}
  const resolved = new Promise<Location>((r) => {
    located = r
  })
  const visit: Visit = {
    linkSeq: seq,
    domain: 'localhost',
    // A minute ago: statistics count visits up to now, and the merged row carries the later time.
    at: Date.now() - 60_000,
    scan: false,
    referer: null,
    refererUrl: null,
    visitor: { id: 1, os: 'IOS', browser: 'Safari', device: 'Mobile' },
    geo: { id: 7, continent: null, country: null, region: null, city: null, resolved },
    utm: { id: 0, source: null, medium: null, campaign: null, term: null, content: null },
  }
  recorder.record(visit)
  recorder.record({ ...visit, at: visit.at + 1 }) // the same visitor again: merged into the same row
  const flushed = recorder.flush()
  expect(recorder.pendingCount()).toBe(2)
  located({ continent: 'EU', country: 'GB', region: 'England', city: 'London' })
  await flushed
  const by = async (dimension: string) => (await h.call('GET', `/statistics?groupBy=${dimension}`, { key: h.keys.member })).body
  expect(await by('country')).toEqual([{ country: 'GB', clicks: 2, scans: 0 }])
  expect(await by('city')).toEqual([{ city: 'London', clicks: 2, scans: 0 }])
})

test('tracked visits (click ids) merge like any other; each id is found by its lead with its own time and the row’s dimensions', async () => {
  const h = createHarness()
  const made = await h.call('POST', '/links/link', { json: { data: { url: 'https://t.example/' }, linkOptions: { key: 'tracked', trackConversion: true } } })
  const seq = h.deps.links.findLiveRow('localhost', 'tracked')!.seq
  const dims = {
    visitor: { id: 7, os: 'IOS', browser: 'Safari', device: 'Mobile' },
    geo: { id: 3, continent: 'EU', country: 'DE', region: null, city: null },
    utm: { id: 0, source: null, medium: null, campaign: null, term: null, content: null },
  }
  const base = { linkSeq: seq, domain: 'localhost', scan: false, referer: null, refererUrl: null, ...dims }
  const t0 = Date.now() - 5000
  const [first, third] = [newClickId(t0), newClickId(t0 + 2)]
  h.deps.recorder.record({ ...base, at: t0, clickId: first })
  h.deps.recorder.record({ ...base, at: t0 + 1 })
  h.deps.recorder.record({ ...base, at: t0 + 2, clickId: third })
  expect(h.deps.recorder.held().rows).toBe(1)
  await h.deps.recorder.drain()
  expect((await h.call('GET', `/links/${made.body.id}`)).body.clicks).toBe(3)
  for (const id of [first, third]) {
    const lead = await h.call('POST', '/track/lead', { json: { clickId: id, eventName: `lead ${id}`, customerExternalId: id } })
    expect(lead.status).toBe(200)
    expect(lead.body).toMatchObject({ clickId: id, linkId: made.body.id })
  }
  const stored = h.deps.db.query('SELECT click_id, click_at, country, device FROM conversions ORDER BY click_at').all()
  expect(stored).toEqual([
    { click_id: first, click_at: t0, country: 'DE', device: 'Mobile' },
    { click_id: third, click_at: t0 + 2, country: 'DE', device: 'Mobile' },
  ])
  // An id of that moment that no visit carried is unknown.
  expect((await h.call('POST', '/track/lead', { json: { clickId: newClickId(t0), eventName: 'x', customerExternalId: 'x' } })).status).toBe(404)
})

test('a write takes at most maxWriteRows rows, oldest first; the rest follow at once, without waiting for a tick', async () => {
  const h = createHarness()
  const made = await h.call('POST', '/links/link', { key: h.keys.member, json: { data: { url: 'https://dest.example/' }, linkOptions: { key: 'capped' } } })
  const { seq } = h.deps.db.query('SELECT seq FROM links WHERE id = ?').get(made.body.id) as { seq: number }
  const recorder = createClickRecorder(createEventsHandle(h.deps.db, ':memory:', log), log, { maxWriteRows: 100, maxBatch: 1_000_000 })
  const at = Date.now() - 60_000
  for (let i = 0; i < 1000; i++) recorder.record(visitFromPage(seq, at + i, i))
  await recorder.flush()
  // The counters of the first write: its 100 visits, the oldest (the last of them at + 99).
  const first = h.deps.db.query<{ n: number; last: number }, [number]>('SELECT clicks AS n, last_clicked AS last FROM links WHERE seq = ?').get(seq)!
  expect(first).toEqual({ n: 100, last: at + 99 })
  await until(
    'the other 900 written',
    async () => recorder.pendingCount(),
    (n) => n === 0,
  )
  expect(h.deps.db.query('SELECT clicks FROM links WHERE seq = ?').get(seq)).toEqual({ clicks: 1000 })
})

test('drain() while a write is in flight also writes the visits recorded after it began (one write at a time)', async () => {
  const h = createHarness()
  const made = await h.call('POST', '/links/link', { json: { data: { url: 'https://d.example/' }, linkOptions: { key: 'drained' } } })
  const seq = h.deps.links.findLiveRow('localhost', 'drained')!.seq
  // The first write waits until the test lets it go: the drain starts while it is in flight.
  let release = () => {}
  const gate = new Promise<void>((r) => (release = r))
  const writes: number[] = []
  const held: EventsHandle = {
    ...h.deps.events,
    write: async (rows, mark) => {
      writes.push(rows.length)
      if (writes.length === 1) await gate
      return h.deps.events.write(rows, mark)
    },
  }
  const recorder = createClickRecorder(held, log)
  const visit = (i: number) => visitFromPage(seq, Date.now() - 1000 + i, i)
  recorder.record(visit(0))
  const first = recorder.flush()
  expect(writes).toEqual([1])
  recorder.record(visit(1))
  recorder.record(visit(2))
  const drained = recorder.drain()
  release()
  await Promise.all([first, drained])
  expect(writes).toEqual([1, 2])
  expect(recorder.pendingCount()).toBe(0)
  expect((await h.call('GET', `/links/${made.body.id}`)).body.clicks).toBe(3)
})
