import { describe, expect, test } from 'bun:test'
import { PNG } from 'pngjs'
import { createHarness } from '../../test/helpers/in-process'
import { decodeImageFile } from './qr.decode'
import { SAMPLE_TEXT } from './qr.render'

const design = { patterns: { body: { style_id: 'rounded', value: '#1e3a8a' }, eye: { style_id: 'circle' } } }

describe('QR templates API', () => {
  test('create, get, preview, update, archive, delete', async () => {
    const h = createHarness()
    const made = await h.call('POST', '/qr/templates', { key: h.keys.member, json: { name: 'Navy', comment: 'brand', qrOptions: design } })
    expect(made.status).toBe(200)
    expect(made.body).toMatchObject({ name: 'Navy', comment: 'brand', qrOptions: design, archived: false, userId: 'usr_alice' })
    expect(made.body.id).toMatch(/^tpl_/)
    expect(made.body.image).toBe(`https://localhost:8443/api/qr/templates/${made.body.id}/preview`)
    expect(made.body.createdAt).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/)

    expect((await h.call('GET', `/qr/templates/${made.body.id}`, { key: h.keys.readonly })).body).toEqual(made.body)

    const preview = await h.call('GET', `/qr/templates/${made.body.id}/preview?width=200`, { key: h.keys.readonly })
    expect(preview.status).toBe(200)
    expect(preview.headers.get('content-type')).toBe('image/png')
    const png = Buffer.from(preview.body, 'latin1')
    expect(png.length).toBeGreaterThan(100)

    const renamed = await h.call('PATCH', `/qr/templates/${made.body.id}`, { key: h.keys.member, json: { name: 'Navy 2', archived: true } })
    expect(renamed.body).toMatchObject({ name: 'Navy 2', comment: 'brand', archived: true })
    expect((await h.call('GET', '/qr/templates')).body).toEqual([])
    expect((await h.call('GET', '/qr/templates?includeArchived=true')).body.map((t: any) => t.name)).toEqual(['Navy 2'])

    expect((await h.call('DELETE', `/qr/templates/${made.body.id}`, { key: h.keys.member })).body).toEqual({ id: made.body.id })
    expect((await h.call('GET', `/qr/templates/${made.body.id}`)).status).toBe(404)
  })

  test('the preview decodes to the sample link', async () => {
    const h = createHarness()
    const made = (await h.call('POST', '/qr/templates', { json: { name: 'x', qrOptions: design } })).body
    const res = await h.deps.qr.renderQr({ text: SAMPLE_TEXT, qrOptions: made.qrOptions, ownerId: made.userId, format: 'png', width: 300 })
    expect(PNG.sync.read(Buffer.from(res.body)).width).toBe(300)
    expect(await decodeImageFile(res.body)).toBe(SAMPLE_TEXT)
  })

  test('designs are checked: bad style 422, low contrast 422, unknown field 422', async () => {
    const h = createHarness()
    for (const [qrOptions, field] of [
      [{ patterns: { body: { style_id: 'stars' } } }, 'qrOptions.patterns.body.style_id'],
      [{ patterns: { body: { value: '#dddddd' } } }, 'qrOptions.patterns.body.value'],
      [{ shape: 1 }, 'qrOptions.shape'],
      [{ logo: { value: 'http://127.0.0.1:9/logo.png' } }, 'qrOptions.logo.value'],
    ] as const) {
      const r = await h.call('POST', '/qr/templates', { json: { name: 'bad', qrOptions } })
      expect({ field, status: r.status, code: r.body.code }).toEqual({ field, status: 422, code: 'parameter_error' })
      expect(r.body.message).toContain(field)
    }
    for (const body of [
      { name: '', qrOptions: {} },
      { name: 'x'.repeat(101), qrOptions: {} },
      { name: 'ok', comment: 'c'.repeat(501), qrOptions: {} },
      { name: 'ok' },
    ])
      expect((await h.call('POST', '/qr/templates', { json: body })).status).toBe(422)
    const ok = (await h.call('POST', '/qr/templates', { json: { name: 'ok', qrOptions: {} } })).body
    const badPatch = await h.call('PATCH', `/qr/templates/${ok.id}`, {
      json: { qrOptions: { patterns: { eye: { style_id: 'square', ball_style_id: 'circle' } } } },
    })
    expect(badPatch.status).toBe(422)
    expect(badPatch.body.message).toContain('ball_style_id')
  })

  test("light-on-dark designs: a template must scan as given, so saving one is refused; a link's is served turned over", async () => {
    const lightOnDark = { patterns: { background: { value: '#0f172a' }, body: { value: '#f8fafc' } } }
    const h = createHarness()
    const made = await h.call('POST', '/qr/templates', { json: { name: 'night', qrOptions: lightOnDark } })
    expect({ status: made.status, code: made.body.code }).toEqual({ status: 422, code: 'parameter_error' })
    expect(made.body.message).toContain('light-on-dark')
    const ok = (await h.call('POST', '/qr/templates', { json: { name: 'day', qrOptions: {} } })).body
    expect((await h.call('PATCH', `/qr/templates/${ok.id}`, { json: { qrOptions: lightOnDark } })).status).toBe(422)
    expect((await h.call('GET', `/qr/templates/${ok.id}`)).body.qrOptions).toEqual({})
    const link = await h.call('POST', '/links/link', { json: { data: { url: 'https://example.org/night' }, qrOptions: lightOnDark } })
    expect(link.status).toBe(200)
    const img = await h.call('GET', `/qr/${link.body.id}`)
    expect(img.headers.get('x-qr-repaired')).toBe('dark-on-light')
  })

  test('shared: members read all and change only their own; admins change all; readonly reads', async () => {
    const h = createHarness()
    const alices = (await h.call('POST', '/qr/templates', { key: h.keys.member, json: { name: 'alice', qrOptions: {} } })).body
    await h.call('POST', '/qr/templates', { key: h.keys.other, json: { name: 'bob', qrOptions: {} } })
    expect((await h.call('GET', '/qr/templates', { key: h.keys.other })).body).toHaveLength(2)
    expect((await h.call('GET', '/qr/templates', { key: h.keys.readonly })).body).toHaveLength(2)
    expect((await h.call('PATCH', `/qr/templates/${alices.id}`, { key: h.keys.other, json: { name: 'mine' } })).status).toBe(403)
    expect((await h.call('DELETE', `/qr/templates/${alices.id}`, { key: h.keys.other })).status).toBe(403)
    expect((await h.call('POST', '/qr/templates', { key: h.keys.readonly, json: { name: 'r', qrOptions: {} } })).status).toBe(403)
    expect((await h.call('PATCH', `/qr/templates/${alices.id}`, { key: h.keys.admin, json: { comment: 'by admin' } })).body.comment).toBe('by admin')
  })

  test('list: search, ids, sort, paging 10-100 with X-Total-Count', async () => {
    const h = createHarness()
    const ids: string[] = []
    for (let i = 0; i < 12; i++) {
      ids.push(
        (await h.call('POST', '/qr/templates', { json: { name: `t${String(i).padStart(2, '0')}`, comment: i === 3 ? 'Summer promo' : '', qrOptions: {} } }))
          .body.id,
      )
    }
    const first = await h.call('GET', '/qr/templates')
    expect(first.body).toHaveLength(10)
    expect(first.body[0].name).toBe('t11')
    expect(first.headers.get('x-total-count')).toBe('12')
    const page2 = await h.call('GET', '/qr/templates?page=2&sortBy=name&sortOrder=asc')
    expect(page2.body.map((t: any) => t.name)).toEqual(['t10', 't11'])
    expect((await h.call('GET', '/qr/templates?search=PROMO')).body.map((t: any) => t.name)).toEqual(['t03'])
    expect((await h.call('GET', '/qr/templates?search=t0&pageSize=10')).headers.get('x-total-count')).toBe('10')
    expect((await h.call('GET', `/qr/templates?ids=${ids[0]}&ids=${ids[1]}&sortBy=name&sortOrder=asc`)).body.map((t: any) => t.name)).toEqual(['t00', 't01'])
    for (const q of ['pageSize=9', 'pageSize=101', 'page=0', 'sortBy=clicks', 'sortOrder=up', `search=${'x'.repeat(101)}`, 'includeArchived=maybe']) {
      const r = await h.call('GET', `/qr/templates?${q}`)
      expect({ q, status: r.status }).toEqual({ q, status: 422 })
      expect(r.body.message).toContain(q.split('=')[0])
    }
  })

  test('GET /qr/{linkId}?templateId= uses the template design', async () => {
    const h = createHarness()
    const link = (await h.call('POST', '/links/link', { json: { data: { url: 'https://example.org/t' } } })).body
    const tpl = (await h.call('POST', '/qr/templates', { json: { name: 'dots', qrOptions: { patterns: { body: { style_id: 'dots' } } } } })).body
    const plain = await h.call('GET', `/qr/${link.id}`)
    const styled = await h.call('GET', `/qr/${link.id}?templateId=${tpl.id}`)
    expect(styled.status).toBe(200)
    expect(styled.headers.get('etag')).not.toBe(plain.headers.get('etag'))
    expect((await h.call('GET', `/qr/${link.id}?templateId=tpl_missing`)).status).toBe(404)
  })
})
