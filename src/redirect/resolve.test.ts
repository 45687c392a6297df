import { describe, expect, test } from 'bun:test'
import { type Decision, type DomainFallbacks, mergeQuery, type ResolvableLink, type ResolveRequest, resolve, type TestPick } from './resolve'
import { inTimeWindow, parseAcceptLanguage } from './targeting'
import { parseVisitor } from './visitor'

const NOW = Date.parse('2026-11-18T10:30:00Z') // a Wednesday
const IPHONE = 'Mozilla/5.0 (iPhone; CPU iPhone OS 17_4 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4 Mobile/15E148 Safari/604.1'
const PIXEL = 'Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Mobile Safari/537.36'
const DESKTOP = 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Safari/537.36'

const baseLink: ResolvableLink = {
  seq: 1,
  id: 'lnk_1',
  domain: 'go.test',
  key: 'k',
  linkType: 'link',
  destination: 'https://dest.example/page?a=1',
  hosted: false,
  expiresAt: null,
  expirationUrl: null,
  passwordHash: null,
  utm: null,
  previewData: null,
  Targeting: null,
  appStores: null,
  trackConversion: false,
  healthFallbackUrl: null,
  plainLocation: '',
  brokenUrls: null,
  test: null,
}
const req = (over: Partial<ResolveRequest> & { ua?: string; qs?: string } = {}): ResolveRequest => ({
  query: new URLSearchParams(over.qs ?? ''),
  visitor: parseVisitor(over.ua ?? DESKTOP),
  acceptLanguage: null,
  country: null,
  region: null,
  city: null,
  passwordOk: false,
  visitNumber: 1,
  testCookie: null,
  testDraw: 0,
  ...over,
})
const noFallbacks: DomainFallbacks = { notFoundUrl: null, expiredUrl: null }
const run = (link: Partial<ResolvableLink> | null, request = req(), domain = noFallbacks, now = NOW): Decision => {
  const full = link && { ...baseLink, ...link }
  if (full) full.plainLocation = mergeQuery(full.destination, new URLSearchParams(), full.utm)
  return resolve({ link: full, domain, request, now })
}
const to = (location: string, extra: Partial<Decision> = {}) => ({ kind: 'redirect', location, count: true, scan: false, ...extra })

describe('resolve: the contract order', () => {
  const cases: [string, () => Decision, unknown][] = [
    ['unknown key, no fallback → 404 page', () => run(null), { kind: 'not-found', location: null }],
    [
      'unknown key → domain notFoundUrl',
      () => run(null, req(), { notFoundUrl: 'https://brand.example/404', expiredUrl: null }),
      { kind: 'not-found', location: 'https://brand.example/404' },
    ],
    ['plain link → 302 to destination, counted', () => run({}), to('https://dest.example/page?a=1')],
    ['?qr=1 marks a scan and is dropped', () => run({}, req({ qs: 'qr=1' })), to('https://dest.example/page?a=1', { scan: true })],
    ['visitor query fills missing params, never overrides', () => run({}, req({ qs: 'a=9&b=2' })), to('https://dest.example/page?a=1&b=2')],
    [
      'expired → expiration.url',
      () => run({ expiresAt: NOW - 1, expirationUrl: 'https://dest.example/over' }),
      { kind: 'expired', location: 'https://dest.example/over' },
    ],
    [
      'expired without url → domain expiredUrl',
      () => run({ expiresAt: NOW }, req(), { notFoundUrl: null, expiredUrl: 'https://brand.example/expired' }),
      { kind: 'expired', location: 'https://brand.example/expired' },
    ],
    ['expired, no fallback → 410 page', () => run({ expiresAt: NOW - 1 }), { kind: 'expired', location: null }],
    ['not yet expired → redirect', () => run({ expiresAt: NOW + 1000 }), to('https://dest.example/page?a=1')],
    ['password without cookie → form', () => run({ passwordHash: 'h' }), { kind: 'password' }],
    ['password with cookie → redirect', () => run({ passwordHash: 'h' }, req({ passwordOk: true })), to('https://dest.example/page?a=1')],
    ['expiry comes before password', () => run({ passwordHash: 'h', expiresAt: NOW - 1 }), { kind: 'expired', location: null }],
    [
      'social bot → preview page from previewData, not counted',
      () => run({ previewData: { title: 'T', desc: 'D', image: 'https://img.example/a.png' } }, req({ ua: 'facebookexternalhit/1.1' })),
      { kind: 'preview', title: 'T', description: 'D', image: 'https://img.example/a.png' },
    ],
    [
      'social bot, no previewData → destination host',
      () => run({}, req({ ua: 'Twitterbot/1.0' })),
      { kind: 'preview', title: 'dest.example', description: '', image: null },
    ],
    [
      'social bot on a protected link sees no destination',
      () => run({ passwordHash: 'h' }, req({ ua: 'Slackbot-LinkExpanding 1.0' })),
      { kind: 'preview', title: 'Protected link', description: '', image: null },
    ],
    ['other bots are redirected, not counted', () => run({}, req({ ua: 'curl/8.5.0' })), to('https://dest.example/page?a=1', { count: false })],
    ['hosted type → landing page', () => run({ hosted: true, linkType: 'text' }), { kind: 'hosted', count: true, scan: false }],
    [
      'app-stores: iOS visitor → App Store',
      () => run({ hosted: true, appStores: { ios: 'https://apps.apple.com/x', android: 'https://play.google.com/x' } }, req({ ua: IPHONE })),
      to('https://apps.apple.com/x'),
    ],
    [
      'app-stores: desktop → page with both',
      () => run({ hosted: true, appStores: { ios: 'https://apps.apple.com/x' } }),
      { kind: 'hosted', count: true, scan: false },
    ],
    [
      'utm overrides and fills, keeping other params',
      () => run({ destination: 'https://d.example/?utm_source=old&x=1', utm: { source: 'poster', campaign: 'spring', ref: 'qr' } }),
      to('https://d.example/?utm_source=poster&x=1&utm_campaign=spring&ref=qr'),
    ],
    ['mailto: destinations are left alone', () => run({ destination: 'mailto:a@b.co?subject=x', utm: { source: 's' } }), to('mailto:a@b.co?subject=x')],
  ]
  for (const [name, fn, expected] of cases) test(name, () => expect(fn()).toEqual(expected as Decision))
})

describe('resolve: targeting', () => {
  const device = { targetType: 'device' as const, targetDatas: { ios: 'https://ios.example/', android: 'https://android.example/' } }
  const location = {
    targetType: 'location',
    targetDatas: [
      { country: 'US', region: 'California', city: 'San Francisco', url: 'https://sf.example/' },
      { country: 'US', region: 'California', url: 'https://ca.example/' },
      { country: 'DE', url: 'https://de.example/' },
    ],
  }
  const language = {
    targetType: 'language',
    targetDatas: [
      { language: 'fr', url: 'https://fr.example/' },
      { language: 'pt-br', url: 'https://br.example/' },
      { language: 'en', url: 'https://en.example/' },
    ],
  }
  const number = {
    targetType: 'number',
    targetDatas: [
      { from: 1, to: 3, url: 'https://first.example/' },
      { from: 10, to: 10, url: 'https://tenth.example/' },
    ],
  }
  const time = {
    targetType: 'time',
    targetDatas: [
      { start: '09:00', end: '17:00', days: [1, 2, 3, 4, 5], timezone: 'Europe/Paris', url: 'https://open.example/' },
      { start: '22:00', end: '02:00', timezone: 'UTC', url: 'https://night.example/' },
    ],
  }
  const cases: [string, any, Partial<ResolveRequest> & { ua?: string }, string, number?][] = [
    ['device iOS', device, { ua: IPHONE }, 'https://ios.example/'],
    ['device Android', device, { ua: PIXEL }, 'https://android.example/'],
    ['device desktop → destination', device, {}, 'https://dest.example/page?a=1'],
    ['location city', location, { country: 'US', region: 'California', city: 'San Francisco' }, 'https://sf.example/'],
    ['location region (other city)', location, { country: 'US', region: 'California', city: 'Los Angeles' }, 'https://ca.example/'],
    ['location country', location, { country: 'DE', region: 'Bavaria' }, 'https://de.example/'],
    ['location other state → destination', location, { country: 'US', region: 'Texas' }, 'https://dest.example/page?a=1'],
    ['location unknown → destination', location, {}, 'https://dest.example/page?a=1'],
    ['language by preference, q-values honoured', language, { acceptLanguage: 'de;q=0.9, en;q=0.8, fr;q=0.85' }, 'https://fr.example/'],
    ['language regional variant', language, { acceptLanguage: 'fr-CH' }, 'https://fr.example/'],
    ['language exact region', language, { acceptLanguage: 'pt-BR,pt;q=0.5' }, 'https://br.example/'],
    ['language pt (no region) does not match pt-br', language, { acceptLanguage: 'pt' }, 'https://dest.example/page?a=1'],
    ['language q=0 is refused', language, { acceptLanguage: 'fr;q=0, de' }, 'https://dest.example/page?a=1'],
    ['number 1st visit', number, { visitNumber: 1 }, 'https://first.example/'],
    ['number 3rd visit', number, { visitNumber: 3 }, 'https://first.example/'],
    ['number 4th visit → destination', number, { visitNumber: 4 }, 'https://dest.example/page?a=1'],
    ['number 10th visit', number, { visitNumber: 10 }, 'https://tenth.example/'],
    ['time: Wednesday 11:30 Paris is open', time, {}, 'https://open.example/', NOW],
    ['time: Saturday 11:30 Paris → destination', time, {}, 'https://dest.example/page?a=1', Date.parse('2026-11-21T10:30:00Z')],
    ['time: 23:00 UTC is night', time, {}, 'https://night.example/', Date.parse('2026-11-18T23:00:00Z')],
    ['time: 01:59 UTC still night', time, {}, 'https://night.example/', Date.parse('2026-11-19T01:59:00Z')],
    ['time: 02:00 UTC is over', time, {}, 'https://dest.example/page?a=1', Date.parse('2026-11-19T02:00:00Z')],
  ]
  for (const [name, Targeting, r, location, now] of cases)
    test(name, () => expect(run({ Targeting }, req(r), noFallbacks, now ?? NOW)).toMatchObject({ kind: 'redirect', location }))

  test('UTM applies to the targeted URL too', () => {
    expect(run({ Targeting: device, utm: { source: 'qr' } }, req({ ua: IPHONE }))).toMatchObject({ location: 'https://ios.example/?utm_source=qr' })
  })
})

describe('resolve: health fallback (after targeting, before UTM)', () => {
  const device = { targetType: 'device' as const, targetDatas: { ios: 'https://ios.example/', android: 'https://android.example/' } }
  const fallback = 'https://brand.example/sorry'
  const broken = (...urls: string[]) => ({ healthFallbackUrl: fallback, brokenUrls: new Set(urls), Targeting: device })

  test('a broken destination sends the visit to the fallback, still counted, UTM and the visitor query merged onto it', () => {
    expect(run(broken('https://dest.example/page?a=1'))).toMatchObject(to(fallback))
    expect(run({ ...broken('https://dest.example/page?a=1'), utm: { source: 'qr' } }, req({ qs: 'b=2&qr=1' }))).toMatchObject(
      to('https://brand.example/sorry?b=2&utm_source=qr', { scan: true }),
    )
  })

  test('only the URL the visit resolves to counts: a broken targeting URL leaves the destination, and the reverse', () => {
    expect(run(broken('https://ios.example/'), req({ ua: IPHONE }))).toMatchObject(to(fallback))
    expect(run(broken('https://ios.example/'), req({ ua: PIXEL }))).toMatchObject(to('https://android.example/'))
    expect(run(broken('https://dest.example/page?a=1'), req({ ua: IPHONE }))).toMatchObject(to('https://ios.example/'))
  })

  test('no fallback, or nothing broken: the resolved URL as always', () => {
    expect(run({ brokenUrls: new Set(['https://dest.example/page?a=1']) })).toMatchObject(to('https://dest.example/page?a=1'))
    expect(run({ healthFallbackUrl: fallback, brokenUrls: null })).toMatchObject(to('https://dest.example/page?a=1'))
  })
})

test('time windows follow the zone across DST', () => {
  const w = { start: '09:00', end: '10:00', timezone: 'Europe/Paris' }
  expect(inTimeWindow(w, Date.parse('2026-07-01T07:30:00Z'))).toBe(true) // CEST, UTC+2
  expect(inTimeWindow(w, Date.parse('2026-12-01T07:30:00Z'))).toBe(false) // CET: 08:30 local
  expect(inTimeWindow(w, Date.parse('2026-12-01T08:30:00Z'))).toBe(true)
  // A window past midnight belongs to the day it started on.
  const fridayNight = { start: '22:00', end: '02:00', days: [5], timezone: 'UTC' }
  expect(inTimeWindow(fridayNight, Date.parse('2026-11-21T01:00:00Z'))).toBe(true) // Saturday 01:00
  expect(inTimeWindow(fridayNight, Date.parse('2026-11-22T01:00:00Z'))).toBe(false) // Sunday 01:00
})

test('Accept-Language parsing', () => {
  expect(parseAcceptLanguage('fr-CH, fr;q=0.9, en;q=0.8, de;q=0.7, *;q=0.5')).toEqual(['fr-ch', 'fr', 'en', 'de', '*'])
  expect(parseAcceptLanguage('')).toEqual([])
  expect(parseAcceptLanguage('en;q=abc')).toEqual([])
})

test('mergeQuery keeps a URL that cannot be parsed', () => {
  const unparsable = 'https://exa mple.example/menu'
  expect(() => new URL(unparsable)).toThrow()
  expect(mergeQuery(unparsable, new URLSearchParams('qr=1&table=4'), { source: 'poster' })).toBe(unparsable)
})

test('mergeQuery with nothing to add returns the target as it is', () => {
  expect(mergeQuery('https://x.example/', new URLSearchParams('qr=1'), null)).toBe('https://x.example/')
})

describe('resolve: the A/B test step', () => {
  const A = 'https://a.example/'
  const B = 'https://b.example/'
  const toVariant = (location: string, pick: TestPick): Decision => ({ kind: 'redirect', location, count: true, scan: false, test: pick })
  const split = {
    variants: [
      { url: A, percentage: 30 },
      { url: B, percentage: 70 },
    ],
    startedAt: NOW - 1000,
    endsAt: NOW + 3600_000,
  }

  test('a draw picks the variant by percentage; the answer sets the cookie (drawn)', () => {
    expect(run({ test: split }, req({ testDraw: 0 }))).toEqual(toVariant(A, { variant: 0, url: A, drawn: true }))
    expect(run({ test: split }, req({ testDraw: 29.99 }))).toEqual(toVariant(A, { variant: 0, url: A, drawn: true }))
    expect(run({ test: split }, req({ testDraw: 30 }))).toEqual(toVariant(B, { variant: 1, url: B, drawn: true }))
    expect(run({ test: split }, req({ testDraw: 99.99 }))).toEqual(toVariant(B, { variant: 1, url: B, drawn: true }))
  })

  test("the cookie's variant wins over the draw; a variant the test lacks is drawn anew", () => {
    expect(run({ test: split }, req({ testCookie: 0, testDraw: 99 }))).toEqual(toVariant(A, { variant: 0, url: A, drawn: false }))
    expect(run({ test: split }, req({ testCookie: 3, testDraw: 99 }))).toEqual(toVariant(B, { variant: 1, url: B, drawn: true }))
  })

  test('targeting comes first: a caught visit is not in the test', () => {
    const Targeting = { targetType: 'device' as const, targetDatas: { ios: 'https://ios.example/', android: 'https://android.example/' } }
    expect(run({ test: split, Targeting }, req({ ua: IPHONE, testDraw: 50 }))).toEqual(to('https://ios.example/') as Decision)
    expect(run({ test: split, Targeting }, req({ ua: DESKTOP, testDraw: 50 }))).toEqual(toVariant(B, { variant: 1, url: B, drawn: true }))
  })

  test('the split stops at testCompletedAt; bots are not split', () => {
    expect(run({ test: { ...split, endsAt: NOW } }, req({ testDraw: 0 }))).toEqual(to('https://dest.example/page?a=1') as Decision)
    const bot = run({ test: split }, req({ ua: 'curl/8.0', testDraw: 0 }))
    expect(bot).toEqual(to('https://dest.example/page?a=1', { count: false }) as Decision)
  })

  test('then health and UTM apply to the variant', () => {
    const link = { test: split, brokenUrls: new Set([A]), healthFallbackUrl: 'https://fallback.example/', utm: { source: 'qr' } }
    expect(run(link, req({ testDraw: 0 }))).toEqual(toVariant('https://fallback.example/?utm_source=qr', { variant: 0, url: A, drawn: true }))
    expect(run(link, req({ testDraw: 50 }))).toEqual(toVariant('https://b.example/?utm_source=qr', { variant: 1, url: B, drawn: true }))
  })
})
