/**
 * The events engine (DuckDB) answers every statistics query exactly as today's SQLite rollups
 * do: the seeded store of the contract (stats.contract.test-fixtures.ts) is written once through
 * the SQLite writer and once, batch by batch in the same order, through the events engine (its
 * clock following the data, so hours are rolled up as they close and busy links promoted on the
 * way; two batches written out of order take the late-event path), and ~4,000 generated queries
 * go through the service over each. Every answer (or error) must be the same.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { copyFileSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { type Db, openStore } from '../store'
import { EVENT_STRINGS } from './click-event'
import { type EventsEngine, type EventsEngineOptions, openEventsEngine } from './events.engine'
import {
  admin,
  answer,
  countDifferences,
  errorCases,
  groupByMatrix,
  links,
  NOW,
  SPAN,
  START,
  seedSqlite,
  settings,
  storedBatches,
  timeMatrix,
} from './stats.contract.test-fixtures'
import { PAIRS } from './stats.rollup'
import { createStatsService } from './stats.service'
import { createStatsStore, type StatsStorePort } from './stats.store'
import { createEventsStatsStore } from './stats.store.events'

let dir: string
let engine: EventsEngine
let eventsDb: Db
let sqliteService: ReturnType<typeof createStatsService<StatsStorePort>>
let eventsService: ReturnType<typeof createStatsService<StatsStorePort>>
let clock = 0

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'stats-events-'))
  const path = join(dir, 'shortlink.db')
  seedSqlite(path)
  const rollups = openStore(path)
  // The same links and tags, no clicks yet: the engine writes them again.
  copyFileSync(path, join(dir, 'events.db'))
  eventsDb = openStore(join(dir, 'events.db'))
  eventsDb.run('UPDATE links SET clicks = 0, last_clicked = NULL')
  for (const t of ['click_events_compact', 'stats_quarter', 'stats_hour', 'stats_day', 'stats_week', 'stats_busy_links']) eventsDb.run(`DELETE FROM ${t}`)
  engine = await openEventsEngine(eventsDb, { path: join(dir, 'events.duckdb'), dataDir: dir, busyLinkClicks: 400, now: () => clock, threads: 1 })
  const batches = storedBatches(rollups)
  // Batches 10 and 11 swapped: 10 arrives after its hours were rolled up (a late batch).
  ;[batches[10], batches[11]] = [batches[11]!, batches[10]!]
  for (const batch of batches) {
    // The clock five days behind the data: the newest days stay raw, the rest is rolled up.
    clock = Math.max(clock, batch[batch.length - 1]!.at - 5 * 86_400_000)
    await engine.write(batch)
  }
  sqliteService = createStatsService<StatsStorePort>({ store: createStatsStore(rollups), settings, now: () => NOW })
  eventsService = createStatsService({ store: createEventsStatsStore(eventsDb, engine), settings, now: () => NOW })
})
afterAll(async () => {
  await engine?.close()
  rmSync(dir, { recursive: true, force: true })
})

const expectSame = (got: unknown, want: unknown) => expect(got).toEqual(want)

/** A copy of the suite's events file, opened as the suite's engine is (with `o` added): the upgrade tests change the copy. */
async function copyOfEngine(name: string) {
  const path = join(dir, name)
  await engine.backup(path)
  return (o: Partial<EventsEngineOptions> = {}) => openEventsEngine(eventsDb, { path, dataDir: dir, busyLinkClicks: 400, now: () => clock, threads: 1, ...o })
}
/** The statistics service over engine `e` (on the suite's SQLite store). */
const serviceOver = (e: EventsEngine) => createStatsService({ store: createEventsStatsStore(eventsDb, e), settings, now: () => NOW })

describe('the events engine answers as the SQLite rollups do', () => {
  test('same clicks and counters; part of the range rolled up, the rest raw; busy links promoted', async () => {
    const lite = (await answer(sqliteService, admin, {})) as { clicks: number }
    expect(lite.clicks).toBeGreaterThan(6000)
    expect(await answer(eventsService, admin, {})).toEqual(lite)
    for (const l of links) {
      const q = (db: Db) => db.query<{ clicks: number; last_clicked: number }, [number]>('SELECT clicks, last_clicked FROM links WHERE seq = ?').get(l.seq)
      expect(q(eventsDb)).toEqual(q(openStore(join(dir, 'shortlink.db'))))
    }
    const rolled = engine.rolled()
    expect(rolled.hour).toBeGreaterThan(START + 30 * 86_400_000)
    expect(rolled.hour).toBeLessThan(START + SPAN - 86_400_000)
    // Pair rows (two event dimensions of all links) as far as days are rolled up: the admin's cross-dimension questions below read them.
    expect((await engine.snapshot(async (tx) => tx.rolled)).pairDay).toBe(rolled.day)
    const pairs = await engine.exclusive(async (c) => (await c.runAndReadAll('SELECT count(*)::INT AS n FROM stats_pair_day')).getRowObjectsJS())
    expect((pairs[0] as { n: number }).n).toBeGreaterThan(1000)
    const busy = await engine.exclusive(async (c) => (await c.runAndReadAll('SELECT count(*)::INT AS n FROM stats_busy_links')).getRowObjectsJS())
    expect((busy[0] as { n: number }).n).toBeGreaterThan(0)
  })

  test('every groupBy × event filters × link filters × ranges, for an admin and for members', async () => {
    const queries = groupByMatrix()
    const { differing, withClicks } = await countDifferences(sqliteService, eventsService, queries, expectSame)
    expect(differing).toBe(0)
    expect(queries.length).toBeGreaterThan(1000)
    expect(withClicks).toBeGreaterThan(queries.length / 2)
  })

  test('time series: every granularity, in UTC, DST zones and a :30 zone, with filters and link scopes', async () => {
    const { differing } = await countDifferences(sqliteService, eventsService, timeMatrix(), expectSame)
    expect(differing).toBe(0)
  })

  test('a store rolled up before pair rows existed gets them in the background; the same answers meanwhile and after', async () => {
    const open = await copyOfEngine('before-pairs.duckdb')
    const older = await open()
    await older.exclusive(async (c) => {
      await c.run('DELETE FROM stats_pair_day')
      await c.run("DELETE FROM events_meta WHERE key = 'pairs'")
    })
    await older.close()
    const logs: string[] = []
    const upgraded = await open({ log: (m) => void logs.push(m) })
    try {
      const service = serviceOver(upgraded)
      const sample = groupByMatrix().filter((_, i) => i % 7 === 0)
      expect((await countDifferences(sqliteService, service, sample.slice(0, 40), expectSame)).differing).toBe(0)
      await upgraded.pairsBackfilled()
      expect(logs).toContain('statistics pair rows added for the days rolled up before')
      expect((await upgraded.snapshot(async (tx) => tx.rolled)).pairDay).toBe(upgraded.rolled().day)
      expect((await countDifferences(sqliteService, service, sample, expectSame)).differing).toBe(0)
    } finally {
      await upgraded.close()
    }
  })

  test('a file whose pair rows were made for the first set of pairs (before city pairs) rebuilds them all; the same answers meanwhile and after', async () => {
    const open = await copyOfEngine('first-pair-set.duckdb')
    const rowsOf = (e: EventsEngine) =>
      e.exclusive(
        async (c) =>
          (
            await c.runAndReadAll(
              'SELECT dim::DOUBLE AS dim, count(*)::DOUBLE AS n, sum(clicks)::DOUBLE AS clicks FROM stats_pair_day GROUP BY dim ORDER BY dim',
            )
          ).getRowObjectsJS() as { dim: number; n: number; clicks: number }[],
      )
    const older = await open()
    const complete = await rowsOf(older)
    const cityDims = PAIRS.filter((p) => p.second === 'city').map((p) => p.dim)
    expect(complete.filter((r) => cityDims.includes(r.dim))).toHaveLength(3)
    await older.exclusive(async (c) => {
      await c.run(`DELETE FROM stats_pair_day WHERE dim IN (${cityDims.join(', ')})`)
      await c.run("DELETE FROM events_meta WHERE key = 'pairs_version'")
    })
    await older.close()
    const logs: string[] = []
    const upgraded = await open({ log: (m) => void logs.push(m) })
    try {
      const service = serviceOver(upgraded)
      const sample = groupByMatrix().filter((_, i) => i % 7 === 3)
      expect((await countDifferences(sqliteService, service, sample.slice(0, 40), expectSame)).differing).toBe(0)
      await upgraded.pairsBackfilled()
      expect(logs).toContain('statistics pair rows added for the days rolled up before')
      expect(await rowsOf(upgraded)).toEqual(complete)
      expect((await countDifferences(sqliteService, service, sample, expectSame)).differing).toBe(0)
    } finally {
      await upgraded.close()
    }
  })

  test('the pair backfill goes a few days at a time: writes take their turn between steps, and a stop mid-way goes on at the next open without counting a day twice', async () => {
    const open = await copyOfEngine('before-pairs-steps.duckdb')
    const totals = async (e: EventsEngine) =>
      e.exclusive(
        async (c) =>
          (await c.runAndReadAll('SELECT count(*)::DOUBLE AS n, coalesce(sum(clicks), 0)::DOUBLE AS clicks FROM stats_pair_day')).getRowObjectsJS()[0],
      )
    const older = await open()
    const complete = await totals(older)
    await older.exclusive(async (c) => {
      await c.run('DELETE FROM stats_pair_day')
      await c.run("DELETE FROM events_meta WHERE key IN ('pairs', 'pairs_backfilled_to')")
    })
    await older.close()

    // First open: a day per step; a write asked for during the first step is written before the second step;
    // the third step fails after it committed (as a stop would end it there).
    const order: string[] = []
    let steps = 0
    let written: Promise<unknown> | null = null
    const first = await open({
      pairBackfillDays: 1,
      afterPairBackfillStep: (to) => {
        steps++
        order.push(`step ${steps}`)
        if (steps === 1) written = first.journalMark('no-such-journal').then(() => order.push('write'))
        if (steps === 3) throw new Error(`stopped at ${to}`)
      },
    })
    await first.pairsBackfilled()
    await written
    expect(order.slice(0, 3)).toEqual(['step 1', 'write', 'step 2'])
    expect(steps).toBe(3)
    expect((await first.snapshot(async (tx) => tx.rolled)).pairDay).toBe(0) // not complete: raw events answer
    await first.close()

    // Second open: goes on from the fourth day and ends with every pair row once.
    const logs: string[] = []
    let more = 0
    const second = await open({ pairBackfillDays: 30, afterPairBackfillStep: () => void more++, log: (m) => void logs.push(m) })
    try {
      await second.pairsBackfilled()
      expect(logs).toContain('statistics pair rows added for the days rolled up before')
      expect(more).toBeGreaterThan(0)
      expect(await totals(second)).toEqual(complete)
      expect((await second.snapshot(async (tx) => tx.rolled)).pairDay).toBe(second.rolled().day)
    } finally {
      await second.close()
    }
  })

  test("a file written when unknown values were NULL gets them rewritten as '' in steps, going on after a stop; the same answers before, meanwhile and after", async () => {
    const open = await copyOfEngine('with-nulls.duckdb')
    const columns = EVENT_STRINGS.map(([c]) => c)
    const nulls = (e: EventsEngine) =>
      e.exclusive(
        async (c) =>
          (
            (
              await c.runAndReadAll(`SELECT count(*)::DOUBLE AS n FROM events WHERE ${columns.map((x) => `${x} IS NULL`).join(' OR ')}`)
            ).getRowObjectsJS()[0] as {
              n: number
            }
          ).n,
      )
    const older = await open()
    await older.exclusive(async (c) => {
      await c.run(`UPDATE events SET ${columns.map((x) => `${x} = nullif(${x}, '')`).join(', ')}`)
      await c.run("DELETE FROM events_meta WHERE key IN ('nulls_until', 'nulls_rewritten_to')")
    })
    const before = await nulls(older)
    expect(before).toBeGreaterThan(1000)
    await older.close()
    const sample = groupByMatrix().filter((_, i) => i % 5 === 0)

    // First open: two steps, then a stop (the second step committed); the answers are the same meanwhile.
    let steps = 0
    const first = await open({
      afterNullsRewriteStep: (to) => {
        if (++steps === 2) throw new Error(`stopped at ${to}`)
      },
    })
    expect((await countDifferences(sqliteService, serviceOver(first), sample.slice(0, 40), expectSame)).differing).toBe(0)
    await first.nullsRewritten()
    expect(steps).toBe(2)
    const left = await nulls(first)
    expect(left).toBeGreaterThan(0)
    expect(left).toBeLessThan(before)
    await first.close()

    // Second open: goes on from there and ends with no NULL left; every sampled answer is the same.
    const logs: string[] = []
    const second = await open({ log: (m) => void logs.push(m) })
    try {
      await second.nullsRewritten()
      expect(logs).toContain("statistics events' unknown values rewritten")
      expect(await nulls(second)).toBe(0)
      expect((await countDifferences(sqliteService, serviceOver(second), sample, expectSame)).differing).toBe(0)
    } finally {
      await second.close()
    }
  })

  test('errors are the same', async () => {
    for (const [caller, q] of errorCases()) {
      const lite = await answer(sqliteService, caller, q)
      expect(lite).toHaveProperty('error')
      expect(await answer(eventsService, caller, q)).toEqual(lite)
    }
  })
})

describe('upgrade in place: a store of the previous release moves its events into the engine', () => {
  test('in the background: statistics exact before, during and after; SQLite keeps no event afterwards', async () => {
    const original = openStore(join(dir, 'shortlink.db'))
    copyFileSync(join(dir, 'shortlink.db'), join(dir, 'upgraded.db'))
    const db = openStore(join(dir, 'upgraded.db'))
    const before = db.query<{ n: number }, []>('SELECT count(*) AS n FROM click_events_compact').get()!.n
    expect(before).toBeGreaterThan(5000)
    const logs: string[] = []
    const moving = await openEventsEngine(db, {
      path: join(dir, 'upgraded.duckdb'),
      dataDir: dir,
      busyLinkClicks: 400,
      threads: 1,
      log: (m, f) => void logs.push(`${m} ${JSON.stringify(f)}`),
    })
    const service = createStatsService({ store: createEventsStatsStore(db, moving), settings, now: () => NOW })
    // Meanwhile (the first chunk may still be moving): the same answer.
    expect(await answer(service, admin, { groupBy: 'country' })).toEqual(await answer(sqliteService, admin, { groupBy: 'country' }))
    await moving.imported()
    expect(logs.some((l) => l.startsWith('click events moved into the events store'))).toBe(true)
    expect(db.query<{ n: number }, []>('SELECT count(*) AS n FROM click_events_compact').get()!.n).toBe(0)
    expect(db.query<{ n: number }, []>('SELECT count(*) AS n FROM stats_day').get()!.n).toBe(0)
    const counters = (d: Db) => d.query('SELECT seq, clicks, last_clicked FROM links ORDER BY seq').all()
    expect(counters(db)).toEqual(counters(original))
    const sample = [...groupByMatrix(), ...timeMatrix()].filter((_, i) => i % 9 === 0)
    const { differing } = await countDifferences(sqliteService, service, sample, expectSame)
    expect(differing).toBe(0)
    await moving.close()
  })

  test('a read begun while the events move answers as before, whenever it reads: between chunks, after the switch, before SQLite is emptied', async () => {
    copyFileSync(join(dir, 'shortlink.db'), join(dir, 'upgraded-held.db'))
    const db = openStore(join(dir, 'upgraded-held.db'))
    const total = db.query<{ n: number }, []>('SELECT count(*) AS n FROM click_events_compact').get()!.n
    const sample = groupByMatrix().filter((_, i) => i % 61 === 0)
    const want = await answer(sqliteService, admin, { groupBy: 'country' })
    expect((want as unknown[]).length).toBeGreaterThan(3)
    // The first snapshot begins while the first chunk is all DuckDB holds, and reads only once the
    // move has switched to DuckDB and waits to empty SQLite (or, had it not waited, once it emptied).
    let begun!: () => void
    const heldBegun = new Promise<void>((resolve) => (begun = resolve))
    let waiting!: () => void
    const engineWaits = new Promise<void>((resolve) => (waiting = resolve))
    let snapshots = 0
    const chunks: number[] = []
    let differingBetweenChunks = 0
    let moving: EventsEngine | null = null
    let service: ReturnType<typeof createStatsService<StatsStorePort>> | null = null
    moving = await openEventsEngine(db, {
      path: join(dir, 'upgraded-held.duckdb'),
      dataDir: dir,
      busyLinkClicks: 400,
      threads: 1,
      importChunkRows: 2000,
      log: (m) => {
        if (m.startsWith("the previous release's click tables are emptied once")) waiting()
      },
      afterImportChunk: async (upTo) => {
        if (!chunks.length) await heldBegun
        chunks.push(upTo)
        differingBetweenChunks += (await countDifferences(sqliteService, service!, sample, expectSame)).differing
      },
      afterSnapshotBegun: async () => {
        if (snapshots++ > 0) return
        begun()
        await Promise.race([moving!.imported(), engineWaits])
      },
    })
    service = createStatsService({ store: createEventsStatsStore(db, moving), settings, now: () => NOW })
    expect(await answer(service, admin, { groupBy: 'country' })).toEqual(want)
    await moving.imported()
    expect(chunks.length).toBe(Math.ceil(total / 2000))
    expect(differingBetweenChunks).toBe(0)
    expect(db.query<{ n: number }, []>('SELECT count(*) AS n FROM click_events_compact').get()!.n).toBe(0)
    expect(await answer(service, admin, { groupBy: 'country' })).toEqual(want)
    await moving.close()
  })
})
