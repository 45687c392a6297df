/**
 * The redirect's decision alone, in process: `resolve` of two source trees (say main before the
 * named steps and this branch) on the same links and visits, alternating A and B in one run, so
 * the cost of the steps is seen without HTTP, TLS and a loaded machine's noise of wrk.
 *   bun scripts/bench/resolve-steps.ts --a /path/to/old/src/redirect/resolve.ts [--b src/redirect/resolve.ts] [--runs 15] [--n 200000]
 * Prints ns per decision per run, then min | median | max per side, for a plain link, a link
 * with a visitor query and UTM values, and a device-targeted link.
 */
import { resolve as resolvePath } from 'node:path'
import { parseVisitor } from '../../src/redirect/visitor'
import { minMedianMax } from './ab'
import { arg } from './args'

type Resolve = (input: unknown) => { kind: string }
const load = async (path: string) =>
  (await import(resolvePath(path))) as { resolve: Resolve; mergeQuery: (t: string, q: URLSearchParams, u: unknown) => string }
const a = await load(arg('a', ''))
const b = await load(arg('b', 'src/redirect/resolve.ts'))
const runs = Number(arg('runs', '15'))
const n = Number(arg('n', '200000'))

const visitor = parseVisitor('Mozilla/5.0 (X11; Linux x86_64; rv:125.0) Gecko/20100101 Firefox/125.0')
const base = {
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
  utm: null as Record<string, string> | null,
  previewData: null,
  Targeting: null as unknown,
  appStores: null,
  healthFallbackUrl: null,
  brokenUrls: null,
  trackConversion: false,
  test: null,
  plainLocation: '',
}
const link = (over: Partial<typeof base>) => {
  const l = { ...base, ...over }
  l.plainLocation = b.mergeQuery(l.destination, new URLSearchParams(), l.utm)
  return l
}
const request = (qs: string) => ({
  query: new URLSearchParams(qs),
  visitor,
  acceptLanguage: null,
  country: 'FR',
  region: null,
  city: null,
  passwordOk: false,
  visitNumber: 0,
  testCookie: null,
  testDraw: 0,
})
const cases = {
  plain: { link: link({}), domain: { notFoundUrl: null, expiredUrl: null }, request: request(''), now: Date.now() },
  'query+utm': {
    link: link({ utm: { source: 'qr', campaign: 'spring' } }),
    domain: { notFoundUrl: null, expiredUrl: null },
    request: request('x=1'),
    now: Date.now(),
  },
  targeted: {
    link: link({ Targeting: { targetType: 'device', targetDatas: { ios: 'https://ios.example/', android: 'https://android.example/' } } }),
    domain: { notFoundUrl: null, expiredUrl: null },
    request: request(''),
    now: Date.now(),
  },
}

function time(resolve: Resolve, input: unknown): number {
  const t = Bun.nanoseconds()
  for (let i = 0; i < n; i++) resolve(input)
  return (Bun.nanoseconds() - t) / n
}

console.log(`load ${(await Bun.file('/proc/loadavg').text()).trim()}; ${runs} alternating runs of ${n} decisions`)
for (const [name, input] of Object.entries(cases)) {
  // Warm-up: both compiled before the first timed run.
  for (let i = 0; i < 3; i++) {
    time(a.resolve, input)
    time(b.resolve, input)
  }
  const ns = { a: [] as number[], b: [] as number[] }
  for (let i = 0; i < runs; i++)
    for (const side of i % 2 ? (['b', 'a'] as const) : (['a', 'b'] as const)) ns[side].push(time(side === 'a' ? a.resolve : b.resolve, input))
  console.log(`${name.padEnd(10)} A ns/decision ${minMedianMax(ns.a)}   B ${minMedianMax(ns.b)}`)
}
