/**
 * The copy from SQLite into PostgreSQL at unit level: a store filled with awkward values
 * (tabs, newlines, backslashes, NULLs, non-ASCII, big numbers), click events over several
 * months, files with and without their bytes; then refusals and the one-transaction rule.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { createHash } from 'node:crypto'
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { SQL } from 'bun'
import { startPostgres, type TestPostgres } from '../../../test/helpers/postgres'
import { openStore } from '../db'
import { lockDataDir } from '../lock'
import { CopyRefusedError, copySqliteToPostgres, openSqliteSource } from './copy'
import { fileByteDiffs, tableDiffs } from './copy.test-fixtures'

let pg: TestPostgres
let dbs = 0
beforeAll(async () => {
  pg = await startPostgres()
})
afterAll(async () => {
  await pg?.destroy()
})

async function freshDatabase(): Promise<SQL> {
  return new SQL(await pg.createDatabase(`copy_${++dbs}`))
}

const AWKWARD = 'tab\there\nnew line\r\\back\\slash \\N ünïcödé 🎉'

/** A migrated SQLite store in a fresh data dir, filled through SQL with every table used. */
function seededStore(): string {
  const dataDir = mkdtempSync(join(tmpdir(), 'copy-test-'))
  const path = join(dataDir, 'shortlink.db')
  const db = openStore(path)
  db.exec(`
    INSERT INTO users (id, created_at, role, password_hash) VALUES ('usr_admin', 1700000000000, 'admin', NULL), ('usr_b', 1700000000001, 'member', '$argon2id$v=19$x');
    INSERT INTO api_keys (id, user_id, role, key_hash, key_prefix, created_at, name) VALUES ('key_1', 'usr_b', 'member', 'hash1', 'sk_ab', 1700000000002, 'laptop');
    INSERT INTO sessions (id, user_id, key_id, method, csrf_secret, created_at, last_seen_at, expires_at) VALUES ('ses_1', 'usr_b', 'key_1', 'apiKey', 'c', 1, 2, 3);
    INSERT INTO tags (id, user_id, name, name_key, color, created_at, updated_at) VALUES ('tag_1', 'usr_b', 'Summer', 'summer', 'red', 1, 1);
    INSERT INTO domains (slug, destination, created_by, created_at, updated_at) VALUES ('go.example', NULL, 'usr_admin', 1, 2);
    INSERT INTO domain_clicks VALUES ('go.example', 9007199254740991);
    INSERT INTO tls_certificates VALUES ('go.example', '-----BEGIN CERTIFICATE-----\nMII\n-----END CERTIFICATE-----\n', 'key', 1, 2, 3);
    INSERT INTO acme_accounts VALUES ('https://acme.example/dir', '{"kty":"EC"}', 'https://acme.example/acct/1', 4);
    INSERT INTO acme_challenges VALUES ('tok', 'tok.thumb', 5);
    INSERT INTO qr_templates (id, user_id, name, name_key, comment, qr_options, created_at, updated_at) VALUES ('tpl_1', 'usr_b', 'Blue', 'blue', '', '{"fg":"#00f"}', 1, 1);
    INSERT INTO stats_groups (name) VALUES ('usr_b'), ('type:link');
    INSERT INTO stats_busy_links VALUES (1);
    INSERT INTO stats_hour VALUES (0, 3, 472222, 'FR' || char(31) || 'Paris', 3, 1), (-1, 0, 472222, '', 3, 1);
    INSERT INTO stats_day VALUES (1, 0, 19675, '', 3, 1);
    INSERT INTO stats_week VALUES (0, 0, 2810, '', 3, 1);
    INSERT INTO stats_quarter VALUES (0, 0, 1888888, '', 3, 1);
    INSERT INTO webhooks (id, user_id, url, name, events, link_ids, tag_ids, secret, disabled, failing_since, created_at, updated_at)
      VALUES ('whk_1', 'usr_b', 'https://hooks.example/in', 'Zap', '["link.clicked"]', '["lnk_1"]', '[]', 'whsec_c2VjcmV0', 0, 1700000000100, 1, 2);
    INSERT INTO events (id, type, user_id, link_id, tag_ids, webhook_id, data, created_at)
      VALUES ('evt_1', 'link.clicked', 'usr_b', 'lnk_1', '["tag_1"]', NULL, '{"note":"tab	here"}', 1700000000200),
             ('evt_2', 'webhook.test', 'usr_b', NULL, NULL, 'whk_1', '{}', 1700000000300);
    INSERT INTO webhook_deliveries (webhook_id, event_seq, event_id, event_type, status, attempts, response_status, last_attempt_at, next_attempt_at, created_at)
      VALUES ('whk_1', 1, 'evt_1', 'link.clicked', 'pending', 2, 503, 1700000000250, 1700000300250, 1700000000201);
    INSERT INTO event_listeners VALUES ('user:usr_b', 'usr_b', 1700086400000);
  `)
  db.query(
    `INSERT INTO links (id, user_id, domain, key, link_type, destination, match_key, data, options, expires_at, clicks, last_clicked, created_at, updated_at, deleted_at)
     VALUES (?, 'usr_b', 'go.example', ?, 'link', ?, ?, ?, '{}', ?, ?, ?, 1700000000000, 1700000000000, ?)`,
  ).run('lnk_1', 'promo', 'https://example.com/a?b=c', 'm1', JSON.stringify({ url: 'https://example.com/a?b=c', note: AWKWARD }), null, 3, 1700000000500, null)
  db.query(
    `INSERT INTO links (id, user_id, domain, key, link_type, destination, match_key, data, created_at, updated_at, deleted_at)
     VALUES ('lnk_2', 'usr_b', 'go.example', 'gone', 'text', '', 'm2', '{"text":"x"}', 1, 1, 1700000009999)`,
  ).run()
  db.exec(`INSERT INTO link_tags VALUES ('tag_1', 1, 0); INSERT INTO kv VALUES ('cookie', '${AWKWARD.replace(/'/g, "''")}');`)
  db.exec(`INSERT INTO health_urls VALUES ('k1', 'https://example.com/a?b=c', 'broken', 2, 503, NULL, 1700000000600), ('k2', 'https://example.com/gone', 'unknown', 0, NULL, 'no answer within 10 s', NULL);
    INSERT INTO link_health_urls VALUES (1, 'k1'); INSERT INTO link_health VALUES (1, 'broken', 1700000000600);`)
  // An A/B test's verdict (its p-value a float that must arrive exactly).
  db.exec(
    `INSERT INTO link_tests VALUES (1, 1700000000000, 'completed', 0, 0.0123456789012345, '[{"url":"https://a.example/","clicks":20,"leads":15}]', 1700000000700)`,
  )
  // Click events in the compact form the writer keeps: strings numbered in stats_values.
  db.exec(`INSERT INTO stats_values (value) VALUES ('Linux'), ('Firefox'), ('desktop'), ('FR'), ('Paris'), ('${AWKWARD.replace(/'/g, "''")}')`)
  const id = (v: string) => db.query<{ id: number }, [string]>('SELECT id FROM stats_values WHERE value = ?').get(v)!.id
  const click = db.query(
    'INSERT INTO click_events_compact (link_seq, at, scan, country, city, os, browser, device, referer_url, n) VALUES (1, ?, ?, ?, ?, ?, ?, ?, ?, ?)',
  )
  for (const [at, scan, n] of [
    [Date.UTC(2023, 11, 31, 23, 59), 0, 1],
    [Date.UTC(2024, 0, 1), 1, 2],
    [Date.UTC(2024, 2, 5), 0, 1],
  ] as const)
    click.run(at, scan, id('FR'), id('Paris'), id('Linux'), id('Firefox'), id('desktop'), id(AWKWARD), n)
  // Files: a live one with its blob, a tombstone whose blob is gone.
  const bytes = new Uint8Array([0, 1, 2, 9, 10, 13, 92, 255, ...new TextEncoder().encode(AWKWARD)])
  const sha = createHash('sha256').update(bytes).digest('hex')
  mkdirSync(join(dataDir, 'files'))
  writeFileSync(join(dataDir, 'files', sha), bytes)
  db.query(
    `INSERT INTO files (id, user_id, name, name_key, sha256, size, mime_type, extension, created_at, updated_at, deleted_at)
     VALUES (?, 'usr_b', ?, ?, ?, ?, 'application/octet-stream', 'bin', 1, 1, ?)`,
  ).run('fil_1', 'menu.bin', 'menu.bin', sha, bytes.length, null)
  db.query(
    `INSERT INTO files (id, user_id, name, name_key, sha256, size, mime_type, extension, created_at, updated_at, deleted_at)
     VALUES ('fil_2', 'usr_b', 'old.pdf', 'old.pdf', 'deadbeef', 3, 'application/pdf', 'pdf', 1, 1, 2)`,
  ).run()
  db.close()
  return dataDir
}

describe('copy from SQLite into PostgreSQL', () => {
  test('every table arrives value for value, click events expanded into their months, file bytes included; identities continue after the copy', async () => {
    const dataDir = seededStore()
    const sql = await freshDatabase()
    const source = openSqliteSource(dataDir)
    const seen: string[] = []
    const result = await copySqliteToPostgres(source, sql, { chunkRows: 2, onProgress: (p) => p.done && seen.push(`${p.table}:${p.copied}/${p.total}`) })
    expect(result.ok).toBe(true)
    expect(result.missingBlobs).toEqual([])
    expect(seen).toContain('click_events:3/3')
    expect(await tableDiffs(source.db, sql)).toEqual([])
    expect(await fileByteDiffs(sql, dataDir)).toEqual([])
    source.close()

    const parts = await sql`SELECT tableoid::regclass::text AS part, sum(n)::int AS n FROM click_events_compact GROUP BY 1 ORDER BY 1`
    expect(parts.map((r: { part: string; n: number }) => `${r.part}:${r.n}`)).toEqual([
      'click_events_compact_202312:1',
      'click_events_compact_202401:2',
      'click_events_compact_202403:1',
    ])
    const [event] = await sql`SELECT country, city, os, referer_url, region FROM click_events WHERE scan = 1`
    expect(event).toEqual({ country: 'FR', city: 'Paris', os: 'Linux', referer_url: AWKWARD, region: null })
    // New rows get identities after the copied ones.
    const [{ seq }] = await sql`INSERT INTO links (id, user_id, domain, key, link_type, destination, match_key, data, created_at, updated_at)
      VALUES ('lnk_3', 'usr_b', 'go.example', 'new', 'link', 'https://x.example/', 'm3', '{}', 1, 1) RETURNING seq::int AS seq`
    expect(seq).toBe(3)
    const [{ num }] = await sql`INSERT INTO stats_groups (name) VALUES ('usr_c') RETURNING num::int AS num`
    expect(num).toBe(3)
    const [{ search }] = await sql`SELECT search_text AS search FROM links WHERE id = 'lnk_1'`
    expect(search).toContain('new line')
    await sql.close()
  })

  test('a target that holds data is refused unless forced; forced, it is replaced', async () => {
    const dataDir = seededStore()
    const sql = await freshDatabase()
    let source = openSqliteSource(dataDir)
    expect((await copySqliteToPostgres(source, sql)).ok).toBe(true)
    const again = await copySqliteToPostgres(source, sql).catch((e) => e)
    expect(again).toBeInstanceOf(CopyRefusedError)
    expect((again as Error).message).toContain('--force')
    await sql`INSERT INTO users (id, created_at) VALUES ('usr_only_in_pg', 1)`
    expect((await copySqliteToPostgres(source, sql, { force: true })).ok).toBe(true)
    expect(await tableDiffs(source.db, sql)).toEqual([])
    source.close()
    source = openSqliteSource(join(dataDir, 'shortlink.db'))
    source.close()
    await sql.close()
  })

  test('a failure part-way leaves the target as it was (one transaction)', async () => {
    const dataDir = seededStore()
    const lite = openStore(join(dataDir, 'shortlink.db'))
    lite.exec("INSERT INTO users (id, created_at) VALUES ('bad', 1); UPDATE users SET id = 'nul' || char(0) || 'byte' WHERE id = 'bad'")
    lite.close()
    const sql = await freshDatabase()
    const source = openSqliteSource(dataDir)
    const failure = await copySqliteToPostgres(source, sql).catch((e) => e)
    source.close()
    expect(failure).toBeInstanceOf(Error)
    expect((await sql`SELECT count(*)::int AS n FROM users`)[0].n).toBe(0)
    await sql.close()
  })

  test('the source is refused when a server holds its data dir, or when it is not a shortlink store', async () => {
    const dataDir = seededStore()
    const unlock = lockDataDir(dataDir) // as a running server holds it
    expect(() => openSqliteSource(dataDir)).toThrow(/is using/)
    unlock()
    const notAStore = mkdtempSync(join(tmpdir(), 'copy-test-'))
    writeFileSync(join(notAStore, 'shortlink.db'), 'hello, not SQLite')
    expect(() => openSqliteSource(notAStore)).toThrow(CopyRefusedError)
    expect(() => openSqliteSource(join(notAStore, 'missing.db'))).toThrow(/no SQLite store/)
  })
})
