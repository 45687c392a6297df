import { afterAll, describe, expect, test } from 'bun:test'
import { mkdtempSync, readdirSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createHarness } from '../../test/helpers/in-process'
import { contentDisposition, decideRange } from './files.content'
import * as S from './files.samples'
import { cleanUploadName } from './files.service'
import { sniffType } from './files.sniff'

describe('type detection from magic bytes', () => {
  const cases: [string, Uint8Array, string | null][] = [
    ['png', S.samplePng(), 'image/png'],
    ['jpeg', S.sampleJpeg(), 'image/jpeg'],
    ['gif', S.sampleGif(), 'image/gif'],
    ['webp', S.sampleWebp(), 'image/webp'],
    ['svg with prologue', S.sampleSvg(), 'image/svg+xml'],
    ['svg bare with BOM', new TextEncoder().encode('\uFEFF  <svg xmlns="http://www.w3.org/2000/svg"/>'), 'image/svg+xml'],
    ['svg with doctype', new TextEncoder().encode('<!DOCTYPE svg PUBLIC "-//W3C//DTD SVG 1.1//EN" "x.dtd">\n<svg></svg>'), 'image/svg+xml'],
    ['pdf', S.samplePdf(), 'application/pdf'],
    ['wav', S.sampleWav(0.1), 'audio/wav'],
    ['mp3 with ID3', S.sampleMp3(true), 'audio/mpeg'],
    ['mp3 bare frames', S.sampleMp3(false), 'audio/mpeg'],
    ['ogg vorbis', S.sampleOgg(), 'audio/ogg'],
    ['m4a', S.sampleM4a(), 'audio/mp4'],
    ['mp4', S.sampleMp4(), 'video/mp4'],
    ['webm', S.sampleWebmHeader(), 'video/webm'],
    ['html', new TextEncoder().encode('<!doctype html><html><svg></svg></html>'), null],
    ['html named like svg content', new TextEncoder().encode('<html><body><svg/></body></html>'), null],
    ['zip', Uint8Array.from([0x50, 0x4b, 0x03, 0x04, 0, 0, 0, 0]), null],
    ['ELF executable', Uint8Array.from([0x7f, 0x45, 0x4c, 0x46, 2, 1, 1, 0]), null],
    ['ogg theora video', S.sampleOggTheora(), null],
    ['matroska (not webm)', S.sampleMkvHeader(), null],
    ['AAC ADTS (layer 0 is not mp3)', Uint8Array.from([0xff, 0xf1, 0x50, 0x80, 0, 0, 0, 0]), null],
    ['plain text', new TextEncoder().encode('hello world'), null],
    ['empty', new Uint8Array(0), null],
  ]
  for (const [name, bytes, mime] of cases)
    test(`${name} → ${mime ?? 'rejected'}`, () => {
      expect(sniffType(bytes)?.mimeType ?? null).toBe(mime)
    })
})

describe('Range decisions (RFC 9110)', () => {
  const size = 1000
  const cases: [string | null, ReturnType<typeof decideRange>][] = [
    [null, { kind: 'full' }],
    ['bytes=0-99', { kind: 'partial', start: 0, end: 99 }],
    ['bytes=900-', { kind: 'partial', start: 900, end: 999 }],
    ['bytes=-100', { kind: 'partial', start: 900, end: 999 }],
    ['bytes=-5000', { kind: 'partial', start: 0, end: 999 }],
    ['bytes=990-5000', { kind: 'partial', start: 990, end: 999 }],
    ['bytes=999-999', { kind: 'partial', start: 999, end: 999 }],
    ['bytes=1000-', { kind: 'unsatisfiable' }],
    ['bytes=500-100', { kind: 'unsatisfiable' }],
    ['bytes=-0', { kind: 'unsatisfiable' }],
    ['bytes=abc', { kind: 'unsatisfiable' }],
    ['bytes=-', { kind: 'unsatisfiable' }],
    ['items=0-5', { kind: 'full' }],
    ['bytes=0-1,5-9', { kind: 'full' }],
  ]
  for (const [header, want] of cases) test(`${header} → ${want.kind}`, () => expect(decideRange(header, size)).toEqual(want))
})

test('upload names: last path segment, no control characters, a default from the type', () => {
  expect(cleanUploadName('C:\\Users\\me\\Menu.pdf', 'pdf')).toBe('Menu.pdf')
  expect(cleanUploadName('../../etc/pass\nwd', 'png')).toBe('passwd')
  expect(cleanUploadName('   ', 'png')).toBe('file.png')
  expect(cleanUploadName(undefined, 'mp3')).toBe('file.mp3')
  expect([...cleanUploadName('é'.repeat(300), 'png')].length).toBe(255)
  expect(contentDisposition('inline', 'Café "menu".pdf')).toBe(`inline; filename="Caf_ _menu_.pdf"; filename*=UTF-8''Caf%C3%A9%20%22menu%22.pdf`)
})

describe('files API in process', () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'shortlink-files-'))
  afterAll(() => rmSync(dataDir, { recursive: true, force: true }))
  const h = createHarness({ server: { dataDir }, files: { maxBytes: 4096 } })
  const upload = (bytes: Uint8Array, name: string, key = h.keys.member, extra: Record<string, string> = {}) => {
    const form = new FormData()
    form.set('file', new File([bytes as BlobPart], name, { type: 'application/octet-stream' }))
    for (const [k, v] of Object.entries(extra)) form.set(k, v)
    return h.call('POST', '/files', { key, body: form })
  }
  const blobs = () => readdirSync(join(dataDir, 'files')).filter((n) => !n.startsWith('.'))

  test('upload → 201 record typed from the bytes, not the name', async () => {
    const r = await upload(S.samplePng(), 'photo.jpg')
    expect(r.status).toBe(201)
    expect(r.body).toMatchObject({
      name: 'photo.jpg',
      mimeType: 'image/png',
      extension: 'png',
      size: S.samplePng().length,
      archived: false,
      userId: 'usr_alice',
    })
    expect(r.body.id).toMatch(/^fil_/)
    expect(r.body.createdAt).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/)
  })

  test('an image declaring a huge canvas is refused at upload, before anything decodes it', async () => {
    // 21 bytes of JPEG: SOI, a baseline frame header of 30000×30000 px with 3 components, EOI.
    const bomb = Uint8Array.from([
      0xff, 0xd8, 0xff, 0xc0, 0x00, 0x11, 0x08, 0x75, 0x30, 0x75, 0x30, 0x03, 0x01, 0x22, 0x00, 0x02, 0x11, 0x01, 0x03, 0x11, 0x01, 0xff, 0xd9,
    ])
    const r = await upload(bomb, 'tiny.jpg')
    expect(r.status).toBe(422)
    expect(r.body).toMatchObject({ code: 'parameter_error', message: "'file' the image declares 30000×30000 px; at most 150 megapixels are accepted" })
    const svg = new TextEncoder().encode('<svg xmlns="http://www.w3.org/2000/svg" width="100000" height="100000"/>')
    expect((await upload(svg, 'huge.svg')).body.message).toContain('declares 100000×100000 px')
    expect((await upload(S.samplePng(), 'fine.png')).status).toBe(201)
  })

  test('an upload name over 255 characters is refused like a rename; 255 are kept', async () => {
    const long = await upload(S.samplePng(), 'a.png', h.keys.member, { name: 'n'.repeat(256) })
    expect(long.status).toBe(422)
    expect(long.body).toMatchObject({ code: 'parameter_error', message: "'name' length must be 1-255" })
    const fits = await upload(S.samplePng(), 'a.png', h.keys.member, { name: `${'é'.repeat(251)}.png` })
    expect(fits.status).toBe(201)
    expect([...fits.body.name].length).toBe(255)
  })

  test('a disallowed type is 422 naming the field; a missing part is 422; JSON is 400', async () => {
    const bad = await upload(new TextEncoder().encode('<html><script>alert(1)</script></html>'), 'cat.png')
    expect(bad.status).toBe(422)
    expect(bad.body).toMatchObject({ code: 'parameter_error', message: expect.stringContaining("'file'") })
    const form = new FormData()
    form.set('other', 'x')
    const missing = await h.call('POST', '/files', { key: h.keys.member, body: form })
    expect(missing.status).toBe(422)
    expect(missing.body.message).toContain("'file' is required")
    const json = await h.call('POST', '/files', { key: h.keys.member, json: { file: 'x' } })
    expect(json.status).toBe(400)
    expect(json.body.code).toBe('bad_request')
  })

  test('a file one byte over maxBytes is 400; exactly maxBytes is accepted', async () => {
    const pdf = S.samplePdf()
    const exact = new Uint8Array(4096)
    exact.set(pdf)
    expect((await upload(exact, 'exact.pdf')).status).toBe(201)
    const over = new Uint8Array(4097)
    over.set(pdf)
    const r = await upload(over, 'over.pdf')
    expect(r.status).toBe(400)
    expect(r.body.message).toContain('4096')
  })

  test('same content is stored once; the blob goes with the last record', async () => {
    const before = blobs().length
    const gif = S.sampleGif()
    const a = (await upload(gif, 'a.gif')).body
    const b = (await upload(gif, 'b.gif', h.keys.other)).body
    expect(blobs().length).toBe(before + 1)
    expect((await h.call('DELETE', `/files/${a.id}`, { key: h.keys.member })).body).toEqual({ id: a.id })
    expect(blobs().length).toBe(before + 1)
    expect((await h.call('GET', `/files/${b.id}/content`, { key: h.keys.other })).status).toBe(200)
    await h.call('DELETE', `/files/${b.id}`, { key: h.keys.other })
    expect(blobs().length).toBe(before)
    const gone = await h.call('GET', `/files/${a.id}`, { key: h.keys.member })
    expect(gone.status).toBe(410)
    expect(gone.body.code).toBe('record_gone')
  })

  test('ownership: another member gets 403, admin sees all, readonly cannot write', async () => {
    const f = (await upload(S.sampleJpeg(), 'mine.jpg')).body
    expect((await h.call('GET', `/files/${f.id}`, { key: h.keys.other })).status).toBe(403)
    expect((await h.call('GET', `/files/${f.id}/content`, { key: h.keys.other })).status).toBe(403)
    expect((await h.call('PATCH', `/files/${f.id}`, { key: h.keys.other, json: { name: 'x' } })).status).toBe(403)
    expect((await h.call('DELETE', `/files/${f.id}`, { key: h.keys.other })).status).toBe(403)
    expect((await h.call('GET', `/files/${f.id}`, { key: h.keys.admin })).status).toBe(200)
    expect((await upload(S.sampleJpeg(), 'ro.jpg', h.keys.readonly)).status).toBe(403)
    const otherList = (await h.call('GET', '/files', { key: h.keys.other })).body as { id: string }[]
    expect(otherList.some((x) => x.id === f.id)).toBe(false)
    const adminList = (await h.call('GET', '/files?pageSize=100', { key: h.keys.admin })).body as { id: string }[]
    expect(adminList.some((x) => x.id === f.id)).toBe(true)
    expect((await h.call('GET', '/files/fil_nope', { key: h.keys.member })).status).toBe(404)
  })

  test('PATCH renames and archives; archived files leave the default list', async () => {
    const f = (await upload(S.sampleWebp(), 'w.webp')).body
    const r = await h.call('PATCH', `/files/${f.id}`, { key: h.keys.member, json: { name: '  Renamed.webp ', archived: true } })
    expect(r.status).toBe(200)
    expect(r.body).toMatchObject({ name: 'Renamed.webp', archived: true })
    expect(r.body.updatedAt >= f.updatedAt).toBe(true)
    const list = (await h.call('GET', '/files?extension=webp', { key: h.keys.member })).body as unknown[]
    expect(list).toHaveLength(0)
    const withArchived = (await h.call('GET', '/files?extension=webp&includeArchived=true', { key: h.keys.member })).body as { id: string }[]
    expect(withArchived.map((x) => x.id)).toEqual([f.id])
    expect((await h.call('PATCH', `/files/${f.id}`, { key: h.keys.member, json: { name: '' } })).status).toBe(422)
    expect((await h.call('PATCH', `/files/${f.id}`, { key: h.keys.member, json: { size: 1 } })).status).toBe(422)
  })

  test('delete is refused while a live link shows the file, and allowed once that link is deleted', async () => {
    const f = (await upload(S.samplePdf('used'), 'used.pdf')).body
    const link = await h.call('POST', '/links/document', { key: h.keys.member, json: { data: { fileId: f.id } } })
    expect(link.status).toBe(200)
    const r = await h.call('DELETE', `/files/${f.id}`, { key: h.keys.member })
    expect(r.status).toBe(422)
    expect(r.body.message).toContain('used by a link')
    expect((await h.call('DELETE', `/links/${link.body.id}`, { key: h.keys.member })).status).toBe(200)
    expect((await h.call('DELETE', `/files/${f.id}`, { key: h.keys.member })).status).toBe(200)
    expect(await h.deps.files.open(f.id)).toBeNull()
  })

  test('internal get/open for landing pages see live files without a caller', async () => {
    const f = (await upload(S.sampleWav(0.05), 'tone.wav')).body
    expect(await h.deps.files.get(f.id)).toMatchObject({ id: f.id, mimeType: 'audio/wav' })
    const opened = (await h.deps.files.open(f.id))!
    expect(opened).toMatchObject({ mimeType: 'audio/wav', size: f.size, name: 'tone.wav' })
    expect(Buffer.from(await new Response((await opened.stream()) as Blob | null).arrayBuffer()).equals(Buffer.from(S.sampleWav(0.05)))).toBe(true)
  })

  test('list query validation names the parameter', async () => {
    for (const [q, field] of [
      ['pageSize=0', 'pageSize'],
      ['pageSize=101', 'pageSize'],
      ['sortBy=size', 'sortBy'],
      [`extension=${'x'.repeat(21)}`, 'extension'],
      [`search=${'x'.repeat(201)}`, 'search'],
      ['page=0', 'page'],
    ]) {
      const r = await h.call('GET', `/files?${q}`, { key: h.keys.member })
      expect(r.status).toBe(422)
      expect(r.body.message).toContain(field!)
    }
  })
})
