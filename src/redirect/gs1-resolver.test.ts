/**
 * The GS1 resolver on a short domain, through the redirect handler the server uses: the
 * GS1-Conformant Resolver standard's requirements (as its conformance test suite checks them)
 * and the contract's (a GS1 product is a link in every other way).
 */
import { beforeAll, describe, expect, test } from 'bun:test'
import { type ApiHarness, createHarness } from '../../test/helpers/in-process'
import type { RedirectHandler } from './redirect.handler'
import { redirectHandlerFor } from './redirect.test-fixtures'

let h: ApiHarness
let redirects: RedirectHandler
const seqOf = new Map<string, number>()

async function visit(path: string, headers: Record<string, string> = {}, method = 'GET') {
  const request = new Request(`https://localhost${path}`, { method, headers })
  const q = path.indexOf('?')
  return redirects.handle(request, q < 0 ? path : path.slice(0, q), q < 0 ? '' : path.slice(q + 1), 'localhost', () => '192.0.2.1')
}
const BROWSER = { 'user-agent': 'Mozilla/5.0 (iPhone; CPU iPhone OS 17_0 like Mac OS X) AppleWebKit/605.1.15 Mobile/15E148 Safari/604.1' }
const pending = (gtin: string) => h.deps.recorder.pendingFor(seqOf.get(gtin)!)

beforeAll(async () => {
  h = createHarness()
  const { deps } = h
  redirects = redirectHandlerFor(deps)
  const products: [unknown, unknown?][] = [
    [
      {
        gtin: '9506000134352',
        url: 'https://brand.example/oil',
        links: [
          { linkType: 'gs1:pip', url: 'https://brand.example/en/pip', lang: 'en' },
          { linkType: 'gs1:pip', url: 'https://brand.example/fr/pip', lang: 'fr' },
          { linkType: 'gs1:recipeInfo', url: 'https://brand.example/recipes?from=pack' },
        ],
        lots: [
          { lot: 'L42', url: 'https://brand.example/recall/L42' },
          { lot: 'A/1', links: [{ linkType: 'gs1:pip', url: 'https://brand.example/A1/pip' }] },
        ],
      },
      { utm: { source: 'pack' } },
    ],
    [{ gtin: '95012346', url: 'https://brand.example/tea' }, { password: 'letmein' }],
    [
      { gtin: '614141000036', url: 'https://brand.example/soap' },
      { expiration: { time: new Date(Date.now() + 3_600_000).toISOString(), url: 'https://brand.example/ended' } },
    ],
    [
      { gtin: '4006381333931', url: 'https://brand.example/pen' },
      { Targeting: { targetType: 'language', targetDatas: [{ language: 'de', url: 'https://brand.example/de/pen' }] } },
    ],
  ]
  for (const [data, linkOptions] of products) {
    const r = await h.call('POST', '/links/gs1', { json: linkOptions ? { data, linkOptions } : { data } })
    expect(r.status).toBe(200)
    seqOf.set(r.body.key, h.deps.links.findLiveRow('localhost', r.body.key)!.seq)
  }
  await h.call('POST', '/links/link', { json: { data: { url: 'https://plain.example' }, linkOptions: { key: '09521234543213' } } })
  // The soap's expiry passes (written to the store: the API takes only future times).
  h.deps.db.run('UPDATE links SET expires_at = ? WHERE key = ?', [Date.now() - 1000, '00614141000036'])
})

describe('redirects (307, Link header, query passed on)', () => {
  test.each([
    ['/01/09506000134352', {}, 'https://brand.example/oil?utm_source=pack'],
    ['/01/9506000134352', {}, 'https://brand.example/oil?utm_source=pack'], // any GTIN length matches its 14-digit form
    ['/01/09506000134352/', {}, 'https://brand.example/oil?utm_source=pack'], // trailing slash tolerated
    ['/01/09506000134352?linkType=gs1:defaultLink', {}, 'https://brand.example/oil?utm_source=pack'],
    ['/01/09506000134352/10/L42', {}, 'https://brand.example/recall/L42?utm_source=pack'],
    ['/01/09506000134352/10/L42/21/S1', {}, 'https://brand.example/recall/L42?utm_source=pack'],
    ['/01/09506000134352/10/KL8G', {}, 'https://brand.example/oil?utm_source=pack'], // an unknown lot walks up the tree
    ['/01/09506000134352?linkType=gs1:pip', { 'accept-language': 'fr-CH, en;q=0.5' }, 'https://brand.example/fr/pip?utm_source=pack'],
    ['/01/09506000134352?linkType=gs1:pip', { 'accept-language': 'de' }, 'https://brand.example/en/pip?utm_source=pack'],
    ['/01/09506000134352?linkType=https%3A%2F%2Fgs1.org%2Fvoc%2FrecipeInfo', {}, 'https://brand.example/recipes?from=pack&utm_source=pack'],
    ['/01/09506000134352/10/A%2F1?linkType=gs1:pip', { 'accept-language': 'fr' }, 'https://brand.example/A1/pip?utm_source=pack'], // lot links first
    ['/01/09506000134352?17=271231&foo=bar', {}, 'https://brand.example/oil?17=271231&foo=bar&utm_source=pack'],
    ['/01/04006381333931', { 'accept-language': 'de-DE' }, 'https://brand.example/de/pen'], // targeting applies to the default link
    ['/01/04006381333931?linkType=gs1:defaultLink', { 'accept-language': 'en' }, 'https://brand.example/pen'],
  ])('%s %j → %s', async (path, headers, location) => {
    const r = await visit(path, { ...BROWSER, ...headers })
    expect(r.status).toBe(307)
    expect(r.headers.get('location')).toBe(location)
    const canonical = path.split('?')[0]!.replace(/\/$/, '').replace('/01/9506000134352', '/01/09506000134352')
    expect(r.headers.get('link')).toBe(`<https://localhost:8443${canonical}?linkType=linkset>; rel="linkset"; type="application/linkset+json"`)
    expect(r.headers.get('access-control-allow-origin')).toBe('*')
  })

  test('every redirect counts as a click of the product; ?qr=1 counts a scan and is not passed on; bots are not counted', async () => {
    const before = pending('09506000134352')
    await visit('/01/09506000134352?linkType=gs1:pip', BROWSER)
    const scan = await visit('/01/09506000134352/10/L42?qr=1', BROWSER)
    expect(scan.headers.get('location')).toBe('https://brand.example/recall/L42?utm_source=pack')
    await visit('/01/09506000134352', { 'user-agent': 'curl/8.0' })
    expect(pending('09506000134352')).toBe(before + 2)
  })
})

describe('errors', () => {
  test.each([
    '/01/09506000134353', // check digit
    '/01/0950600013435', // length
    '/01/09506000134352/foo', // the conformance suite's malformed path
    '/01/09506000134352/21/S1/10/L42', // qualifiers out of order
    '/01/09506000134352/10/L%20%20', // a lot outside character set 82
    '/01/09506000134352?17=2713', // a bad data attribute
  ])('%s is 400 in the contract error shape', async (path) => {
    const r = await visit(path, BROWSER)
    expect(r.status).toBe(400)
    expect(await r.json()).toMatchObject({ code: 'bad_request', message: expect.stringContaining('not a valid GS1 Digital Link URI') })
  })

  test('a link type the product lacks is 404 with the Link header; an unknown GTIN and a non-product key follow the not-found rules', async () => {
    const none = await visit('/01/09506000134352?linkType=gs1:nosuchlt', BROWSER)
    expect(none.status).toBe(404)
    expect(none.headers.get('link')).toContain('rel="linkset"')
    expect((await none.json()).code).toBe('not_found')
    expect((await visit('/01/09521234543213', BROWSER)).status).toBe(404) // an ordinary link keyed with the same digits is no product
    const unknown = await visit('/01/00012345600012', BROWSER)
    expect(unknown.status).toBe(404)
    expect(await unknown.text()).toContain('<html')
  })

  test('a password-protected product shows the form and no linkset; an expired one answers as expired', async () => {
    const form = await visit('/01/00000095012346', BROWSER)
    expect(form.status).toBe(200)
    expect(await form.text()).toContain('<form method="post" action="/01/00000095012346">')
    expect((await visit('/01/00000095012346?linkType=all', BROWSER)).status).toBe(403)
    const ended = await visit('/01/00614141000036', BROWSER)
    expect(ended.status).toBe(302)
    expect(ended.headers.get('location')).toBe('https://brand.example/ended')
  })

  test('OPTIONS answers CORS for GET, HEAD and OPTIONS', async () => {
    const r = await visit('/01/09506000134352', {}, 'OPTIONS')
    expect(r.status).toBe(204)
    expect(r.headers.get('access-control-allow-methods')).toBe('GET, HEAD, OPTIONS')
  })
})

describe('linksets', () => {
  test.each([
    ['/01/09506000134352?linkType=all', {}],
    ['/01/09506000134352?linkType=linkset', {}],
    ['/01/09506000134352', { accept: 'application/linkset+json' }],
  ])('%s %j answers the RFC 9264 linkset, lot contexts first, with the JSON-LD context link', async (path, headers) => {
    const before = pending('09506000134352')
    const r = await visit(path, { ...BROWSER, ...headers })
    expect(r.status).toBe(200)
    expect(r.headers.get('content-type')).toBe('application/linkset+json')
    expect(r.headers.get('link')).toContain(
      '<https://ref.gs1.org/standards/resolver/linkset-context>; rel="http://www.w3.org/ns/json-ld#context"; type="application/ld+json"',
    )
    const body = await r.json()
    expect(body.linkset.map((c: { anchor: string }) => c.anchor)).toEqual([
      'https://localhost:8443/01/09506000134352/10/L42',
      'https://localhost:8443/01/09506000134352/10/A%2F1',
      'https://localhost:8443/01/09506000134352',
    ])
    expect(body.linkset[2]['https://gs1.org/voc/recipeInfo']).toEqual([{ href: 'https://brand.example/recipes?from=pack', title: 'Recipes' }])
    expect(pending('09506000134352')).toBe(before) // a linkset is a description, not a visit
  })

  test('/.well-known/gs1resolver describes the resolver', async () => {
    const r = await visit('/.well-known/gs1resolver')
    expect(r.status).toBe(200)
    expect(await r.json()).toMatchObject({ resolverRoot: 'https://localhost:8443', supportedPrimaryKeys: ['01'] })
  })
})
