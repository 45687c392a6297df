/**
 * A/B of the redirect path between two builds (say main and a branch): the same ordinary short
 * link, wrk over HTTPS on loopback, passes alternating A, B, B, A… in one run; and, on B, a GS1
 * Digital Link URI of a product. Both servers pinned to one core, wrk to the other.
 *   bun scripts/bench/redirect-ab.ts --a /path/to/main/dist/shortlink --b dist/shortlink [--passes 6] [--seconds 6] [--connections 64]
 *   [--no-gs1]: no GS1 passes (they run on B only, so they may tilt an A/B of the ordinary link)
 *   [--tracked]: both sides visit a link with trackConversion on (a click id per visit) instead of the ordinary one
 *   [--b-print N]: B makes a print run of N codes (zip-png) while the passes go (A = B's build, to see what a run costs redirects)
 * Prints req/s and p99 per pass, then min | median | max per side.
 */
import { resolve } from 'node:path'
import { minMedianMax } from './ab'
import { arg } from './args'
import { cpuSeconds, startBenchServer } from './redirect-server'
import { wrk } from './wrk'

const ROOT = resolve(import.meta.dir, '../..')
const passes = Number(arg('passes', '6'))
const seconds = Number(arg('seconds', '6'))
const connections = Number(arg('connections', '64'))
/** wrk over HTTPS as every redirect bench runs it (wrk.ts: a browser User-Agent, --latency), on core 0. */
const run = (url: string, secs = seconds) => wrk({ url, seconds: secs, connections, cpus: '0' })

const a = await startBenchServer({ root: ROOT, bin: resolve(arg('a', '')), cpus: '1' })
const b = await startBenchServer({ root: ROOT, bin: resolve(arg('b', 'dist/shortlink')), cpus: '1' })
/** The API of a bench server: GET without a body, POST with one. */
const apiOf = (s: typeof b) => (path: string, json?: unknown) =>
  fetch(`https://localhost:${s.httpsPort}/api${path}`, {
    method: json === undefined ? 'GET' : 'POST',
    headers: { authorization: `Bearer ${s.apiKey}`, 'content-type': 'application/json' },
    body: json === undefined ? undefined : JSON.stringify(json),
    tls: { ca: s.ca },
  } as RequestInit)
const bApi = apiOf(b)
const product = await bApi('/links/gs1', {
  data: { gtin: '09506000134352', url: 'https://example.com/landing?from=bench' },
  linkOptions: { utm: { source: 'qr' } },
})
if (product.status !== 200) throw new Error(`product: ${product.status}`)
const printCodes = Number(arg('b-print', '0'))
let runId = ''
if (printCodes) {
  const ids: string[] = []
  for (let i = 0; i < printCodes; i++)
    ids.push(((await (await bApi('/links/link', { data: { url: `https://example.com/p/${i}` } })).json()) as { id: string }).id)
  runId = ((await (await bApi('/qr/batches', { linkIds: ids, format: 'zip-png' })).json()) as { id: string }).id
}
const tracked = process.argv.includes('--tracked')
const withGs1 = !process.argv.includes('--no-gs1')
if (tracked)
  for (const s of [a, b]) {
    const r = await apiOf(s)('/links/link', {
      data: { url: 'https://example.com/landing?from=bench' },
      linkOptions: { key: 'bench-tracked', utm: { source: 'qr' }, trackConversion: true },
    })
    if (r.status !== 200) throw new Error(`tracked link: ${r.status}`)
  }
const path = tracked ? 'bench-tracked' : 'bench'
const urls = {
  a: `https://localhost:${a.httpsPort}/${path}`,
  b: `https://localhost:${b.httpsPort}/${path}`,
  gs1: `https://localhost:${b.httpsPort}/01/09506000134352/10/L42?17=271231`,
}
console.log(`load ${(await Bun.file('/proc/loadavg').text()).trim()}; wrk -c${connections} -d${seconds}s; ${passes} alternating passes`)
for (const [side, u] of Object.entries(urls)) if (side !== 'gs1' || withGs1) await run(u, 2) // warm-up
// CPU µs per request as well: on a loaded machine req/s measures the scheduler as much as the server.
const pids = { a: a.pid, b: b.pid, gs1: b.pid }
const res: Record<keyof typeof urls, { rps: number[]; p99: number[]; cpu: number[] }> = {
  a: { rps: [], p99: [], cpu: [] },
  b: { rps: [], p99: [], cpu: [] },
  gs1: { rps: [], p99: [], cpu: [] },
}
for (let i = 0; i < passes; i++) {
  const order = ((i % 2 ? ['gs1', 'b', 'a'] : ['a', 'b', 'gs1']) as (keyof typeof urls)[]).filter((s) => s !== 'gs1' || withGs1)
  for (const side of order) {
    const cpuBefore = cpuSeconds(pids[side])
    const r = await run(urls[side])
    const cpu = ((cpuSeconds(pids[side]) - cpuBefore) * 1e6) / r.requests
    res[side].rps.push(r.rps)
    res[side].p99.push(r.p99ms)
    res[side].cpu.push(cpu)
    console.log(`pass ${i + 1} ${side.padEnd(3)} ${r.rps.toFixed(0).padStart(7)} req/s  p99 ${r.p99ms.toFixed(2)} ms  ${cpu.toFixed(1)} CPU µs/req`)
  }
}
for (const [side, label] of [
  ['a', `A ${tracked ? 'tracked' : 'ordinary'} link`],
  ['b', `B ${tracked ? 'tracked' : 'ordinary'} link`],
  ['gs1', 'B GS1 URI'],
] as const)
  if (res[side].rps.length)
    console.log(
      `${label.padEnd(16)} req/s min|median|max ${minMedianMax(res[side].rps)}   p99 ms ${minMedianMax(res[side].p99)}   CPU µs/req ${minMedianMax(res[side].cpu)}`,
    )
if (runId) console.log(`B's print run after the passes: ${JSON.stringify(await (await bApi(`/qr/batches/${runId}`)).json(), ['status', 'done', 'total'])}`)
await a.stop()
await b.stop()
process.exit(0)
