import { expect, test } from 'bun:test'
import { createHarness } from '../../test/helpers/in-process'
import type { Logger } from '../shared/log'
import { createClickRecorder, type Visit } from './click-recorder'

const warnings: Record<string, unknown>[] = []
const log: Logger = { info() {}, error() {}, warn: (_m, fields) => void warnings.push(fields ?? {}) }

function setup(opts: { maxHeldRows?: number; maxHeldBytes?: number }) {
  const h = createHarness()
  const db = h.deps.db
  // A store that keeps refusing click rows, so every flush fails and its rows stay held.
  db.run(`CREATE TRIGGER refuse_clicks BEFORE INSERT ON click_events BEGIN SELECT RAISE(ABORT, 'store refuses'); END`)
  const recorder = createClickRecorder(db, ':memory:', log, { maxBatch: 1_000_000, ...opts })
  const visit = (i: number, refererUrl: string): Visit => ({
    linkSeq: 1,
    domain: 'localhost',
    at: 1_700_000_000_000 + i,
    scan: false,
    referer: 'ref.example',
    refererUrl,
    visitor: { id: 1, os: 'IOS', browser: 'Safari', device: 'Mobile' },
    geo: { id: 0, continent: null, country: null, region: null, city: null },
    utm: { id: 0, source: null, medium: null, campaign: null, term: null, content: null },
  })
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
