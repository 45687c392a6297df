/**
 * Backup drills against the compiled binary, as an operator runs them: a node under redirect
 * load is backed up with `shortlink backup` (through the running server), the archive is
 * restored into a new data dir with `shortlink restore`, and a server started there serves
 * every link, file, certificate and statistic of the original, compared record by record
 * through the API; the backup taken during the load holds every click recorded before it
 * began. Scheduled backups upload to an S3-protocol server started here (s3rver, npm: it
 * checks the access key id; it does not verify SigV4 signatures) and keep the newest `keep`.
 * SQLite only: on PostgreSQL backups are pg_dump's (operations.e2e checks the command says so).
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { createHash } from 'node:crypto'
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import S3rver from 's3rver'
import { samplePdf, samplePng } from '../src/files/files.samples'
import { until } from './helpers/poll'
import { freePort, startServer, type TestServer } from './helpers/server'

const BROWSERS = [
  'Mozilla/5.0 (X11; Linux x86_64; rv:125.0) Gecko/20100101 Firefox/125.0',
  'Mozilla/5.0 (iPhone; CPU iPhone OS 17_4 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4 Mobile/15E148 Safari/604.1',
  'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Safari/537.36',
]
const REFERERS = ['https://news.example/a', 'https://social.example/post/1', null]

const servers: TestServer[] = []
// Scheduled destination checks off: their results (link health) would change records after a backup, and the
// drill compares the restored records with the original's.
const start = async (opts: Parameters<typeof startServer>[0] = {}) => {
  const s = await startServer({ ...opts, toml: `[health]\nevery = "0"\n${opts.toml ?? ''}` })
  servers.push(s)
  return s
}

afterAll(async () => {
  for (const s of servers) await s.stop().catch(() => {})
})

/** Every page of a list endpoint, by id. */
async function all(server: TestServer, path: string, key: string, field?: string): Promise<Map<string, any>> {
  const out = new Map<string, any>()
  for (let page = 1; ; page++) {
    const res = await server.api(`${path}${path.includes('?') ? '&' : '?'}page=${page}&pageSize=50`, { key })
    const body = (await res.json()) as any
    if (res.status !== 200) throw new Error(`${path}: ${res.status} ${JSON.stringify(body)}`)
    const rows = (field ? body[field] : body) as { id: string }[]
    for (const r of rows) out.set(r.id, r)
    if (rows.length < 50) return out
  }
}

/** A record without the nodes' ports: each node's own URLs carry its port, and stored URLs (a hosted link's destination) the original's. */
const portless = (value: unknown, ...ports: number[]) => JSON.parse(ports.reduce((text, port) => text.replaceAll(`:${port}/`, ':PORT/'), JSON.stringify(value)))
const sha = (bytes: ArrayBuffer) => createHash('sha256').update(new Uint8Array(bytes)).digest('hex')

/** Visits from a few browsers and referers, counted by the caller: answers 302 each. */
async function visit(server: TestServer, url: string, i: number): Promise<void> {
  const headers: Record<string, string> = { 'user-agent': BROWSERS[i % BROWSERS.length]! }
  const referer = REFERERS[i % REFERERS.length]
  if (referer) headers.referer = referer
  const res = await server.fetch(url, { headers })
  if (res.status !== 302) throw new Error(`visit ${url} answered ${res.status}`)
}

const STATISTICS = [
  'groupBy=count',
  'groupBy=link',
  'groupBy=time&granularity=hour',
  'groupBy=browser',
  'groupBy=os',
  'groupBy=device',
  'groupBy=referer',
  'groupBy=referer_url',
  'groupBy=link_type',
  'groupBy=destination',
  'groupBy=country',
  'groupBy=browser&os=IOS',
]

describe('drill: back up a node under load, restore it, serve it', () => {
  let original: TestServer
  let key: string
  const links: { id: string; shortLink: string }[] = []
  const files: { id: string; bytes: string }[] = []

  beforeAll(async () => {
    original = await start()
    key = original.adminKey
    expect((await original.api('/domains', { method: 'POST', json: { domain: 'go.drill.example', destination: 'https://drill.example/' } })).status).toBe(200)
    const tag = (await (await original.api('/tags', { method: 'POST', json: { name: 'drill', color: 'blue' } })).json()) as { id: string }
    for (const [name, bytes, type] of [
      ['logo.png', samplePng(), 'image/png'],
      ['menu.pdf', samplePdf(), 'application/pdf'],
    ] as const) {
      const form = new FormData()
      form.append('file', new File([bytes as BlobPart], name, { type }))
      const res = await original.api('/files', { method: 'POST', body: form })
      expect(res.status).toBe(201)
      files.push({ id: ((await res.json()) as { id: string }).id, bytes: sha(bytes.buffer as ArrayBuffer) })
    }
    for (let i = 0; i < 40; i++) {
      const res = await original.api('/links/link', {
        method: 'POST',
        json: {
          data: { url: `https://shop.example/p/${i}?ref=qr` },
          linkOptions: { key: `drill-${i}`, tags: i % 2 ? [tag.id] : [], utm: { source: 'print' } },
        },
      })
      expect(res.status).toBe(200)
      links.push((await res.json()) as { id: string; shortLink: string })
    }
    const hosted = await original.api('/links/file', { method: 'POST', json: { data: { fileId: files[1]!.id }, linkOptions: { key: 'drill-menu' } } })
    expect(hosted.status).toBe(200)
    links.push((await hosted.json()) as { id: string; shortLink: string })
  })

  test('the backup taken under load holds every click recorded before it began; a restored node serves all of it', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'shortlink-drill-'))
    const archive = join(dir, 'under-load.tar.zst')
    // Redirect load from four visitors at once until the backup has finished.
    let answered = 0
    let loading = true
    const loaders = [0, 1, 2, 3].map(async (w) => {
      for (let i = w; loading; i += 4) {
        await visit(original, links[i % 40]!.shortLink, i)
        answered++
      }
    })
    await until(
      'load under way',
      async () => answered,
      (n) => n >= 200,
    )
    // Every visit answered before the command starts was recorded before the backup began.
    const answeredBefore = answered
    const made = await original.run(['backup', archive])
    loading = false
    await Promise.all(loaders)
    expect(made.stderr).toBe('')
    expect(made.code).toBe(0)
    expect(made.stdout).toContain('taken by the running server')
    expect(readFileSync(`${archive}.sha256`, 'utf8')).toStartWith(createHash('sha256').update(readFileSync(archive)).digest('hex'))

    const restoredDir = join(dir, 'node-b')
    const restored = await original.run(['restore', archive, '--data-dir', join(restoredDir, 'data')])
    expect(restored.stderr).toBe('')
    expect(restored.code).toBe(0)
    expect(restored.stdout).toContain('verified: records, files, tls')
    const b = await start({ dir: restoredDir })
    const linksB = await all(b, '/links', key, 'links')
    const clicksB = [...linksB.values()].reduce((n, l) => n + l.clicks, 0)
    expect(clicksB).toBeGreaterThanOrEqual(answeredBefore)
    expect(clicksB).toBeLessThanOrEqual(answered)
    const totalB = (await (await b.api('/statistics?groupBy=count&interval=all', { key })).json()) as { clicks: number }
    expect(totalB.clicks).toBe(clicksB)
    console.log(`drill: ${answeredBefore} visits answered before the backup began, ${clicksB} in the backup, ${answered} answered in all`)
  })

  test('after the load, a backup restored elsewhere answers every record and statistic exactly as the original', async () => {
    await original.clicksFlushed()
    const dir = mkdtempSync(join(tmpdir(), 'shortlink-drill-'))
    const archive = join(dir, 'quiet.tar.zst')
    expect((await original.run(['backup', archive])).code).toBe(0)
    const restoredDir = join(dir, 'node-c')
    expect((await original.run(['restore', archive, '--data-dir', join(restoredDir, 'data')])).code).toBe(0)
    const c = await start({ dir: restoredDir })

    for (const [path, field] of [
      ['/links?sortBy=created_at', 'links'],
      ['/tags', undefined],
      ['/files', undefined],
      ['/domains', undefined],
      ['/keys', undefined],
      ['/users', undefined],
    ] as const) {
      const a = await all(original, path, key, field)
      const got = await all(c, path, key, field)
      expect(got.size).toBe(a.size)
      // A key's lastUsedAt is when each node last saw it used (this comparison uses it on both).
      const comparable = (r: any) => (path === '/keys' ? { ...r, lastUsedAt: null } : r)
      for (const [id, record] of a)
        expect(portless(comparable(got.get(id)), c.httpsPort, original.httpsPort)).toEqual(portless(comparable(record), original.httpsPort))
    }
    for (const f of files) {
      const res = await c.api(`/files/${f.id}/content`, { key })
      expect(res.status).toBe(200)
      expect(sha(await res.arrayBuffer())).toBe(f.bytes)
    }
    for (const q of STATISTICS) {
      const a = await (await original.api(`/statistics?${q}&interval=all`, { key })).json()
      const got = await (await c.api(`/statistics?${q}&interval=all`, { key })).json()
      expect(portless(got, c.httpsPort, original.httpsPort)).toEqual(portless(a, original.httpsPort))
    }
    // Every link redirects as before, and the hosted file link serves its file.
    for (const l of links.slice(0, 40)) {
      const res = await c.fetch(l.shortLink.replace(`:${original.httpsPort}/`, `:${c.httpsPort}/`), { headers: { 'user-agent': BROWSERS[0]! } })
      expect(res.status).toBe(302)
      expect(res.headers.get('location')).toStartWith('https://shop.example/p/')
    }
    // The certificate and the local CA: the restored node serves the same certificate, trusted by the original's CA.
    for (const name of ['ca.pem', 'ca-key.pem', 'cert.pem', 'key.pem'])
      expect(readFileSync(join(restoredDir, 'data/tls', name), 'utf8')).toBe(readFileSync(join(original.dir, 'data/tls', name), 'utf8'))
    const viaOriginalCa = await fetch(`https://localhost:${c.httpsPort}/api/healthz`, { tls: { ca: original.ca } } as RequestInit)
    expect(viaOriginalCa.status).toBe(200)
  })
})

describe('scheduled backups', () => {
  let s3: { close(): Promise<void> }
  let s3Port: number
  let s3Dir: string

  beforeAll(async () => {
    s3Dir = mkdtempSync(join(tmpdir(), 'shortlink-s3-'))
    s3Port = await freePort()
    const server = new S3rver({
      port: s3Port,
      address: '127.0.0.1',
      directory: s3Dir,
      silent: true,
      configureBuckets: [{ name: 'backups', configs: [] }],
    } as any)
    await server.run()
    s3 = server
  })

  afterAll(async () => {
    // The nodes first: their S3 clients keep connections open, which s3rver's close waits for.
    for (const node of servers.splice(0)) await node.stop().catch(() => {})
    await s3?.close()
  })

  test('every interval a backup is written, uploaded, and only the newest `keep` stay here and in the bucket; the dashboard API shows the last', async () => {
    const backups = mkdtempSync(join(tmpdir(), 'shortlink-backups-'))
    const node = await start({
      toml: `\n[backup]\ndir = "${backups}"\nevery = "2s"\nkeep = 2\n\n[backup.s3]\nendpoint = "http://127.0.0.1:${s3Port}"\nbucket = "backups"\nprefix = "node-a/"\naccessKeyId = "S3RVER"\n`,
      env: { SHORTLINK_BACKUP_S3_SECRETACCESSKEY: 'S3RVER' },
    })
    const status = async () => (await (await node.api('/backups/status')).json()) as any
    const names = () => readdirSync(backups).filter((n) => n.endsWith('.tar.zst'))
    // Three scheduled backups: the oldest is deleted here and in the bucket.
    const seen = new Set<string>()
    await until(
      'three scheduled backups',
      async () => {
        for (const n of names()) seen.add(n)
        return seen.size
      },
      (n) => n >= 3,
      60_000,
    )
    const last = await until('the upload of the last', status, (s) => s.lastSuccess?.uploadedTo?.startsWith('s3://backups/node-a/shortlink-'))
    expect(last).toMatchObject({
      store: 'sqlite',
      running: expect.any(Boolean),
      schedule: { everyMs: 2000, keep: 2, s3: { bucket: 'backups', prefix: 'node-a/' } },
    })
    expect(last.lastSuccess.trigger).toBe('schedule')
    // The oldest of the three is deleted once the third is written (keep = 2).
    const oldest = [...seen].sort()[0]!
    await until(
      'the oldest deleted here',
      async () => names().includes(oldest),
      (present) => !present,
    )
    // The bucket (s3rver keeps each object as a file, <key>._S3rver_object) holds the uploaded archive, byte for byte, and its checksum.
    const key = last.lastSuccess.uploadedTo.slice('s3://backups/'.length)
    const stored = join(s3Dir, 'backups', `${key}._S3rver_object`)
    const local = join(backups, key.slice('node-a/'.length))
    if (existsSync(local)) expect(sha(readFileSync(stored).buffer)).toBe(sha(readFileSync(local).buffer))
    expect(readFileSync(join(s3Dir, 'backups', `${key}.sha256._S3rver_object`), 'utf8')).toBe(
      `${sha(readFileSync(stored).buffer)}  ${key.slice('node-a/'.length)}\n`,
    )
    const inBucket = () => readdirSync(join(s3Dir, 'backups', 'node-a')).filter((n) => n.endsWith('.tar.zst._S3rver_object'))
    await until(
      'the oldest deleted from the bucket',
      async () => inBucket().includes(`${oldest}._S3rver_object`),
      (present) => !present,
    )
    expect(inBucket().length).toBeLessThanOrEqual(3)
    // The uploaded archive restores.
    const restoredDir = join(mkdtempSync(join(tmpdir(), 'shortlink-from-s3-')), 'data')
    const copy = join(backups, 'from-bucket.tar.zst')
    writeFileSync(copy, readFileSync(stored))
    const restored = await node.run(['restore', copy, '--data-dir', restoredDir])
    expect(restored.stderr).toBe('')
    expect(statSync(join(restoredDir, 'shortlink.db')).size).toBeGreaterThan(0)
  }, 120_000)

  test('an upload refused by the store is a failure the dashboard API shows, and the local backup still stands', async () => {
    const backups = mkdtempSync(join(tmpdir(), 'shortlink-backups-'))
    mkdirSync(backups, { recursive: true })
    const node = await start({
      toml: `\n[backup]\ndir = "${backups}"\nevery = "2s"\nkeep = 3\n\n[backup.s3]\nendpoint = "http://127.0.0.1:${s3Port}"\nbucket = "backups"\naccessKeyId = "WRONG-KEY"\nsecretAccessKey = "x"\n`,
    })
    const s = await until(
      'a failed upload',
      async () => (await (await node.api('/backups/status')).json()) as any,
      (b) => b.lastFailure !== null,
    )
    expect(s.lastFailure.error).toContain('upload to s3://backups/ failed')
    expect(s.lastSuccess.uploadedTo).toBeNull()
    expect(readdirSync(backups).some((n) => n.endsWith('.tar.zst'))).toBe(true)
  }, 60_000)
})
