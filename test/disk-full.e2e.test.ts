/**
 * A full disk, for real: the data dir is a small tmpfs that the test fills with a file. Writes
 * (links, files) answer 503 `service_unavailable` with Retry-After and leave nothing behind;
 * reads, redirects and the click buffer go on; the log says so once per kind of write (the
 * API's, the clicks'), not once a request; and once the filler is removed, everything works
 * again without a restart, each visit made meanwhile counted once. A SIGTERM that cannot write its held visits says how many and exits
 * 1; a start on a full disk is one line and leaves no half certificate. Mounting needs root
 * (as here and in CI): without it this fails, never skips. The binary on SQLite only (a full
 * disk under PostgreSQL is PostgreSQL's, answered the same way by the same mapping).
 */
import { afterAll, expect, test } from 'bun:test'
import { appendFileSync, existsSync, mkdtempSync, readdirSync, rmSync, truncateSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { UA } from './helpers/agents'
import { type Mounted, mountTmpfs, requireRoot } from './helpers/mounts'
import { until } from './helpers/poll'
import { freePort, json, logLines, shortlinkCommand, startServer, type TestServer } from './helpers/server'

requireRoot('the full-disk test')
const root = mkdtempSync(join(tmpdir(), 'shortlink-disk-'))
const mounts: Mounted[] = []
const servers: TestServer[] = []
afterAll(async () => {
  for (const s of servers) await s.stop()
  for (const m of mounts) await m.unmount()
  rmSync(root, { recursive: true, force: true })
})

/**
 * The DuckDB library the binary places in its data dir (70 MB) before it opens the events store:
 * a disk for a running server has room for it on top of its own size.
 */
const LIBDUCKDB_MB = Math.ceil(Bun.file(require.resolve('@duckdb/node-bindings-linux-x64/libduckdb.so')).size / 2 ** 20)

/** A tmpfs of `sizeMb` MiB under the test's folder (and the DuckDB library's room, `withLibrary`); its own folder (the mount point) holds the data dir. */
function smallDisk(name: string, sizeMb: number, withLibrary = true): Mounted {
  const m = mountTmpfs(join(root, name), { sizeKb: (sizeMb + (withLibrary ? LIBDUCKDB_MB : 0)) * 1024 })
  mounts.push(m)
  return m
}

/** Fills the disk to the last byte with `filler` (then gives back `leave` bytes); answers its size. */
function fill(disk: Mounted, leave = 0): number {
  const filler = join(disk.path, 'filler')
  let size = 0
  for (const chunk of [1 << 20, 64 << 10, 4 << 10, 512, 1]) {
    const bytes = new Uint8Array(chunk)
    for (;;) {
      try {
        appendFileSync(filler, bytes)
        size += chunk
      } catch (e) {
        if ((e as { code?: string }).code !== 'ENOSPC') throw e
        break
      }
    }
  }
  if (leave) truncateSync(filler, size - leave)
  return size - leave
}

const DISK_FULL_LINE = 'the disk is full: writes answer 503 until there is room; redirects go on and clicks wait in memory'

test('writes answer 503 with Retry-After and write nothing; reads, redirects and clicks go on; said once per kind of write, not per request; all resumes when there is room', async () => {
  const disk = smallDisk('data', 24)
  const s = await startServer({ storeUrl: '', dir: mkdtempSync(join(root, 'server-')), dataDir: join(disk.path, 'data') })
  servers.push(s)
  const made = await s.api('/links/link', { method: 'POST', json: { data: { url: 'https://before.example/' }, linkOptions: { key: 'printed' } } })
  expect(made.status).toBe(200)
  const { id } = (await made.json()) as { id: string }
  const visit = async () => {
    const r = await s.fetch(`https://localhost:${s.httpsPort}/printed`, { headers: { 'user-agent': UA.mac } })
    expect(r.status).toBe(302)
    expect(r.headers.get('location')).toBe('https://before.example/')
  }
  await visit()
  await s.clicksFlushed()

  const count = async () => ((await json(await s.api('/links/count'))).body as { count: number }).count
  const before = await count()
  fill(disk)
  // Writes fit while the store's files have room inside them; then every one is refused, whole.
  let refused: Response | null = null
  let accepted = 0
  for (let i = 0; i < 2000 && !refused; i++) {
    const r = await s.api('/links/text', { method: 'POST', json: { data: { text: `${i} ${'x'.repeat(4000)}` }, linkOptions: { key: `during-${i}` } } })
    if (r.status === 503) refused = r
    else {
      expect(r.status).toBe(200)
      accepted++
    }
  }
  expect(refused).not.toBeNull()
  expect(refused!.headers.get('retry-after')).toBe('30')
  const body = await refused!.json()
  expect(body).toMatchObject({ code: 'service_unavailable', message: "the server's disk is full: nothing was written; retry in 30 s" })
  // The refused link does not exist: not created, not half-created (its key answers the not-found page).
  expect(await count()).toBe(before + accepted)
  expect((await s.fetch(`https://localhost:${s.httpsPort}/during-${accepted}`, { headers: { 'user-agent': UA.mac } })).status).toBe(404)

  // More writes of every kind are refused: links, a file (its bytes would need room of their own).
  for (let i = 0; i < 10; i++) {
    const r = await s.api('/links/text', { method: 'POST', json: { data: { text: 'y'.repeat(4000) } } })
    expect(r.status).toBe(503)
  }
  const form = new FormData()
  const pdf = new Uint8Array(300 * 1024)
  pdf.set(new TextEncoder().encode('%PDF-1.7\n'))
  form.set('file', new File([pdf], 'big.pdf', { type: 'application/pdf' }))
  const upload = await s.api('/files', { method: 'POST', body: form })
  expect(upload.status).toBe(503)
  expect(upload.headers.get('retry-after')).toBe('30')
  const filesDir = join(disk.path, 'data/files')
  expect(existsSync(filesDir) ? readdirSync(filesDir) : []).toEqual([]) // no temp file, no blob
  expect((await json(await s.api('/files'))).body).toEqual([])

  // Reads and redirects go on; visits wait in memory.
  expect((await s.api(`/links/${id}`)).status).toBe(200)
  const clicks = async () => ((await (await s.api(`/links/${id}`)).json()) as { clicks: number }).clicks
  // The clicks' flush fails too: said once, as the API's was; the visits stay held, not stored. The events store
  // (DuckDB) may still have room inside its write-ahead log's last blocks, so visits go on until a flush is refused.
  const diskFullLines = () => logLines(s).filter((l) => l.msg === DISK_FULL_LINE) as { failedWrites?: Record<string, number> }[]
  const clicksRefused = () => diskFullLines().some((l) => 'clicks' in (l.failedWrites ?? {}))
  let during = 0
  for (let round = 0; round < 40 && !clicksRefused(); round++) {
    for (let i = 0; i < 12; i++, during++) await visit()
    await until('a flush of the held visits', async () => clicksRefused() || (await clicks()) === 1 + during, Boolean, 5_000).catch(() => false)
  }
  expect(clicksRefused()).toBe(true)
  const stored = await clicks()
  expect(stored).toBeLessThan(1 + during)
  // One line per kind of write (within the minute) for 20-odd refused writes and failed flushes; never as a bug.
  expect(diskFullLines().map((l) => Object.keys(l.failedWrites ?? {}))).toEqual([['api'], ['api', 'clicks']])
  expect(logLines(s).filter((l) => l.msg === 'unhandled error' || l.msg === 'request failed' || l.msg === 'click flush failed; will retry')).toEqual([])
  expect(s.output()).not.toMatch(/^\s+at /m)

  // Room again: no restart, the held visits arrive (each once), writes succeed.
  rmSync(join(disk.path, 'filler'))
  await until('the held visits to be written', clicks, (n) => n === 1 + during)
  const after = await s.api('/links/link', { method: 'POST', json: { data: { url: 'https://after.example/' }, linkOptions: { key: 'after' } } })
  expect(after.status).toBe(200)
  const uploaded = await s.api('/files', { method: 'POST', body: form })
  expect(uploaded.status).toBe(201)
  // Said by the first write that succeeds (here the API's; the clicks' flushes may never have failed: DuckDB can
  // still have room in its write-ahead log when SQLite has none). Read from the server's output as it arrives.
  await until('the recovery said', async () => logLines(s).some((l) => l.msg === 'there is room on the disk again: writes succeed'), Boolean, 5_000)
  const code = await s.stop()
  if (code !== 0) console.error(s.output().slice(-4000))
  expect(code).toBe(0)
  expect(await clicksAfterRestart(s, id)).toBe(1 + during)
})

test('a SIGTERM that cannot write its held visits says how many and exits 1', async () => {
  const disk = smallDisk('term', 24)
  const s = await startServer({ storeUrl: '', dir: mkdtempSync(join(root, 'server-')), dataDir: join(disk.path, 'data') })
  servers.push(s)
  const made = await s.api('/links/link', { method: 'POST', json: { data: { url: 'https://held.example/' }, linkOptions: { key: 'held' } } })
  const { id } = (await made.json()) as { id: string }
  await s.clicksFlushed() // the events store is open (its library placed) before the disk fills
  fill(disk)
  // Until a write is refused, the store still had room inside its files.
  for (let i = 0; i < 2000; i++) {
    const r = await s.api('/links/text', { method: 'POST', json: { data: { text: `${i} ${'x'.repeat(4000)}` } } })
    if (r.status === 503) break
  }
  // Each visit a row of its own (a long referer of its own): more than the click journal's last
  // page has room for, so they cannot be kept there either (ADR 23).
  const visits = 40
  for (let i = 0; i < visits; i++) {
    const headers = { 'user-agent': UA.mac, referer: `https://ref.example/${i}/${'r'.repeat(400)}` }
    expect((await s.fetch(`https://localhost:${s.httpsPort}/held`, { headers })).status).toBe(302)
  }
  expect(await s.stop('SIGTERM')).toBe(1)
  expect(s.output()).toContain(`shortlink: stopped with ${visits} visits it could not write (see the log above); they are lost`)
  expect(logLines(s)).toContainEqual(expect.objectContaining({ level: 'error', msg: 'click capture stopped with visits it could not write', visits }))
  rmSync(join(disk.path, 'filler'))
  expect(await clicksAfterRestart(s, id)).toBe(0)
})

test('a start on a full disk is one line naming the data dir and the file, and leaves no half-written certificate', async () => {
  const disk = smallDisk('start', 1, false)
  const config = join(root, 'full-start.toml')
  writeFileSync(config, `[server]\nhttpsPort = ${await freePort()}\nhttpPort = ${await freePort()}\nhostname = "127.0.0.1"\ndataDir = "${disk.path}/data"\n`)
  const start = async () => {
    const p = Bun.spawn([...shortlinkCommand(), 'serve', '--config', config], { stdout: 'pipe', stderr: 'pipe' })
    const stderr = await new Response(p.stderr).text()
    expect(await p.exited).not.toBe(0)
    const lines = stderr.split('\n').filter((l) => l.trim() && !l.startsWith('{'))
    expect(lines).toHaveLength(1)
    return lines[0]!
  }
  // Not a byte for the lock's pid file.
  fill(disk)
  expect(await start()).toBe(`shortlink: cannot use the data dir ${disk.path}/data: no space left on the device (${disk.path}/data/shortlink.pid)`)
  // Room for the pid file (one page), none for the certificates it would make next.
  rmSync(join(disk.path, 'filler'))
  fill(disk, 4096)
  expect(await start()).toBe(`shortlink: cannot use the data dir ${disk.path}/data: no space left on the device (${disk.path}/data/tls/ca-key.pem)`)
  const tls = join(disk.path, 'data/tls')
  expect(readdirSync(tls)).toEqual([]) // no half key, no temp file
})

async function clicksAfterRestart(s: TestServer, id: string): Promise<number> {
  const again = await startServer({ dir: s.dir, storeUrl: '', dataDir: s.dataDir })
  servers.push(again)
  const clicks = ((await (await again.api(`/links/${id}`, { key: s.adminKey })).json()) as { clicks: number }).clicks
  await again.stop()
  return clicks
}
