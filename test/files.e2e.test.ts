/**
 * Files through the real server (the compiled binary in CI) over TLS: real multipart
 * uploads, the size limit from the config, type detection, Range requests, list
 * filters, ownership, and content-addressed storage in the data dir.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { createHash } from 'node:crypto'
import { existsSync, readdirSync } from 'node:fs'
import * as S from '../src/files/files.samples'
import { onPostgres, queryStore, startServer, type TestServer } from './helpers/server'

let s: TestServer
let alice = ''
let bob = ''
let readonly = ''

beforeAll(async () => {
  s = await startServer({ toml: '[files]\nmaxBytes = 2048\n' })
  alice = await s.keyFor('alice', 'member')
  bob = await s.keyFor('bob', 'member')
  readonly = await s.keyFor('alice', 'readonly')
})
afterAll(async () => {
  await s?.stop()
})

function upload(bytes: Uint8Array, name: string, key: string = alice, fields: Record<string, string> = {}) {
  const form = new FormData()
  form.set('file', new File([bytes as BlobPart], name, { type: 'application/octet-stream' }))
  for (const [k, v] of Object.entries(fields)) form.set(k, v)
  return s.api('/files', { method: 'POST', body: form, key })
}
async function uploaded(bytes: Uint8Array, name: string, key: string = alice) {
  const r = await upload(bytes, name, key)
  expect(r.status).toBe(201)
  return (await r.json()) as {
    id: string
    name: string
    size: number
    mimeType: string
    extension: string
    archived: boolean
    userId: string
    createdAt: string
    updatedAt: string
  }
}
const bytesOf = async (r: Response) => new Uint8Array(await r.arrayBuffer())
const hex = (b: Uint8Array) => Buffer.from(b).toString('hex')
const sha = (b: Uint8Array) => createHash('sha256').update(b).digest('hex')

describe('upload', () => {
  test('multipart upload → 201 with the record; the bytes come back with the detected type and a strong ETag', async () => {
    const png = S.samplePng()
    const f = await uploaded(png, 'holiday photo.jpeg')
    expect(f).toMatchObject({ name: 'holiday photo.jpeg', size: png.length, mimeType: 'image/png', extension: 'png', archived: false, userId: 'usr_alice' })
    expect(f.id).toMatch(/^fil_[A-Za-z0-9]+$/)
    const r = await s.api(`/files/${f.id}/content`, { key: alice })
    expect(r.status).toBe(200)
    expect(r.headers.get('content-type')).toBe('image/png')
    expect(r.headers.get('content-length')).toBe(String(png.length))
    expect(r.headers.get('accept-ranges')).toBe('bytes')
    expect(r.headers.get('etag')).toBe(`"${sha(png)}"`)
    expect(r.headers.get('x-content-type-options')).toBe('nosniff')
    expect(r.headers.get('content-disposition')).toStartWith('inline; filename="holiday photo.jpeg"')
    expect(hex(await bytesOf(r))).toBe(hex(png))
    const notModified = await s.api(`/files/${f.id}/content`, { key: alice, headers: { 'if-none-match': r.headers.get('etag')! } })
    expect(notModified.status).toBe(304)
    const download = await s.api(`/files/${f.id}/content?download=true`, { key: alice })
    expect(download.headers.get('content-disposition')).toStartWith('attachment;')
    expect((await s.api(`/files/${f.id}`, { key: alice }).then((x) => x.json())).id).toBe(f.id)
  })

  test('every allowed type is accepted and typed from its bytes', async () => {
    const samples: [Uint8Array, string][] = [
      [S.sampleJpeg(8, 8), 'image/jpeg'],
      [S.sampleGif(), 'image/gif'],
      [S.sampleWebp(), 'image/webp'],
      [S.sampleSvg(), 'image/svg+xml'],
      [S.samplePdf(), 'application/pdf'],
      [S.sampleMp3(), 'audio/mpeg'],
      [S.sampleOgg(), 'audio/ogg'],
      [S.sampleWav(0.05), 'audio/wav'],
      [S.sampleM4a(), 'audio/mp4'],
      [S.sampleMp4(), 'video/mp4'],
      [S.sampleWebmHeader(), 'video/webm'],
    ]
    for (const [bytes, mime] of samples) {
      const f = await uploaded(bytes, 'no-extension')
      expect(f.mimeType).toBe(mime)
    }
  })

  test('SVG content is served sandboxed so its scripts cannot run on the API origin', async () => {
    const svg = new TextEncoder().encode('<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>')
    const f = await uploaded(svg, 'x.svg')
    const r = await s.api(`/files/${f.id}/content`, { key: alice })
    expect(r.headers.get('content-type')).toBe('image/svg+xml')
    expect(r.headers.get('content-security-policy')).toContain('sandbox')
    expect(r.headers.get('content-security-policy')).toContain("default-src 'none'")
  })

  test('a file over maxBytes (2048) is 400 bad_request; a body far over it too; exactly 2048 is fine', async () => {
    const pdf = S.samplePdf()
    const exact = new Uint8Array(2048)
    exact.set(pdf)
    expect((await upload(exact, 'exact.pdf')).status).toBe(201)
    const over = new Uint8Array(2049)
    over.set(pdf)
    const r = await upload(over, 'over.pdf')
    expect(r.status).toBe(400)
    const body = await r.json()
    expect(body.code).toBe('bad_request')
    expect(body.message).toContain('2048')
    const huge = new Uint8Array(300_000)
    huge.set(pdf)
    const r2 = await upload(huge, 'huge.pdf')
    expect(r2.status).toBe(400)
    expect((await r2.json()).code).toBe('bad_request')
  })

  test('wrong type is 422 whatever the name says; no file part is 422; JSON is 400', async () => {
    for (const [bytes, name] of [
      [new TextEncoder().encode('<!doctype html><script>alert(1)</script>'), 'innocent.png'],
      [Uint8Array.from([0x50, 0x4b, 0x03, 0x04, 0x14, 0, 0, 0]), 'archive.pdf'],
      [Uint8Array.from([0x4d, 0x5a, 0x90, 0x00, 0x03, 0, 0, 0]), 'setup.mp4'],
    ] as [Uint8Array, string][]) {
      const r = await upload(bytes, name)
      expect(r.status).toBe(422)
      const body = await r.json()
      expect(body.code).toBe('parameter_error')
      expect(body.message).toContain("'file'")
    }
    const form = new FormData()
    form.set('name', 'only a name')
    const missing = await s.api('/files', { method: 'POST', body: form, key: alice })
    expect(missing.status).toBe(422)
    const json = await s.api('/files', { method: 'POST', json: { file: 'aGVsbG8=' }, key: alice })
    expect(json.status).toBe(400)
  })

  test('stored once per content under dataDir/files/<sha256>, no temp files left (SQLite); in the file row on PostgreSQL', async () => {
    const gif = Uint8Array.from([...S.sampleGif(), 0x0d, 0x0a]) // content no other test uploads
    const a = await uploaded(gif, 'a.gif')
    const b = await uploaded(gif, 'b.gif', bob)
    const dir = `${s.dir}/data/files`
    if (onPostgres()) {
      // On PostgreSQL the bytes are the file row's: nothing under dataDir, and a deleted file's bytes go with it.
      expect(existsSync(dir) ? readdirSync(dir) : []).toEqual([])
      const held = async (id: string) =>
        (await queryStore<{ n: number | null }>(s, `SELECT octet_length(bytes) AS n FROM files WHERE id = '${id}'`)).map((r) => r.n)
      expect([await held(a.id), await held(b.id)]).toEqual([[gif.length], [gif.length]])
      expect((await s.api(`/files/${a.id}`, { method: 'DELETE', key: alice })).status).toBe(200)
      expect([await held(a.id), await held(b.id)]).toEqual([[null], [gif.length]])
      expect((await s.api(`/files/${b.id}`, { method: 'DELETE', key: bob })).status).toBe(200)
      expect(await held(b.id)).toEqual([null])
      expect((await s.api(`/files/${a.id}/content`, { key: alice })).status).toBe(410)
      return
    }
    const names = readdirSync(dir)
    expect(names.filter((n) => n === sha(gif))).toHaveLength(1)
    expect(names.filter((n) => n.startsWith('.tmp-'))).toEqual([])
    expect(await s.api(`/files/${a.id}`, { method: 'DELETE', key: alice }).then((r) => r.json())).toEqual({ id: a.id })
    expect(existsSync(`${dir}/${sha(gif)}`)).toBe(true)
    expect((await s.api(`/files/${b.id}`, { method: 'DELETE', key: bob })).status).toBe(200)
    expect(existsSync(`${dir}/${sha(gif)}`)).toBe(false)
    const gone = await s.api(`/files/${a.id}`, { key: alice })
    expect(gone.status).toBe(410)
    expect((await s.api(`/files/${a.id}/content`, { key: alice })).status).toBe(410)
  })
})

describe('Range requests', () => {
  let id = ''
  let bytes: Uint8Array
  beforeAll(async () => {
    bytes = S.samplePdf('range test')
    id = (await uploaded(bytes, 'range.pdf')).id
  })
  const get = (range: string, extra: Record<string, string> = {}) => s.api(`/files/${id}/content`, { key: alice, headers: { range, ...extra } })

  test('bytes=0-9 → 206 with Content-Range and exactly those bytes', async () => {
    const r = await get('bytes=0-9')
    expect(r.status).toBe(206)
    expect(r.headers.get('content-range')).toBe(`bytes 0-9/${bytes.length}`)
    expect(r.headers.get('content-length')).toBe('10')
    expect(new TextDecoder().decode(await bytesOf(r))).toBe('%PDF-1.4\n1')
  })

  test('open-ended and suffix ranges', async () => {
    const tail = await get('bytes=-6')
    expect(tail.status).toBe(206)
    expect(tail.headers.get('content-range')).toBe(`bytes ${bytes.length - 6}-${bytes.length - 1}/${bytes.length}`)
    expect(new TextDecoder().decode(await bytesOf(tail))).toBe('%%EOF\n')
    const from = await get(`bytes=${bytes.length - 3}-`)
    expect(from.status).toBe(206)
    expect(hex(await bytesOf(from))).toBe(hex(bytes.slice(bytes.length - 3)))
    const clipped = await get(`bytes=${bytes.length - 2}-999999`)
    expect(clipped.headers.get('content-range')).toBe(`bytes ${bytes.length - 2}-${bytes.length - 1}/${bytes.length}`)
  })

  test('bad ranges → 416 with Content-Range: bytes */size', async () => {
    for (const range of [`bytes=${bytes.length}-`, 'bytes=50-10', 'bytes=-0', 'bytes=x-y']) {
      const r = await get(range)
      expect(r.status).toBe(416)
      expect(r.headers.get('content-range')).toBe(`bytes */${bytes.length}`)
    }
  })

  test('If-Range with another validator sends the whole file', async () => {
    const r = await get('bytes=0-9', { 'if-range': '"not-the-etag"' })
    expect(r.status).toBe(200)
    expect(hex(await bytesOf(r))).toBe(hex(bytes))
  })
})

describe('list, update, ownership', () => {
  let carolKey = ''
  const ids: Record<string, string> = {}
  beforeAll(async () => {
    // A fresh user so the list holds only these.
    carolKey = await s.keyFor('carol', 'member')
    for (const [name, bytes] of [
      ['Menu summer.pdf', S.samplePdf('summer')],
      ['menu winter.pdf', S.samplePdf('winter')],
      ['Logo.svg', S.sampleSvg()],
      ['banner.jpg', S.sampleJpeg(16, 16)],
      ['avatar.gif', S.sampleGif()],
    ] as [string, Uint8Array][]) {
      ids[name] = (await uploaded(bytes, name, carolKey)).id
    }
  })
  const carol = () => carolKey
  const list = async (q: string, key = carol()) => {
    const r = await s.api(`/files${q}`, { key })
    expect(r.status).toBe(200)
    return { total: Number(r.headers.get('x-total-count')), names: ((await r.json()) as { name: string }[]).map((f) => f.name) }
  }

  test('default: newest first, X-Total-Count, paging', async () => {
    expect(await list('')).toEqual({ total: 5, names: ['avatar.gif', 'banner.jpg', 'Logo.svg', 'menu winter.pdf', 'Menu summer.pdf'] })
    expect(await list('?pageSize=2&page=2')).toEqual({ total: 5, names: ['Logo.svg', 'menu winter.pdf'] })
    expect(await list('?pageSize=2&page=4')).toEqual({ total: 5, names: [] })
  })

  test('search (case-insensitive), extension (jpeg = jpg, leading dot), ids, sortBy name', async () => {
    expect(await list('?search=MENU&sortBy=name&sortOrder=asc')).toEqual({ total: 2, names: ['Menu summer.pdf', 'menu winter.pdf'] })
    expect(await list('?extension=jpeg')).toEqual({ total: 1, names: ['banner.jpg'] })
    expect(await list('?extension=.PDF&sortBy=created_at&sortOrder=asc')).toEqual({ total: 2, names: ['Menu summer.pdf', 'menu winter.pdf'] })
    expect(await list(`?ids=${ids['Logo.svg']}&ids=${ids['avatar.gif']}&sortBy=name&sortOrder=asc`)).toEqual({ total: 2, names: ['avatar.gif', 'Logo.svg'] })
    expect(await list('?search=100%25')).toEqual({ total: 0, names: [] })
  })

  test('archived files only with includeArchived; PATCH renames', async () => {
    const r = await s.api(`/files/${ids['banner.jpg']}`, { method: 'PATCH', key: carol(), json: { archived: true, name: 'Banner 2026.jpg' } })
    expect(r.status).toBe(200)
    expect(await r.json()).toMatchObject({ archived: true, name: 'Banner 2026.jpg' })
    expect((await list('?extension=jpg')).total).toBe(0)
    expect(await list('?extension=jpg&includeArchived=true')).toEqual({ total: 1, names: ['Banner 2026.jpg'] })
    const back = await s.api(`/files/${ids['banner.jpg']}`, { method: 'PATCH', key: carol(), json: { archived: false } })
    expect((await back.json()).archived).toBe(false)
  })

  test('bad query values are 422 naming the parameter', async () => {
    for (const [q, field] of [
      ['pageSize=101', 'pageSize'],
      ['sortBy=size', 'sortBy'],
      ['extension=', 'extension'],
      ['includeArchived=maybe', 'includeArchived'],
    ]) {
      const r = await s.api(`/files?${q}`, { key: carol() })
      expect(r.status).toBe(422)
      expect((await r.json()).message).toContain(field!)
    }
  })

  test("another member gets 403 on carol's file; admin sees it; readonly cannot upload or delete", async () => {
    const id = ids['Logo.svg']!
    for (const [method, path] of [
      ['GET', `/files/${id}`],
      ['GET', `/files/${id}/content`],
      ['DELETE', `/files/${id}`],
    ]) {
      const r = await s.api(path!, { method, key: bob })
      expect(r.status).toBe(403)
      expect((await r.json()).code).toBe('forbidden')
    }
    expect((await s.api(`/files/${id}`, { method: 'PATCH', key: bob, json: { name: 'mine' } })).status).toBe(403)
    expect((await list('', bob)).names).not.toContain('Logo.svg')
    expect((await s.api(`/files/${id}`)).status).toBe(200)
    expect((await list('?pageSize=100', s.adminKey)).names).toContain('Logo.svg')
    expect((await upload(S.sampleGif(), 'ro.gif', readonly)).status).toBe(403)
    expect((await s.api(`/files/${id}`, { method: 'DELETE', key: readonly })).status).toBe(403)
    expect((await s.api('/files/fil_doesnotexist', { key: carol() })).status).toBe(404)
  })

  test('the OpenAPI document describes the files endpoints', async () => {
    const doc = await s.api('/openapi.json', { key: null }).then((r) => r.json())
    for (const p of ['/files', '/files/{id}', '/files/{id}/content']) expect(Object.keys(doc.paths)).toContain(p)
    expect(JSON.stringify(doc.paths['/files/{id}'].delete)).toContain('422')
  })
})
