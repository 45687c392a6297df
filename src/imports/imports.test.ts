/**
 * POST /imports and GET /imports/{id} through the real app on an in-memory store: each source's
 * fixture imported, then again (nothing new), what an imported link keeps, the dry run, the
 * domain rules, other users' keys and tags, request errors, and an import whose process stops.
 */
import { describe, expect, test } from 'bun:test'
import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs'
import { hostname, tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { type ApiHarness, createHarness } from '../../test/helpers/in-process'
import { STALE_MS } from './imports.service'

const FIXTURES = resolve(import.meta.dir, '../../test/fixtures/imports')

function harness(extra: Record<string, unknown> = {}): ApiHarness & { dataDir: string } {
  const dataDir = mkdtempSync(join(tmpdir(), 'shortlink-imports-'))
  return Object.assign(createHarness({ server: { dataDir }, domains: { defaults: ['localhost', 's.test'] }, ...extra }), { dataDir })
}

type Record_ = {
  id: string
  status: string
  total: number
  created: number
  updated: number
  skipped: number
  failed: number
  errors: { row: number; message: string }[]
}

function form(fields: Record<string, string>, file?: { name: string; content: string | Uint8Array<ArrayBuffer> }): FormData {
  const f = new FormData()
  for (const [k, v] of Object.entries(fields)) f.set(k, v)
  if (file) f.set('file', new Blob([file.content]), file.name)
  return f
}

/** Posts an import and waits (polling its record) until it is no longer running. */
async function importFile(
  h: ApiHarness,
  source: string,
  file: { name: string; content: string | Uint8Array<ArrayBuffer> },
  fields: Record<string, string> = {},
  key = h.keys.member,
) {
  const r = await h.call('POST', '/imports', { key, body: form({ source, ...fields }, file) })
  expect(r.status).toBe(202)
  let record = r.body as Record_
  for (let i = 0; record.status === 'running' && i < 600; i++) {
    await Bun.sleep(50)
    record = (await h.call('GET', `/imports/${record.id}`, { key })).body
  }
  return record
}
const fixture = (name: string) => ({ name, content: new Uint8Array(readFileSync(join(FIXTURES, name))) })
const count = async (h: ApiHarness, key: string) => (await h.call('GET', '/links/count?includeArchived=true', { key })).body.count as number
const links = async (h: ApiHarness, key: string) => (await h.call('GET', '/links?pageSize=100&includeArchived=true', { key })).body.links as any[]
const tagNames = async (h: ApiHarness, key: string) =>
  new Map(((await h.call('GET', '/tags?pageSize=100', { key })).body as { id: string; name: string }[]).map((t) => [t.id, t.name]))

describe('each fixture, then the same file again: nothing new', () => {
  const cases: [string, string, { created: number; failed: number }][] = [
    ['csv', 'csv.csv', { created: 4, failed: 4 }],
    ['bitly', 'bitly.json', { created: 3, failed: 1 }],
    ['bitly', 'bitly.csv', { created: 3, failed: 1 }],
    ['shlink', 'shlink.csv', { created: 3, failed: 1 }],
    ['shlink', 'shlink.json', { created: 3, failed: 0 }],
    ['yourls', 'yourls.csv', { created: 3, failed: 1 }],
    ['yourls', 'yourls.json', { created: 2, failed: 0 }],
    ['kutt', 'kutt.json', { created: 2, failed: 1 }],
    ['rebrandly', 'rebrandly.json', { created: 2, failed: 1 }],
  ]
  for (const [source, file, expected] of cases) {
    test(`${source}: ${file}`, async () => {
      const h = harness()
      const first = await importFile(h, source, fixture(file))
      expect(first).toMatchObject({ status: 'done', total: expected.created + expected.failed, ...expected, updated: 0, skipped: 0 })
      expect(first.errors.length).toBe(expected.failed)
      expect(await count(h, h.keys.member)).toBe(expected.created)
      const tagsBefore = await tagNames(h, h.keys.member)
      const again = await importFile(h, source, fixture(file))
      expect(again).toMatchObject({ status: 'done', created: 0, updated: 0, skipped: expected.created, failed: expected.failed })
      expect(again.errors).toEqual(first.errors)
      expect(await count(h, h.keys.member)).toBe(expected.created)
      expect(await tagNames(h, h.keys.member)).toEqual(tagsBefore)
    })
  }
})

describe('what an imported link keeps', () => {
  test("key, destination, title as comment, tags (the caller's own, made when missing), creation date, click total apart from clicks", async () => {
    const h = harness()
    // bob has a tag named "docs": alice's import makes her own.
    expect((await h.call('POST', '/tags', { key: h.keys.other, json: { name: 'docs' } })).status).toBe(200)
    const r = await importFile(h, 'shlink', fixture('shlink.json'))
    expect(r.created).toBe(3)
    const names = await tagNames(h, h.keys.member)
    const docs = (await links(h, h.keys.member)).find((l) => l.key === 'docs')
    expect(docs).toMatchObject({
      domain: 's.test',
      destination: 'https://docs.example.org/',
      comments: 'Documentation',
      createdAt: '2022-05-01T07:30:00.000Z',
      clicks: 0,
      importedClicks: 4012,
      userId: 'usr_alice',
    })
    expect(docs.tags.map((id: string) => names.get(id))).toEqual(['docs', 'help'])
    const bobs = await tagNames(h, h.keys.other)
    for (const id of docs.tags) expect(bobs.has(id)).toBe(false)
    // Statistics count visits here only: the imported total is not among them.
    const stats = await h.call('GET', `/statistics?groupBy=count&linkId=${docs.id}`, { key: h.keys.member })
    expect(stats.status).toBe(200)
    expect(stats.body).toEqual({ clicks: 0, scans: 0 })
    // The link redirects like any other.
    const row = h.deps.links.findLiveRow('s.test', 'docs')
    expect(row?.destination).toBe('https://docs.example.org/')
  })

  test("links on a domain not served here land on the import's domain; a served one is kept; csv rows naming an unknown domain fail", async () => {
    const h = harness()
    const bitly = await importFile(h, 'bitly', fixture('bitly.json'), { domain: 's.test' })
    expect(bitly.created).toBe(3)
    expect((await links(h, h.keys.member)).map((l) => `${l.domain}/${l.key}`).sort()).toEqual(['s.test/3kTq9Zp', 's.test/acme-careers', 's.test/catalog'])
    const csv = await importFile(h, 'csv', { name: 'x.csv', content: 'url,key,domain\nhttps://a.example/,a1,s.test\nhttps://b.example/,b1,nope.example\n' })
    expect(csv.created).toBe(1)
    expect(csv.errors).toEqual([{ row: 3, message: 'domain nope.example is not one of your short domains' }])
  })

  test('a later export with more clicks, a new tag or another title updates the link it matches; nothing is created', async () => {
    const h = harness()
    await importFile(h, 'kutt', fixture('kutt.json'))
    const later = JSON.parse(readFileSync(join(FIXTURES, 'kutt.json'), 'utf8'))
    later.data[0].visit_count = 400
    later.data[1].description = 'Sign-up'
    const r = await importFile(h, 'kutt', { name: 'kutt-later.json', content: JSON.stringify(later) })
    expect(r).toMatchObject({ created: 0, updated: 2, skipped: 0, failed: 1 })
    const byKey = new Map((await links(h, h.keys.member)).map((l) => [l.key, l]))
    expect(byKey.get('pricing').importedClicks).toBe(400)
    expect(byKey.get('Xy12ab').comments).toBe('Sign-up')
    expect(byKey.size).toBe(2)
  })

  test('a key held by another destination, or by another user, fails its row and changes nothing', async () => {
    const h = harness()
    expect(
      (await h.call('POST', '/links/link', { key: h.keys.other, json: { data: { url: 'https://bob.example/' }, linkOptions: { key: 'pricing' } } })).status,
    ).toBe(200)
    expect(
      (await h.call('POST', '/links/link', { key: h.keys.member, json: { data: { url: 'https://alice.example/' }, linkOptions: { key: 'Xy12ab' } } })).status,
    ).toBe(200)
    const r = await importFile(h, 'kutt', fixture('kutt.json'))
    expect(r).toMatchObject({ created: 0, failed: 3 })
    expect(r.errors.map((e) => e.message)).toEqual([
      'key "pricing" is already used on localhost',
      'key "Xy12ab" on localhost already leads to https://alice.example/',
      'click count "many" is not a whole number',
    ])
    expect((await links(h, h.keys.other))[0].destination).toBe('https://bob.example/')
  })
})

describe('dry run', () => {
  test('reports what the import would do and writes nothing: no link, no tag; the real run then does exactly that', async () => {
    const h = harness()
    const dry = await importFile(h, 'bitly', fixture('bitly.json'), { dryRun: 'true' })
    expect(dry).toMatchObject({ status: 'done', dryRun: true, created: 3, failed: 1 })
    expect(await count(h, h.keys.member)).toBe(0)
    expect((await tagNames(h, h.keys.member)).size).toBe(0)
    const real = await importFile(h, 'bitly', fixture('bitly.json'))
    expect({ ...real, id: '', dryRun: true }).toMatchObject({ created: dry.created, failed: dry.failed, errors: dry.errors })
    const dryAgain = await importFile(h, 'bitly', fixture('bitly.json'), { dryRun: 'true' })
    expect(dryAgain).toMatchObject({ created: 0, skipped: 3, failed: 1 })
  })

  test('rows repeating a key inside the file are judged as the real run would', async () => {
    const h = harness()
    const csv = 'url,key\nhttps://a.example/,k1\nhttps://a.example/,k1\nhttps://b.example/,k1\n'
    const dry = await importFile(h, 'csv', { name: 'x.csv', content: csv }, { dryRun: 'true' })
    const real = await importFile(h, 'csv', { name: 'x.csv', content: csv })
    expect([dry.created, dry.skipped, dry.failed]).toEqual([1, 1, 1])
    expect([real.created, real.skipped, real.failed]).toEqual([1, 1, 1])
  })
})

describe('request errors: a clear answer, nothing started', () => {
  test("source, file, fields, content type, size, role, another user's import", async () => {
    const h = harness({ imports: { maxBytes: 2048 } })
    const post = (body: BodyInit, key = h.keys.member, headers?: Record<string, string>) => h.call('POST', '/imports', { key, body, headers })
    const csv = { name: 'a.csv', content: 'url\nhttps://a.example/\n' }
    const expectError = (r: { status: number; body: any }, status: number, text: string) => {
      expect(r.status).toBe(status)
      expect(r.body.message).toContain(text)
    }
    expectError(await post(form({ source: 'tinyurl' }, csv)), 422, "'source' must be one of csv, bitly, shlink, yourls, kutt, rebrandly")
    expectError(await post(form({}, csv)), 422, "'source' is required")
    expectError(await post(form({ source: 'csv' })), 422, "'file' is required")
    expectError(await post(form({ source: 'csv', dryRun: 'maybe' }, csv)), 422, "'dryRun' must be true or false")
    expectError(await post(form({ source: 'csv', owner: 'bob' }, csv)), 422, "unknown field 'owner'")
    expectError(await post(form({ source: 'csv', domain: 'elsewhere.example' }, csv)), 422, "'domain' elsewhere.example is neither")
    expectError(await post(form({ source: 'kutt' }, csv)), 422, 'a Kutt export is JSON')
    expectError(await post(form({ source: 'csv' }, { name: 'big.csv', content: `url\n${'https://a.example/\n'.repeat(200)}` })), 400, 'larger than 2048 bytes')
    expectError(await post(JSON.stringify({ source: 'csv' }), h.keys.member, { 'content-type': 'application/json' }), 400, 'multipart/form-data')
    expectError(await post(form({ source: 'csv' }, csv), h.keys.readonly), 403, '')
    const twoFiles = form({ source: 'csv' }, csv)
    twoFiles.append('file', new Blob(['url\n']), 'b.csv')
    expectError(await post(twoFiles), 422, "'file' may be sent once")
    // Nothing was left in the spool directory by the refused uploads.
    expect(readdirSync(join(h.dataDir, 'imports'))).toEqual([])

    const mine = await importFile(h, 'csv', csv)
    expect((await h.call('GET', `/imports/${mine.id}`, { key: h.keys.other })).status).toBe(403)
    expect((await h.call('GET', `/imports/${mine.id}`, { key: h.keys.admin })).status).toBe(200)
    expect((await h.call('GET', '/imports/imp_nothing', { key: h.keys.member })).status).toBe(404)
  })
})

describe('a file that breaks off', () => {
  test('the rows read before the fault are written (the batch waiting for its write included); the import ends failed at the fault', async () => {
    const h = harness()
    const csv = `url,key\nhttps://a.example/1,a1\nhttps://a.example/2,a2\n"https://a.example/3,${'x'.repeat(70 * 1024)}\n`
    const r = await importFile(h, 'csv', { name: 'cut.csv', content: csv })
    expect(r).toMatchObject({ status: 'failed', created: 2, failed: 1 })
    expect(r.errors).toEqual([{ row: 4, message: 'line 4 is longer than 64 KiB; the rows after it were not read' }])
    expect(await count(h, h.keys.member)).toBe(2)
  })
})

describe('long imports', () => {
  const bigCsv = (rows: number) => `url,key\n${Array.from({ length: rows }, (_, i) => `https://shop.example/p/${i},p${i}`).join('\n')}\n`

  test('the counts move while it runs, then it ends done with every row', async () => {
    const h = harness()
    const path = join(h.dataDir, 'big.csv')
    writeFileSync(path, bigCsv(20_000))
    const caller = { userId: 'usr_alice', role: 'member' as const, keyId: null }
    const { record, done } = await h.deps.imports.start(caller, { source: 'csv', path, fileName: 'big.csv', dryRun: false, removeWhenDone: false })
    const seen: number[] = []
    let finished = false
    done.then(() => (finished = true))
    while (!finished) {
      const r = await h.deps.imports.get(caller, record.id)
      if (r.status === 'running') seen.push(r.created)
      await Bun.sleep(100)
    }
    const end = await h.deps.imports.get(caller, record.id)
    expect(end).toMatchObject({ status: 'done', total: 20_000, created: 20_000, failed: 0 })
    // At least one reading caught it part-way.
    expect(seen.some((n) => n > 0 && n < 20_000)).toBe(true)
  })

  test('a clean stop marks the import failed at the row it reached; running the file again finishes it without duplicates', async () => {
    const h = harness()
    const path = join(h.dataDir, 'big.csv')
    writeFileSync(path, bigCsv(5_000))
    const caller = { userId: 'usr_alice', role: 'member' as const, keyId: null }
    const { record } = await h.deps.imports.start(caller, { source: 'csv', path, fileName: 'big.csv', dryRun: false, removeWhenDone: false })
    await h.deps.imports.stop()
    const stopped = await h.deps.imports.get(caller, record.id)
    expect(stopped.status).toBe('failed')
    expect(stopped.errors.at(-1)!.message).toContain('the server was stopped during this import')
    expect(stopped.created).toBeLessThan(5_000)
    const again = await importFile(h, 'csv', { name: 'big.csv', content: new Uint8Array(readFileSync(path)) })
    expect(again.created + again.skipped).toBe(5_000)
    expect(again.skipped).toBe(stopped.created)
    expect(await count(h, h.keys.member)).toBe(5_000)
  })

  test('an import left running by a process gone from this host is failed at once', async () => {
    const h = harness()
    const gone = Bun.spawn(['true'])
    await gone.exited
    h.deps.db
      .query(
        `INSERT INTO imports (id, user_id, source, status, dry_run, runner, errors, created_at, updated_at) VALUES ('imp_gone', 'usr_alice', 'csv', 'running', 0, ?, '[]', ?, ?)`,
      )
      .run(`${hostname()}:${gone.pid}`, Date.now(), Date.now())
    expect((await h.call('GET', '/imports/imp_gone', { key: h.keys.member })).body.status).toBe('failed')
    // A live process's import (this one's pid, as a CLI import beside the server) stays running.
    h.deps.db
      .query(
        `INSERT INTO imports (id, user_id, source, status, dry_run, runner, errors, created_at, updated_at) VALUES ('imp_live', 'usr_alice', 'csv', 'running', 0, ?, '[]', ?, ?)`,
      )
      .run(`${hostname()}:${process.ppid}`, Date.now(), Date.now())
    expect((await h.call('GET', '/imports/imp_live', { key: h.keys.member })).body.status).toBe('running')
  })

  test('an import left running by a process that died elsewhere is failed once its heartbeat is older than a minute', async () => {
    const h = harness()
    const old = Date.now() - STALE_MS - 1000
    h.deps.db
      .query(
        `INSERT INTO imports (id, user_id, source, status, dry_run, total, created, errors, created_at, updated_at) VALUES ('imp_dead', 'usr_alice', 'csv', 'running', 0, 10, 4, '[]', ?, ?)`,
      )
      .run(old, old)
    const r = await h.call('GET', '/imports/imp_dead', { key: h.keys.member })
    expect(r.body).toMatchObject({ status: 'failed', created: 4, total: 10 })
    expect(r.body.errors[0].message).toContain('the server running this import stopped')
  })
})
