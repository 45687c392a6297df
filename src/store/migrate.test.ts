/**
 * Migrations are frozen history. A database left at any earlier migration, with data in
 * it, must upgrade to today's schema and read through today's services exactly as a
 * database that today's code filled from the start: the same API answers, and statistics
 * rollups equal to what the live click writer keeps. These tests fail when a migration's
 * SQL changes in a way that breaks that upgrade (a dropped or altered backfill, a rollup
 * value computed differently, a column or table lost), or when a migration starts
 * importing live code that may change under it.
 */

import { Database } from 'bun:sqlite'
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join, relative, resolve } from 'node:path'
import { type ApiHarness, createHarness } from '../../test/helpers/in-process'
import { seededRandom } from '../../test/helpers/random'
import { createApiApp } from '../app'
import { buildConfig } from '../config/config.load'
import { createDeps, type SqliteDeps } from '../deps'
import { samplePng } from '../files/files.samples'
import { createLogger } from '../shared/log'
import { type ClickEvent, createEventWriter } from '../stats/click-writer'
import { event, T } from '../stats/stats.test-fixtures'
import { migrate } from './migrate'
import { migrations } from './migrations'

const migrationsDir = join(import.meta.dir, 'migrations')

test('migrations import nothing outside src/store: what they did cannot change under them', () => {
  const files = readdirSync(migrationsDir).filter((f) => f.endsWith('.ts'))
  expect(files.length).toBeGreaterThanOrEqual(migrations.length)
  const outside: string[] = []
  let seen = 0
  for (const file of files) {
    const source = readFileSync(join(migrationsDir, file), 'utf8')
    // Static imports and re-exports (type-only ones too), side-effect imports, import() and require().
    const specifiers = [...source.matchAll(/\bfrom\s*['"]([^'"]+)['"]|\bimport\s*\(?\s*['"]([^'"]+)['"]|\brequire\s*\(\s*['"]([^'"]+)['"]/g)].map(
      (m) => m[1] ?? m[2] ?? m[3]!,
    )
    seen += specifiers.length
    for (const spec of specifiers) {
      const target = spec.startsWith('.') ? relative(dirname(migrationsDir), resolve(migrationsDir, spec)) : null
      if (target === null || target.startsWith('..')) outside.push(`${file}: ${spec}`)
    }
  }
  expect(seen).toBeGreaterThanOrEqual(files.length) // every migration imports its Migration type: the parse sees imports
  expect(outside).toEqual([])
})

// ---- Upgrades from every earlier migration ----

const root = mkdtempSync(join(tmpdir(), 'shortlink-migrate-'))
afterAll(() => rmSync(root, { recursive: true, force: true }))
/** Uploaded blobs live in the data dir: the reference and every upgraded store share it. */
const dataDir = join(root, 'data')
const config = buildConfig({ server: { dataDir } }, {})

/**
 * The migration that created the rollup tables, and the first whose rollup layout today's
 * click writer still writes (a migration that changes the layout moves it).
 */
const ROLLUPS_CREATED = 7
const WRITER_LAYOUT_SINCE = 8
const ROLLUP_TABLES = ['stats_quarter', 'stats_hour', 'stats_day', 'stats_week'] as const

/**
 * The reference: today's code fills a store through the API (users, keys, tags, links of
 * two types and owners, an archived and a deleted link, a domain, a QR template, a file)
 * and the live click writer (varied places, scans, UTM tags, merged rows; one link passes
 * the busy threshold part-way). An old store gets these same rows, as far as its schema holds them.
 */
let ref: ApiHarness
let refPath: string
const linkIds: string[] = []
/** The reference's click events, in the batches its writer got them. */
const batches: ClickEvent[][] = []

async function buildReference() {
  ref = createHarness({ server: { dataDir } })
  const ok = async (method: string, path: string, opts: Parameters<ApiHarness['call']>[2]) => {
    const r = await ref.call(method, path, opts)
    if (r.status >= 300) throw new Error(`${method} ${path}: ${r.status} ${JSON.stringify(r.body)}`)
    return r.body
  }
  const tag = (await ok('POST', '/tags', { key: ref.keys.member, json: { name: 'Summer' } })).id
  const link = async (key: string, owner: string, type: string, data: unknown, extra: Record<string, unknown> = {}) => {
    const body = await ok('POST', `/links/${type}`, { key: owner, json: { data, linkOptions: { key, ...extra } } })
    linkIds.push(body.id)
    return (ref.deps.db.query('SELECT seq FROM links WHERE id = ?').get(body.id) as { seq: number }).seq
  }
  const alpha = await link('alpha', ref.keys.member, 'link', { url: 'https://dest.example/alpha' }, { tags: [tag] })
  const beta = await link('beta', ref.keys.member, 'text', { text: 'hello' })
  const gamma = await link('gamma', ref.keys.other, 'link', { url: 'https://dest.example/gamma' })
  const delta = await link('delta', ref.keys.other, 'text', { text: 'gone soon' })
  const epsilon = await link('epsilon', ref.keys.member, 'link', { url: 'https://dest.example/epsilon' })
  await ok('PATCH', `/links/${linkIds[4]}`, { key: ref.keys.member, json: { linkOptions: { archived: true } } })
  await ok('POST', '/domains', { json: { domain: 'go.example.com', notFoundUrl: 'https://example.com/404' } })
  await ok('POST', '/qr/templates', {
    key: ref.keys.member,
    json: { name: 'Navy', comment: 'brand', qrOptions: { patterns: { body: { style_id: 'rounded', value: '#1e3a8a' } } } },
  })
  const form = new FormData()
  form.set('file', new File([samplePng() as BlobPart], 'menu.png', { type: 'image/png' }))
  await ok('POST', '/files', { key: ref.keys.member, body: form })

  const rnd = seededRandom(7)
  const pick = <X>(xs: X[]) => xs[Math.floor(rnd() * xs.length)]!
  const places: [string | null, string | null, string | null][] = [
    ['DE', 'Bavaria', 'Munich'],
    ['NL', 'Limburg', 'Maastricht'],
    ['BE', 'Limburg', 'Hasselt'],
    ['US', 'California', null],
    ['FR', null, null],
    [null, null, null],
  ]
  const base = T('2025-03-20T00:00:00Z')
  const events: ClickEvent[] = []
  for (let i = 0; i < 400; i++) {
    const [country, region, city] = pick(places)
    events.push(
      event(pick([alpha, alpha, beta, gamma, delta, epsilon]), base + Math.floor(rnd() * 40 * 86_400_000), {
        scan: rnd() < 0.3,
        n: rnd() < 0.1 ? 3 : 1,
        country,
        region,
        city,
        continent: country === 'US' ? 'North America' : country ? 'Europe' : null,
        os: pick(['IOS', 'Android', 'Windows']),
        referer: pick([null, 't.co']),
        utmSource: pick(['poster', null]),
        utmCampaign: pick(['spring', null]),
      }),
    )
  }
  // Gamma becomes busy in the third batch: a merged row of 5,000 identical visits.
  events.splice(300, 0, event(gamma, base + 10 * 86_400_000 + 1234, { n: 5000, scan: true, country: 'NL', region: 'Limburg', city: 'Maastricht' }))
  for (let i = 0; i < events.length; i += 100) batches.push(events.slice(i, i + 100))
  const write = createEventWriter(ref.deps.db)
  for (const batch of batches) write(batch)
  await ok('DELETE', `/links/${linkIds[3]}`, { key: ref.keys.other })
  expect(ref.deps.db.query('SELECT l.key FROM stats_busy_links b JOIN links l ON l.seq = b.seq').all()).toEqual([{ key: 'gamma' }])

  refPath = join(root, 'reference.db')
  writeFileSync(refPath, ref.deps.db.serialize())
}

/** What a user reads: [key, path]; answers of the reference and of every upgraded store must match. */
function reads(): [keyof ApiHarness['keys'], string][] {
  const [alpha, beta, gamma, delta] = linkIds
  const stats = [
    '',
    'qr=true',
    'groupBy=country',
    'groupBy=region',
    'groupBy=city',
    'groupBy=os',
    'groupBy=referer',
    'groupBy=utm_source',
    'groupBy=link',
    'groupBy=link_type',
    'linkType=text&groupBy=country',
    'tagNames=Summer',
    'country=NL&groupBy=city',
    'continent=Europe&groupBy=region',
    'groupBy=time&granularity=day&start=2025-03-20T00:00:00Z&end=2025-05-01T00:00:00Z',
    'groupBy=time&granularity=hour&timezone=Asia/Kolkata&start=2025-03-29T00:00:00Z&end=2025-03-31T00:00:00Z',
    'groupBy=time&granularity=week&start=2025-03-17T00:00:00Z&end=2025-05-05T00:00:00Z',
    `linkId=${alpha}&groupBy=city`,
    `linkId=${gamma}&groupBy=region`,
    `linkId=${gamma}&groupBy=time&granularity=day&start=2025-03-20T00:00:00Z&end=2025-05-01T00:00:00Z`,
    `linkIds=${alpha}&linkIds=${beta}&groupBy=os`,
  ].map((q) => `/statistics?${q}`)
  return [
    ...stats.map((p): [keyof ApiHarness['keys'], string] => ['admin', p]),
    ...stats.slice(0, 8).map((p): [keyof ApiHarness['keys'], string] => ['member', p]),
    ['other', '/statistics?groupBy=city'],
    ['admin', '/links?includeArchived=true'],
    ['member', '/links'],
    ['other', '/links'],
    ['readonly', '/links/count'],
    ...linkIds.map((id): [keyof ApiHarness['keys'], string] => ['admin', `/links/${id}`]),
    ['other', `/links/${delta}`],
    ['member', '/tags'],
    ['admin', '/domains/go.example.com'],
    ['readonly', '/qr/templates'],
    ['member', '/files'],
    ['admin', '/users'],
  ]
}

async function answers(call: ApiHarness['call'], keys: ApiHarness['keys']) {
  const out: unknown[] = []
  for (const [key, path] of reads()) {
    const r = await call('GET', path, { key: keys[key] })
    const { requestId: _, ...body } = r.body as Record<string, unknown> // errors carry a per-request id
    out.push({ path, key, status: r.status, body: Array.isArray(r.body) ? r.body : body })
  }
  // lastUsedAt is written on use, and the keys' names and lastUsedAt came with 0009.
  const keyList = await call('GET', '/keys?includeRevoked=true', { key: keys.admin })
  out.push({ keys: keyList.status, ids: (keyList.body as { id: string; userId: string; role: string }[]).map((k) => `${k.id} ${k.userId} ${k.role}`) })
  return out
}

/** Every rollup row, its scope named (a link by id, a group by owner or type) since stores number groups in their own order. */
function rollups(db: Database) {
  return ROLLUP_TABLES.map((table) =>
    db
      .query(`SELECT CASE WHEN r.scope = 0 THEN 'all' WHEN r.scope > 0 THEN 'link ' || l.id ELSE 'group ' || o.name END AS scope,
        r.dim, r.t, r.value, r.clicks, r.scans
      FROM ${table} r LEFT JOIN links l ON r.scope > 0 AND l.seq = r.scope LEFT JOIN stats_groups o ON r.scope < 0 AND o.num = -r.scope
      ORDER BY 1, 2, 3, 4`)
      .all(),
  )
}

const userTables = (db: Database) =>
  db
    .query<{ name: string }, []>(
      "SELECT name FROM sqlite_master WHERE type IN ('table', 'view') AND name NOT LIKE 'sqlite_%' AND name NOT LIKE 'links_search%' AND name <> 'schema_migrations' ORDER BY rowid",
    )
    .all()
    .map((r) => r.name)

/** Tables a later migration renamed: the old name → today's name, and old column → today's column. */
const RENAMED: Record<string, { table: string; columns: Record<string, string> }> = {
  stats_owners: { table: 'stats_groups', columns: { user_id: 'name' } }, // 0010
}

/**
 * Copies the reference's rows into `db` for the tables `include` names (only the columns
 * `db` has; a table or column renamed since is read under today's name), skipping tables
 * its migrations already filled. Without click events, the links' click counters start
 * at zero. The contentless search index cannot be copied; search is not among the reads.
 */
function copyReference(db: Database, include: (table: string) => boolean, withClicks: boolean) {
  const tables = userTables(db)
  db.exec(`ATTACH '${refPath}' AS ref`)
  for (const table of tables.filter(include)) {
    if (db.query(`SELECT 1 FROM "${table}" LIMIT 1`).get()) continue
    const cols = db
      .query<{ name: string }, []>(`PRAGMA table_info("${table}")`)
      .all()
      .map((c) => c.name)
    const renamed = RENAMED[table]
    const noClicks = table === 'links' && !withClicks
    const values = cols.map((c) => (noClicks && c === 'clicks' ? '0' : noClicks && c === 'last_clicked' ? 'NULL' : `"${renamed?.columns[c] ?? c}"`))
    db.exec(`INSERT INTO main."${table}" (${cols.map((c) => `"${c}"`).join(', ')}) SELECT ${values.join(', ')} FROM ref."${renamed?.table ?? table}"`)
  }
  db.exec('DETACH ref')
}

/**
 * A store as a server that ran only migrations 1..k left it, with the reference's rows
 * its schema holds. Rollups are copied only from WRITER_LAYOUT_SINCE on, the layout the
 * reference's writer wrote; at ROLLUPS_CREATED ≤ k < WRITER_LAYOUT_SINCE no code of today
 * writes the rollups of that time, so the data goes in just before ROLLUPS_CREATED and
 * that migration's own backfill rolls it up, as on a server that upgraded with clicks stored.
 */
function storeAt(k: number): { db: Database; path: string; tables: string[] } {
  const path = join(root, `at-${k}.db`)
  const db = new Database(path, { create: true, strict: true })
  db.exec('PRAGMA foreign_keys = ON')
  const dataAt = k >= ROLLUPS_CREATED && k < WRITER_LAYOUT_SINCE ? ROLLUPS_CREATED - 1 : k
  migrate(db, undefined, dataAt)
  const tables = userTables(db)
  copyReference(db, (t) => !t.startsWith('stats_') || dataAt >= WRITER_LAYOUT_SINCE, tables.includes('click_events'))
  migrate(db, undefined, k)
  expect(db.query('SELECT id FROM schema_migrations ORDER BY id').all()).toEqual(migrations.filter((m) => m.id <= k).map((m) => ({ id: m.id })))
  return { db, path, tables: userTables(db) }
}

/**
 * What today's code adds after the upgrade: the rows of tables the old schema lacked, and,
 * when it had no click events, the reference's clicks through the live writer.
 */
function addAfterUpgrade(db: Database, oldTables: string[]) {
  const hadClicks = oldTables.includes('click_events')
  // Click events (since 0011 a view over click_events_compact) come through the writer.
  copyReference(db, (t) => !oldTables.includes(t) && !t.startsWith('stats_') && !t.startsWith('click_events'), hadClicks)
  if (hadClicks) return
  const write = createEventWriter(db)
  for (const batch of batches) write(batch)
}

function openApp(path: string): { deps: SqliteDeps; call: ApiHarness['call'] } {
  const deps = createDeps(config, path, createLogger(true))
  const app = createApiApp(deps)
  return {
    deps,
    async call(method, path, opts = {}) {
      const headers = new Headers(opts.headers)
      if (opts.key) headers.set('authorization', `Bearer ${opts.key}`)
      const res = await app.handle(new Request(`https://localhost${deps.settings.apiPrefix}${path}`, { method, headers }), '127.0.0.1')
      const text = await res.text()
      let body: unknown = text
      try {
        body = JSON.parse(text)
      } catch {}
      return { status: res.status, body, headers: res.headers }
    },
  }
}

describe('upgrade from a store left at each earlier migration, with data', () => {
  let expected: unknown[]
  let expectedRollups: ReturnType<typeof rollups>
  let refCounts: Map<string, number>
  let refEvents: unknown[]
  beforeAll(async () => {
    await buildReference()
    // Taken before the first statistics read: the events engine then moves the SQLite events out (issue 26).
    expectedRollups = rollups(ref.deps.db)
    refCounts = new Map(userTables(ref.deps.db).map((t) => [t, (ref.deps.db.query(`SELECT count(*) AS n FROM "${t}"`).get() as { n: number }).n]))
    refEvents = ref.deps.db.query('SELECT * FROM click_events ORDER BY id').all()
    // The reference answers while its events move into the engine (its first statistics read starts
    // the move), and the same once they are all there: a read during the move is exact (a snapshot
    // begun before the move's last chunk committed once read DuckDB without it: empty answers).
    expected = await answers(ref.call, ref.keys)
    await ref.deps.events.moved()
    expect(await answers(ref.call, ref.keys)).toEqual(expected)
  })

  test('the reference reads what it holds (the comparisons below are not empty)', () => {
    expect(expectedRollups[1]!.length).toBeGreaterThan(100)
    expect(JSON.stringify(expected)).toContain('Maastricht')
    // Only the deleted link answers otherwise: 410, to its owner and to an admin.
    expect(expected.filter((a: any) => a.path && a.status !== 200).map((a: any) => `${a.path} ${a.status}`)).toEqual([
      `/links/${linkIds[3]} 410`,
      `/links/${linkIds[3]} 410`,
    ])
  })

  for (const m of migrations.slice(0, -1)) {
    test(`from ${m.name}: every migration recorded, every row kept, the same answers and rollups as today's writer`, async () => {
      const old = storeAt(m.id)
      // The upgrade a server runs at start.
      expect(migrate(old.db)).toEqual(migrations.filter((x) => x.id > m.id).map((x) => x.name))
      expect(old.db.query('SELECT id, name FROM schema_migrations ORDER BY id').all()).toEqual(migrations.map((x) => ({ id: x.id, name: x.name })))
      // No row of the old store's tables was lost (rollups are compared row by row below).
      for (const t of old.tables.filter((t) => !t.startsWith('stats_')))
        expect([t, (old.db.query(`SELECT count(*) AS n FROM "${t}"`).get() as { n: number }).n]).toEqual([t, refCounts.get(t)!])
      addAfterUpgrade(old.db, old.tables)
      old.db.close()
      const { deps, call } = openApp(old.path)
      try {
        expect(rollups(deps.db)).toEqual(expectedRollups)
        // Every event, each string read back through the dictionary (0011), as the reference holds it.
        expect(deps.db.query('SELECT * FROM click_events ORDER BY id').all()).toEqual(refEvents)
        // Read while the upgraded store's events move (in the worker), then once they have moved.
        expect(await answers(call, ref.keys)).toEqual(expected)
        await deps.events.moved()
        expect(await answers(call, ref.keys)).toEqual(expected)
      } finally {
        await deps.recorder.stop()
        deps.db.close()
      }
    })
  }
})

test('a store made by main before A/B tests (0018 applied, 0017 not): the next start applies 0017 after 0018, then 0019; conversions kept', () => {
  const db = new Database(':memory:')
  // What the previous release's runner left: every migration of its list, which had no 0017 or 0019.
  db.exec('CREATE TABLE schema_migrations (id INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at INTEGER NOT NULL)')
  for (const m of migrations.filter((m) => m.id !== 17 && m.id !== 19)) {
    db.exec(m.sql)
    db.query('INSERT INTO schema_migrations (id, name, applied_at) VALUES (?, ?, ?)').run(m.id, m.name, 1)
  }
  db.exec(`INSERT INTO customers (id, user_id, external_id, created_at) VALUES ('cus_1', 'u1', 'c1', 1);
    INSERT INTO conversions (id, kind, user_id, customer_id, click_id, link_seq, event_name, at, click_at, scan, os, browser, device)
    VALUES ('led_1', 'lead', 'u1', 'cus_1', 'click1', 1, 'Sign up', 2, 1, 0, 'Linux', 'Firefox', 'Desktop')`)
  expect(migrate(db)).toEqual(['0017_ab_tests', '0019_conversion_variants'])
  expect(db.query('SELECT id FROM schema_migrations ORDER BY id').all()).toEqual(migrations.map((m) => ({ id: m.id })))
  expect(db.query('SELECT id, variant FROM conversions').all()).toEqual([{ id: 'led_1', variant: null }])
  expect(db.query("SELECT count(*) AS n FROM sqlite_master WHERE name IN ('link_tests', 'links_test_ends', 'conversions_link_variant')").get()).toEqual({
    n: 3,
  })
  expect(migrate(db)).toEqual([])
  db.close()
})
