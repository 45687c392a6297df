/**
 * The PostgreSQL schema against the SQLite one it mirrors (every SQLite table and column has its
 * place, so a copy loses nothing and a new SQLite migration without its PostgreSQL twin fails
 * here), and the behaviour the schema itself carries: monthly click partitions created on
 * demand with a default partition behind them, the generated search text with its trigram
 * index, and the cluster tables shaped as the building blocks that use them create them.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { SQL } from 'bun'
import { startPostgres, type TestPostgres } from '../../../test/helpers/postgres'
import { openStore } from '../db'
import { CLUSTER_TABLES } from './cluster-tables'
import { migratePostgres } from './migrate'
import { ensureClickPartitions } from './partitions'

let pg: TestPostgres
let sql: SQL
beforeAll(async () => {
  pg = await startPostgres()
  sql = new SQL(await pg.createDatabase('schema_test'))
  await migratePostgres(sql)
})
afterAll(async () => {
  await sql?.close()
  await pg?.destroy()
})

/** SQLite tables with no table of the same name in PostgreSQL, and where their rows go. */
const SQLITE_ONLY: Record<string, string> = {
  auth_epoch: "cache_epochs row 'auth'",
  links_search: 'links.search_text (generated) + links_search GIN index',
  // PostgreSQL migration 0009: no event id (nothing reads one; SQLite's is its rowid).
  'click_events_compact.id': 'none',
  'click_events.id': 'none',
  // PostgreSQL migration 0010: each link's counters in a narrow table of their own.
  'links.clicks': 'link_clicks.clicks',
  'links.last_clicked': 'link_clicks.last_clicked',
}

describe('PostgreSQL schema', () => {
  test('every SQLite table and column (after all SQLite migrations) has its place in PostgreSQL', async () => {
    const lite = openStore(':memory:')
    const liteTables = lite
      .query<{ name: string }, []>(
        "SELECT name FROM sqlite_master WHERE type IN ('table', 'view') AND name NOT LIKE 'sqlite_%' AND name NOT LIKE 'links_search_%' ORDER BY name",
      )
      .all()
      .map((r) => r.name)
    const pgColumns = new Map<string, Set<string>>()
    for (const r of await sql`SELECT table_name, column_name FROM information_schema.columns WHERE table_schema = 'public'`)
      (pgColumns.get(r.table_name) ?? pgColumns.set(r.table_name, new Set()).get(r.table_name)!).add(r.column_name)

    const missing: string[] = []
    for (const table of liteTables) {
      if (SQLITE_ONLY[table]) continue
      const cols = pgColumns.get(table)
      if (!cols) {
        missing.push(table)
        continue
      }
      for (const c of lite.query<{ name: string }, []>(`SELECT name FROM pragma_table_info('${table}')`).all())
        if (!cols.has(c.name) && !SQLITE_ONLY[`${table}.${c.name}`]) missing.push(`${table}.${c.name}`)
    }
    lite.close()
    expect(missing).toEqual([])
    for (const added of ['visit_counters', 'locks', 'cache_epochs']) expect(pgColumns.has(added)).toBe(true)
    expect([...pgColumns.get('locks')!].sort()).toEqual(['expires_at', 'holder', 'key'])
    expect((await sql`SELECT channel FROM cache_epochs ORDER BY channel`).map((r: { channel: string }) => r.channel)).toEqual([
      'auth',
      'certificates',
      'domains',
      'links',
    ])
  })

  test('click events: a month without a partition lands in the default one; creating the partition moves them; an insert never fails', async () => {
    const march = Date.UTC(2024, 2, 15, 12)
    const insert = (at: number) => sql`INSERT INTO click_events_compact (link_seq, at, scan, os, browser, device) VALUES (1, ${at}, 0, 1, 2, 3)`
    await insert(march)
    await insert(Date.UTC(2024, 2, 31, 23, 59, 59, 999))
    const where = async () =>
      (await sql`SELECT tableoid::regclass::text AS part, count(*)::int AS n FROM click_events_compact GROUP BY 1 ORDER BY 1`).map(
        (r: { part: string; n: number }) => `${r.part}:${r.n}`,
      )
    expect(await where()).toEqual(['click_events_compact_default:2'])

    // Two callers at once (two nodes) create March once; February to April exist after.
    const other = new SQL(pg.url.replace(/\/postgres$/, '/schema_test'))
    const [a] = await Promise.all([
      ensureClickPartitions(sql, Date.UTC(2024, 1, 10), Date.UTC(2024, 3, 1)),
      ensureClickPartitions(other, Date.UTC(2024, 2, 1), Date.UTC(2024, 2, 2)),
    ])
    await other.close()
    expect(a).toEqual(['click_events_compact_202402', 'click_events_compact_202403', 'click_events_compact_202404'])
    expect(await where()).toEqual(['click_events_compact_202403:2'])

    await insert(Date.UTC(2024, 3, 1)) // the first millisecond of April
    await insert(Date.UTC(1999, 0, 1)) // no partition: the default takes it
    expect(await where()).toEqual(['click_events_compact_202403:2', 'click_events_compact_202404:1', 'click_events_compact_default:1'])
    // The partitions carry the parent's indexes (the statistics queries' covering ones, the time BRIN).
    const idx = await sql`SELECT indexdef FROM pg_indexes WHERE tablename = 'click_events_compact_202403' ORDER BY indexname`
    expect(idx.some((r: { indexdef: string }) => r.indexdef.includes('(link_seq, at) INCLUDE (country, n, scan)'))).toBe(true)
    expect(idx.some((r: { indexdef: string }) => r.indexdef.includes('USING brin (at)'))).toBe(true)
  })

  test('links: search_text is the slug, destination and every string of the data, found through the trigram index', async () => {
    await sql`INSERT INTO users (id, created_at) VALUES ('usr_a', 1)`
    const data = JSON.stringify({ url: 'https://example.com/Summer-Sale', note: ['Ünïcode', { deep: 'needle-42' }], n: 7 })
    await sql`INSERT INTO links (id, user_id, domain, key, link_type, destination, match_key, data, created_at, updated_at)
      VALUES ('lnk_1', 'usr_a', 'sho.rt', 'promo', 'link', 'https://example.com/Summer-Sale', 'm', ${data}, 1, 1)`
    const [row] = await sql`SELECT search_text FROM links WHERE id = 'lnk_1'`
    for (const part of ['promo', 'https://example.com/Summer-Sale', 'Ünïcode', 'needle-42']) expect(row.search_text).toContain(part)
    expect(row.search_text).not.toContain('"url"')
    // Among thousands of links, the planner takes the trigram index for a substring search.
    await sql`INSERT INTO links (id, user_id, domain, key, link_type, destination, match_key, data, created_at, updated_at)
      SELECT 'lnk_g' || i, 'usr_a', 'sho.rt', 'k' || i, 'link', 'https://site' || i || '.example/', 'm' || i,
        '{"url":"https://site' || i || '.example/"}', 1, 1 FROM generate_series(1, 5000) AS i`
    await sql`VACUUM ANALYZE links` // a bulk load leaves the GIN pending list full until vacuumed
    const plan = (await sql`EXPLAIN SELECT id FROM links WHERE deleted_at IS NULL AND search_text ILIKE '%summer-s%'`)
      .map((r: Record<string, string>) => Object.values(r)[0])
      .join('\n')
    expect(plan).toContain('links_search')
    expect((await sql`SELECT id FROM links WHERE deleted_at IS NULL AND search_text ILIKE '%EDLE-4%'`).map((r: { id: string }) => r.id)).toEqual(['lnk_1'])
  })

  test('rollups: the planner knows scope and dim are correlated (the all-links scope holds every dimension, a link only the totals)', async () => {
    // 100 hours of the all-links scope in 14 dimensions, 500 links with 20 hours of totals each.
    await sql`INSERT INTO stats_hour (scope, dim, t, value, clicks, scans)
      SELECT 0, d, t, '', 1, 0 FROM generate_series(0, 13) d, generate_series(1, 100) t
      UNION ALL SELECT s, 0, t, '', 1, 0 FROM generate_series(1, 500) s, generate_series(1, 20) t`
    await sql`ANALYZE stats_hour`
    const [explained] = await sql.unsafe('EXPLAIN (FORMAT JSON) SELECT * FROM stats_hour WHERE scope = 0 AND dim = 0')
    const estimate = Object.values(explained as Record<string, { Plan: { 'Plan Rows': number } }[]>)[0]![0]!.Plan['Plan Rows']
    // 100 rows; column by column the estimate would be 11,400 × 1,400/11,400 × 10,100/11,400 ≈ 1,240.
    expect(estimate).toBeLessThan(300)
    await sql`DELETE FROM stats_hour`
  })

  test('the cluster tables are those the building blocks create on a bare database (their CREATE IF NOT EXISTS is a no-op here)', async () => {
    const bare = new SQL(await pg.createDatabase('bare_blocks'))
    for (const ddl of Object.values(CLUSTER_TABLES)) await bare.unsafe(ddl)
    await bare.unsafe('CREATE TABLE IF NOT EXISTS cache_epochs (channel text PRIMARY KEY, epoch bigint NOT NULL)')
    const shape = async (db: SQL) =>
      (
        await db`SELECT table_name, column_name, data_type, is_nullable FROM information_schema.columns
          WHERE table_name IN ('locks', 'visit_counters', 'rate_windows', 'cache_epochs') ORDER BY table_name, ordinal_position`
      ).map((r: Record<string, string>) => Object.values(r).join(' '))
    expect(await shape(sql)).toEqual(await shape(bare))
    await bare.close()
  })
})
