import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { SQL } from 'bun'
import { startPostgres, type TestPostgres } from '../../../test/helpers/postgres'
import { migratePostgres, PgMigrationError } from './migrate'
import { pgMigrations } from './migrations'

let pg: TestPostgres
let dbs = 0
beforeAll(async () => {
  pg = await startPostgres()
})
afterAll(async () => {
  await pg?.destroy()
})

/** A fresh, empty database on the test cluster; its URL. */
const freshDatabase = () => pg.createDatabase(`migrate_${++dbs}`)

const tableExists = async (sql: SQL, name: string) => (await sql`SELECT to_regclass(${name}) IS NOT NULL AS e`)[0].e as boolean

describe('PostgreSQL migrations', () => {
  test('three migrators racing on one empty database apply each migration once; a second start applies nothing', async () => {
    const url = await freshDatabase()
    const nodes = [new SQL(url), new SQL(url), new SQL(url)]
    const applied = await Promise.all(nodes.map((sql) => migratePostgres(sql)))
    expect(applied.flat().sort()).toEqual(pgMigrations.map((m) => m.name).sort())
    const recorded = await nodes[0]!`SELECT id, name FROM schema_migrations ORDER BY id`
    expect(recorded.map((r: { id: number; name: string }) => [r.id, r.name])).toEqual(pgMigrations.map((m) => [m.id, m.name]))

    expect(await migratePostgres(nodes[1]!)).toEqual([])
    expect((await nodes[2]!`SELECT count(*)::int AS n FROM schema_migrations`)[0].n).toBe(pgMigrations.length)
    await Promise.all(nodes.map((sql) => sql.close()))
  })

  test('a failing migration rolls back whole, names itself, and leaves the earlier ones applied', async () => {
    const url = await freshDatabase()
    const sql = new SQL(url)
    const good = { id: 1, name: '0001_good', sql: 'CREATE TABLE good (x int);' }
    const bad = { id: 2, name: '0002_bad', sql: 'CREATE TABLE half (x int); INSERT INTO half VALUES (1); SELECT * FROM no_such_table;' }
    const heard: string[] = []
    const failure = await migratePostgres(sql, { migrations: [good, bad], onMigration: (n) => heard.push(n) }).catch((e) => e)
    expect(failure).toBeInstanceOf(PgMigrationError)
    expect((failure as PgMigrationError).migration).toBe('0002_bad')
    expect((failure as Error).message).toContain('0002_bad')
    expect((failure as Error).message).toContain('no_such_table')
    expect(heard).toEqual(['0001_good', '0002_bad'])
    expect(await tableExists(sql, 'good')).toBe(true)
    expect(await tableExists(sql, 'half')).toBe(false)
    expect((await sql`SELECT name FROM schema_migrations`).map((r: { name: string }) => r.name)).toEqual(['0001_good'])

    // Fixed, the next start applies only what is missing; the lock was released on failure.
    const fixed = { ...bad, sql: 'CREATE TABLE half (x int);' }
    expect(await migratePostgres(sql, { migrations: [good, fixed] })).toEqual(['0002_bad'])
    await sql.close()
  })

  test('a database made by main before A/B tests (0013 applied, 0012 not): the next start applies 0012 after 0013, then 0014; rows kept', async () => {
    const url = await freshDatabase()
    const sql = new SQL(url)
    const before = pgMigrations.filter((m) => m.id !== 12 && m.id !== 14)
    expect(await migratePostgres(sql, { migrations: before })).toEqual(before.map((m) => m.name))
    await sql`INSERT INTO tracked_clicks (click_id, link_seq, at, scan, os, browser, device) VALUES ('click1', 1, 1, 0, 'Linux', 'Firefox', 'Desktop')`
    expect(await migratePostgres(sql)).toEqual(['0012_ab_tests', '0014_conversion_variants'])
    const recorded = await sql`SELECT id FROM schema_migrations ORDER BY id`
    expect(recorded.map((r: { id: number }) => r.id)).toEqual(pgMigrations.map((m) => m.id))
    expect(await sql`SELECT click_id, variant FROM tracked_clicks`).toEqual([{ click_id: 'click1', variant: null }])
    const columns = async (table: string) =>
      (await sql`SELECT column_name FROM information_schema.columns WHERE table_name = ${table} AND column_name = 'variant'`).length
    expect([await columns('click_events'), await columns('click_events_compact'), await columns('conversions')]).toEqual([1, 1, 1])
    expect(await tableExists(sql, 'link_tests')).toBe(true)
    expect(await migratePostgres(sql)).toEqual([])
    await sql.close()
  })
})
