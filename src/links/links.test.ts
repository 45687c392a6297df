import { describe, expect, test } from 'bun:test'
import { type ApiHarness, createHarness } from '../../test/helpers/in-process'

const create = (h: ApiHarness, type: string, data: unknown, linkOptions?: unknown, key?: string) =>
  h.call('POST', `/links/${type}`, { key, json: linkOptions === undefined ? { data } : { data, linkOptions } })
const link = (h: ApiHarness, linkOptions?: unknown, url = 'https://example.com/page', key?: string) => create(h, 'link', { url }, linkOptions, key)
const expect422 = (r: { status: number; body: any }, field: string) => {
  expect(r.status).toBe(422)
  expect(r.body.code).toBe('parameter_error')
  expect(r.body.message).toContain(field)
}
const future = () => new Date(Date.now() + 86_400_000).toISOString()

describe('POST /links/{type}: the 16 types', () => {
  const cases: [string, unknown, string | RegExp][] = [
    ['link', { url: 'https://Example.COM/a?b=1' }, 'https://example.com/a?b=1'],
    ['google-form', { url: 'https://forms.gle/abc' }, 'https://forms.gle/abc'],
    ['email', { to: 'sales@example.com', subject: 'Hi there', body: 'A&B' }, 'mailto:sales@example.com?subject=Hi%20there&body=A%26B'],
    ['sms', { phone: '+33 6 12 34 56 78', message: 'hello' }, 'sms:+33612345678?body=hello'],
    ['whatsapp', { phone: '+1 (555) 010-9999', message: 'hé' }, 'https://wa.me/15550109999?text=h%C3%A9'],
    ['map', { query: 'Eiffel Tower' }, 'https://www.google.com/maps/search/?api=1&query=Eiffel%20Tower'],
    ['map', { latitude: 48.8584, longitude: 2.2945 }, 'https://www.google.com/maps/search/?api=1&query=48.8584%2C2.2945'],
    ['text', { text: 'Hello world' }, /^https:\/\/localhost:8443\/[A-Za-z0-9]{7}$/],
    ['wi-fi', { ssid: 'Cafe', password: 'espresso42', encryption: 'WPA' }, /^https:\/\/localhost:8443\//],
    ['menu', { sections: [{ name: 'Drinks', items: [{ name: 'Tea', price: '€2.50' }] }] }, /^https:\/\/localhost:8443\//],
    ['app-stores', { ios: 'https://apps.apple.com/app/id1', android: 'https://play.google.com/store/apps/details?id=x' }, /^https:\/\/localhost:8443\//],
    ['document', { url: 'https://example.com/menu.pdf', title: 'Menu' }, /^https:\/\/localhost:8443\//],
    ['file', { url: 'https://example.com/file.zip' }, /^https:\/\/localhost:8443\//],
    ['image', { url: 'https://example.com/a.png' }, /^https:\/\/localhost:8443\//],
    ['audio', { url: 'https://example.com/a.mp3' }, /^https:\/\/localhost:8443\//],
    ['video', { url: 'https://example.com/a.mp4' }, /^https:\/\/localhost:8443\//],
    ['svg', { url: 'https://example.com/a.svg' }, /^https:\/\/localhost:8443\//],
  ]
  for (const [type, data, destination] of cases) {
    test(`${type} ${JSON.stringify(data).slice(0, 40)}`, async () => {
      const h = createHarness()
      const r = await create(h, type, data)
      expect(r.status).toBe(200)
      expect(r.body.linkType).toBe(type)
      if (typeof destination === 'string') expect(r.body.destination).toBe(destination)
      else expect(r.body.destination).toMatch(destination)
      expect(r.body.id).toMatch(/^lnk_/)
      expect(r.body.key).toMatch(/^[A-Za-z0-9]{7}$/)
      expect(r.body.shortLink).toBe(`https://localhost:8443/${r.body.key}`)
      expect(r.body.qrCode).toBe(`https://localhost:8443/api/qr/${r.body.id}`)
      expect(r.body).toMatchObject({ domain: 'localhost', clicks: 0, hasPassword: false, lastClicked: null, tags: [], archived: false, userId: 'usr_admin' })
      expect((await h.call('GET', `/links/${r.body.id}`)).body).toEqual(r.body)
    })
  }

  test('an unknown type and a data variant of another type are 422', async () => {
    const h = createHarness()
    expect422(await create(h, 'vcard', { url: 'https://x.com' }), 'type')
    expect422(await create(h, 'email', { url: 'https://x.com' }), 'data')
    expect422(await create(h, 'link', { url: 'https://x.com', text: 'x' }), 'data.text')
    expect422(await create(h, 'link', {}), 'data.url')
    expect422(await create(h, 'document', { url: 'https://x.com/a.pdf', fileId: 'fil_x' }), 'data')
    expect422(await create(h, 'map', { latitude: 1 }), 'data')
    expect422(await create(h, 'map', { latitude: 91, longitude: 0 }), 'data.latitude')
    expect422(await create(h, 'wi-fi', { ssid: 'x', password: 'short', encryption: 'WPA' }), 'data.password')
    expect422(await create(h, 'wi-fi', { ssid: 'x', password: 'abc', encryption: 'nopass' }), 'data.password')
    expect422(await create(h, 'app-stores', { fallbackUrl: 'https://x.com' }), 'data')
    expect422(await create(h, 'email', { to: 'not-an-email' }), 'data.to')
    expect422(await create(h, 'text', { text: 'x'.repeat(5001) }), 'data.text')
    expect((await create(h, 'text', { text: 'x'.repeat(5000) })).status).toBe(200)
    expect422(await create(h, 'document', { fileId: 'fil_doesnotexist' }), 'data.fileId')
  })

  test('destinations must be http(s) URLs of 1-2000 characters', async () => {
    const h = createHarness()
    for (const url of ['javascript:alert(1)', 'data:text/html,hi', 'file:///etc/passwd', 'ftp://x.com/a', 'not a url', '//x.com/a', '']) {
      expect422(await link(h, undefined, url), 'data.url')
    }
    const at2000 = `https://example.com/${'a'.repeat(2000 - 'https://example.com/'.length)}`
    expect((await link(h, undefined, at2000)).status).toBe(200)
    expect422(await link(h, undefined, `${at2000}a`), 'data.url')
  })
})

describe('linkOptions', () => {
  test('key: given, unique per domain, pattern and 1-190 length, reserved words', async () => {
    const h = createHarness()
    const r = await link(h, { key: 'Summer-Sale_1' })
    expect(r.body.key).toBe('Summer-Sale_1')
    expect(r.body.shortLink).toBe('https://localhost:8443/Summer-Sale_1')
    expect422(await link(h, { key: 'Summer-Sale_1' }), 'linkOptions.key')
    expect((await link(h, { key: 'k'.repeat(190) })).status).toBe(200)
    expect422(await link(h, { key: 'k'.repeat(191) }), 'linkOptions.key')
    expect422(await link(h, { key: '' }), 'linkOptions.key')
    for (const bad of ['a b', 'a/b', 'ünï', 'a.b', 'a?b']) expect422(await link(h, { key: bad }), 'linkOptions.key')
    for (const reserved of ['api', 'docs', 'QR', 'app', 'App']) expect422(await link(h, { key: reserved }), 'reserved')
  })

  test('domain: a default domain (3-253) or a configured custom one', async () => {
    const longest = `${'a'.repeat(63)}.${'b'.repeat(63)}.${'c'.repeat(63)}.${'d'.repeat(61)}` // 253 characters
    const h = createHarness({ domains: { defaults: ['localhost', 'go.example.com', 'a.b', longest] } })
    expect((await link(h, { domain: longest })).body.domain).toBe(longest)
    expect((await link(h, { domain: 'a.b' })).body.domain).toBe('a.b')
    expect((await link(h, { domain: 'GO.example.com' })).body.domain).toBe('go.example.com')
    expect((await link(h)).body.domain).toBe('localhost')
    expect422(await link(h, { domain: 'unknown.example.org' }), 'linkOptions.domain')
    expect422(await link(h, { domain: 'ab' }), 'linkOptions.domain')
    expect422(await link(h, { domain: `${'a'.repeat(250)}.com` }), 'linkOptions.domain')
    // The same key may live on two domains.
    expect((await link(h, { key: 'same' })).status).toBe(200)
    expect((await link(h, { key: 'same', domain: 'go.example.com' })).status).toBe(200)
  })

  test('tags: existing tags of the owner, unique, 0-30', async () => {
    const h = createHarness()
    const ids: string[] = []
    for (let i = 0; i < 31; i++) ids.push((await h.call('POST', '/tags', { key: h.keys.member, json: { name: `t${i}` } })).body.id)
    const ok = await link(h, { tags: ids.slice(0, 30) }, undefined, h.keys.member)
    expect(ok.status).toBe(200)
    expect(ok.body.tags).toEqual(ids.slice(0, 30))
    expect((await link(h, { tags: [] }, undefined, h.keys.member)).body.tags).toEqual([])
    expect422(await link(h, { tags: ids }, undefined, h.keys.member), 'linkOptions.tags')
    expect422(await link(h, { tags: [ids[0], ids[0]] }, undefined, h.keys.member), 'linkOptions.tags')
    expect422(await link(h, { tags: ['tag_nope'] }, undefined, h.keys.member), 'linkOptions.tags.0')
    expect422(await link(h, { tags: [ids[0]] }, undefined, h.keys.other), 'linkOptions.tags.0') // another user's tag
  })

  test('comment 0-2000 is returned as comments', async () => {
    const h = createHarness()
    expect((await link(h, { comment: 'c'.repeat(2000) })).body.comments).toBe('c'.repeat(2000))
    expect((await link(h, { comment: '' })).body.comments).toBe('')
    expect422(await link(h, { comment: 'c'.repeat(2001) }), 'linkOptions.comment')
  })

  test('password is hashed, never returned, shown as hasPassword', async () => {
    const h = createHarness()
    const r = await link(h, { password: 'open sesame' })
    expect(r.body.hasPassword).toBe(true)
    expect(JSON.stringify(r.body)).not.toContain('open sesame')
    const row = h.deps.db.query<{ password_hash: string }, [string]>('SELECT password_hash FROM links WHERE id = ?').get(r.body.id)!
    expect(row.password_hash).not.toContain('open sesame')
    expect(await Bun.password.verify('open sesame', row.password_hash)).toBe(true)
    expect422(await link(h, { password: '' }), 'linkOptions.password')
    const short = await link(h, { password: 'abcde' })
    expect422(short, 'linkOptions.password')
    expect(short.body.message).toContain('length must be 6-128')
  })

  test('expiration: time in the future, url 3-2000', async () => {
    const h = createHarness()
    const time = future()
    const r = await link(h, { expiration: { time, url: 'https://example.com/expired' } })
    expect(r.body.expiration).toEqual({ time, url: 'https://example.com/expired' })
    expect422(await link(h, { expiration: { time: '2001-01-01T00:00:00Z', url: 'https://example.com/' } }), 'expiration.time')
    expect422(await link(h, { expiration: { time: 'tomorrow', url: 'https://example.com/' } }), 'expiration.time')
    expect422(await link(h, { expiration: { time } }), 'expiration.url')
    expect422(await link(h, { expiration: { time, url: 'x:' } }), 'expiration.url')
  })

  test('utm values 1-190, option watermark 1-64, previewData 1-256 and image 1-2000', async () => {
    const h = createHarness()
    const utm = { source: 's'.repeat(190), medium: 'm', campaign: 'c', term: 't', content: 'x', ref: 'r' }
    expect((await link(h, { utm })).body.utm).toEqual(utm)
    expect422(await link(h, { utm: { source: 's'.repeat(191) } }), 'linkOptions.utm.source')
    expect422(await link(h, { utm: { source: '' } }), 'linkOptions.utm.source')
    expect422(await link(h, { utm: { campaign: 'x', other: 'y' } }), 'linkOptions.utm.other')
    const option = { isWaterMark: true, watermarkText: 'w'.repeat(64), isScreenshotProtected: true }
    expect((await link(h, { option })).body.option).toEqual(option)
    expect422(await link(h, { option: { watermarkText: 'w'.repeat(65) } }), 'linkOptions.option.watermarkText')
    const img = `https://example.com/${'i'.repeat(2000 - 20)}`
    const previewData = { title: 't'.repeat(256), desc: 'd'.repeat(256), image: img }
    expect((await link(h, { previewData })).body.previewData).toEqual(previewData)
    expect422(await link(h, { previewData: { title: 't'.repeat(257) } }), 'linkOptions.previewData.title')
    expect422(await link(h, { previewData: { desc: 'd'.repeat(257) } }), 'linkOptions.previewData.desc')
    expect422(await link(h, { previewData: { image: `${img}x` } }), 'linkOptions.previewData.image')
  })

  test('Targeting: each targetType with its item shape', async () => {
    const h = createHarness()
    const valid = [
      { targetType: 'device', targetDatas: { ios: 'https://apple.example/', android: 'https://android.example/' } },
      {
        targetType: 'location',
        targetDatas: [
          { country: 'DE', url: 'https://de.example/' },
          { country: 'US', region: 'CA', city: 'San Francisco', url: 'https://sf.example/' },
        ],
      },
      {
        targetType: 'language',
        targetDatas: [
          { language: 'fr', url: 'https://fr.example/' },
          { language: 'pt-BR', url: 'https://br.example/' },
        ],
      },
      { targetType: 'time', targetDatas: [{ start: '09:00', end: '17:00', days: [1, 2, 3, 4, 5], timezone: 'Europe/Paris', url: 'https://open.example/' }] },
      { targetType: 'number', targetDatas: [{ from: 1, to: 100, url: 'https://first100.example/' }] },
    ]
    for (const Targeting of valid) {
      const r = await link(h, { Targeting })
      expect(r.status).toBe(200)
      expect(r.body.Targeting.targetType).toBe(Targeting.targetType)
    }
    const invalid: [unknown, string][] = [
      [{ targetType: 'device', targetDatas: { ios: 'https://a.example/' } }, 'Targeting'],
      [{ targetType: 'device', targetDatas: [{ country: 'DE', url: 'https://x.example/' }] }, 'Targeting.targetDatas'],
      [{ targetType: 'location', targetDatas: [{ country: 'Germany', url: 'https://x.example/' }] }, 'targetDatas.0.country'],
      [{ targetType: 'location', targetDatas: { ios: 'https://a.example/', android: 'https://b.example/' } }, 'Targeting.targetDatas'],
      [{ targetType: 'time', targetDatas: [{ start: '25:00', end: '17:00', url: 'https://x.example/' }] }, 'targetDatas.0.start'],
      [{ targetType: 'time', targetDatas: [{ start: '09:00', end: '17:00', timezone: 'Mars/Olympus', url: 'https://x.example/' }] }, 'timezone'],
      [{ targetType: 'number', targetDatas: [{ from: 10, to: 5, url: 'https://x.example/' }] }, 'targetDatas.0.to'],
      [{ targetType: 'language', targetDatas: [{ language: 'fr', url: 'javascript:x' }] }, 'targetDatas.0.url'],
      [{ targetType: 'weather', targetDatas: [] }, 'Targeting.targetType'],
      [{ targetType: 'number', targetDatas: [] }, 'Targeting.targetDatas'],
    ]
    for (const [Targeting, field] of invalid) expect422(await link(h, { Targeting }), field)
  })

  test('device targeting with extra keys is refused on write, so the owner and admins can still list links', async () => {
    const h = createHarness()
    const Targeting = { targetType: 'device', targetDatas: { ios: 'https://a.example/', android: 'https://b.example/', web: 'https://c.example/' } }
    expect422(await link(h, { Targeting }, 'https://x.example/', h.keys.member), 'targetDatas.web')
    const made = (await link(h, undefined, 'https://x.example/', h.keys.member)).body
    expect422(await h.call('PATCH', `/links/${made.id}`, { key: h.keys.member, json: { linkOptions: { Targeting } } }), 'targetDatas.web')
    for (const key of [h.keys.member, h.keys.admin]) expect((await h.call('GET', '/links', { key })).status).toBe(200)
  })

  test('archived links are hidden from lists unless includeArchived', async () => {
    const h = createHarness()
    const a = await link(h, { archived: true })
    expect(a.body.archived).toBe(true)
    await link(h)
    expect((await h.call('GET', '/links')).body.total).toBe(1)
    expect((await h.call('GET', '/links?includeArchived=true')).body.total).toBe(2)
    expect((await h.call('GET', '/links/count?includeArchived=true')).body.count).toBe(2)
  })

  test('unknown fields anywhere are 422, malformed bodies never 500', async () => {
    const h = createHarness()
    expect422(await h.call('POST', '/links/link', { json: { data: { url: 'https://x.com' }, extra: 1 } }), 'extra')
    expect422(await link(h, { nope: 1 }), 'linkOptions.nope')
    const garbage = [
      null,
      1,
      'x',
      [],
      {},
      { data: null },
      { data: [] },
      { data: 'x' },
      { data: { url: 5 } },
      { data: { url: 'https://x.com' }, linkOptions: 'x' },
      { data: { url: 'https://x.com' }, linkOptions: { tags: 'x' } },
      { data: { url: 'https://x.com' }, linkOptions: { expiration: { time: 5, url: [] } } },
      { data: { url: 'https://x.com' }, linkOptions: { Targeting: { targetType: 'time', targetDatas: [null] } } },
      { data: { url: 'https://x.com' }, qrOptions: 'x' },
    ]
    for (const body of garbage) {
      for (const path of ['/links/link', '/links/upsert/link']) {
        const r = await h.call(path.includes('upsert') ? 'PUT' : 'POST', path, { json: body })
        expect(r.status).toBe(422)
      }
    }
  })
})

describe('upsert, update, bulk update', () => {
  test('upsert creates (201), then returns (200), then updates when options differ', async () => {
    const h = createHarness()
    const first = await h.call('PUT', '/links/upsert/link', { json: { data: { url: 'https://shop.example/' } } })
    expect(first.status).toBe(201)
    const again = await h.call('PUT', '/links/upsert/link', { json: { data: { url: 'https://shop.example' } } })
    expect(again.status).toBe(200)
    expect(again.body).toEqual(first.body)
    const updated = await h.call('PUT', '/links/upsert/link', { json: { data: { url: 'https://shop.example/' }, linkOptions: { comment: 'new' } } })
    expect(updated.status).toBe(200)
    expect(updated.body.id).toBe(first.body.id)
    expect(updated.body.comments).toBe('new')
    // Another user's identical link is not theirs to match.
    const other = await h.call('PUT', '/links/upsert/link', { key: h.keys.member, json: { data: { url: 'https://shop.example/' } } })
    expect(other.status).toBe(201)
    expect(other.body.id).not.toBe(first.body.id)
    // Hosted types match on content.
    const t1 = await h.call('PUT', '/links/upsert/text', { json: { data: { text: 'same' } } })
    const t2 = await h.call('PUT', '/links/upsert/text', { json: { data: { text: 'same' } } })
    expect([t1.status, t2.status]).toEqual([201, 200])
    expect(t2.body.id).toBe(t1.body.id)
    expect422(await h.call('PUT', '/links/upsert/nope', { json: { data: {} } }), 'type')
  })

  test('PATCH updates data of the same variant and options; null clears; absent keeps', async () => {
    const h = createHarness()
    const tag = (await h.call('POST', '/tags', { json: { name: 'x' } })).body
    const made = (await link(h, { comment: 'c', password: 'pw-secret', utm: { source: 'a' }, tags: [tag.id] })).body
    const r = await h.call('PATCH', `/links/${made.id}`, {
      json: { data: { url: 'https://new.example/' }, linkOptions: { key: 'renamed', password: null, utm: null } },
    })
    expect(r.status).toBe(200)
    expect(r.body).toMatchObject({ destination: 'https://new.example/', key: 'renamed', hasPassword: false, utm: null, comments: 'c', tags: [tag.id] })
    expect(r.body.updatedAt > made.updatedAt).toBe(true)
    expect(r.body.createdAt).toBe(made.createdAt)
    expect422(await h.call('PATCH', `/links/${made.id}`, { json: { data: { text: 'x' } } }), 'data')
    const taken = (await link(h, { key: 'taken' })).body
    expect422(await h.call('PATCH', `/links/${made.id}`, { json: { linkOptions: { key: taken.key } } }), 'linkOptions.key')
    expect((await h.call('PATCH', `/links/${made.id}`, { json: { linkOptions: { key: 'renamed' } } })).status).toBe(200) // its own key
    expect((await h.call('PATCH', `/links/${made.id}`, { json: { qrOptions: { correctLevel: 2 } } })).body.qrOptions).toEqual({ correctLevel: 2 })
    expect((await h.call('PATCH', `/links/${made.id}`, { json: { linkOptions: { tags: null } } })).body.tags).toEqual([])
  })

  test('PATCH /links/bulk: ≤100 ids, one type for data, all-or-nothing', async () => {
    const h = createHarness()
    const ids: string[] = []
    for (let i = 0; i < 101; i++) ids.push((await link(h, undefined, `https://example.com/${i}`)).body.id)
    const ok = await h.call('PATCH', '/links/bulk', { json: { linkIds: ids.slice(0, 100), updateData: { linkOptions: { comment: 'bulk' } } } })
    expect(ok.status).toBe(200)
    expect(ok.body.updatedCount).toBe(100)
    expect(ok.body.links.every((l: any) => l.comments === 'bulk')).toBe(true)
    expect422(await h.call('PATCH', '/links/bulk', { json: { linkIds: ids, updateData: { linkOptions: { comment: 'x' } } } }), 'linkIds')
    expect422(await h.call('PATCH', '/links/bulk', { json: { linkIds: [], updateData: {} } }), 'linkIds')
    const text = (await create(h, 'text', { text: 'hi' })).body.id
    expect422(await h.call('PATCH', '/links/bulk', { json: { linkIds: [ids[0], text], updateData: { data: { url: 'https://all.example/' } } } }), 'linkType')
    expect((await h.call('PATCH', '/links/bulk', { json: { linkIds: [ids[0], text], updateData: { linkOptions: { comment: 'mixed ok' } } } })).status).toBe(200)
    expect422(await h.call('PATCH', '/links/bulk', { json: { linkIds: [ids[0], ids[1]], updateData: { linkOptions: { key: 'same' } } } }), 'key')
    // A failure part-way changes nothing: the unknown id aborts before any write.
    const before = (await h.call('GET', `/links/${ids[0]}`)).body
    const failed = await h.call('PATCH', '/links/bulk', { json: { linkIds: [ids[0], 'lnk_unknown'], updateData: { linkOptions: { comment: 'nope' } } } })
    expect(failed.status).toBe(404)
    expect((await h.call('GET', `/links/${ids[0]}`)).body).toEqual(before)
    const data = await h.call('PATCH', '/links/bulk', { json: { linkIds: [ids[0], ids[1]], updateData: { data: { url: 'https://both.example/' } } } })
    expect(data.body.links.map((l: any) => l.destination)).toEqual(['https://both.example/', 'https://both.example/'])
  })

  test('bulk update rolls back when a later link fails inside the transaction', async () => {
    const h = createHarness({ domains: { defaults: ['localhost', 'b.example'] } })
    const a = (await link(h, { key: 'k1' })).body
    const b = (await link(h, { key: 'k2' })).body
    await link(h, { key: 'k2', domain: 'b.example' }) // k2 is taken on b.example
    const r = await h.call('PATCH', '/links/bulk', { json: { linkIds: [a.id, b.id], updateData: { linkOptions: { domain: 'b.example', comment: 'moved' } } } })
    expect422(r, 'linkOptions.key')
    expect((await h.call('GET', `/links/${a.id}`)).body).toMatchObject({ domain: 'localhost', comments: null })
  })
})

describe('list and count', () => {
  async function seed(h: ApiHarness) {
    const tagA = (await h.call('POST', '/tags', { key: h.keys.member, json: { name: 'a' } })).body.id
    const tagB = (await h.call('POST', '/tags', { key: h.keys.member, json: { name: 'b' } })).body.id
    const made = []
    made.push((await link(h, { tags: [tagA], key: 'alpha' }, 'https://one.example/shoes', h.keys.member)).body)
    made.push((await link(h, { tags: [tagB] }, 'https://two.example/hats', h.keys.member)).body)
    made.push((await create(h, 'text', { text: 'Opening hours: nine to five' }, undefined, h.keys.member)).body)
    made.push((await link(h, undefined, 'https://other.example/', h.keys.other)).body)
    return { tagA, tagB, made }
  }

  test('filters, sort, paging and the response shape', async () => {
    const h = createHarness()
    const { tagA, tagB, made } = await seed(h)
    const mine = await h.call('GET', '/links', { key: h.keys.member })
    expect(Object.keys(mine.body).sort()).toEqual(['links', 'page', 'pageSize', 'total'])
    expect(mine.body).toMatchObject({ page: 1, pageSize: 20, total: 3 })
    expect(mine.body.links.map((l: any) => l.id)).toEqual([made[2].id, made[1].id, made[0].id])
    const asc = await h.call('GET', '/links?sortOrder=asc&pageSize=2&page=2', { key: h.keys.member })
    expect(asc.body.links.map((l: any) => l.id)).toEqual([made[2].id])
    expect(asc.body.total).toBe(3)
    const q = async (qs: string, key = h.keys.member) => (await h.call('GET', `/links?${qs}`, { key })).body.links.map((l: any) => l.id)
    expect(await q(`ids=${made[0].id}&ids=${made[3].id}`)).toEqual([made[0].id]) // another user's id is not visible to a member
    expect(await q(`shortLinks=${encodeURIComponent(made[1].shortLink)}`)).toEqual([made[1].id])
    expect(await q('linkType=text')).toEqual([made[2].id])
    expect(await q('linkType=vcard')).toEqual([])
    expect(await q(`tagIds=${tagA}`)).toEqual([made[0].id])
    expect(await q(`tagIds=${tagA}&tagIds=${tagB}&sortOrder=asc`)).toEqual([made[0].id, made[1].id])
    expect(await q('search=HATS')).toEqual([made[1].id])
    expect(await q('search=alp')).toEqual([made[0].id])
    expect(await q('search=nine to')).toEqual([made[2].id])
    expect(await q('search=x%25')).toEqual([])
    expect(await q('domain=localhost')).toHaveLength(3)
    expect(await q('domain=nowhere.example')).toEqual([])
    expect(await q('sortBy=clicks')).toHaveLength(3)
    expect(await q('', h.keys.admin)).toHaveLength(4)
    expect(await q('userIds=usr_bob', h.keys.admin)).toEqual([made[3].id])
    const count = await h.call('GET', '/links/count?search=example', { key: h.keys.member })
    expect(count.body).toEqual({ count: 2 })
    expect((await h.call('GET', '/links/count', { key: h.keys.admin })).body.count).toBe(4)
    // The count takes the list's ids and shortLinks filters too, with the same visibility.
    const counted = async (qs: string, key = h.keys.member) => (await h.call('GET', `/links/count?${qs}`, { key })).body.count
    expect(await counted(`ids=${made[0].id}&ids=${made[3].id}`)).toBe(1)
    expect(await counted(`ids=${made[0].id}&ids=${made[3].id}`, h.keys.admin)).toBe(2)
    expect(await counted(`shortLinks=${encodeURIComponent(made[1].shortLink)}`)).toBe(1)
    expect(await counted(`shortLinks=${encodeURIComponent('https://nowhere.example/x')}`)).toBe(0)
  })

  test('sortBy last_created_at orders by last click, never-clicked last', async () => {
    const h = createHarness()
    const a = (await link(h)).body
    const b = (await link(h)).body
    const c = (await link(h)).body
    h.deps.db.query('UPDATE links SET last_clicked = ?, clicks = ? WHERE id = ?').run(1000, 5, a.id)
    h.deps.db.query('UPDATE links SET last_clicked = ?, clicks = ? WHERE id = ?').run(2000, 1, b.id)
    const ids = async (qs: string) => (await h.call('GET', `/links?${qs}`)).body.links.map((l: any) => l.id)
    expect(await ids('sortBy=last_created_at')).toEqual([b.id, a.id, c.id])
    expect(await ids('sortBy=last_created_at&sortOrder=asc')).toEqual([a.id, b.id, c.id])
    expect(await ids('sortBy=clicks')).toEqual([a.id, b.id, c.id])
    expect(await ids('sortBy=clicks&sortOrder=asc')).toEqual([c.id, b.id, a.id])
  })

  test('query limits at their bounds', async () => {
    const h = createHarness()
    const tags = Array.from({ length: 51 }, (_, i) => `tagIds=tag_${i}`)
    expect((await h.call('GET', `/links?${tags.slice(0, 50).join('&')}`)).status).toBe(200)
    expect422(await h.call('GET', `/links?${tags.join('&')}`), 'tagIds')
    expect422(await h.call('GET', `/links/count?${tags.join('&')}`), 'tagIds')
    const users = Array.from({ length: 101 }, (_, i) => `userIds=usr_${i}`)
    expect((await h.call('GET', `/links?${users.slice(0, 100).join('&')}`)).status).toBe(200)
    expect422(await h.call('GET', `/links?${users.join('&')}`), 'userIds')
    expect((await h.call('GET', '/links?pageSize=100')).status).toBe(200)
    expect422(await h.call('GET', '/links?pageSize=101'), 'pageSize')
    expect422(await h.call('GET', '/links?pageSize=0'), 'pageSize')
    expect422(await h.call('GET', '/links?page=0'), 'page')
    expect422(await h.call('GET', '/links?sortBy=name'), 'sortBy')
    expect422(await h.call('GET', '/links?linkType=pdf'), 'linkType')
    expect422(await h.call('GET', '/links?search='), 'search')
    expect422(await h.call('GET', `/links/count?search=${'s'.repeat(201)}`), 'search')
    expect((await h.call('GET', `/links/count?search=${'s'.repeat(200)}`)).status).toBe(200)
    expect422(await h.call('GET', '/links?includeArchived=maybe'), 'includeArchived')
    expect422(await h.call('GET', '/links?shortLinks=notaurl'), 'shortLinks')
  })

  test('members may filter only by themselves', async () => {
    const h = createHarness()
    expect((await h.call('GET', '/links?userIds=usr_alice', { key: h.keys.member })).status).toBe(200)
    const r = await h.call('GET', '/links?userIds=usr_bob', { key: h.keys.member })
    expect(r.status).toBe(403)
    expect(r.body.code).toBe('forbidden')
    expect((await h.call('GET', '/links/count?userIds=usr_bob', { key: h.keys.member })).status).toBe(403)
  })
})

describe('delete and tombstones', () => {
  test('DELETE returns the id; later GET/PATCH/DELETE are 410; never-existing ids 404', async () => {
    const h = createHarness()
    const l = (await link(h, { key: 'gone' })).body
    expect((await h.call('DELETE', `/links/${l.id}`)).body).toEqual({ id: l.id })
    for (const [m, json] of [['GET'], ['PATCH', { linkOptions: { comment: 'x' } }], ['DELETE']] as const) {
      const r = await h.call(m, `/links/${l.id}`, { json })
      expect(r.status).toBe(410)
      expect(r.body.code).toBe('record_gone')
    }
    expect((await h.call('GET', '/links/lnk_never')).status).toBe(404)
    expect((await h.call('GET', '/links')).body.total).toBe(0)
    expect((await link(h, { key: 'gone' })).status).toBe(200) // the key is free again
  })

  test('DELETE /links/bulk?linkIds=… deletes 1-100, ignores unknown ids', async () => {
    const h = createHarness()
    const ids: string[] = []
    for (let i = 0; i < 3; i++) ids.push((await link(h)).body.id)
    const r = await h.call('DELETE', `/links/bulk?linkIds=${ids[0]},${ids[1]},lnk_unknown`)
    expect(r.status).toBe(200)
    expect(r.body).toEqual({ deletedCount: 2 })
    expect((await h.call('GET', `/links/${ids[0]}`)).status).toBe(410)
    expect((await h.call('DELETE', `/links/bulk?linkIds=${ids[0]}`)).body).toEqual({ deletedCount: 0 })
    const many = Array.from({ length: 101 }, (_, i) => `lnk_${i}`)
    expect((await h.call('DELETE', `/links/bulk?linkIds=${many.slice(0, 100).join(',')}`)).body).toEqual({ deletedCount: 0 })
    expect422(await h.call('DELETE', `/links/bulk?linkIds=${many.join(',')}`), 'linkIds')
    expect422(await h.call('DELETE', '/links/bulk?linkIds=,'), 'linkIds')
    expect422(await h.call('DELETE', '/links/bulk'), 'linkIds')
  })
})

describe('ownership and roles', () => {
  test('members touch only their own links; admins all; readonly reads', async () => {
    const h = createHarness()
    const mine = (await link(h, undefined, undefined, h.keys.member)).body
    expect(mine.userId).toBe('usr_alice')
    for (const [m, path, json] of [
      ['GET', `/links/${mine.id}`],
      ['PATCH', `/links/${mine.id}`, { linkOptions: { comment: 'x' } }],
      ['DELETE', `/links/${mine.id}`],
      ['PATCH', '/links/bulk', { linkIds: [mine.id], updateData: { linkOptions: { comment: 'x' } } }],
      ['DELETE', `/links/bulk?linkIds=${mine.id}`],
    ] as const) {
      const r = await h.call(m, path, { key: h.keys.other, json })
      expect(r.status).toBe(403)
    }
    expect((await h.call('GET', `/links/${mine.id}`)).status).toBe(200)
    expect((await h.call('PATCH', `/links/${mine.id}`, { json: { linkOptions: { comment: 'by admin' } } })).body.comments).toBe('by admin')
    expect((await h.call('GET', `/links/${mine.id}`, { key: h.keys.readonly })).status).toBe(403) // readonly is another user here
    expect((await h.call('GET', '/links', { key: h.keys.readonly })).status).toBe(200)
    expect((await link(h, undefined, undefined, h.keys.readonly)).status).toBe(403)
    expect((await h.call('DELETE', `/links/${mine.id}`, { key: h.keys.readonly })).status).toBe(403)
    expect((await h.call('GET', '/links', { key: null })).status).toBe(401)
    expect((await link(h, undefined, undefined, 'sk_bad')).status).toBe(401)
  })
})

test('the OpenAPI document shows every link field with its limits', async () => {
  const h = createHarness()
  const doc = (await h.call('GET', '/openapi.json', { key: null })).body
  const create = doc.paths['/links/{type}'].post
  const body = create.requestBody.content['application/json'].schema
  const options = body.properties.linkOptions.anyOf[0].properties
  expect(options.key).toMatchObject({ minLength: 1, maxLength: 190 })
  expect(options.comment.anyOf[0]).toMatchObject({ maxLength: 2000 })
  expect(options.tags.anyOf[0]).toMatchObject({ maxItems: 30, uniqueItems: true })
  expect(body.properties.data.anyOf.length).toBe(17)
  // The GS1 product's data, with its rules, is one of them.
  const gs1 = body.properties.data.anyOf.find((v: any) => v.properties?.gtin)
  expect(gs1.properties.gtin.pattern).toBe('^([0-9]{8}|[0-9]{12,14})$')
  expect(gs1.properties.lots).toMatchObject({ maxItems: 1000 })
  expect(gs1.properties.links.items.properties.linkType.anyOf.map((x: any) => x.const)).toContain('gs1:recipeInfo')
  const list = doc.paths['/links'].get.parameters.map((p: any) => p.name)
  expect(list).toEqual(
    expect.arrayContaining([
      'ids',
      'shortLinks',
      'domain',
      'linkType',
      'tagIds',
      'search',
      'userIds',
      'includeArchived',
      'sortBy',
      'sortOrder',
      'page',
      'pageSize',
    ]),
  )
  for (const path of ['/links/upsert/{type}', '/links/{id}', '/links/bulk', '/links/count']) expect(doc.paths[path]).toBeDefined()
})
