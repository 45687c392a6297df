/**
 * Conversions (issue 27), A/B in one run on one server (the built binary, pinned to one core,
 * wrk on the other):
 * 1. Redirect throughput of the same destination with `trackConversion` off (A, `/bench`) and on
 *    (B, `/bench-tracked`: a click id per visit, appended as sl_id, each visit its own row and a
 *    tracked_clicks row), passes alternating A, B, B, A… Goal: B ≥ 0.95 × A (medians).
 * 2. Then the clicks the passes wrote carry leads and sales (`--leads`, `--sales` through the API),
 *    and statistics with conversions=true are timed through the API: count, device, country,
 *    utm_source, link and a day series, each with the same question without conversions alternating
 *    (the cost conversions add to an answer).
 *   bun scripts/bench/conversions.ts [--bin dist/shortlink] [--passes 6] [--seconds 6] [--connections 64] [--leads 2000] [--sales 1000] [--runs 9]
 * Prints min | median | max of each side.
 */
import { resolve } from 'node:path'
import { minMedianMax } from './ab'
import { arg } from './args'
import { cpuSeconds, startBenchServer } from './redirect-server'
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
console.log(`load ${(await Bun.file('/proc/loadavg').text()).trim()}; wrk -c${connections} -d${seconds}s; ${passes} alternating passes`)
for (const u of Object.values(urls)) await run(u, 2) // warm-up
// CPU µs per request as well: the server's CPU for the pass over the requests it answered, steadier than req/s on a shared machine.
const res = { off: { rps: [] as number[], p99: [] as number[], cpu: [] as number[] }, on: { rps: [] as number[], p99: [] as number[], cpu: [] as number[] } }
for (let i = 0; i < passes; i++) {
  for (const side of i % 2 ? (['on', 'off'] as const) : (['off', 'on'] as const)) {
    const cpuBefore = cpuSeconds(server.pid)
    const r = await run(urls[side])
    const cpu = ((cpuSeconds(server.pid) - cpuBefore) * 1e6) / r.requests
    res[side].rps.push(r.rps)
    res[side].p99.push(r.p99ms)
    res[side].cpu.push(cpu)
    console.log(`pass ${i + 1} ${side.padEnd(3)} ${r.rps.toFixed(0).padStart(7)} req/s  p99 ${r.p99ms.toFixed(2)} ms  ${cpu.toFixed(1)} CPU µs/req`)
  }
}
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!
console.log(
  `A trackConversion off  req/s min|median|max ${minMedianMax(res.off.rps)}   p99 ms ${minMedianMax(res.off.p99)}   CPU µs/req ${minMedianMax(res.off.cpu)}`,
)
console.log(
  `B trackConversion on   req/s min|median|max ${minMedianMax(res.on.rps)}   p99 ms ${minMedianMax(res.on.p99)}   CPU µs/req ${minMedianMax(res.on.cpu)}`,
)
console.log(
  `B/A (medians) req/s ${(median(res.on.rps) / median(res.off.rps)).toFixed(3)}; requests per CPU-second ${(median(res.off.cpu) / median(res.on.cpu)).toFixed(3)}`,
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
