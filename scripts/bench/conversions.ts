/**
 * Conversions (issue 27), A/B in one run on one server (the built binary, pinned to one core,
 * wrk on the other):
 * 1. Redirect throughput of the same destination with `trackConversion` off (A, `/bench`) and on
 *    (B, `/bench-tracked`: a click id per visit, appended as sl_id and kept with its click row),
 *    passes alternating A, B, B, A… Goal: B ≥ 0.95 × A (medians; also pass by pass, each B over the
 *    A next to it). Beside them, the same pair on a bare Bun.serve (a 302 from one Headers object, and
 *    one whose Location carries a click id made per visit): the part of B's cost that is Bun's.
 * 2. Then the clicks the passes wrote carry leads and sales (`--leads`, `--sales` through the API),
 *    and statistics with conversions=true are timed through the API: count, device, country,
 *    utm_source, link and a day series, each with the same question without conversions alternating
 *    (the cost conversions add to an answer).
 *   bun scripts/bench/conversions.ts [--bin dist/shortlink] [--passes 6] [--seconds 6] [--connections 64] [--leads 2000] [--sales 1000] [--runs 9]
 * Prints min | median | max of each side.
 */
import { join, resolve } from 'node:path'
import { HSTS } from '../../src/shared/hsts'
import { minMedianMax } from './ab'
import { arg } from './args'
import { cpuSeconds, startBareServer, startBenchServer } from './redirect-server'
import { BROWSER_UA, wrk } from './wrk'

const ROOT = resolve(import.meta.dir, '../..')
const passes = Number(arg('passes', '6'))
const seconds = Number(arg('seconds', '6'))
const connections = Number(arg('connections', '64'))
const leads = Number(arg('leads', '2000'))
const sales = Number(arg('sales', '1000'))
const runs = Number(arg('runs', '9'))
/** wrk over HTTPS as every redirect bench runs it (wrk.ts: a browser User-Agent, --latency), on core 0. */
const run = (url: string, secs = seconds) => wrk({ url, seconds: secs, connections, cpus: '0' })

const server = await startBenchServer({ root: ROOT, bin: resolve(arg('bin', 'dist/shortlink')), cpus: '1' })
const api = async (path: string, json?: unknown) => {
  const r = await fetch(`https://localhost:${server.httpsPort}/api${path}`, {
    method: json === undefined ? 'GET' : 'POST',
    headers: { authorization: `Bearer ${server.apiKey}`, 'content-type': 'application/json' },
    body: json === undefined ? undefined : JSON.stringify(json),
    tls: { ca: server.ca },
  } as RequestInit)
  if (r.status !== 200) throw new Error(`${path}: ${r.status} ${await r.text()}`)
  return r.json() as Promise<any>
}
await api('/links/link', {
  data: { url: 'https://example.com/landing?from=bench' },
  linkOptions: { key: 'bench-tracked', utm: { source: 'qr' }, trackConversion: true },
})

const urls = { off: `https://localhost:${server.httpsPort}/bench`, on: `https://localhost:${server.httpsPort}/bench-tracked` }
// What Bun itself charges for a Location made per visit: two bare Bun.serve over the same certificate, one answering a 302
// from a Headers object made once (as our untracked links do), one setting a Location with a click id (newClickId, the same
// code as ours) on a shared Headers object before each answer (as our tracked links do). No recorder, no lookup.
const LOCATION = 'https://example.com/landing?from=bench&utm_source=qr'
const bare = {
  off: await startBareServer(
    server,
    'bare-off',
    `const headers = new Headers({ location: ${JSON.stringify(LOCATION)}, 'strict-transport-security': ${JSON.stringify(HSTS)} })
const fetch = () => new Response(null, { status: 302, headers })`,
    '1',
  ),
  on: await startBareServer(
    server,
    'bare-on',
    `import { newClickId } from ${JSON.stringify(join(ROOT, 'src/stats/click-id.ts'))}
const headers = new Headers({ 'strict-transport-security': ${JSON.stringify(HSTS)} })
const fetch = () => {
  headers.set('location', ${JSON.stringify(`${LOCATION}&sl_id=`)} + newClickId(Date.now()))
  return new Response(null, { status: 302, headers })
}`,
    '1',
  ),
}
const targets = {
  off: { url: urls.off, pid: server.pid },
  on: { url: urls.on, pid: server.pid },
  bareOff: { url: `${bare.off.origin}/bench`, pid: bare.off.proc.pid },
  bareOn: { url: `${bare.on.origin}/bench`, pid: bare.on.proc.pid },
}
type Target = keyof typeof targets
console.log(`load ${(await Bun.file('/proc/loadavg').text()).trim()}; wrk -c${connections} -d${seconds}s; ${passes} alternating passes`)
for (const t of Object.values(targets)) await run(t.url, 2) // warm-up
// CPU µs per request as well: the server's CPU for the pass over the requests it answered, steadier than req/s on a shared machine.
const res = Object.fromEntries(Object.keys(targets).map((t) => [t, { rps: [] as number[], p99: [] as number[], cpu: [] as number[] }])) as Record<
  Target,
  { rps: number[]; p99: number[]; cpu: number[] }
>
for (let i = 0; i < passes; i++) {
  // Each pair runs back to back, in turns A B then B A.
  for (const pair of [
    ['off', 'on'],
    ['bareOff', 'bareOn'],
  ] as const) {
    for (const side of i % 2 ? [pair[1], pair[0]] : pair) {
      const cpuBefore = cpuSeconds(targets[side].pid)
      const r = await run(targets[side].url)
      const cpu = ((cpuSeconds(targets[side].pid) - cpuBefore) * 1e6) / r.requests
      res[side].rps.push(r.rps)
      res[side].p99.push(r.p99ms)
      res[side].cpu.push(cpu)
      console.log(`pass ${i + 1} ${side.padEnd(7)} ${r.rps.toFixed(0).padStart(7)} req/s  p99 ${r.p99ms.toFixed(2)} ms  ${cpu.toFixed(1)} CPU µs/req`)
    }
  }
}
bare.off.proc.kill()
bare.on.proc.kill()
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!
const figures = (t: Target) => `req/s min|median|max ${minMedianMax(res[t].rps)}   p99 ms ${minMedianMax(res[t].p99)}   CPU µs/req ${minMedianMax(res[t].cpu)}`
console.log(`A trackConversion off  ${figures('off')}`)
console.log(`B trackConversion on   ${figures('on')}`)
console.log(
  `B/A (medians) req/s ${(median(res.on.rps) / median(res.off.rps)).toFixed(3)}; requests per CPU-second ${(median(res.off.cpu) / median(res.on.cpu)).toFixed(3)}`,
)
// Each pass's B over the A run next to it: a machine whose speed drifts during the run (a shared VM's neighbours: one
// side's passes ranged 14-24 CPU µs per request in one run) moves both sides of a pair alike.
const paired = (a: Target, b: Target, side: 'rps' | 'cpu') => res[b][side].map((v, i) => (side === 'rps' ? v / res[a].rps[i]! : res[a].cpu[i]! / v))
console.log(
  `B/A pass by pass (min | median | max) req/s ${minMedianMax(paired('off', 'on', 'rps'), 3)}; requests per CPU-second ${minMedianMax(paired('off', 'on', 'cpu'), 3)}`,
)
console.log(`bare Bun.serve, one Headers object        ${figures('bareOff')}`)
console.log(`bare Bun.serve, a Location with a click id ${figures('bareOn')}`)
console.log(
  `bare, per-visit Location / one Headers object, pass by pass: req/s ${minMedianMax(paired('bareOff', 'bareOn', 'rps'), 3)}; requests per CPU-second ${minMedianMax(paired('bareOff', 'bareOn', 'cpu'), 3)}`,
)

// 2. Conversions on the clicks just written: ids read back from the tracked clicks through a few visits.
const ids: string[] = []
for (let i = 0; i < leads; i++) {
  const r = await fetch(urls.on, { headers: { 'user-agent': BROWSER_UA }, redirect: 'manual', tls: { ca: server.ca } } as RequestInit)
  ids.push(new URL(r.headers.get('location')!).searchParams.get('sl_id')!)
}
let t = performance.now()
for (let i = 0; i < leads; i++) await api('/track/lead', { clickId: ids[i], eventName: 'Sign up', customerExternalId: `c${i}` })
const leadMs = (performance.now() - t) / leads
t = performance.now()
for (let i = 0; i < sales; i++)
  await api('/track/sale', { customerExternalId: `c${i}`, amount: 100 + i, currency: i % 3 ? 'usd' : 'eur', invoiceId: `inv-${i}` })
const saleMs = (performance.now() - t) / sales
console.log(`POST /track/lead ${leadMs.toFixed(2)} ms, /track/sale ${saleMs.toFixed(2)} ms each (sequential, ${leads} and ${sales})`)

const questions = ['groupBy=count', 'groupBy=device', 'groupBy=country', 'groupBy=utm_source', 'groupBy=link', 'groupBy=time&granularity=day&interval=30d']
const total = await api('/statistics?groupBy=count&conversions=true')
console.log(`store: ${total.clicks} clicks, ${total.leads} leads, ${total.sales} sales`)
for (const q of questions) {
  const plain: number[] = []
  const conv: number[] = []
  for (let i = 0; i < runs; i++)
    for (const side of i % 2 ? ['conv', 'plain'] : ['plain', 'conv']) {
      const s = performance.now()
      await api(`/statistics?${q}${side === 'conv' ? '&conversions=true' : ''}`)
      ;(side === 'conv' ? conv : plain).push(performance.now() - s)
    }
  console.log(`${q.padEnd(44)} ms plain ${minMedianMax(plain)}   conversions=true ${minMedianMax(conv)}`)
}
await server.stop()
process.exit(0)
