/**
 * The file store and bytes ports, one set of cases run against both adapters: SQLite on
 * ':memory:' with bytes on disk (today's store) and PostgreSQL (a real server, a fresh migrated
 * database, bytes in the row). Both must give the same answers. Then the file service over
 * each: upload, list, get, the bytes served (whole, ranges, 304, HEAD) equal by SHA-256,
 * delete, the in-use refusal and every refusal of an upload.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, test } from 'bun:test'
import { createHash } from 'node:crypto'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { SQL } from 'bun'
import { startMigratedDatabase } from '../../test/helpers/postgres'
import { type Caller, createAuthStore, createPgAuthStore } from '../auth'
import { createDesignFiles, createQrService } from '../qr'
import { AppError } from '../shared'
import { openStore } from '../store'
import { createBlobStore } from './files.blobs'
import { createDiskFileBytes, type FileBytesPort } from './files.bytes'
import { contentResponse } from './files.content'
import * as S from './files.samples'
import { createFileService } from './files.service'
import { createFileStore, type FileStorePort, type NewFile } from './files.store'
import { createPgFileBytes, createPgFileStore } from './files.store.pg'

let pgSql: SQL | undefined
let closePg: (() => Promise<void>) | undefined
const dataDir = mkdtempSync(join(tmpdir(), 'shortlink-files-contract-'))

beforeAll(async () => {
  const started = await startMigratedDatabase('files_contract')
  pgSql = started.sql
  closePg = started.close
})
afterAll(async () => {
  await closePg?.()
  rmSync(dataDir, { recursive: true, force: true })
})

const T0 = Date.parse('2026-03-01T12:00:00Z')
const USERS = ['usr_a', 'usr_b']
const sha = (bytes: Uint8Array) => createHash('sha256').update(bytes).digest('hex')
const hex = (bytes: Uint8Array | Blob | null) => (bytes instanceof Blob ? bytes.arrayBuffer().then((b) => sha(new Uint8Array(b))) : bytes && sha(bytes))

interface Adapter {
  store: FileStorePort
  bytes: FileBytesPort
  /** Whether the bytes are still kept anywhere (a blob on disk, a non-null bytea), whatever the row says. */
  kept(ref: { id: string; sha256: string }): Promise<boolean>
}
let dirs = 0
/** The store, its bytes and the users that own files; the clock steps by one second per write. */
const adapters: [string, (now: () => number) => Promise<Adapter>][] = [
  [
    'sqlite',
    async (now) => {
      const db = openStore(':memory:')
      const auth = createAuthStore(db)
      for (const id of USERS) auth.addUser(id)
      const store = createFileStore(db, now)
      const blobs = createBlobStore(join(dataDir, String(++dirs)))
      return { store, bytes: createDiskFileBytes(store, blobs), kept: async (ref) => blobs.exists(ref.sha256) }
    },
  ],
  [
    'postgres',
    async (now) => {
      const sql = pgSql!
      await sql`TRUNCATE files, users CASCADE`
      const auth = createPgAuthStore(sql)
      for (const id of USERS) await auth.addUser(id)
      return {
        store: createPgFileStore(sql, now),
        bytes: createPgFileBytes(sql, now),
        kept: async (ref) => (await sql`SELECT count(*)::int AS n FROM files WHERE id = ${ref.id} AND bytes IS NOT NULL`)[0].n === 1,
      }
    },
  ],
]

const newFile = (id: string, bytes: Uint8Array, over: Partial<NewFile> = {}): NewFile => ({
  id,
  userId: 'usr_a',
  name: `${id}.png`,
  sha256: sha(bytes),
  size: bytes.byteLength,
  mimeType: 'image/png',
  extension: 'png',
  ...over,
})

describe.each(adapters)('file store and bytes ports on %s', (_name, open) => {
  let a: Adapter
  let clock: number
  beforeEach(async () => {
    clock = T0
    a = await open(() => (clock += 1000))
  })

  test('put, get, update, markDeleted, liveUsersOf', async () => {
    const png = S.samplePng()
    await a.bytes.put(newFile('fil_1', png, { name: 'Logo.PNG' }), png)
    expect(await a.store.get('fil_1')).toEqual({
      id: 'fil_1',
      name: 'Logo.PNG',
      size: png.byteLength,
      createdAt: new Date(T0 + 1000).toISOString(),
      mimeType: 'image/png',
      extension: 'png',
      archived: false,
      userId: 'usr_a',
      updatedAt: new Date(T0 + 1000).toISOString(),
      sha256: sha(png),
      deleted: false,
    })
    expect(await a.store.get('fil_nope')).toBeNull()
    await a.store.update('fil_1', 'Renamed.png', true)
    expect(await a.store.get('fil_1')).toMatchObject({ name: 'Renamed.png', archived: true, updatedAt: new Date(T0 + 2000).toISOString() })
    // A row written without bytes (the port allows it; the service never does).
    await a.store.insert(newFile('fil_2', png, { userId: 'usr_b' }))
    expect(await a.store.liveUsersOf(sha(png))).toBe(2)
    await a.store.markDeleted('fil_2')
    await a.store.markDeleted('fil_2') // once deleted, stays as it was
    expect(await a.store.get('fil_2')).toMatchObject({ deleted: true, updatedAt: new Date(T0 + 4000).toISOString() })
    expect(await a.store.liveUsersOf(sha(png))).toBe(1)
    expect(await a.store.liveUsersOf('0'.repeat(64))).toBe(0)
  })

  test('bytes: get and stream (whole and ranges) give what was put; delete takes row and bytes', async () => {
    const pdf = S.samplePdf('contract')
    const wav = S.sampleWav(0.05)
    await a.bytes.put(newFile('fil_pdf', pdf), pdf)
    await a.bytes.put(newFile('fil_wav', wav), wav)
    const pdfRef = { id: 'fil_pdf', sha256: sha(pdf) }
    expect(await hex(await a.bytes.get(pdfRef))).toBe(sha(pdf))
    expect(await hex(await a.bytes.stream(pdfRef))).toBe(sha(pdf))
    expect(await hex(await a.bytes.stream(pdfRef, { start: 3, end: 9 }))).toBe(sha(pdf.subarray(3, 10)))
    expect(await hex(await a.bytes.stream(pdfRef, { start: pdf.length - 1, end: pdf.length - 1 }))).toBe(sha(pdf.subarray(pdf.length - 1)))
    expect(await hex(await a.bytes.get({ id: 'fil_wav', sha256: sha(wav) }))).toBe(sha(wav))
    expect(await a.kept(pdfRef)).toBe(true)
    await a.bytes.delete(pdfRef)
    expect(await a.store.get('fil_pdf')).toMatchObject({ deleted: true })
    expect(await a.bytes.get(pdfRef)).toBeNull()
    expect(await a.kept(pdfRef)).toBe(false)
    expect(await a.store.liveUsersOf(sha(pdf))).toBe(0)
    expect(await hex(await a.bytes.get({ id: 'fil_wav', sha256: sha(wav) }))).toBe(sha(wav))
  })

  test('equal content in two files: deleting one leaves the other whole', async () => {
    const gif = S.sampleGif()
    await a.bytes.put(newFile('fil_a', gif), gif)
    await a.bytes.put(newFile('fil_b', gif, { userId: 'usr_b' }), gif)
    await a.bytes.delete({ id: 'fil_a', sha256: sha(gif) })
    expect(await hex(await a.bytes.get({ id: 'fil_b', sha256: sha(gif) }))).toBe(sha(gif))
    await a.bytes.delete({ id: 'fil_b', sha256: sha(gif) })
    expect(await a.bytes.get({ id: 'fil_b', sha256: sha(gif) })).toBeNull()
    expect(await a.kept({ id: 'fil_b', sha256: sha(gif) })).toBe(false)
  })

  test('a put that fails keeps neither row nor bytes', async () => {
    const png = S.samplePng()
    const other = S.sampleJpeg()
    await a.bytes.put(newFile('fil_1', png), png)
    // The same id again (primary key), with other bytes.
    await expect(a.bytes.put(newFile('fil_1', other, { name: 'other.jpg' }), other)).rejects.toThrow()
    expect(await a.store.get('fil_1')).toMatchObject({ name: 'fil_1.png', sha256: sha(png) })
    expect(await hex(await a.bytes.get({ id: 'fil_1', sha256: sha(png) }))).toBe(sha(png))
    expect(await a.bytes.get({ id: 'fil_1x', sha256: sha(other) })).toBeNull()
    expect(await a.store.liveUsersOf(sha(other))).toBe(0)
    // An owner that does not exist (foreign key).
    await expect(a.bytes.put(newFile('fil_2', other, { userId: 'usr_nobody' }), other)).rejects.toThrow()
    expect(await a.store.get('fil_2')).toBeNull()
    expect(await a.bytes.get({ id: 'fil_2', sha256: sha(other) })).toBeNull()
    expect(await a.kept({ id: 'fil_2', sha256: sha(other) })).toBe(false)
  })

  test('list: owner, ids, search, extension, archived, order and paging', async () => {
    const png = S.samplePng()
    const pdf = S.samplePdf()
    await a.bytes.put(newFile('fil_1', png, { name: 'Zebra.png' }), png)
    await a.bytes.put(newFile('fil_2', pdf, { name: 'apple.pdf', mimeType: 'application/pdf', extension: 'pdf' }), pdf)
    await a.bytes.put(newFile('fil_3', png, { name: 'Mango.png', userId: 'usr_b' }), png)
    await a.bytes.put(newFile('fil_4', png, { name: 'banana.png' }), png)
    await a.store.update('fil_4', 'banana.png', true)
    await a.bytes.put(newFile('fil_5', png, { name: 'gone.png' }), png)
    await a.bytes.delete({ id: 'fil_5', sha256: sha(png) })
    const page = { sortBy: 'created_at' as const, sortOrder: 'desc' as const, limit: 10, offset: 0, includeArchived: false }
    const ids = async (f: Parameters<FileStorePort['list']>[0]) => {
      const { files, total } = await a.store.list(f)
      return { ids: files.map((x) => x.id), total }
    }
    expect(await ids(page)).toEqual({ ids: ['fil_3', 'fil_2', 'fil_1'], total: 3 })
    expect(await ids({ ...page, includeArchived: true })).toEqual({ ids: ['fil_4', 'fil_3', 'fil_2', 'fil_1'], total: 4 })
    expect(await ids({ ...page, userId: 'usr_a' })).toEqual({ ids: ['fil_2', 'fil_1'], total: 2 })
    expect(await ids({ ...page, ids: ['fil_1', 'fil_3', 'fil_5'] })).toEqual({ ids: ['fil_3', 'fil_1'], total: 2 })
    expect(await ids({ ...page, search: 'AN', includeArchived: true })).toEqual({ ids: ['fil_4', 'fil_3'], total: 2 })
    expect(await ids({ ...page, search: '%' })).toEqual({ ids: [], total: 0 })
    expect(await ids({ ...page, extension: 'pdf' })).toEqual({ ids: ['fil_2'], total: 1 })
    expect(await ids({ ...page, sortBy: 'name', sortOrder: 'asc', includeArchived: true })).toEqual({ ids: ['fil_2', 'fil_4', 'fil_3', 'fil_1'], total: 4 })
    expect(await ids({ ...page, sortOrder: 'asc', limit: 2, offset: 1 })).toEqual({ ids: ['fil_2', 'fil_3'], total: 3 })
  })

  test('files uploaded in the same millisecond list in upload order (newest first), whatever their ids', async () => {
    const png = S.samplePng()
    const { store, bytes } = await open(() => T0) // a drop of several files at once: one timestamp
    for (const id of ['fil_c', 'fil_a', 'fil_b']) await bytes.put(newFile(id, png), png)
    const page = { sortBy: 'created_at' as const, sortOrder: 'desc' as const, limit: 10, offset: 0, includeArchived: false }
    expect((await store.list(page)).files.map((f) => f.id)).toEqual(['fil_b', 'fil_a', 'fil_c'])
    expect((await store.list({ ...page, sortOrder: 'asc' })).files.map((f) => f.id)).toEqual(['fil_c', 'fil_a', 'fil_b'])
  })
})

const member = (userId: string): Caller => ({ userId, role: 'member', keyId: 'key_x' })
const admin: Caller = { userId: 'usr_admin', role: 'admin', keyId: 'key_admin' }
const MAX = 4096
const upload = (bytes: Uint8Array, name: string) => new File([bytes as BlobPart], name, { type: 'application/octet-stream' })
/** The AppError code a call ends with. */
const codeOf = async (run: () => unknown) => {
  try {
    await run()
  } catch (e) {
    if (e instanceof AppError) return `${e.code}: ${e.message}`
    throw e
  }
  return 'ok'
}

describe.each(adapters)('file service on %s', (name, open) => {
  let files: ReturnType<typeof createFileService<FileStorePort>>
  let inUse: Set<string>
  beforeEach(async () => {
    let clock = T0
    const a = await open(() => (clock += 1000))
    inUse = new Set()
    // The link store answers with a promise on PostgreSQL: so does this one.
    files = createFileService<FileStorePort>({ store: a.store, bytes: a.bytes, maxBytes: MAX, isInUse: async (id) => inUse.has(id) })
  })

  test('upload, get, list, serve the same bytes (whole, range, 304, HEAD), rename, delete', async () => {
    const pdf = S.samplePdf('served')
    const rec = await files.create(member('usr_a'), upload(pdf, 'dir/Menu.pdf'))
    expect(rec).toMatchObject({ name: 'Menu.pdf', size: pdf.byteLength, mimeType: 'application/pdf', extension: 'pdf', userId: 'usr_a', archived: false })
    expect(await files.getOwned(member('usr_a'), rec.id)).toEqual(rec)
    expect(await files.get(rec.id)).toEqual(rec)
    expect(await files.list(member('usr_a'), {})).toEqual({ files: [rec], total: 1 })
    expect(await files.list(member('usr_b'), {})).toEqual({ files: [], total: 0 })
    expect((await files.list(admin, {})).total).toBe(1)
    expect(sha((await files.bytesOf(rec.id))!)).toBe(sha(pdf))

    const serve = async (headers: Record<string, string> = {}, method = 'GET') =>
      contentResponse(new Request('https://x/c', { method, headers }), (await files.content(member('usr_a'), rec.id))!)
    const whole = await serve()
    expect(whole.status).toBe(200)
    expect(whole.headers.get('content-length')).toBe(String(pdf.byteLength))
    expect(whole.headers.get('etag')).toBe(`"${sha(pdf)}"`)
    expect(whole.headers.get('content-type')).toBe('application/pdf')
    expect(sha(new Uint8Array(await whole.arrayBuffer()))).toBe(sha(pdf))
    const part = await serve({ range: 'bytes=5-14' })
    expect(part.status).toBe(206)
    expect(part.headers.get('content-range')).toBe(`bytes 5-14/${pdf.byteLength}`)
    expect(sha(new Uint8Array(await part.arrayBuffer()))).toBe(sha(pdf.subarray(5, 15)))
    const suffix = await serve({ range: 'bytes=-4' })
    expect(new Uint8Array(await suffix.arrayBuffer())).toEqual(new Uint8Array(pdf.subarray(pdf.length - 4)))
    expect((await serve({ 'if-none-match': `"${sha(pdf)}"` })).status).toBe(304)
    const bad = await serve({ range: `bytes=${pdf.byteLength}-` })
    expect(bad.status).toBe(416)
    expect(bad.headers.get('content-range')).toBe(`bytes */${pdf.byteLength}`)
    const head = await serve({}, 'HEAD')
    expect(head.status).toBe(200)
    expect(head.headers.get('content-length')).toBe(String(pdf.byteLength))
    expect((await head.arrayBuffer()).byteLength).toBe(0)
    const opened = (await files.open(rec.id))!
    const viaOpen = await contentResponse(new Request('https://x/c'), opened, { cacheControl: 'private, no-cache' })
    expect(sha(new Uint8Array(await viaOpen.arrayBuffer()))).toBe(sha(pdf))

    expect(await files.update(member('usr_a'), rec.id, { name: ' New.pdf ', archived: true })).toMatchObject({ name: 'New.pdf', archived: true })
    expect(await files.list(member('usr_a'), {})).toEqual({ files: [], total: 0 })
    expect((await files.list(member('usr_a'), { includeArchived: true })).total).toBe(1)

    expect(await files.remove(member('usr_a'), rec.id)).toEqual({ id: rec.id })
    expect(await codeOf(() => files.getOwned(member('usr_a'), rec.id))).toBe(`record_gone: file ${rec.id} was deleted`)
    expect(await codeOf(() => files.content(member('usr_a'), rec.id))).toStartWith('record_gone')
    expect(await files.get(rec.id)).toBeNull()
    expect(await files.open(rec.id)).toBeNull()
    expect(await files.bytesOf(rec.id)).toBeNull()
  })

  test('a file a live link shows is not deleted; ownership and missing ids are refused', async () => {
    const png = S.samplePng()
    const rec = await files.create(member('usr_a'), upload(png, 'p.png'))
    inUse.add(rec.id)
    expect(await codeOf(() => files.remove(member('usr_a'), rec.id))).toBe(
      `parameter_error: file ${rec.id} is used by a link; delete the link or point it at other content first`,
    )
    expect(await files.get(rec.id)).toEqual(rec)
    expect(sha((await files.bytesOf(rec.id))!)).toBe(sha(png))
    expect(await codeOf(() => files.remove(member('usr_b'), rec.id))).toBe(`forbidden: file ${rec.id} belongs to another user`)
    expect(await codeOf(() => files.update(member('usr_b'), rec.id, { name: 'x' }))).toStartWith('forbidden')
    expect(await codeOf(() => files.content(member('usr_b'), rec.id))).toStartWith('forbidden')
    expect(await codeOf(() => files.getOwned(member('usr_a'), 'fil_nope'))).toStartWith('not_found')
    expect(await codeOf(() => files.update(member('usr_a'), rec.id, { name: '  ' }))).toBe(`parameter_error: 'name' must not be blank`)
    inUse.delete(rec.id)
    expect(await files.remove(admin, rec.id)).toEqual({ id: rec.id })
  })

  test('uploads refused: too large, empty, not a file, a disallowed type, a pixel bomb, a long name; none is stored', async () => {
    const pdf = S.samplePdf()
    const exact = new Uint8Array(MAX)
    exact.set(pdf)
    expect((await files.create(member('usr_a'), upload(exact, 'exact.pdf'))).size).toBe(MAX)
    const over = new Uint8Array(MAX + 1)
    over.set(pdf)
    expect(await codeOf(() => files.create(member('usr_a'), upload(over, 'over.pdf')))).toBe(
      `bad_request: 'file' is too large: ${MAX + 1} bytes, the limit is ${MAX} bytes`,
    )
    expect(await codeOf(() => files.create(member('usr_a'), upload(new Uint8Array(0), 'e.png')))).toBe(`parameter_error: 'file' is empty`)
    expect(await codeOf(() => files.create(member('usr_a'), 'not a file'))).toStartWith(`parameter_error: 'file' is required`)
    expect(await codeOf(() => files.create(member('usr_a'), upload(new TextEncoder().encode('<html></html>'), 'x.png')))).toStartWith(
      `parameter_error: 'file' type is not allowed`,
    )
    const bomb = new TextEncoder().encode('<svg xmlns="http://www.w3.org/2000/svg" width="100000" height="100000"/>')
    expect(await codeOf(() => files.create(member('usr_a'), upload(bomb, 'b.svg')))).toContain('declares 100000×100000 px')
    expect(await codeOf(() => files.create(member('usr_a'), upload(S.samplePng(), 'a.png'), 'n'.repeat(256)))).toBe(
      `parameter_error: 'name' length must be 1-255`,
    )
    expect((await files.list(admin, {})).total).toBe(1)
  })

  test('QR designs check and read uploaded images through the service over either store', async () => {
    const png = await files.create(member('usr_a'), upload(S.samplePng(), 'logo.png'))
    const pdf = await files.create(member('usr_a'), upload(S.samplePdf(), 'menu.pdf'))
    const design = createDesignFiles({ files: () => files, isAdminUser: async (id) => id === 'usr_admin' })
    const qr = createQrService({ allowPrivateNetworks: false, files: design })
    const logo = (id: string) => ({ logo: { value: id, size: 15 } })
    expect(await codeOf(() => qr.validateQrOptions(logo(png.id), 'usr_a'))).toBe('ok')
    expect(await codeOf(() => qr.validateQrOptions(logo(png.id), 'usr_b'))).toBe(`parameter_error: 'qrOptions.logo.value' file ${png.id} not found`)
    expect(await codeOf(() => qr.validateQrOptions(logo(pdf.id), 'usr_a'))).toBe(
      `parameter_error: 'qrOptions.logo.value' file ${pdf.id} is not a PNG, JPEG or SVG image`,
    )
    expect(await design.usable(png.id, 'usr_admin')).toBe(true)
    expect(await design.usable(png.id, 'usr_b')).toBe(false)
    expect(sha((await design.read(png.id))!.bytes)).toBe(sha(S.samplePng()))
    await files.update(member('usr_a'), png.id, { archived: true })
    expect(await design.usable(png.id, 'usr_a')).toBe(false)
    await files.remove(member('usr_a'), pdf.id)
    expect(await design.read(pdf.id)).toBeNull()
  })

  test(`stays synchronous where the store is (${name})`, async () => {
    const rec = await files.create(member('usr_a'), upload(S.samplePng(), 'p.png'))
    // SQLite answers at once (the redirect path and landing pages keep no promise); PostgreSQL with a promise.
    expect(files.get(rec.id) instanceof Promise).toBe(name === 'postgres')
    expect(files.open(rec.id) instanceof Promise).toBe(name === 'postgres')
  })
})
