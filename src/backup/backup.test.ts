/**
 * Backups on a real data dir (SQLite file, uploaded files' bytes, the local CA): what goes in,
 * what a restore rebuilds and checks, and what it refuses: hostile or damaged archives, a
 * non-empty target. Restores that fail leave the target as they found it.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createApiApp } from '../app'
import { buildConfig } from '../config/config.load'
import { createDeps, type SqliteDeps } from '../deps'
import { samplePng } from '../files/files.samples'
import { createLogger } from '../shared'
import { storePath } from '../store'
import { ensureSelfSigned } from '../tls/self-signed'
import { createBackup, createBackupService, nodeParts, RestoreFailedError, RestoreRefusedError, readBackupState, restoreBackup } from '.'
import { tarHeader } from './backup.tar'

const root = mkdtempSync(join(tmpdir(), 'shortlink-backup-'))
const dataDir = join(root, 'data')
let deps: SqliteDeps
let key: string
let call: (method: string, path: string, body?: unknown) => Promise<{ status: number; body: any }>

beforeAll(async () => {
  const config = buildConfig({ server: { dataDir } }, {})
  deps = createDeps(config, storePath(dataDir), createLogger(true))
  await ensureSelfSigned(dataDir, ['localhost'])
  key = deps.auth.createKey('usr_admin', 'admin').key
  const app = createApiApp(deps)
  call = async (method, path, body) => {
    const init: RequestInit = { method, headers: { authorization: `Bearer ${key}` } }
    if (body instanceof FormData) init.body = body
    else if (body !== undefined) {
      init.body = JSON.stringify(body)
      ;(init.headers as Record<string, string>)['content-type'] = 'application/json'
    }
    const res = await app.handle(new Request(`https://localhost/api${path}`, init), '127.0.0.1')
    return { status: res.status, body: await res.json() }
  }
  for (let i = 0; i < 25; i++)
    expect((await call('POST', '/links/link', { data: { url: `https://example.com/${i}` }, linkOptions: { key: `k${i}` } })).status).toBe(200)
  for (const name of ['kept.png', 'deleted-during-backup.png']) {
    const form = new FormData()
    // Two different contents (a trailing byte is ignored by PNG readers): two blobs.
    form.append('file', new File([samplePng() as BlobPart, new Uint8Array([name.length])], name, { type: 'image/png' }))
    expect((await call('POST', '/files', form)).status).toBe(201)
  }
})

afterAll(async () => {
  await deps.close()
  rmSync(root, { recursive: true, force: true })
})

/** The parts as the running node takes them: its events store copies itself between click batches. */
const liveParts = () => nodeParts(deps.events)
/** The parts as `shortlink restore` (no server) checks them. */
const parts = nodeParts()

describe('backup and restore', () => {
  let archive: string

  test('a backup holds every record, the bytes of every file named by them and the local CA, with checksums', async () => {
    archive = join(root, 'one.tar.zst')
    const files = (await call('GET', '/files')).body as { id: string; name: string }[]
    const doomed = files.find((f) => f.name === 'deleted-during-backup.png')!
    // The race a live server has: a file deleted (row and bytes) after the records' snapshot named it, before its
    // bytes were copied. The pins taken before the snapshot keep them; the backup is whole.
    const withDeletion = liveParts().map((p) =>
      p.name === 'records'
        ? {
            ...p,
            snapshot: async (ctx: Parameters<typeof p.snapshot>[0]) => {
              const snap = await p.snapshot(ctx)
              expect((await call('DELETE', `/files/${doomed.id}`)).status).toBe(200)
              expect(readdirSync(join(dataDir, 'files'))).toHaveLength(1)
              return snap
            },
          }
        : p,
    )
    const result = await createBackup({ dataDir, out: archive, parts: withDeletion })
    expect(result.warnings).toEqual([])
    expect(readFileSync(`${archive}.sha256`, 'utf8')).toBe(`${result.sha256}  one.tar.zst\n`)
    expect(statSync(archive).size).toBe(result.bytes)
    expect((statSync(archive).mode & 0o777).toString(8)).toBe('600')
    expect(doomed).toBeDefined()

    const target = join(root, 'restored')
    const restored = await restoreBackup({ file: archive, dataDir: target, parts })
    expect(restored.archiveChecksum).toBe('matched')
    expect(restored.parts).toEqual(['records', 'files', 'tls'])
    expect(readdirSync(join(target, 'files'))).toHaveLength(2)
    expect(readFileSync(join(target, 'tls/ca-key.pem'), 'utf8')).toBe(readFileSync(join(dataDir, 'tls/ca-key.pem'), 'utf8'))
    // A node on the restored dir answers with the same records.
    const again = createDeps(buildConfig({ server: { dataDir: target } }, {}), storePath(target), createLogger(true))
    try {
      const app = createApiApp(again)
      const res = await app.handle(new Request('https://localhost/api/links?pageSize=100', { headers: { authorization: `Bearer ${key}` } }), '127.0.0.1')
      expect(((await res.json()) as { links: unknown[] }).links.length).toBe(25)
      const file = await app.handle(
        new Request(`https://localhost/api/files/${doomed.id}/content`, { headers: { authorization: `Bearer ${key}` } }),
        '127.0.0.1',
      )
      expect(file.status).toBe(200)
    } finally {
      await again.close()
    }
  })

  test('a non-empty target is refused and left alone', async () => {
    const target = join(root, 'busy')
    mkdirSync(target)
    writeFileSync(join(target, 'keep.txt'), 'mine')
    await expect(restoreBackup({ file: archive, dataDir: target, parts })).rejects.toBeInstanceOf(RestoreRefusedError)
    expect(readdirSync(target)).toEqual(['keep.txt'])
  })

  test('a damaged archive is refused by its checksum file, and without one by its members; the target stays empty', async () => {
    const bytes = new Uint8Array(readFileSync(archive))
    bytes[Math.floor(bytes.length / 2)]! ^= 0xff
    const damaged = join(root, 'damaged.tar.zst')
    writeFileSync(damaged, bytes)
    writeFileSync(`${damaged}.sha256`, readFileSync(`${archive}.sha256`))
    const target = join(root, 'damaged-target')
    await expect(restoreBackup({ file: damaged, dataDir: target, parts })).rejects.toThrow(/does not match \S*damaged\.tar\.zst\.sha256/)
    rmSync(`${damaged}.sha256`)
    await expect(restoreBackup({ file: damaged, dataDir: target, parts })).rejects.toBeInstanceOf(RestoreFailedError)
    expect(existsSync(target)).toBe(false)
    const cut = join(root, 'cut.tar.zst')
    writeFileSync(cut, Bun.zstdCompressSync(Bun.zstdDecompressSync(readFileSync(archive)).subarray(0, 300_000)))
    await expect(restoreBackup({ file: cut, dataDir: target, parts })).rejects.toThrow(/incomplete archive/)
    expect(existsSync(target)).toBe(false)
  })

  test('archives naming other paths, links or unknown members are refused before anything is written outside', async () => {
    const member = (name: string, body: string, type = 0x30) => {
      const h = tarHeader('x', body.length, 0)
      h.fill(0, 0, 100)
      h.set(new TextEncoder().encode(name), 0)
      h[156] = type
      // Fix the header checksum for the edited fields.
      h.fill(0x20, 148, 156)
      let sum = 0
      for (const b of h) sum += b
      h.set(new TextEncoder().encode(`${sum.toString(8).padStart(6, '0')}\0 `), 148)
      const data = new Uint8Array(Math.ceil(body.length / 512) * 512)
      data.set(new TextEncoder().encode(body))
      return Buffer.concat([h, data])
    }
    const cases: [string, Buffer, RegExp][] = [
      ['traversal', member('../escaped.txt', 'x'), /not a backup path/],
      ['absolute', member('/tmp/escaped.txt', 'x'), /not a backup path/],
      ['symlink', member('tls/ca.pem', '', 0x32), /not a regular file/],
      ['unknown member', member('run.sh', '#!/bin/sh'), /not a backup path/],
      ['nested traversal', member('files/../../escaped.txt', 'x'), /not a backup path/],
    ]
    for (const [name, tar, error] of cases) {
      const file = join(root, `${name}.tar.zst`)
      writeFileSync(file, Bun.zstdCompressSync(Buffer.concat([tar, Buffer.alloc(1024)])))
      const target = join(root, `hostile-${name.replace(/ /g, '-')}`)
      await expect(restoreBackup({ file, dataDir: target, parts })).rejects.toThrow(error)
      expect(existsSync(target)).toBe(false)
    }
    expect(existsSync(join(root, 'escaped.txt'))).toBe(false)
  })

  test('a data-dir entry no part covers is named in a warning, never silently left out', async () => {
    writeFileSync(join(dataDir, 'notes.txt'), 'something an operator left here')
    try {
      const result = await createBackup({ dataDir, out: join(root, 'warned.tar.zst'), parts: liveParts() })
      expect(result.warnings).toEqual(['notes.txt in the data dir is not covered by any backup part'])
    } finally {
      rmSync(join(dataDir, 'notes.txt'))
    }
  })

  test('the service takes one backup at a time and keeps its last success across restarts', async () => {
    const service = createBackupService({ dataDir, parts: nodeParts, schedule: null, log: createLogger(true) })
    const first = service.take(join(root, 'a.tar.zst'), 'command')
    await expect(service.take(join(root, 'b.tar.zst'), 'command')).rejects.toThrow(/already running/)
    service.succeeded(await first, 'command')
    expect(readBackupState(dataDir).lastSuccess?.file).toBe(join(root, 'a.tar.zst'))
    const later = createBackupService({ dataDir, parts: nodeParts, schedule: null, log: createLogger(true) })
    expect(later.state().lastSuccess?.sha256).toBe((await first).sha256)
    // Staging a killed backup left behind goes when a server starts.
    mkdirSync(join(dataDir, '.backup-killed'))
    writeFileSync(join(dataDir, '.backup-killed', 'shortlink.db'), 'half a copy')
    later.start()
    expect(existsSync(join(dataDir, '.backup-killed'))).toBe(false)
    later.stop()
  })
})
