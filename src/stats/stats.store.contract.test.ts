/**
 * The statistics store port on both adapters: the same click events are written through the
 * SQLite writer (events, rollups, busy-link promotion and backfill), the SQLite store is copied
 * into a fresh PostgreSQL database with `copySqliteToPostgres` (as `migrate-store` does), and
 * a broad matrix of GET /statistics queries goes through the service over each store. Every
 * answer (or error) must be the same.
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test'
import { copyFileSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { SQL } from 'bun'
import { startMigratedDatabase } from '../../test/helpers/postgres'
import { copySqliteToPostgres, openSqliteSource, openStore } from '../store'
import { eventsPathOf } from './click-recorder'
import { openEventsCopySource, openEventsEngine } from './events.engine'
import {
  admin,
  answer,
  countDifferences,
  errorCases,
  GROUP_BYS,
  groupByMatrix,
  NOW,
  RANGES,
  SPAN,
  START,
  seedSqlite,
  settings,
  storedBatches,
  timeMatrix,
} from './stats.contract.test-fixtures'
import { createPairRoller } from './stats.pairs.pg'
import type { StatisticsQuery } from './stats.schema'
import { createStatsService } from './stats.service'
import { createStatsStore, type StatsStorePort } from './stats.store'
import { createPgStatsStore } from './stats.store.pg'

// Hundreds of queries on both stores: 85 s on an idle 2-core machine, over 120 s on a loaded one.
setDefaultTimeout(600_000)

const quietLog = { info() {}, warn() {}, error() {} }

let dir: string
let closePg: (() => Promise<void>) | undefined
let pgSql: SQL
let sqliteService: ReturnType<typeof createStatsService<StatsStorePort>>
let pgService: ReturnType<typeof createStatsService<StatsStorePort>>

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'stats-contract-'))
  mkdirSync(join(dir, 'engine'))
  const path = join(dir, 'shortlink.db')
  seedSqlite(path)
  const started = await startMigratedDatabase('stats_contract')
  pgSql = started.sql
  closePg = started.close
  const source = openSqliteSource(path)
  try {
    await copySqliteToPostgres(source, pgSql)
  } finally {
    source.close()
  }
  // The first half of the span rolled up into pair rows (the rest read raw), as a server catching up would leave it.
  await createPairRoller(pgSql, quietLog, { now: () => START + SPAN / 2 }).roll()
  sqliteService = createStatsService<StatsStorePort>({ store: createStatsStore(openStore(path)), settings, now: () => NOW })
  pgService = createStatsService({ store: createPgStatsStore(pgSql), settings, now: () => NOW })
})
afterAll(async () => {
  await closePg?.()
  rmSync(dir, { recursive: true, force: true })
})

const expectSame = (got: unknown, want: unknown) => expect(got).toEqual(want)

describe('statistics on SQLite and on PostgreSQL (copied with migrate-store) answer the same', () => {
  test('the copy holds the same events and rollups', async () => {
    const [row] = await pgSql`SELECT count(*)::int AS n, sum(n)::int AS clicks FROM click_events`
    expect(row.n).toBeGreaterThan(5000)
    expect(await answer(pgService, admin, {})).toEqual(await answer(sqliteService, admin, {}))
    expect(((await answer(pgService, admin, {})) as { clicks: number }).clicks).toBe(row.clicks)
    const [busy] = await pgSql`SELECT count(*)::int AS n FROM stats_busy_links`
    expect(busy.n).toBeGreaterThan(0)
    // On SQLite the answer stays synchronous: every read inside one db.transaction, no microtask.
    expect(sqliteService.statistics(admin, { groupBy: 'country' })).not.toBeInstanceOf(Promise)
    expect(pgService.statistics(admin, { groupBy: 'country' })).toBeInstanceOf(Promise)
  })

  test('every groupBy × event filters × link filters × ranges, for an admin and for members', async () => {
    const queries = groupByMatrix()
    const { differing, withClicks } = await countDifferences(sqliteService, pgService, queries, expectSame)
    expect(differing).toBe(0)
    expect(queries.length).toBeGreaterThan(1000)
    // The matrix is not a comparison of empty answers.
    expect(withClicks).toBeGreaterThan(queries.length / 2)
  })

  test('time series: every granularity, in UTC, DST zones and a :30 zone, with filters and link scopes', async () => {
    const { differing } = await countDifferences(sqliteService, pgService, timeMatrix(), expectSame)
    expect(differing).toBe(0)
  })

  test('a store on the events engine copies its events and rollups from DuckDB (migrate-store): the same answers', async () => {
    // The seeded store written again through the events engine, its newest days not rolled up yet.
    copyFileSync(join(dir, 'shortlink.db'), join(dir, 'engine', 'shortlink.db'))
    const db = openStore(join(dir, 'engine', 'shortlink.db'))
    db.run('UPDATE links SET clicks = 0, last_clicked = NULL')
    for (const t of ['click_events_compact', 'stats_quarter', 'stats_hour', 'stats_day', 'stats_week', 'stats_busy_links']) db.run(`DELETE FROM ${t}`)
    let clock = 0
    const engine = await openEventsEngine(db, {
      path: eventsPathOf(join(dir, 'engine', 'shortlink.db')),
      dataDir: dir,
      busyLinkClicks: 400,
      now: () => clock,
      threads: 1,
    })
    for (const batch of storedBatches(openStore(join(dir, 'shortlink.db')))) {
      clock = Math.max(clock, batch[batch.length - 1]!.at - 5 * 86_400_000)
      await engine.write(batch)
    }
    await engine.close()
    db.close()
    const target = await startMigratedDatabase('stats_contract_events')
    const source = openSqliteSource(join(dir, 'engine', 'shortlink.db'))
    const events = await openEventsCopySource(eventsPathOf(source.path), join(dir, 'engine'))
    try {
      const result = await copySqliteToPostgres(source, target.sql, { external: events! })
      expect(result.ok).toBe(true)
      expect(result.counts.find((c) => c.table === 'click_events')!.target).toBeGreaterThan(5000)
    } finally {
      events?.close()
      source.close()
    }
    try {
      const copied = createStatsService({ store: createPgStatsStore(target.sql), settings, now: () => NOW })
      const sample = [...groupByMatrix(), ...timeMatrix()].filter((_, i) => i % 5 === 0)
      const { differing } = await countDifferences(sqliteService, copied, sample, expectSame)
      expect(differing).toBe(0)
    } finally {
      await target.close()
    }
  })

  test('cross-dimension: every event dimension filtered and grouped by every other, over every range, with days rolled up into pair rows or not', async () => {
    const filters: StatisticsQuery[] = [
      { continent: 'Europe' },
      { country: 'DE' },
      { region: 'Bavaria' },
      { city: 'Paris' },
      { os: 'IOS' },
      { browser: 'Safari' },
      { device: 'Mobile' },
      { referer: 't.co' },
      { refererUrl: 'https://t.co/x' },
      { utmSource: 'poster' },
      { utmMedium: 'print' },
      { utmCampaign: 'spring' },
      { utmTerm: 'shoes' },
      { utmContent: 'v1' },
    ]
    const eventGroupBys = GROUP_BYS.filter((g) => !['count', 'link', 'link_type', 'destination'].includes(g))
    const compare = async () => {
      let differing = 0
      let withClicks = 0
      let queries = 0
      for (const filter of filters)
        for (const groupBy of [...eventGroupBys, 'count' as const])
          for (const range of RANGES) {
            const q = { groupBy, ...filter, ...range }
            const [lite, pg] = [await answer(sqliteService, admin, q), await answer(pgService, admin, q)]
            queries++
            if (!Bun.deepEquals(lite, pg) && differing++ < 5) expect({ q, pg }).toEqual({ q, pg: lite })
            if (Array.isArray(lite) ? lite.length > 0 : (lite as { clicks?: number }).clicks) withClicks++
          }
      expect(differing).toBe(0)
      expect(withClicks).toBeGreaterThan(queries / 2)
    }
    const [{ upto }] = await pgSql`SELECT upto FROM stats_pairs_state`
    expect(upto).toBe(Math.floor((START + SPAN / 2) / 86_400_000)) // half the days rolled up
    const [{ rows }] = await pgSql`SELECT count(*)::int AS rows FROM stats_pairs`
    expect(rows).toBeGreaterThan(1000)
    await compare()
    // Every day rolled up: whole days from pair rows, partial days raw.
    await createPairRoller(pgSql, quietLog).roll()
    await compare()
  })

  test('errors are the same: unknown link, another user’s link or tag, too many buckets, a bad url', async () => {
    for (const [caller, q] of errorCases()) {
      const lite = await answer(sqliteService, caller, q)
      expect(lite).toHaveProperty('error')
      expect(await answer(pgService, caller, q)).toEqual(lite)
    }
  })
})
