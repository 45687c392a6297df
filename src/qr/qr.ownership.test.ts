/**
 * Uploaded files (`fil_…`) as logos and frames: a design may name only its owner's live,
 * unarchived files (an admin's designs any file), when saved and again at every render.
 * Two members (alice, bob) and an admin, through the API on an in-memory store.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { PNG } from 'pngjs'
import { type ApiHarness, createHarness } from '../../test/helpers/in-process'
import { decodeImageFile } from './qr.decode'
import { FRAME_SVG, LOGO_SVG, pngOf } from './qr.test-fixtures'

const dataDir = mkdtempSync(join(tmpdir(), 'shortlink-qr-files-'))
afterAll(() => rmSync(dataDir, { recursive: true, force: true }))
const h: ApiHarness = createHarness({ server: { dataDir } })
let logoPng: Uint8Array
let framePng: Uint8Array

beforeAll(async () => {
  logoPng = await pngOf(LOGO_SVG)
  framePng = await pngOf(FRAME_SVG)
})

async function upload(key: string, bytes: Uint8Array, name = 'logo.png'): Promise<string> {
  const form = new FormData()
  form.set('file', new File([bytes as BlobPart], name, { type: 'image/png' }))
  const r = await h.call('POST', '/files', { key, body: form })
  expect(r.status).toBe(201)
  return r.body.id
}

let n = 0
const newLink = (key: string, qrOptions?: unknown) =>
  h.call('POST', '/links/link', { key, json: { data: { url: `https://example.org/own-${n++}` }, qrOptions } })
const logoDesign = (id: string) => ({ logo: { value: id, size: 10 } })
const frameDesign = (id: string) => ({ frame: { value: id, options: { code_rect: [50, 50, 500, 500] } } })

/** Pixels of the logo's red (#e11d48) in a served PNG: the logo is drawn when there are many. */
function logoPixels(png: Uint8Array): number {
  const img = PNG.sync.read(Buffer.from(png))
  let count = 0
  for (let i = 0; i < img.data.length; i += 4) if (img.data[i] === 0xe1 && img.data[i + 1] === 0x1d && img.data[i + 2] === 0x48) count++
  return count
}
/** Pixels of the frame's navy (#1e3a8a). */
function framePixels(png: Uint8Array): number {
  const img = PNG.sync.read(Buffer.from(png))
  let count = 0
  for (let i = 0; i < img.data.length; i += 4) if (img.data[i] === 0x1e && img.data[i + 1] === 0x3a && img.data[i + 2] === 0x8a) count++
  return count
}

async function qrOf(linkId: string, query = '', key = h.keys.admin) {
  const r = await h.call('GET', `/qr/${linkId}?format=base64${query}`, { key })
  expect(r.status).toBe(200)
  return { png: new Uint8Array(Buffer.from(r.body.image.split(',')[1], 'base64')), repaired: r.headers.get('x-qr-repaired') }
}

describe('saving a design that names a file', () => {
  test("links: a member cannot name another member's file (422, like a missing one); the owner and an admin can", async () => {
    const alices = await upload(h.keys.member, logoPng)
    const missing = await newLink(h.keys.other, logoDesign('fil_doesnotexist'))
    const foreign = await newLink(h.keys.other, logoDesign(alices))
    expect({ status: foreign.status, code: foreign.body.code }).toEqual({ status: 422, code: 'parameter_error' })
    expect(foreign.body.message).toBe(missing.body.message.replace('fil_doesnotexist', alices))
    expect(foreign.body.message).toContain('qrOptions.logo.value')
    const foreignFrame = await newLink(h.keys.other, frameDesign(alices))
    expect(foreignFrame.status).toBe(422)
    expect(foreignFrame.body.message).toContain('qrOptions.frame.value')

    expect((await newLink(h.keys.member, logoDesign(alices))).status).toBe(200)
    expect((await newLink(h.keys.admin, logoDesign(alices))).status).toBe(200)
  })

  test("links: PATCH, bulk PATCH and upsert refuse another member's file and change nothing", async () => {
    const alices = await upload(h.keys.member, logoPng)
    const bobs = (await newLink(h.keys.other)).body
    const patch = await h.call('PATCH', `/links/${bobs.id}`, { key: h.keys.other, json: { qrOptions: logoDesign(alices) } })
    expect({ status: patch.status, code: patch.body.code }).toEqual({ status: 422, code: 'parameter_error' })
    const bulk = await h.call('PATCH', '/links/bulk', { key: h.keys.other, json: { linkIds: [bobs.id], updateData: { qrOptions: logoDesign(alices) } } })
    expect({ status: bulk.status, code: bulk.body.code }).toEqual({ status: 422, code: 'parameter_error' })
    const upsert = await h.call('PUT', '/links/upsert/link', {
      key: h.keys.other,
      json: { data: { url: bobs.destination ?? bobs.data.url }, qrOptions: logoDesign(alices) },
    })
    expect({ status: upsert.status, code: upsert.body.code }).toEqual({ status: 422, code: 'parameter_error' })
    const upsertNew = await h.call('PUT', '/links/upsert/link', {
      key: h.keys.other,
      json: { data: { url: 'https://example.org/upsert-new' }, qrOptions: logoDesign(alices) },
    })
    expect(upsertNew.status).toBe(422)
    expect((await h.call('GET', `/links/${bobs.id}`, { key: h.keys.other })).body.qrOptions).toBeNull()

    // An admin changing bob's link: the design is bob's, so it may name only bob's files.
    const byAdmin = await h.call('PATCH', `/links/${bobs.id}`, { key: h.keys.admin, json: { qrOptions: logoDesign(alices) } })
    expect(byAdmin.status).toBe(422)
    const bobsFile = await upload(h.keys.other, logoPng)
    expect((await h.call('PATCH', `/links/${bobs.id}`, { key: h.keys.admin, json: { qrOptions: logoDesign(bobsFile) } })).status).toBe(200)
  })

  test("templates: a member cannot name another member's file on create or update; the owner and an admin can", async () => {
    const alices = await upload(h.keys.member, logoPng)
    const missing = await h.call('POST', '/qr/templates', { key: h.keys.other, json: { name: 'x', qrOptions: logoDesign('fil_doesnotexist') } })
    const foreign = await h.call('POST', '/qr/templates', { key: h.keys.other, json: { name: 'x', qrOptions: logoDesign(alices) } })
    expect({ status: foreign.status, code: foreign.body.code }).toEqual({ status: 422, code: 'parameter_error' })
    expect(foreign.body.message).toBe(missing.body.message.replace('fil_doesnotexist', alices))
    const bobs = (await h.call('POST', '/qr/templates', { key: h.keys.other, json: { name: 'bob', qrOptions: {} } })).body
    const patch = await h.call('PATCH', `/qr/templates/${bobs.id}`, { key: h.keys.other, json: { qrOptions: logoDesign(alices) } })
    expect({ status: patch.status, code: patch.body.code }).toEqual({ status: 422, code: 'parameter_error' })
    expect((await h.call('GET', `/qr/templates/${bobs.id}`)).body.qrOptions).toEqual({})

    expect((await h.call('POST', '/qr/templates', { key: h.keys.member, json: { name: 'alice', qrOptions: logoDesign(alices) } })).status).toBe(200)
    expect((await h.call('POST', '/qr/templates', { key: h.keys.admin, json: { name: 'admin', qrOptions: logoDesign(alices) } })).status).toBe(200)
  })

  test('an archived or deleted file cannot be named', async () => {
    const archived = await upload(h.keys.member, logoPng)
    expect((await h.call('PATCH', `/files/${archived}`, { key: h.keys.member, json: { archived: true } })).status).toBe(200)
    expect((await newLink(h.keys.member, logoDesign(archived))).status).toBe(422)
    const deleted = await upload(h.keys.member, logoPng)
    expect((await h.call('DELETE', `/files/${deleted}`, { key: h.keys.member })).status).toBe(200)
    expect((await h.call('POST', '/qr/templates', { key: h.keys.member, json: { name: 'gone', qrOptions: logoDesign(deleted) } })).status).toBe(422)
  })
})

describe("rendering draws a file only while the design's owner may use it", () => {
  test("a link's logo stops being drawn once its file is archived, and again once deleted; the code still decodes", async () => {
    for (const gone of ['archived', 'deleted'] as const) {
      const logo = await upload(h.keys.member, logoPng)
      const link = (await newLink(h.keys.member, logoDesign(logo))).body
      const before = await qrOf(link.id, '', h.keys.member)
      expect(before.repaired).toBeNull()
      expect(logoPixels(before.png)).toBeGreaterThan(500)

      if (gone === 'archived') expect((await h.call('PATCH', `/files/${logo}`, { key: h.keys.member, json: { archived: true } })).status).toBe(200)
      else expect((await h.call('DELETE', `/files/${logo}`, { key: h.keys.member })).status).toBe(200)
      const after = await qrOf(link.id, '', h.keys.member)
      expect({ gone, repaired: after.repaired, logo: logoPixels(after.png) }).toEqual({ gone, repaired: 'logo-unavailable', logo: 0 })
      expect(await decodeImageFile(after.png)).toBe(`${link.shortLink}?qr=1`)
    }
  })

  test('a frame file archived later: the code is served without it and decodes', async () => {
    const frame = await upload(h.keys.member, framePng, 'frame.png')
    const link = (await newLink(h.keys.member, frameDesign(frame))).body
    expect(framePixels((await qrOf(link.id)).png)).toBeGreaterThan(1000)
    await h.call('PATCH', `/files/${frame}`, { key: h.keys.member, json: { archived: true } })
    const after = await qrOf(link.id)
    expect(after.repaired).toBe('frame-unavailable')
    expect(framePixels(after.png)).toBe(0)
    expect(await decodeImageFile(after.png)).toBe(`${link.shortLink}?qr=1`)
  })

  test("an admin's design draws another user's file until the admin is demoted", async () => {
    expect((await h.call('POST', '/users', { json: { id: 'dora', role: 'admin' } })).status).toBe(200)
    const dorasKey = (await h.call('POST', '/keys', { json: { userId: 'usr_dora', role: 'admin' } })).body.key
    const alices = await upload(h.keys.member, logoPng)
    const link = await newLink(dorasKey, logoDesign(alices))
    expect(link.status).toBe(200)
    expect(logoPixels((await qrOf(link.body.id)).png)).toBeGreaterThan(500)
    expect((await h.call('PATCH', '/users/usr_dora', { json: { role: 'member' } })).status).toBe(200)
    const after = await qrOf(link.body.id)
    expect({ repaired: after.repaired, logo: logoPixels(after.png) }).toEqual({ repaired: 'logo-unavailable', logo: 0 })
    expect(await decodeImageFile(after.png)).toBe(`${link.body.shortLink}?qr=1`)
  })

  test("a template draws its owner's file on anyone's link (templateId) and in its preview, until the file is archived", async () => {
    const logo = await upload(h.keys.member, logoPng)
    const tpl = (await h.call('POST', '/qr/templates', { key: h.keys.member, json: { name: 'brand', qrOptions: logoDesign(logo) } })).body
    const bobs = (await newLink(h.keys.other)).body
    const drawn = await qrOf(bobs.id, `&templateId=${tpl.id}`, h.keys.other)
    expect(drawn.repaired).toBeNull()
    expect(logoPixels(drawn.png)).toBeGreaterThan(500)
    const preview = await h.call('GET', `/qr/templates/${tpl.id}/preview`, { key: h.keys.other })
    expect({ status: preview.status, repaired: preview.headers.get('x-qr-repaired') }).toEqual({ status: 200, repaired: null })

    await h.call('PATCH', `/files/${logo}`, { key: h.keys.member, json: { archived: true } })
    const after = await qrOf(bobs.id, `&templateId=${tpl.id}`, h.keys.other)
    expect({ repaired: after.repaired, logo: logoPixels(after.png) }).toEqual({ repaired: 'logo-unavailable', logo: 0 })
    expect(await decodeImageFile(after.png)).toBe(`${bobs.shortLink}?qr=1`)
    expect((await h.call('GET', `/qr/templates/${tpl.id}/preview`, { key: h.keys.other })).headers.get('x-qr-repaired')).toBe('logo-unavailable')
  })

  test("a link's own design does not draw another user's file even when stored (e.g. before this check)", async () => {
    const alices = await upload(h.keys.member, logoPng)
    const bobs = (await newLink(h.keys.other)).body
    // Written past the API, as an older server could have stored it.
    h.deps.db.query('UPDATE links SET qr_options = ? WHERE id = ?').run(JSON.stringify(logoDesign(alices)), bobs.id)
    const r = await qrOf(bobs.id, '', h.keys.other)
    expect({ repaired: r.repaired, logo: logoPixels(r.png) }).toEqual({ repaired: 'logo-unavailable', logo: 0 })
  })
})
