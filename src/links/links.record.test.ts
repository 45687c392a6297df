import { describe, expect, test } from 'bun:test'
import { createHarness } from '../../test/helpers/in-process'
import type { LinkHealth } from './links.health'
import { linkRecordOf, storedLinkViewOf } from './links.record'

const future = new Date(Date.now() + 86_400_000).toISOString()

describe('links.record: the one decoder of a stored row', () => {
  test('a row decodes to the record GET /links/{id} answers, and to the redirect view of the same link', async () => {
    const h = createHarness()
    const tags = [
      (await h.call('POST', '/tags', { key: h.keys.member, json: { name: 'b-second' } })).body.id,
      (await h.call('POST', '/tags', { key: h.keys.member, json: { name: 'a-first' } })).body.id,
    ]
    const linkOptions = {
      key: 'decoded',
      tags,
      comment: 'round trip',
      password: 'letmein',
      expiration: { time: future, url: 'https://after.example/gone' },
      utm: { source: 'qr', campaign: 'spring' },
      option: { isWaterMark: true },
      previewData: { title: 'Card', desc: 'Desc', image: 'https://img.example/card.png' },
      Targeting: { targetType: 'device' as const, targetDatas: { ios: 'https://apps.example/ios', android: 'https://apps.example/android' } },
    }
    const created = await h.call('POST', '/links/link', {
      key: h.keys.member,
      json: { data: { url: 'https://dest.example/page?a=1' }, linkOptions, qrOptions: { patterns: { body: { style_id: 'dots' } } } },
    })
    expect(created.status).toBe(200)
    const answered = (await h.call('GET', `/links/${created.body.id}`, { key: h.keys.member })).body

    const row = h.deps.links.findLiveRow('localhost', 'decoded')!
    const health = (h.deps.linkHealth.healthOf([row]) as Map<number, LinkHealth | null>).get(row.seq)!
    expect(linkRecordOf(row, tags, h.deps.settings, health)).toEqual(answered)
    expect(answered.health).toMatchObject({
      status: 'unknown',
      checkedAt: null,
      brokenUrls: [],
      urls: ['https://dest.example/page?a=1', 'https://apps.example/ios', 'https://apps.example/android'].map((url) => ({ url, status: 'unknown' })),
    })
    expect(answered).toMatchObject({ tags, comments: 'round trip', hasPassword: true, utm: linkOptions.utm, Targeting: linkOptions.Targeting })

    expect(storedLinkViewOf(row)).toEqual({
      seq: row.seq,
      id: created.body.id,
      domain: 'localhost',
      key: 'decoded',
      linkType: 'link',
      destination: 'https://dest.example/page?a=1',
      hosted: false,
      expiresAt: Date.parse(future),
      expirationUrl: 'https://after.example/gone',
      passwordHash: row.password_hash,
      utm: { source: 'qr', campaign: 'spring' },
      previewData: linkOptions.previewData,
      Targeting: linkOptions.Targeting,
      appStores: null,
      trackConversion: false,
      healthFallbackUrl: null,
      test: null,
    })
    expect(row.password_hash).toStartWith('$argon2')
  })

  test('cleared options decode as null; app-stores links carry their store URLs; hosted types are hosted', async () => {
    const h = createHarness()
    const plain = (await h.call('POST', '/links/link', { json: { data: { url: 'https://x.example/' }, linkOptions: { key: 'plain', utm: { source: 'qr' } } } }))
      .body
    await h.call('PATCH', `/links/${plain.id}`, { json: { linkOptions: { utm: null } } })
    const plainRow = h.deps.links.findLiveRow('localhost', 'plain')!
    expect(JSON.parse(plainRow.options)).toEqual({})
    const health = (h.deps.linkHealth.healthOf([plainRow]) as Map<number, LinkHealth | null>).get(plainRow.seq)!
    expect(linkRecordOf(plainRow, [], h.deps.settings, health)).toEqual((await h.call('GET', `/links/${plain.id}`)).body)
    expect(storedLinkViewOf(plainRow)).toMatchObject({
      utm: null,
      previewData: null,
      Targeting: null,
      expirationUrl: null,
      passwordHash: null,
      appStores: null,
    })

    const apps = { ios: 'https://apps.apple.com/app/id1', android: 'https://play.google.com/store/apps/details?id=x' }
    await h.call('POST', '/links/app-stores', { json: { data: { ...apps, title: 'App' }, linkOptions: { key: 'apps' } } })
    expect(storedLinkViewOf(h.deps.links.findLiveRow('localhost', 'apps')!)).toMatchObject({ hosted: true, linkType: 'app-stores', appStores: apps })
  })
})
