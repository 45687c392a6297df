/**
 * The redirect server through real sockets: every branch of the decision, the bot
 * page, targeting by device, location (client IPs via trustProxy), language, time and
 * visit number, and counting without loss across SIGTERM.
 */

import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { samplePdf } from '../src/files/files.samples'
import { CITY_DB, UA } from './helpers/agents'
import { queryStore, startServer, type TestServer } from './helpers/server'

let s: TestServer
const origin = () => `https://localhost:${s.httpsPort}`
const visit = (path: string, opts: { ua?: string; ip?: string; headers?: Record<string, string>; method?: string; body?: BodyInit } = {}) =>
  s.fetch(`${origin()}${path}`, {
    method: opts.method ?? 'GET',
    body: opts.body,
    headers: { 'user-agent': opts.ua ?? UA.windows, ...(opts.ip ? { 'x-forwarded-for': opts.ip } : {}), ...opts.headers },
  })
const make = async (type: string, data: unknown, linkOptions: Record<string, unknown>) => {
  const r = await s.api(`/links/${type}`, { method: 'POST', json: { data, linkOptions } })
  if (r.status !== 200) throw new Error(`create failed: ${r.status} ${await r.text()}`)
  return (await r.json()) as any
}
const linkByKey = async (key: string) =>
  ((await (await s.api(`/links?search=${key}&includeArchived=true`)).json()) as any).links.find((l: any) => l.key === key)

beforeAll(async () => {
  s = await startServer({ toml: `trustProxy = ["127.0.0.1", "::1"]\n[geoip]\ndatabase = "${CITY_DB}"\n` })
})
afterAll(async () => {
  await s?.stop()
})

describe('decision branches over HTTPS', () => {
  test('a link redirects 302 with UTM merged and ?qr=1 dropped', async () => {
    await make('link', { url: 'https://dest.example/p?a=1' }, { key: 'plain', utm: { source: 'poster', campaign: 'fall' } })
    const r = await visit('/plain?qr=1&x=2')
    expect(r.status).toBe(302)
    expect(r.headers.get('location')).toBe('https://dest.example/p?a=1&x=2&utm_source=poster&utm_campaign=fall')
  })

  test('unknown key: 404 page; root: the service home; robots.txt and favicon', async () => {
    const r = await visit('/no-such-key')
    expect(r.status).toBe(404)
    expect(await r.text()).toContain('Link not found')
    expect((await visit('/')).headers.get('location')).toBe(`${s.baseUrl}/docs`)
    expect(await (await visit('/robots.txt')).text()).toContain('Disallow: /')
    expect((await visit('/favicon.ico')).status).toBe(204)
    expect((await visit('/.well-known/assetlinks.json')).status).toBe(404) // a default domain has none
  })

  test('deleted link: same as unknown; a write is seen by the very next visit', async () => {
    const l = await make('link', { url: 'https://first.example/' }, { key: 'changing' })
    expect((await visit('/changing')).headers.get('location')).toBe('https://first.example/')
    await s.api(`/links/${l.id}`, { method: 'PATCH', json: { data: { url: 'https://second.example/' } } })
    expect((await visit('/changing')).headers.get('location')).toBe('https://second.example/')
    await s.api(`/links/${l.id}`, { method: 'DELETE' })
    expect((await visit('/changing')).status).toBe(404)
    await make('link', { url: 'https://third.example/' }, { key: 'changing' }) // the negative cache is dropped on create
    expect((await visit('/changing')).headers.get('location')).toBe('https://third.example/')
  })

  test('expired: visitors go to expiration.url; the files of an expired hosted link answer the 410 page', async () => {
    const form = new FormData()
    form.append('file', new Blob([samplePdf('Summer menu') as BlobPart]), 'summer.pdf')
    const file = (await (await s.api('/files', { method: 'POST', body: form })).json()) as any
    const at = Date.now() + 1000
    await make('link', { url: 'https://live.example/' }, { key: 'exp-url', expiration: { time: new Date(at).toISOString(), url: 'https://over.example/' } })
    await make('document', { fileId: file.id }, { key: 'exp-doc', expiration: { time: new Date(at).toISOString(), url: 'https://over.example/' } })
    expect((await visit('/exp-url')).headers.get('location')).toBe('https://live.example/')
    expect((await visit(`/exp-doc/file/${file.id}`)).status).toBe(200)
    // Expiry is the clock passing `at`: poll until the server's clock has (bounded), then check the answer.
    let location: string | null = null
    for (const deadline = at + 10_000; Date.now() < deadline; await Bun.sleep(50)) {
      location = (await visit('/exp-url')).headers.get('location')
      if (location !== 'https://live.example/') break
    }
    expect(location).toBe('https://over.example/')
    const gone = await visit(`/exp-doc/file/${file.id}`)
    expect(gone.status).toBe(410)
    expect(await gone.text()).toContain('This link has expired')
  })

  test('password: form, wrong password says so, correct sets a cookie scoped to the link, attempts limited', async () => {
    await make('link', { url: 'https://secret.example/' }, { key: 'locked', password: 'letmein' })
    const form = await visit('/locked')
    expect(form.status).toBe(200)
    expect(await form.text()).toContain('<form method="post"')
    const form2 = { 'content-type': 'application/x-www-form-urlencoded' }
    const wrong = await visit('/locked', { method: 'POST', body: 'password=nope', headers: form2 })
    expect(wrong.status).toBe(403)
    expect(await wrong.text()).toContain('Wrong password')
    const right = await visit('/locked?qr=1', { method: 'POST', body: 'password=letmein', headers: form2 })
    expect(right.status).toBe(303)
    expect(right.headers.get('location')).toBe('/locked?qr=1')
    const cookie = right.headers.get('set-cookie')!
    expect(cookie).toContain('Path=/locked')
    expect(cookie).toContain('HttpOnly')
    const through = await visit('/locked', { headers: { cookie: cookie.split(';')[0]! } })
    expect(through.status).toBe(302)
    expect(through.headers.get('location')).toBe('https://secret.example/')
    expect((await visit('/locked', { headers: { cookie: 'slpw_1=123.forged' } })).status).toBe(200)
    let last = 0
    for (let i = 0; i < 11; i++) last = (await visit('/locked', { method: 'POST', body: 'password=guess', headers: form2, ip: '203.0.113.9' })).status
    expect(last).toBe(429)
  })

  test('social-preview bots get og: tags and are not counted; other bots are redirected uncounted', async () => {
    await make(
      'link',
      { url: 'https://shop.example/' },
      { key: 'social', previewData: { title: 'Big <Sale>', desc: 'Today only', image: 'https://img.example/s.png' } },
    )
    const page = await visit('/social', { ua: UA.facebook })
    expect(page.status).toBe(200)
    const html = await page.text()
    expect(html).toContain('<meta property="og:title" content="Big &lt;Sale&gt;">')
    expect(html).toContain('<meta property="og:image" content="https://img.example/s.png">')
    expect(html).toContain('twitter:card')
    expect((await visit('/social', { ua: UA.googlebot })).status).toBe(302)
    await s.clicksFlushed()
    expect((await linkByKey('social')).clicks).toBe(0)
  })

  test('hosted types render their landing page', async () => {
    await make('text', { text: 'Opening hours: 9 to 5' }, { key: 'hours' })
    const r = await visit('/hours')
    expect(r.status).toBe(200)
    expect(r.headers.get('content-type')).toContain('text/html')
    expect(await r.text()).toContain('Opening hours: 9 to 5')
  })
})

describe('hosted files behind the link checks', () => {
  test('a document link: page and file pass expiry and password checks; a used file cannot be deleted', async () => {
    const form = new FormData()
    form.append('file', new Blob([samplePdf('Menu of the day') as BlobPart], { type: 'application/octet-stream' }), 'menu.pdf')
    const up = (await (await s.api('/files', { method: 'POST', body: form })).json()) as any
    expect(up.id).toMatch(/^fil_/)
    const link = await make('document', { fileId: up.id, title: 'Menu' }, { key: 'doc', password: 'pdfpass' })
    const page = await visit('/doc')
    expect(page.status).toBe(200)
    const raw = await visit(`/doc/file/${up.id}`)
    expect(raw.status).toBe(403) // not reachable by its raw URL without the password
    const ok = await visit('/doc', { method: 'POST', body: 'password=pdfpass', headers: { 'content-type': 'application/x-www-form-urlencoded' } })
    const cookie = ok.headers.get('set-cookie')!.split(';')[0]!
    const shown = await visit('/doc', { headers: { cookie } })
    expect(shown.status).toBe(200)
    expect(await shown.text()).toContain(`/doc/file/${up.id}`)
    const bytes = await visit(`/doc/file/${up.id}`, { headers: { cookie, range: 'bytes=0-4' } })
    expect(bytes.status).toBe(206)
    expect(await bytes.text()).toBe('%PDF-')
    expect((await visit('/doc/file/fil_other', { headers: { cookie } })).status).toBe(404) // only the link's own file
    const del = await s.api(`/files/${up.id}`, { method: 'DELETE' })
    expect(del.status).toBe(422)
    await s.api(`/links/${link.id}`, { method: 'DELETE' })
    expect((await visit(`/doc/file/${up.id}`, { headers: { cookie } })).status).toBe(404)
    expect((await s.api(`/files/${up.id}`, { method: 'DELETE' })).status).toBe(200)
  })

  test("a link may only show its owner's files", async () => {
    const key = await s.keyFor('mallory', 'member')
    const form = new FormData()
    form.append('file', new Blob([samplePdf('private') as BlobPart]), 'private.pdf')
    const up = (await (await s.api('/files', { method: 'POST', body: form })).json()) as any
    const r = await s.api('/links/document', { key, method: 'POST', json: { data: { fileId: up.id } } })
    expect(r.status).toBe(422)
    expect(((await r.json()) as any).message).toContain('data.fileId')
  })
})

describe('targeting over HTTPS', () => {
  test('device', async () => {
    await make(
      'link',
      { url: 'https://web.example/' },
      {
        key: 'get-app',
        Targeting: { targetType: 'device', targetDatas: { ios: 'https://apps.apple.com/app/1', android: 'https://play.google.com/store/apps/details?id=x' } },
      },
    )
    expect((await visit('/get-app', { ua: UA.iphone })).headers.get('location')).toBe('https://apps.apple.com/app/1')
    expect((await visit('/get-app', { ua: UA.pixel })).headers.get('location')).toBe('https://play.google.com/store/apps/details?id=x')
    expect((await visit('/get-app', { ua: UA.windows })).headers.get('location')).toBe('https://web.example/')
  })

  test('location from the client IP (X-Forwarded-For from a trusted proxy): country, region, city', async () => {
    await make(
      'link',
      { url: 'https://world.example/' },
      {
        key: 'geo',
        Targeting: {
          targetType: 'location',
          targetDatas: [
            { country: 'US', region: 'California', city: 'Mountain View', url: 'https://mv.example/' },
            { country: 'US', url: 'https://us.example/' },
            { country: 'DE', region: 'Bavaria', url: 'https://bavaria.example/' },
          ],
        },
      },
    )
    expect((await visit('/geo', { ip: '8.8.8.8' })).headers.get('location')).toBe('https://mv.example/')
    expect((await visit('/geo', { ip: '2.2.2.2' })).headers.get('location')).toBe('https://us.example/')
    expect((await visit('/geo', { ip: '5.9.0.1' })).headers.get('location')).toBe('https://bavaria.example/')
    expect((await visit('/geo', { ip: '1.1.1.1' })).headers.get('location')).toBe('https://world.example/')
  })

  test('language from Accept-Language q-values', async () => {
    await make(
      'link',
      { url: 'https://en.example/' },
      {
        key: 'lang',
        Targeting: {
          targetType: 'language',
          targetDatas: [
            { language: 'fr', url: 'https://fr.example/' },
            { language: 'de', url: 'https://de.example/' },
          ],
        },
      },
    )
    expect((await visit('/lang', { headers: { 'accept-language': 'de;q=0.5, fr-CA;q=0.9, en;q=0.8' } })).headers.get('location')).toBe('https://fr.example/')
    expect((await visit('/lang', { headers: { 'accept-language': 'es' } })).headers.get('location')).toBe('https://en.example/')
  })

  test('time windows in a time zone', async () => {
    const always = { start: '00:00', end: '24:00', timezone: 'Asia/Tokyo', url: 'https://now.example/' }
    await make('link', { url: 'https://never.example/' }, { key: 'time', Targeting: { targetType: 'time', targetDatas: [always] } })
    expect((await visit('/time')).headers.get('location')).toBe('https://now.example/')
  })

  test('number: the first 3 counted visits win, counted atomically under concurrency', async () => {
    await make(
      'link',
      { url: 'https://late.example/' },
      { key: 'first3', Targeting: { targetType: 'number', targetDatas: [{ from: 1, to: 3, url: 'https://early.example/' }] } },
    )
    const results = await Promise.all(Array.from({ length: 10 }, () => visit('/first3').then((r) => r.headers.get('location'))))
    expect(results.filter((l) => l === 'https://early.example/')).toHaveLength(3)
    expect(results.filter((l) => l === 'https://late.example/')).toHaveLength(7)
    expect((await visit('/first3', { ua: UA.googlebot })).headers.get('location')).toBe('https://late.example/')
  })
})

describe('counting', () => {
  test('500 visits with mixed agents, SIGTERM, restart: clicks is exactly 500 with the right dimensions', async () => {
    const t = await startServer({ toml: `trustProxy = ["127.0.0.1"]\n[geoip]\ndatabase = "${CITY_DB}"\n` })
    const mk = await t.api('/links/link', {
      method: 'POST',
      json: { data: { url: 'https://count.example/' }, linkOptions: { key: 'count', utm: { source: 'flyer', medium: 'print' } } },
    })
    const link = (await mk.json()) as any
    const agents = [UA.iphone, UA.pixel, UA.windows, UA.mac, UA.firefox]
    const ips = ['8.8.8.8', '5.9.0.1', '81.2.69.142', '1.1.1.1', '2.2.2.2']
    const url = `https://localhost:${t.httpsPort}/count`
    for (let batch = 0; batch < 10; batch++) {
      await Promise.all(
        Array.from({ length: 50 }, (_, j) => {
          const i = batch * 50 + j
          return t.fetch(i % 2 ? `${url}?qr=1` : url, {
            headers: { 'user-agent': agents[i % 5]!, 'x-forwarded-for': ips[i % 5]!, referer: i % 3 === 0 ? 'https://news.example.org/article?id=7' : '' },
          })
        }),
      )
    }
    await t.fetch(url, { headers: { 'user-agent': UA.googlebot } }) // not counted
    expect(await t.stop('SIGTERM')).toBe(0)
    // The link's count from the store itself (its SQLite file, or its PostgreSQL database); its visits from the
    // raw events export of a server started again on the same store (on SQLite the events live in DuckDB).
    // On PostgreSQL a link's counters are in link_clicks (its migration 0010).
    const counters = t.storeUrl ? 'link_clicks c JOIN links l ON l.seq = c.seq' : 'links l'
    const clicks = (await queryStore<{ clicks: number }>(t, `SELECT CAST(clicks AS integer) AS clicks FROM ${counters} WHERE l.id = '${link.id}'`))[0]?.clicks
    expect(clicks).toBe(500)
    const again = await startServer({ dir: t.dir })
    const exported = await again.api(`/statistics/events?format=ndjson&linkId=${link.id}&interval=all`, { key: t.adminKey })
    expect(exported.status).toBe(200)
    const dims = (await exported.text())
      .split('\n')
      .filter(Boolean)
      .map((line) => JSON.parse(line))
    const total = dims.reduce((a: number, r: any) => a + r.count, 0)
    expect(total).toBe(500)
    const by = (k: string) =>
      Object.fromEntries(
        Object.entries(Object.groupBy(dims, (r: any) => String(r[k]))).map(([v, rows]) => [v, rows!.reduce((a: number, r: any) => a + r.count, 0)]),
      )
    expect(by('os')).toEqual({ IOS: 100, Android: 100, Windows: 100, MacOS: 100, Linux: 100 })
    expect(by('browser')).toEqual({ Safari: 200, Chrome: 200, Firefox: 100 })
    expect(by('device')).toEqual({ Mobile: 200, Desktop: 300 })
    expect(by('country')).toEqual({ US: 200, DE: 100, GB: 100, AU: 100 })
    expect(by('continent')).toEqual({ 'North America': 200, Europe: 200, Oceania: 100 })
    expect(by('city')['Mountain View']).toBe(100)
    expect(by('scan')).toEqual({ false: 250, true: 250 })
    expect(by('referer')).toEqual({ 'news.example.org': 167, null: 333 })
    expect(by('utmSource')).toEqual({ flyer: 500 })
    expect(by('utmMedium')).toEqual({ print: 500 })

    const after = (await (await again.api(`/links/${link.id}`, { key: t.adminKey })).json()) as any
    expect(after.clicks).toBe(500)
    expect(after.lastClicked).not.toBeNull()
    await again.stop()
  })

  test('a click is visible in the store within the flush window', async () => {
    await make('link', { url: 'https://soon.example/' }, { key: 'soon' })
    await visit('/soon')
    await s.clicksFlushed()
    expect((await linkByKey('soon')).clicks).toBe(1)
  })
})
