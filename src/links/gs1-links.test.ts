/** GS1 Digital Link products through the links API: links of type gs1 whose key is the 14-digit GTIN. */
import { describe, expect, test } from 'bun:test'
import { type ApiHarness, createHarness } from '../../test/helpers/in-process'

const product = (gtin: string, extra: object = {}) => ({ gtin, url: 'https://brand.example/oil', ...extra })
const create = (h: ApiHarness, data: unknown, linkOptions?: unknown) => h.call('POST', '/links/gs1', { json: linkOptions ? { data, linkOptions } : { data } })
const expect422 = (r: { status: number; body: any }, text: string) => {
  expect(r.status).toBe(422)
  expect(r.body.code).toBe('parameter_error')
  expect(r.body.message).toContain(text)
}

describe('POST /links/gs1', () => {
  test.each([
    ['95012346', '00000095012346'],
    ['614141000036', '00614141000036'],
    ['9506000134352', '09506000134352'],
    ['09506000134352', '09506000134352'],
  ])('a GTIN of %s digits is stored as %s: key, shortLink (the Digital Link URI) and data', async (gtin, fourteen) => {
    const h = createHarness()
    const r = await create(h, product(gtin, { links: [{ linkType: 'gs1:pip', url: 'https://brand.example/pip', lang: 'EN-gb' }] }))
    expect(r.status).toBe(200)
    expect(r.body).toMatchObject({
      linkType: 'gs1',
      key: fourteen,
      shortLink: `https://localhost:8443/01/${fourteen}`,
      destination: 'https://brand.example/oil',
    })
    expect(r.body.data).toEqual({
      gtin: fourteen,
      url: 'https://brand.example/oil',
      links: [{ linkType: 'gs1:pip', url: 'https://brand.example/pip', lang: 'en-GB' }],
    })
    expect((await h.call('GET', `/links/${r.body.id}`)).body).toEqual(r.body)
  })

  test('a wrong check digit, a bad length, an unknown link type, a bad lot or language are 422 and nothing is stored', async () => {
    const h = createHarness()
    expect422(await create(h, product('09506000134353')), 'check digit (expected 2')
    expect422(await create(h, product('0950600013435')), "'data.gtin'")
    expect422(await create(h, product('09506000134352', { links: [{ linkType: 'gs1:nosuch', url: 'https://x.example' }] })), 'data.links.0.linkType')
    expect422(await create(h, product('09506000134352', { links: [{ linkType: 'pip', url: 'https://x.example' }] })), 'data.links.0.linkType')
    expect422(await create(h, product('09506000134352', { lots: [{ lot: 'has space', url: 'https://x.example' }] })), 'data.lots.0.lot')
    expect422(await create(h, product('09506000134352', { lots: [{ lot: 'L1' }] })), "'data.lots.0' needs a url or links")
    expect422(
      await create(
        h,
        product('09506000134352', {
          lots: [
            { lot: 'L1', url: 'https://a.example' },
            { lot: 'L1', url: 'https://b.example' },
          ],
        }),
      ),
      'listed twice',
    )
    expect422(await create(h, product('09506000134352', { links: [{ linkType: 'gs1:pip', url: 'https://x.example', lang: 'english' }] })), 'data.links.0.lang')
    expect422(await create(h, product('09506000134352', { links: [{ linkType: 'gs1:pip', url: 'ftp://x.example' }] })), 'data.links.0.url')
    expect422(await create(h, { gtin: '09506000134352' }), 'data.url')
    expect422(await create(h, product('09506000134352'), { key: 'mykey' }), 'linkOptions.key')
    expect((await h.call('GET', '/links/count')).body.count).toBe(0)
  })

  test('one GTIN per domain, whatever length it was written with; linkOptions.key may repeat the GTIN', async () => {
    const h = createHarness()
    expect((await create(h, product('9506000134352'), { key: '09506000134352' })).status).toBe(200)
    expect422(await create(h, product('09506000134352')), 'already used on localhost (one GTIN per domain)')
    expect422(await h.call('POST', '/links/link', { json: { data: { url: 'https://x.example' }, linkOptions: { key: '09506000134352' } } }), 'already used')
  })

  test('everything else works as for any link: tags, options, filters, upsert, update, delete', async () => {
    const h = createHarness()
    const tag = (await h.call('POST', '/tags', { json: { name: 'oils' } })).body.id
    const future = new Date(Date.now() + 86_400_000).toISOString()
    const r = await create(h, product('09506000134352'), {
      tags: [tag],
      comment: 'extra virgin',
      utm: { source: 'pack' },
      expiration: { time: future, url: 'https://brand.example/gone' },
      Targeting: { targetType: 'language', targetDatas: [{ language: 'fr', url: 'https://brand.example/fr' }] },
    })
    expect(r.status).toBe(200)
    expect(r.body).toMatchObject({ tags: [tag], comments: 'extra virgin', utm: { source: 'pack' } })
    await h.call('POST', '/links/link', { json: { data: { url: 'https://other.example' } } })
    const listed = await h.call('GET', '/links?linkType=gs1')
    expect(listed.body.links.map((l: { id: string }) => l.id)).toEqual([r.body.id])
    expect((await h.call('GET', '/links/count?linkType=gs1')).body.count).toBe(1)
    for (const s of ['https://localhost:8443/01/09506000134352', 'https://localhost:8443/01/9506000134352'])
      expect((await h.call('GET', `/links?shortLinks=${encodeURIComponent(s)}`)).body.total).toBe(1)
    expect((await h.call('GET', '/links?search=134352')).body.total).toBe(1)

    // Upsert: the same product answers the stored one; another GTIN with the same default URL is another product.
    const again = await h.call('PUT', '/links/upsert/gs1', { json: { data: product('9506000134352') } })
    expect(again.status).toBe(200)
    expect(again.body.id).toBe(r.body.id)
    const other = await h.call('PUT', '/links/upsert/gs1', { json: { data: product('95012346') } })
    expect(other.status).toBe(201)
    expect(other.body.key).toBe('00000095012346')

    // A new GTIN moves the key and the short link; linkOptions.key cannot.
    const moved = await h.call('PATCH', `/links/${r.body.id}`, {
      json: { data: product('614141000036', { lots: [{ lot: 'L42', url: 'https://brand.example/recall' }] }) },
    })
    expect(moved.status).toBe(200)
    expect(moved.body).toMatchObject({ key: '00614141000036', shortLink: 'https://localhost:8443/01/00614141000036' })
    expect422(await h.call('PATCH', `/links/${r.body.id}`, { json: { linkOptions: { key: 'x' } } }), 'linkOptions.key')
    expect422(await h.call('PATCH', `/links/${r.body.id}`, { json: { data: product('95012346') } }), 'one GTIN per domain')
    expect((await h.call('DELETE', `/links/${r.body.id}`)).status).toBe(200)
    expect((await create(h, product('614141000036'))).status).toBe(200) // the GTIN is free again
  })
})
