/**
 * `shortlink migrate-store` end to end: a real server on SQLite gets data through the API
 * (links of several types with tags, a user with a password and a session, keys, a domain,
 * an uploaded file, a QR template, counted visits), stops; the same binary copies its store
 * into a real PostgreSQL; every copied table is then compared row by row and value by value,
 * file bytes by SHA-256, and a click event field by field. Conversions and A/B tests move
 * too: a node on the copy attributes a lead on a click id handed out before the move to its link
 * and variant, a running test keeps its visits and conversions per variant, a finished one its
 * verdict. Bad input exits 2 with one line.
 */
import { Database } from 'bun:sqlite'
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { SQL } from 'bun'
import { contentResponse, createFileService, createPgFileStore } from '../src/files'
import { samplePdf } from '../src/files/files.samples'
import { fileByteDiffs, tableDiffs } from '../src/store/pg/copy.test-fixtures'
import { landingOf } from './helpers/landing'
import { until } from './helpers/poll'
import { startPostgres, type TestPostgres } from './helpers/postgres'
import { freePort, json, runCli, startServer, type TestServer } from './helpers/server'

const FIREFOX = 'Mozilla/5.0 (X11; Linux x86_64; rv:125.0) Gecko/20100101 Firefox/125.0'
const PASSWORD = 'correct horse battery staple 42'

let pg: TestPostgres
let admin: SQL
let s: TestServer
let target: string
beforeAll(async () => {
  ;[pg, s] = await Promise.all([startPostgres(), startServer()])
  admin = new SQL(pg.url)
  target = await pg.createDatabase('copied')
})
afterAll(async () => {
  await s?.stop()
  await admin?.close()
  await pg?.destroy()
})

const created = async (r: Response) => {
  if (r.status !== 200 && r.status !== 201) throw new Error(`${r.url}: ${r.status} ${await r.text()}`)
  return (await r.json()) as any
}
const lines = (text: string) => text.trim().split('\n').filter(Boolean)

describe('migrate-store', () => {
  test('a stopped SQLite node is copied into PostgreSQL whole: every table, value for value, file bytes and click events included', async () => {
    const member = await s.keyFor('alice', 'member')
    const tag = await created(await s.api('/tags', { key: member, method: 'POST', json: { name: 'Poster' } }))
    const form = new FormData()
    form.append('file', new Blob([samplePdf('Summer menu') as BlobPart]), 'menu.pdf')
    const file = await created(await s.api('/files', { key: member, method: 'POST', body: form }))
    const link = await created(
      await s.api('/links/link', {
        key: member,
        method: 'POST',
        json: { data: { url: 'https://shop.example/a?x=1' }, linkOptions: { key: 'promo', tags: [tag.id], utm: { source: 'news', campaign: 'launch' } } },
      }),
    )
    await created(
      await s.api('/links/text', {
        key: member,
        method: 'POST',
        json: { data: { text: 'Tab\there,\nnew line, back\\slash, ünïcödé' }, linkOptions: { key: 'note' } },
      }),
    )
    await created(
      await s.api('/links/document', { key: member, method: 'POST', json: { data: { fileId: file.id }, linkOptions: { key: 'menu', tags: [tag.id] } } }),
    )
    await created(await s.api('/users', { method: 'POST', json: { id: 'frank', password: PASSWORD, role: 'member' } }))
    await s.keyFor('frank', 'readonly')
    const origin = `https://localhost:${s.httpsPort}`
    expect((await s.api('/session', { method: 'POST', key: null, json: { userId: 'frank', password: PASSWORD }, headers: { origin } })).status).toBe(200)
    await created(await s.api('/domains', { method: 'POST', json: { domain: 'go.example.com' } }))
    await created(await s.api('/qr/templates', { method: 'POST', json: { name: 'Night', qrOptions: { patterns: { eye: { style_id: 'leaf' } } } } }))
    for (let i = 0; i < 3; i++)
      expect((await s.fetch(`${origin}/promo?utm_term=shoes`, { headers: { 'user-agent': FIREFOX, referer: 'https://t.co/abc' } })).status).toBe(302)
    await s.clicksFlushed()
    expect(await s.stop()).toBe(0)

    const dbPath = join(s.dir, 'data/shortlink.db')
    const run = await runCli(['migrate-store', '--from', `sqlite:${dbPath}`, '--to', target], { cwd: s.dir })
    expect(run.stderr).toBe('')
    expect(run.code).toBe(0)
    expect(run.stdout).toContain('every count matches')
    // Not a terminal: one plain line per table, then the counts.
    expect(run.stdout).toMatch(/^click_events: \d+ rows in [\d.]+ s \([\d,]+ rows\/s\)$/m)
    expect(run.stdout).toMatch(/^links +\d+ +\d+ +ok$/m)

    const lite = new Database(dbPath, { readonly: true, strict: true })
    const sql = new SQL(target)
    try {
      // Click events and their rollups: a running node keeps them in its events store (DuckDB), not in these
      // SQLite tables; they are checked below, in PostgreSQL, against the visits made.
      expect(await tableDiffs(lite, sql, (table) => table === 'click_events' || table.startsWith('stats_'))).toEqual([])
      expect(await fileByteDiffs(sql, join(s.dir, 'data'))).toEqual([])
      const count = async (t: string) => (await sql.unsafe(`SELECT count(*)::int AS n FROM ${t}`))[0].n as number
      // Not vacuous: each kind of data made above is there.
      expect(await count('links')).toBe(4) // and the flush barrier
      expect(await count('link_tags')).toBe(2)
      expect(await count('sessions')).toBe(1)
      expect(await count('api_keys')).toBeGreaterThanOrEqual(3)
      expect(await count('domains')).toBe(1)
      expect(await count('qr_templates')).toBe(1)
      expect(await count('stats_hour')).toBeGreaterThan(0)
      const [{ bytes }] = await sql`SELECT bytes FROM files WHERE id = ${file.id}`
      expect(Buffer.from(bytes).equals(Buffer.from(samplePdf('Summer menu')))).toBe(true)
      // Served as a node on PostgreSQL serves it: through the files module's PostgreSQL store.
      const files = createFileService({ store: createPgFileStore(sql), maxBytes: 1 << 20, isInUse: () => false })
      const served = await contentResponse(new Request('https://x/f'), (await files.open(file.id))!)
      expect(Buffer.from(await served.arrayBuffer()).equals(Buffer.from(samplePdf('Summer menu')))).toBe(true)
      const [frank] = await sql`SELECT role, password_hash FROM users WHERE id = 'usr_frank'`
      expect(frank.role).toBe('member')
      expect(frank.password_hash).toStartWith('$argon2id$')
      const events = await sql`SELECT e.at::float8 AS at, e.scan, e.browser, e.os, e.referer, e.referer_url, e.utm_source, e.utm_campaign, e.utm_term, e.n
        FROM click_events e JOIN links l ON l.seq = e.link_seq WHERE l.id = ${link.id}`
      expect(events.reduce((sum: number, e: { n: number }) => sum + e.n, 0)).toBe(3)
      expect(events[0]).toMatchObject({
        scan: 0,
        browser: 'Firefox',
        os: 'Linux',
        referer: 't.co',
        utm_source: 'news',
        utm_campaign: 'launch',
        utm_term: 'shoes',
      })
      // A link's counters are in link_clicks on PostgreSQL (its migration 0009).
      const [{ clicks }] = await sql`SELECT c.clicks::int AS clicks FROM link_clicks c JOIN links l ON l.seq = c.seq WHERE l.id = ${link.id}`
      expect(clicks).toBe(3)
    } finally {
      lite.close()
      await sql.close()
    }

    // Again into the same database: refused (exit 2), nothing touched; --force replaces it.
    const again = await runCli(['migrate-store', '--from', `sqlite:${dbPath}`, '--to', target], { cwd: s.dir })
    expect(again.code).toBe(2)
    expect(lines(again.stderr)).toEqual([expect.stringContaining('--force')])
    const forced = await runCli(['migrate-store', '--force', '--from', `sqlite:${join(s.dir, 'data')}`, '--to', target], { cwd: s.dir })
    expect(forced.code).toBe(0)
  })

  test('conversions and A/B tests move whole: a pre-move sl_id is attributed to its link and variant, a running test keeps its counts, a finished one its verdict', async () => {
    const A = 'https://a.example/landing'
    const B = 'https://b.example/landing'
    const variants = [
      { url: A, percentage: 50 },
      { url: B, percentage: 50 },
    ]
    const node = await startServer({ storeUrl: '' })
    let moved: TestServer | undefined
    try {
      const create = async (key: string, testCompletedAt: string) =>
        (await created(
          await node.api('/links/link', {
            method: 'POST',
            json: { data: { url: 'https://plain.example/' }, linkOptions: { key, trackConversion: true, testVariants: variants, testCompletedAt } },
          }),
        )) as { id: string; shortLink: string }
      // Visits until each variant has `least` of them: the click ids handed out, per variant.
      const visitBoth = async (shortLink: string, least: number) => {
        const clicks: Record<string, string[]> = { [A]: [], [B]: [] }
        while (clicks[A]!.length < least || clicks[B]!.length < least) {
          const r = await node.fetch(shortLink, { headers: { 'user-agent': FIREFOX } })
          expect(r.status).toBe(302)
          const { url, clickId } = landingOf(r.headers.get('location'))
          clicks[url]!.push(clickId!)
        }
        return clicks
      }
      const lead = (server: TestServer, clickId: string, customer: string) =>
        server.api('/track/lead', { method: 'POST', json: { clickId, eventName: 'Sign up', customerExternalId: customer } })

      const inAnHour = new Date(Date.now() + 3600_000).toISOString()
      const running = await create('ab-running', inAnHour)
      const runningClicks = await visitBoth(running.shortLink, 3)
      const finished = await create('ab-finished', inAnHour)
      const finishedClicks = await visitBoth(finished.shortLink, 6)
      await node.clicksFlushed()
      // Running: one lead on A before the move. Finished: every visit of A converts, none of B: A wins.
      expect((await lead(node, runningClicks[A]![0]!, 'run-a')).status).toBe(200)
      for (const [i, clickId] of finishedClicks[A]!.entries()) expect((await lead(node, clickId, `fin-${i}`)).status).toBe(200)
      expect((await node.api(`/links/${finished.id}`, { method: 'PATCH', json: { linkOptions: { testCompletedAt: new Date().toISOString() } } })).status).toBe(
        200,
      )
      const verdict = await until(
        'the verdict',
        async () => (await json(await node.api(`/links/${finished.id}/test`))).body,
        (b) => b.status !== 'running',
      )
      expect(verdict).toMatchObject({ status: 'completed', winner: 0 })
      const runningBefore = (await json(await node.api(`/links/${running.id}/test`))).body
      expect(runningBefore.variants.map((v: { clicks: number; leads: number }) => [v.clicks, v.leads])).toEqual([
        [runningClicks[A]!.length, 1],
        [runningClicks[B]!.length, 0],
      ])
      expect(await node.stop()).toBe(0)

      const db = await pg.createDatabase('copied_tests')
      const run = await runCli(['migrate-store', '--from', `sqlite:${node.dataDir}`, '--to', db], { cwd: node.dir })
      expect(run.stderr).toBe('')
      expect(run.code).toBe(0)
      const sql = new SQL(db)
      const lite = new Database(join(node.dataDir, 'shortlink.db'), { readonly: true, strict: true })
      try {
        // link_tests (the verdict) and conversions (with their variants) value for value.
        expect(await tableDiffs(lite, sql, (t) => t === 'click_events' || t === 'tracked_clicks' || t.startsWith('stats_'))).toEqual([])
        // Every click id handed out (both links, both variants; the sentinel tracks none) is there with its variant.
        const rows: { click_id: string; variant: number | null }[] = await sql`SELECT click_id, variant FROM tracked_clicks`
        const variantOf = Object.fromEntries(rows.map((r) => [r.click_id, r.variant]))
        const handedOut = [runningClicks, finishedClicks].flatMap((c) => [...c[A]!.map((id) => [id, 0]), ...c[B]!.map((id) => [id, 1])])
        expect(rows).toHaveLength(handedOut.length)
        expect(Object.fromEntries(handedOut)).toEqual(variantOf)
      } finally {
        lite.close()
        await sql.close()
      }

      // A node on the copy.
      moved = await startServer({ dir: node.dir, storeUrl: db, env: { SHORTLINK_ADMIN_KEY: node.adminKey } })
      expect((await json(await moved.api(`/links/${running.id}/test`))).body).toEqual(runningBefore)
      expect((await json(await moved.api(`/links/${finished.id}/test`))).body).toEqual(verdict)
      // A lead on a click of variant B made before the move: attributed to its link and variant.
      const late = await json(await lead(moved, runningClicks[B]![0]!, 'run-b'))
      expect(late.status).toBe(200)
      expect(late.body).toMatchObject({ linkId: running.id, clickId: runningClicks[B]![0] })
      const runningAfter = (await json(await moved.api(`/links/${running.id}/test`))).body
      expect(runningAfter.variants.map((v: { clicks: number; leads: number }) => [v.clicks, v.leads])).toEqual([
        [runningClicks[A]!.length, 1],
        [runningClicks[B]!.length, 1],
      ])
      // The finished test keeps its verdict on the copy (its row in link_tests, compared above, is what stops a second judging).
      expect((await json(await moved.api(`/links/${finished.id}/test`))).body).toEqual(verdict)
    } finally {
      await moved?.stop()
      if (!moved) await node.stop()
    }
  })

  test('bad input: one line on stderr and exit 2 (missing file, bad URL, PostgreSQL unreachable, wrong password, a running server)', async () => {
    const cwd = s.dir
    const from = `sqlite:${join(s.dir, 'data/shortlink.db')}`
    // A role that must give its password (the test cluster trusts everyone else).
    await admin`CREATE ROLE mover LOGIN PASSWORD 'right-password'`
    const hba = join(pg.dir, 'data/pg_hba.conf')
    writeFileSync(hba, `host all mover 127.0.0.1/32 scram-sha-256\n${readFileSync(hba, 'utf8')}`)
    await admin`SELECT pg_reload_conf()`
    const moverUrl = (password: string) => target.replace('postgres@', `mover:${password}@`)
    const closedPort = await freePort()
    const cases: [string[], RegExp][] = [
      [['--from', 'sqlite:/nonexistent/shortlink.db', '--to', target], /no SQLite store/],
      [['--from', from, '--to', 'mysql://root@127.0.0.1/x'], /not a PostgreSQL URL/],
      [['--from', from, '--to', 'postgres://'], /--to/],
      [['--from', from], /usage/],
      [['--from', from, '--to', `postgres://postgres@127.0.0.1:${closedPort}/x`], /cannot connect/],
      [['--from', from, '--to', moverUrl('wrong-password')], /cannot connect to postgres:\/\/mover:\*\*\*@.*password/],
    ]
    for (const [args, message] of cases) {
      const r = await runCli(['migrate-store', ...args], { cwd })
      expect({ args, code: r.code }).toEqual({ args, code: 2 })
      expect(lines(r.stderr)).toEqual([expect.stringMatching(message)])
      expect(r.stderr).not.toContain('wrong-password')
    }

    // A server running on the store: refused, the copy must see every write.
    const again = await startServer({ dir: s.dir, env: { SHORTLINK_ADMIN_KEY: s.adminKey } })
    try {
      const r = await runCli(['migrate-store', '--from', from, '--to', target], { cwd })
      expect(r.code).toBe(2)
      expect(lines(r.stderr)).toEqual([expect.stringContaining('stop it first')])
    } finally {
      await again.stop()
    }
  })
})
