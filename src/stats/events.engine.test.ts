import { expect, test } from 'bun:test'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { openStore } from '../store'
import { newClickId } from './click-id'
import { loadDuckDb } from './events.duckdb'
import { bindArgs, openEventsCopySource, openEventsEngine } from './events.engine'
import { event, T } from './stats.test-fixtures'

function storeWithTwoLinks(dir: string) {
  const db = openStore(join(dir, 'shortlink.db'))
  db.run("INSERT INTO users (id, created_at, role) VALUES ('usr_a', 0, 'member')")
  for (const seq of [1, 2])
    db.run(
      `INSERT INTO links (seq, id, user_id, domain, key, link_type, destination, match_key, data, created_at, updated_at)
       VALUES (?, ?, 'usr_a', 's.test', ?, 'link', 'https://d.example/', ?, '{}', 0, 0)`,
      [seq, `lnk_${seq}`, `k${seq}`, `m${seq}`],
    )
  return db
}

test('a batch interrupted by kill -9 between its events (DuckDB) and its counters (SQLite) is counted once at the next open', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'events-crash-'))
  try {
    storeWithTwoLinks(dir).close()
    const child = Bun.spawn([process.execPath, join(import.meta.dir, 'events.crash.test-fixtures.ts'), dir, '2'], { stderr: 'pipe' })
    await child.exited
    expect(child.signalCode).toBe('SIGKILL')
    const db = openStore(join(dir, 'shortlink.db'))
    const clicks = () => db.query<{ seq: number; clicks: number }, []>('SELECT seq, clicks FROM links ORDER BY seq').all()
    // Batch 1 counted, batch 2's events stored but not its counters, batch 3 never written.
    expect(clicks()).toEqual([
      { seq: 1, clicks: 1 },
      { seq: 2, clicks: 1 },
    ])
    const logs: string[] = []
    const engine = await openEventsEngine(db, { path: join(dir, 'events.duckdb'), dataDir: dir, threads: 1, log: (m) => void logs.push(m) })
    expect(logs).toContain('click counters derived from stored events')
    expect(clicks()).toEqual([
      { seq: 1, clicks: 3 },
      { seq: 2, clicks: 2 },
    ])
    expect(db.query("SELECT value FROM kv WHERE key = 'events_batch'").get()).toEqual({ value: '2' })
    // The next batch is number 3, counted once; the stored events match the counters.
    await engine.write([event(1, T('2025-05-01T11:00:00Z'), { n: 4 })])
    expect(clicks()[0]).toEqual({ seq: 1, clicks: 7 })
    const stored = await engine.snapshot(
      async (tx) =>
        (
          await tx.run([{ sql: 'SELECT link_seq, sum(n)::DOUBLE AS n, count(DISTINCT batch)::DOUBLE AS batches FROM events GROUP BY 1 ORDER BY 1', args: [] }])
        )[0],
    )
    expect(stored).toEqual([
      { link_seq: 1, n: 7, batches: 3 },
      { link_seq: 2, n: 2, batches: 2 },
    ])
    await engine.close()
    // Opened again: nothing to derive, nothing counted twice.
    const again = await openEventsEngine(db, { path: join(dir, 'events.duckdb'), dataDir: dir, threads: 1 })
    expect(clicks()).toEqual([
      { seq: 1, clicks: 7 },
      { seq: 2, clicks: 2 },
    ])
    await again.close()
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
})

test('a statistics query past its deadline is interrupted and says so', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'events-deadline-'))
  const db = storeWithTwoLinks(dir)
  const engine = await openEventsEngine(db, { path: ':memory:', dataDir: dir, threads: 1 })
  try {
    // A cross join of ten million rows runs for seconds; the deadline is 50 ms.
    const slow = engine.snapshot(
      (tx) => tx.run([{ sql: 'SELECT count(*) FROM range(100000) a, range(100000) b WHERE a.range * b.range % 7 = 1', args: [] }]),
      50,
    )
    await expect(slow).rejects.toThrow('statistics query took longer than 50 ms')
    // The connection is free again for the next query.
    expect(await engine.snapshot(async (tx) => (await tx.run([{ sql: 'SELECT 1::DOUBLE AS one', args: [] }]))[0])).toEqual([{ one: 1 }])
  } finally {
    await engine.close()
    rmSync(dir, { recursive: true, force: true })
  }
})

test('an events file written before A/B tests (click ids its last column) gets the variant after them; both ingest ways write both', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'events-variant-'))
  const path = join(dir, 'events.duckdb')
  const db = storeWithTwoLinks(dir)
  try {
    // The file as the release with conversions and without A/B tests left it: no variant column.
    await (await openEventsEngine(db, { path, dataDir: dir, threads: 1 })).close()
    const api = await loadDuckDb(dir)
    const old = await api.DuckDBInstance.create(path)
    const c = await old.connect()
    await c.run('ALTER TABLE events DROP COLUMN variant')
    const lastColumns = async (conn: typeof c) =>
      (
        (await conn.runAndReadAll("SELECT column_name FROM duckdb_columns() WHERE table_name = 'events' ORDER BY column_index")).getRowObjectsJS() as {
          column_name: string
        }[]
      )
        .map((r) => r.column_name)
        .slice(-2)
    expect(await lastColumns(c)).toEqual(['utm_content', 'tracked'])
    c.closeSync()
    old.closeSync()

    const at = T('2025-05-01T11:00:00Z')
    for (const [i, ingest] of (['appender', 'csv'] as const).entries()) {
      const engine = await openEventsEngine(db, { path, dataDir: dir, threads: 1, ingest })
      await engine.write([
        event(1, at + i, { tracked: `id${i}@${at + i}`, variant: 1 }),
        event(2, at + i, { variant: 0 }),
        event(2, at + i, { tracked: `plain${i}@${at + i}` }),
      ])
      await engine.close()
    }
    const reopened = await api.DuckDBInstance.create(path)
    const r = await reopened.connect()
    expect(await lastColumns(r)).toEqual(['tracked', 'variant'])
    const rows = (
      await r.runAndReadAll('SELECT link_seq, tracked, variant::DOUBLE AS variant FROM events ORDER BY batch, link_seq, tracked NULLS FIRST')
    ).getRowObjectsJS()
    expect(rows).toEqual([
      { link_seq: 1, tracked: `id0@${at}`, variant: 1 },
      { link_seq: 2, tracked: null, variant: 0 },
      { link_seq: 2, tracked: `plain0@${at}`, variant: null },
      { link_seq: 1, tracked: `id1@${at + 1}`, variant: 1 },
      { link_seq: 2, tracked: null, variant: 0 },
      { link_seq: 2, tracked: `plain1@${at + 1}`, variant: null },
    ])
    r.closeSync()
    reopened.closeSync()
  } finally {
    db.close()
    rmSync(dir, { recursive: true, force: true })
  }
})

test("migrate-store's copy source: events with their variant, and one tracked_clicks row per click id with its visit's dimensions and variant", async () => {
  const dir = mkdtempSync(join(tmpdir(), 'events-copy-source-'))
  try {
    const db = storeWithTwoLinks(dir)
    const path = join(dir, 'events.duckdb')
    const engine = await openEventsEngine(db, { path, dataDir: dir, threads: 1 })
    const at = T('2025-03-10T00:00:00Z')
    const ids = [newClickId(at + 2000), newClickId(at + 2500), newClickId(at + 2999)]
    await engine.write([
      // Two merged visits of variant 1, each with its click id as rows before 2026-11-26 kept them (`<id>@<at>`); an
      // untracked visit outside a test; three merged visits whose ids (as the recorder keeps them now) carry their time.
      event(1, at, { n: 2, country: 'FR', tracked: `id_one@${at} id_two@${at + 7}`, variant: 1 }),
      event(2, at + 1000, { country: 'DE', region: null }),
      event(2, at + 3000, { n: 3, country: 'IT', tracked: `${ids[0]} ${ids[1]} ${ids[2]}` }),
    ])
    await engine.close()
    db.close()
    const source = (await openEventsCopySource(path, dir))!
    try {
      const rows = async (table: 'click_events' | 'tracked_clicks') => {
        const cols = source.columns(table)
        const out: Record<string, unknown>[] = []
        for await (const chunk of source.rows(table)) for (const r of chunk) out.push(Object.fromEntries(cols.map((c, i) => [c, r[i]])))
        return out
      }
      expect((await rows('click_events')).map((r) => [r.link_seq, r.n, r.variant])).toEqual([
        [1, 2, 1],
        [2, 1, null],
        [2, 3, null],
      ])
      // Unknown values (kept as '' in the file, see SCHEMA) are copied as null.
      expect((await rows('click_events')).map((r) => [r.country, r.region, r.referer, r.utm_source])).toEqual([
        ['FR', 'Bavaria', null, null],
        ['DE', null, null, null],
        ['IT', 'Bavaria', null, null],
      ])
      expect(await source.count('tracked_clicks')).toBe(5)
      const tracked = await rows('tracked_clicks')
      expect(tracked.map((r) => [r.click_id, r.link_seq, r.at, r.country, r.variant])).toEqual([
        ['id_one', 1, at, 'FR', 1],
        ['id_two', 1, at + 7, 'FR', 1],
        [ids[0], 2, at + 2000, 'IT', null],
        [ids[1], 2, at + 2500, 'IT', null],
        [ids[2], 2, at + 2999, 'IT', null],
      ])
    } finally {
      source.close()
    }
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
})

test('conversions keep their A/B variant in the events store; a file whose conversions were copied without it gets it from SQLite at the next open', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'events-conversion-variant-'))
  const path = join(dir, 'events.duckdb')
  const db = storeWithTwoLinks(dir)
  try {
    db.run("INSERT INTO customers (id, user_id, external_id, created_at) VALUES ('cus_1', 'usr_a', 'c1', 0)")
    const conversion = db.query(
      `INSERT INTO conversions (id, kind, user_id, customer_id, click_id, link_seq, event_name, at, click_at, scan, os, browser, device, variant)
       VALUES (?, 'lead', 'usr_a', 'cus_1', ?, 1, ?, 1000, 900, 0, 'Linux', 'Firefox', 'Desktop', ?)`,
    )
    conversion.run('led_1', 'click_1', 'Sign up', 1)
    conversion.run('led_2', 'click_2', 'Newsletter', null)
    const api = await loadDuckDb(dir)
    const variants = async () => {
      const instance = await api.DuckDBInstance.create(path)
      const c = await instance.connect()
      try {
        return (await c.runAndReadAll('SELECT click_id, variant::DOUBLE AS variant FROM conversions ORDER BY seq')).getRowObjectsJS()
      } finally {
        c.closeSync()
        instance.closeSync()
      }
    }
    const expected = [
      { click_id: 'click_1', variant: 1 },
      { click_id: 'click_2', variant: null },
    ]
    await (await openEventsEngine(db, { path, dataDir: dir, threads: 1 })).close()
    expect(await variants()).toEqual(expected)

    // As a build before the column left it: copied conversions without their variants.
    const old = await api.DuckDBInstance.create(path)
    const c = await old.connect()
    await c.run("UPDATE conversions SET variant = NULL; DELETE FROM events_meta WHERE key = 'conversions_variant'")
    c.closeSync()
    old.closeSync()
    expect((await variants()).map((r) => r.variant)).toEqual([null, null])
    await (await openEventsEngine(db, { path, dataDir: dir, threads: 1 })).close()
    expect(await variants()).toEqual(expected)
  } finally {
    db.close()
    rmSync(dir, { recursive: true, force: true })
  }
})

test('bindArgs: integers and integer lists after IN go inline (DuckDB prunes and hashes them), strings and other lists as parameters', () => {
  expect(bindArgs('SELECT 1 WHERE "at" >= ? AND link_seq IN ? AND country IN (SELECT unnest(?)) AND city = ?', [5, [3, 1, 2], ['DE', 'FR'], 'Berlin'])).toEqual(
    {
      text: 'SELECT 1 WHERE "at" >= 5 AND link_seq IN (3,1,2) AND country IN (SELECT unnest($1)) AND city = $2',
      params: [['DE', 'FR'], 'Berlin'],
    },
  )
  // An empty list matches nothing; a list of anything but integers is refused, never written into the SQL.
  expect(bindArgs('SELECT 1 WHERE link_seq IN ?', [[]]).text).toBe('SELECT 1 WHERE link_seq IN (NULL)')
  expect(() => bindArgs('SELECT 1 WHERE link_seq IN ?', [['1) OR (1=1']])).toThrow('not a list of integers')
  expect(() => bindArgs('SELECT 1 WHERE link_seq IN ?', [[1.5]])).toThrow('not a list of integers')
  // A long list stays a parameter.
  const long = Array.from({ length: 1001 }, (_, i) => i)
  expect(bindArgs('SELECT 1 WHERE link_seq IN ?', [long])).toEqual({ text: 'SELECT 1 WHERE link_seq IN (SELECT unnest($1))', params: [long] })
})
