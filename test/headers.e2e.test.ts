/**
 * Security headers against the compiled binary (contract: General, The redirect server):
 * every operation of the served OpenAPI document, answered with success or error, carries
 * `X-Content-Type-Options: nosniff` and `Cache-Control: no-store`; every kind of page the
 * redirect server answers with carries `nosniff` and a `Content-Security-Policy` header with
 * `frame-ancestors 'none'` (`'self'` for the files our hosted pages frame). Then Chromium
 * shows it holds: another origin's iframes of our pages stay empty, while our document page
 * still shows its PDF in its own iframe.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import type { Browser } from 'playwright-core'
import { sampleMp3, samplePdf, samplePng } from '../src/files/files.samples'
import { UA } from './helpers/agents'
import { hasChromium, launchBrowser } from './helpers/browser'
import { until } from './helpers/poll'
import { rawExchange } from './helpers/raw-http'
import { startServer, type TestServer } from './helpers/server'

let s: TestServer
const origin = () => `https://localhost:${s.httpsPort}`

beforeAll(async () => {
  s = await startServer()
}, 60_000)
afterAll(async () => {
  await s?.stop()
}, 60_000)

async function upload(bytes: Uint8Array, name: string): Promise<string> {
  const form = new FormData()
  form.append('file', new Blob([bytes as BlobPart]), name)
  const r = await s.api('/files', { method: 'POST', body: form })
  expect(r.status).toBe(201)
  return ((await r.json()) as { id: string }).id
}

async function make(type: string, data: unknown, linkOptions: Record<string, unknown>): Promise<{ id: string; key: string }> {
  const r = await s.api(`/links/${type}`, { method: 'POST', json: { data, linkOptions } })
  if (r.status !== 200) throw new Error(`create ${type} failed: ${r.status} ${await r.text()}`)
  return (await r.json()) as { id: string; key: string }
}

/** The headers the contract asks of an API answer; the answer's status and what is missing, to name in a failure. */
function apiHeaderFaults(r: { status: number; headers: Headers }): string[] {
  const faults: string[] = []
  if (r.headers.get('x-content-type-options') !== 'nosniff') faults.push(`nosniff: ${r.headers.get('x-content-type-options')}`)
  if (r.headers.get('cache-control') !== 'no-store') faults.push(`cache-control: ${r.headers.get('cache-control')}`)
  return faults
}

describe('API answers', () => {
  test('every operation of the served OpenAPI document, as admin and without a key, success or error: nosniff and no-store', async () => {
    const docAnswer = await s.api('/openapi.json', { key: null })
    expect(apiHeaderFaults(docAnswer)).toEqual([])
    const doc = (await docAnswer.json()) as { paths: Record<string, Record<string, unknown>> }
    // Real records, so reads of one answer with their own bodies (a PNG, a file's bytes); writes name none and change nothing.
    const link = await make('link', { url: 'https://headers.example/' }, { key: 'api-headers' })
    const fileId = await upload(samplePng(), 'logo.png')
    const tag = (await (await s.api('/tags', { method: 'POST', json: { name: 'headers' } })).json()) as { id: string }
    const template = (await (await s.api('/qr/templates', { method: 'POST', json: { name: 'plain', qrOptions: {} } })).json()) as { id: string }
    const realIds: Record<string, string> = {
      '/links/{id}': link.id,
      '/files/{id}': fileId,
      '/files/{id}/content': fileId,
      '/tags/{id}': tag.id,
      '/qr/templates/{id}': template.id,
      '/qr/templates/{id}/preview': template.id,
      '/qr/{linkId}': link.id,
      '/domains/{domain}': 'localhost',
      '/users/{id}': 'usr_admin',
    }
    const results: Record<string, string[]> = {}
    const statuses = new Set<number>()
    let operations = 0
    for (const [path, methods] of Object.entries(doc.paths))
      for (const method of Object.keys(methods)) {
        operations++
        const id = method === 'get' ? (realIds[path] ?? 'nope') : 'nope'
        const url = path.replace(/\{type\}/, 'link').replace(/\{[^}]+\}/g, id)
        const body = ['post', 'put', 'patch'].includes(method) ? {} : undefined
        for (const key of [undefined, null]) {
          const r = await s.api(url, { method: method.toUpperCase(), key, json: body })
          statuses.add(r.status)
          // GET /events streams until the client leaves: its headers are what is checked, not a body that never ends.
          if (r.headers.get('content-type')?.startsWith('text/event-stream')) await r.body?.cancel()
          else await r.arrayBuffer()
          const faults = apiHeaderFaults(r)
          if (faults.length) results[`${method.toUpperCase()} ${url} ${key === null ? 'no key' : 'admin'} → ${r.status}`] = faults
        }
      }
    expect(operations).toBeGreaterThan(40)
    expect(results).toEqual({})
    // Successes and errors both answered: 2xx, 401, 404 and 422 at least.
    for (const status of [200, 401, 404, 422]) expect(statuses).toContain(status)
    // What no operation documents: the docs, an unknown route, a body too large, a rate-limited or malformed request.
    const extra = [
      await s.api('/docs', { key: null }),
      await s.api('/docs/swagger-ui.css', { key: null }),
      await s.api('/no-such-route'),
      await s.api('/tags', { method: 'POST', body: 'not json', headers: { 'content-type': 'text/plain' } }),
      await s.api('/links/%E0%A4%A'),
    ]
    expect(extra.map((r) => [r.status, ...apiHeaderFaults(r)])).toEqual([[200], [200], [404], [400], [400]])
  })
})

/** The headers the contract asks of a page of the redirect server. */
function pageHeaders(h: Record<string, string | null>) {
  return {
    nosniff: h['x-content-type-options'],
    frameAncestors: /frame-ancestors ([^;]+)/.exec(h['content-security-policy'] ?? '')?.[1] ?? null,
    xFrameOptions: h['x-frame-options'],
  }
}
const NOT_FRAMED = { nosniff: 'nosniff', frameAncestors: "'none'", xFrameOptions: 'DENY' }
const FRAMED_BY_US = { nosniff: 'nosniff', frameAncestors: "'self'", xFrameOptions: 'SAMEORIGIN' }

describe('pages of the redirect server', () => {
  let pdfId = ''
  let svgKey = ''

  test("every page kind: nosniff and frame-ancestors in a header ('none'; 'self' for the files our pages frame)", async () => {
    pdfId = await upload(samplePdf('Menu'), 'menu.pdf')
    const pngId = await upload(samplePng(), 'photo.png')
    const mp3Id = await upload(sampleMp3(), 'song.mp3')
    const svgId = await upload(
      new TextEncoder().encode('<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"><rect width="10" height="10"/></svg>'),
      'dot.svg',
    )
    const hosted: [string, unknown][] = [
      ['text', { text: 'Opening hours 9-5' }],
      ['wi-fi', { ssid: 'Cafe', password: 'secret-pass', encryption: 'WPA' }],
      ['menu', { sections: [{ name: 'Drinks', items: [{ name: 'Tea', price: '2' }] }] }],
      ['document', { fileId: pdfId }],
      ['image', { fileId: pngId }],
      ['audio', { fileId: mp3Id }],
      ['video', { url: 'https://videos.example/clip.mp4' }],
      ['svg', { fileId: svgId }],
      ['file', { fileId: pdfId }],
      [
        'app-stores',
        { ios: 'https://apps.apple.com/app/id1', android: 'https://play.google.com/store/apps/details?id=x', fallbackUrl: 'https://app.example/' },
      ],
    ]
    const pages: Record<string, { status: number; type: string | null; headers: ReturnType<typeof pageHeaders> }> = {}
    const expected: Record<string, { status: number; type: string; headers: typeof NOT_FRAMED }> = {}
    const record = async (name: string, r: Response, status: number, headers = NOT_FRAMED, type = 'text/html') => {
      await r.arrayBuffer()
      pages[name] = { status: r.status, type: r.headers.get('content-type')?.split(';')[0] ?? null, headers: pageHeaders(Object.fromEntries(r.headers)) }
      expected[name] = { status, type, headers }
    }
    const visit = (path: string, init: RequestInit & { ua?: string } = {}) =>
      s.fetch(`${origin()}${path}`, { ...init, headers: { 'user-agent': init.ua ?? UA.windows, ...(init.headers as Record<string, string>) } })

    for (const [type, data] of hosted) {
      const link = await make(type, data, { key: `page-${type}` })
      await record(`${type} landing page`, await visit(`/${link.key}`), 200)
      if (type === 'svg') svgKey = link.key
    }
    // The files hosted pages show (the document page frames its PDF): framed by our own pages only.
    await record('document file', await visit(`/page-document/file/${pdfId}`), 200, FRAMED_BY_US, 'application/pdf')
    await record('svg file', await visit(`/page-svg/file/${svgId}`), 200, FRAMED_BY_US, 'image/svg+xml')
    await record('file of another link', await visit(`/page-text/file/${pdfId}`), 404, FRAMED_BY_US)

    await make('link', { url: 'https://secret.example/' }, { key: 'page-locked', password: 'letmein' })
    const form = { 'content-type': 'application/x-www-form-urlencoded' }
    await record('password form', await visit('/page-locked'), 200)
    await record('wrong password', await visit('/page-locked', { method: 'POST', body: 'password=nope', headers: form }), 403)
    await make('link', { url: 'https://shop.example/' }, { key: 'page-social', previewData: { title: 'Sale', desc: 'Today' } })
    await record('preview page for bots', await visit('/page-social', { ua: UA.facebook }), 200)
    await record('not-found page', await visit('/page-none'), 404)
    await record('not-found page of a well-known file', await visit('/.well-known/assetlinks.json'), 404)
    const unknownHost = await rawExchange({ port: s.httpsPort, ca: s.ca }, 'GET /x HTTP/1.1\r\nHost: other.example\r\nConnection: close\r\n\r\n')
    pages['not-found page of an unknown host'] = { status: unknownHost!.status, type: 'text/html', headers: pageHeaders(unknownHost!.headers) }
    expected['not-found page of an unknown host'] = { status: 404, type: 'text/html', headers: NOT_FRAMED }
    await record('robots.txt', await visit('/robots.txt'), 200, NOT_FRAMED, 'text/plain')

    // An expired link sends visitors to its expiration.url; the files it showed answer the expired page.
    const at = Date.now() + 1000
    const expiration = { time: new Date(at).toISOString(), url: 'https://over.example/' }
    await make('document', { fileId: pdfId }, { key: 'page-expiring', expiration })
    // Expiry is the clock passing `at`: poll until the server says so (bounded), then look at the page.
    await until(
      'the link to expire',
      async () => (await visit(`/page-expiring/file/${pdfId}`)).status,
      (status) => status === 410,
      10_000,
    )
    await record('expired page', await visit(`/page-expiring/file/${pdfId}`), 410, FRAMED_BY_US)
    // Last: ten wrong passwords from one address lock the form.
    let locked = await visit('/page-locked', { method: 'POST', body: 'password=guess', headers: form })
    for (let i = 0; i < 10 && locked.status !== 429; i++) locked = await visit('/page-locked', { method: 'POST', body: 'password=guess', headers: form })
    await record('too many attempts', locked, 429)

    expect(pages).toEqual(expected)
    // Redirects carry no page: none of these headers on the hot path.
    const redirect = await visit('/page-social')
    expect([redirect.status, redirect.headers.get('content-security-policy')]).toEqual([302, null])
  })

  test('the content policy of each page is kept beside the header: hosted pages their own, files theirs', async () => {
    const svg = await s.fetch(`${origin()}/${svgKey}`)
    expect(await svg.text()).toContain('http-equiv="Content-Security-Policy"')
    const file = await s.fetch(`${origin()}/page-svg/file/${((await (await s.api(`/links?search=${svgKey}`)).json()) as any).links[0].data.fileId}`)
    expect(file.headers.get('content-security-policy')).toMatch(/sandbox.*; frame-ancestors 'self'$/)
  })

  test('in Chromium: another origin cannot frame our pages or the dashboard; our document page still frames its PDF', async () => {
    if (!hasChromium()) throw new Error('Chromium is required: apt-get install -y chromium (see scripts/install-test-tools.sh)')
    if (!pdfId) throw new Error('this test frames the pages the page-kinds test above makes: run the whole file')
    const framed = ['/page-text', '/page-locked', '/page-none', `/page-document/file/${pdfId}`, '/app/']
    // An attacker's page on another origin (plain HTTP on loopback) framing each of them.
    const attacker = Bun.serve({
      port: 0,
      hostname: '127.0.0.1',
      fetch: () =>
        new Response(`<!doctype html>${framed.map((p) => `<iframe src="${origin()}${p}"></iframe>`).join('')}`, { headers: { 'content-type': 'text/html' } }),
    })
    let browser: Browser | undefined
    try {
      browser = await launchBrowser()
      const context = await browser.newContext({ ignoreHTTPSErrors: true })
      const page = await context.newPage()
      await page.goto(`http://127.0.0.1:${attacker.port}/`, { waitUntil: 'load' })
      // Each frame ends at what it shows: our page had it been allowed, else Chromium's error page.
      const shown = await until(
        'every frame to settle',
        async () =>
          page
            .frames()
            .slice(1)
            .map((f) => f.url()),
        (urls) => urls.length === framed.length && urls.every((u) => u !== '' && u !== 'about:blank'),
        15_000,
      )
      expect(shown).toEqual(framed.map(() => 'chrome-error://chromewebdata/'))

      // Our own document page frames its PDF from the same origin: allowed.
      const own = await context.newPage()
      await own.goto(`${origin()}/page-document`, { waitUntil: 'load' })
      const pdfFrame = await until('the PDF frame', async () => own.frames().find((f) => f.url().includes(`/file/${pdfId}`)) ?? null, Boolean, 15_000)
      expect(pdfFrame.url()).toBe(`${origin()}/page-document/file/${pdfId}`)
    } finally {
      await browser?.close()
      attacker.stop(true)
    }
  })
})

describe('the dashboard', () => {
  test('frames none of our pages (so they may all forbid framing), and is not framed itself', async () => {
    const app = await s.fetch(`${origin()}/app/`)
    expect(pageHeaders(Object.fromEntries(app.headers)).frameAncestors).toBe("'none'")
    const html = await app.text()
    const scripts = [...html.matchAll(/<script[^>]+src="([^"]+)"/g)].map((m) => m[1]!)
    expect(scripts.length).toBeGreaterThan(0)
    for (const src of scripts) expect(await (await s.fetch(new URL(src, `${origin()}/app/`).href)).text()).not.toMatch(/iframe/i)
    expect(html).not.toMatch(/iframe/i)
  })
})
