/**
 * Link health through the API and the redirect, in process, against a real destination server
 * on loopback: POST /links/{id}/health, the record's `health`, the `health` filter, the
 * fallback URL, the change hook (link.broken / link.recovered), who may ask, and the
 * private-address rule.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { type Destination, startDestination } from '../../test/helpers/destination'
import { type ApiHarness, createHarness } from '../../test/helpers/in-process'
import { until } from '../../test/helpers/poll'
import type { HealthStatus, LinkRecord } from '../links'
import { metrics } from '../metrics'
import { createRedirectHandler } from '../redirect'

let d: Destination
let h: ApiHarness
const changes: string[] = []
beforeAll(() => {
  d = startDestination()
  h = createHarness({ health: { allowPrivateNetworks: true, timeout: '1s' } })
  h.deps.linkHealth.onHealthChange((link: LinkRecord, from: HealthStatus, to: HealthStatus) => {
    changes.push(`${link.key} ${from}→${to} ${link.health?.status}`)
  })
})
afterAll(() => d.stop())

/** A series' value in the process's Prometheus text. */
const metric = async (series: string) => Number(new RegExp(`^${series.replace(/[{}]/g, '\\$&')} (\\S+)$`, 'm').exec(await metrics.render())?.[1] ?? 0)

const BROWSER = 'Mozilla/5.0 (X11; Linux x86_64; rv:125.0) Gecko/20100101 Firefox/125.0'
const IPHONE = 'Mozilla/5.0 (iPhone; CPU iPhone OS 17_4 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4 Mobile/15E148 Safari/604.1'

function redirects() {
  const { deps } = h
  const handler = createRedirectHandler({
    settings: deps.settings,
    findLiveRow: deps.links.findLiveRow,
    domainOf: (host) => deps.domains.lookup(host),
    storedClicks: () => 0,
    recorder: deps.recorder,
    geo: deps.geo,
    passwords: deps.passwords,
    renderHosted: () => new Response('hosted'),
    serveFile: () => null,
    brokenUrlsOf: deps.linkHealth.brokenUrlsOf,
  })
  deps.links.onChange((c) => handler.invalidate(c.domain, c.key))
  deps.linkHealth.onInvalidate((l) => handler.invalidate(l.domain, l.key))
  return async (target: string, ua = BROWSER) => {
    const [path, search = ''] = `/${target}`.split('?') as [string, string?]
    const answer = await handler.handle(
      new Request(`https://localhost/${target}`, { headers: { 'user-agent': ua } }),
      path,
      search,
      'localhost',
      () => '192.0.2.7',
    )
    return answer.headers.get('location')
  }
}

describe('link health through the API', () => {
  test('a link goes broken after 2 failed checks, serves its fallback, and recovers after 1 pass; the hook hears each change once', async () => {
    const visit = redirects()
    const url = `${d.origin}/shop`
    const created = await h.call('POST', '/links/link', {
      key: h.keys.member,
      json: { data: { url }, linkOptions: { key: 'shop', healthFallbackUrl: 'https://brand.example/sorry' } },
    })
    expect(created.status).toBe(200)
    const id = created.body.id
    expect(created.body.healthFallbackUrl).toBe('https://brand.example/sorry')
    expect(created.body.health).toMatchObject({ status: 'unknown', checkedAt: null, since: created.body.createdAt, brokenUrls: [] })
    const check = async () => (await h.call('POST', `/links/${id}/health`, { key: h.keys.member })).body
    const failedBefore = await metric('shortlink_link_health_checks_total{result="fail"}')
    const brokeBefore = await metric('shortlink_link_health_changes_total{to="broken"}')

    const ok = await check()
    expect(ok).toMatchObject({ status: 'ok', brokenUrls: [], urls: [{ url, status: 'ok', httpStatus: 200, error: null }] })
    expect(Date.parse(ok.checkedAt)).toBeGreaterThan(Date.parse(created.body.createdAt) - 1)
    expect(await visit('shop')).toBe(url)

    d.set('/shop', 'down')
    expect(await check()).toMatchObject({ status: 'ok', urls: [{ status: 'ok', httpStatus: 503 }] })
    const broken = await check()
    expect(broken).toMatchObject({ status: 'broken', brokenUrls: [{ url, httpStatus: 503, error: null }], urls: [{ status: 'broken' }] })
    expect((await h.call('GET', `/links/${id}`)).body.health).toEqual(broken)
    expect(await visit('shop')).toBe('https://brand.example/sorry')
    expect(await metric('shortlink_link_health_checks_total{result="fail"}')).toBe(failedBefore + 2)
    expect(await metric('shortlink_link_health_changes_total{to="broken"}')).toBe(brokeBefore + 1)
    const listed = await h.call('GET', '/links?health=broken')
    expect(listed.body.links.map((l: LinkRecord) => l.id)).toEqual([id])
    expect((await h.call('GET', '/links/count?health=ok')).body.count).toBe(0)

    d.set('/shop', 'up')
    expect(await check()).toMatchObject({ status: 'ok', brokenUrls: [] })
    expect(await visit('shop')).toBe(url)
    // The hook runs after the write, off the request.
    const heard = await until(
      'three changes',
      async () => changes.filter((c) => c.startsWith('shop ')),
      (c) => c.length >= 3,
    )
    expect(heard).toEqual(['shop unknown→ok ok', 'shop ok→broken broken', 'shop broken→ok ok'])
    // The webhook events of the changes, in the outbox: once each, with the record as it was then.
    const announced = await until(
      'link.broken and link.recovered in the outbox',
      async () =>
        h.deps.db
          .query<{ type: string; link_id: string; data: string }, []>(
            "SELECT type, link_id, data FROM events WHERE type IN ('link.broken', 'link.recovered') ORDER BY seq",
          )
          .all()
          .filter((e) => e.link_id === id),
      (e) => e.length >= 2,
    )
    expect(announced.map((e) => [e.type, (JSON.parse(e.data) as LinkRecord).health?.status])).toEqual([
      ['link.broken', 'broken'],
      ['link.recovered', 'ok'],
    ])
    expect(d.requests('/shop').every((r) => r.userAgent === `shortlink-health/1 (+${h.deps.settings.baseUrl})`)).toBe(true)
  })

  test('only the URL a visit resolves to decides: a broken targeting URL sends its visitors to the fallback, others to theirs', async () => {
    const visit = redirects()
    d.set('/ios-gone', 'gone')
    const made = await h.call('POST', '/links/link', {
      json: {
        data: { url: `${d.origin}/web` },
        linkOptions: {
          key: 'apps',
          healthFallbackUrl: 'https://brand.example/app',
          Targeting: { targetType: 'device', targetDatas: { ios: `${d.origin}/ios-gone`, android: `${d.origin}/android` } },
        },
      },
    })
    for (let i = 0; i < 2; i++) await h.call('POST', `/links/${made.body.id}/health`)
    const health = (await h.call('GET', `/links/${made.body.id}`)).body.health
    expect(health.status).toBe('broken')
    expect(health.brokenUrls).toEqual([{ url: `${d.origin}/ios-gone`, httpStatus: 410, error: null }])
    expect(health.urls.map((u: { status: string }) => u.status)).toEqual(['ok', 'broken', 'ok'])
    expect(await visit('apps')).toBe(`${d.origin}/web`)
    expect(await visit('apps', IPHONE)).toBe('https://brand.example/app')
  })

  test("a GS1 product: every link and lot URL is checked; a broken one sends the resolver's visits for it to the fallback", async () => {
    const visit = redirects()
    d.set('/recipes-gone', 'gone')
    const made = await h.call('POST', '/links/gs1', {
      json: {
        data: {
          gtin: '09506000134352',
          url: `${d.origin}/oil`,
          links: [{ linkType: 'gs1:recipeInfo', url: `${d.origin}/recipes-gone` }],
          lots: [{ lot: 'ABC', url: `${d.origin}/lot-abc` }],
        },
        linkOptions: { healthFallbackUrl: 'https://brand.example/products' },
      },
    })
    expect(made.status).toBe(200)
    for (let i = 0; i < 2; i++) await h.call('POST', `/links/${made.body.id}/health`)
    const health = (await h.call('GET', `/links/${made.body.id}`)).body.health
    expect(health.urls.map((u: { url: string; status: string }) => `${u.url.slice(d.origin.length)} ${u.status}`)).toEqual([
      '/oil ok',
      '/recipes-gone broken',
      '/lot-abc ok',
    ])
    expect(health.status).toBe('broken')
    expect(await visit('01/09506000134352?linkType=gs1:recipeInfo')).toBe('https://brand.example/products')
    expect(await visit('01/09506000134352')).toBe(`${d.origin}/oil`)
    expect(await visit('01/09506000134352/10/ABC')).toBe(`${d.origin}/lot-abc`)
  })

  test('who may check: owners and admins; readonly keys and other members are refused; types without a URL destination are 422', async () => {
    const mine = (await h.call('POST', '/links/link', { key: h.keys.member, json: { data: { url: `${d.origin}/mine` } } })).body
    expect((await h.call('POST', `/links/${mine.id}/health`, { key: h.keys.other })).status).toBe(403)
    expect((await h.call('POST', `/links/${mine.id}/health`, { key: h.keys.readonly })).status).toBe(403)
    expect((await h.call('POST', `/links/${mine.id}/health`)).status).toBe(200)
    expect((await h.call('POST', '/links/lnk_nope/health')).status).toBe(404)
    const text = (await h.call('POST', '/links/text', { json: { data: { text: 'hi' } } })).body
    expect(text.health).toBeNull()
    const refused = await h.call('POST', `/links/${text.id}/health`)
    expect(refused.status).toBe(422)
    expect(refused.body.message).toContain('only link, google-form and gs1 links have health')
    await h.call('DELETE', `/links/${mine.id}`)
    expect((await h.call('POST', `/links/${mine.id}/health`)).status).toBe(410)
  })

  test('healthFallbackUrl: http(s) only, on types with health only; null clears it', async () => {
    const bad = await h.call('POST', '/links/link', { json: { data: { url: 'https://a.example/' }, linkOptions: { healthFallbackUrl: 'ftp://x.example/' } } })
    expect(bad.status).toBe(422)
    expect(bad.body.message).toContain('healthFallbackUrl')
    const onText = await h.call('POST', '/links/text', { json: { data: { text: 'x' }, linkOptions: { healthFallbackUrl: 'https://b.example/' } } })
    expect(onText.status).toBe(422)
    expect(onText.body.message).toBe("'linkOptions.healthFallbackUrl' applies to link, google-form and gs1 links only (this link is text)")
    const made = (
      await h.call('POST', '/links/link', { json: { data: { url: 'https://a.example/' }, linkOptions: { healthFallbackUrl: 'https://B.example' } } })
    ).body
    expect(made.healthFallbackUrl).toBe('https://b.example/')
    const cleared = await h.call('PATCH', `/links/${made.id}`, { json: { linkOptions: { healthFallbackUrl: null } } })
    expect(cleared.body.healthFallbackUrl).toBeNull()
  })
})

describe('a check on demand while a scheduled check is under way', () => {
  test('"Check now" after the destination came back answers what it says now, not what the earlier check heard', async () => {
    const scheduled = createHarness({ health: { allowPrivateNetworks: true, timeout: '5s', every: '1h' } })
    scheduled.deps.linkHealth.start()
    try {
      let release!: () => void
      d.set('/held', { heldUntil: new Promise<void>((r) => (release = r)), after: 'down' })
      const made = (await scheduled.call('POST', '/links/link', { json: { data: { url: `${d.origin}/held` } } })).body
      // The new link's URL is checked at once by the scheduled checker; its answer (503) is held back.
      await until(
        'the scheduled check asked',
        async () => d.requests('/held').length,
        (n) => n === 1,
      )
      d.set('/held', 'up')
      const asked = scheduled.call('POST', `/links/${made.id}/health`)
      release()
      const answer = (await asked).body
      expect(answer).toMatchObject({ status: 'ok', urls: [{ status: 'ok', httpStatus: 200 }] })
      expect(d.requests('/held').length).toBe(2)
    } finally {
      await scheduled.deps.linkHealth.stop()
    }
  })
})

describe('private destinations', () => {
  test('refused without [health] allowPrivateNetworks: nothing is requested, the URL stays unknown and says why', async () => {
    const strict = createHarness({ health: { timeout: '1s' } })
    const before = d.requests().length
    const made = (await strict.call('POST', '/links/link', { json: { data: { url: `${d.origin}/inside` } } })).body
    const answer = (await strict.call('POST', `/links/${made.id}/health`)).body
    expect(answer).toMatchObject({ status: 'unknown', brokenUrls: [], urls: [{ status: 'unknown', httpStatus: null }] })
    expect(answer.urls[0].error).toContain('resolves to a private, loopback or link-local address')
    expect(answer.checkedAt).not.toBeNull()
    expect(d.requests().length).toBe(before)
  })
})
