/**
 * What metrics cost the redirect path: three servers answer the same counted 302 over HTTPS,
 * passes alternating A / B / C in one run (wrk on one core, the servers pinned to the other):
 *   A: the tree given by --base (a checkout before the metrics, e.g. `git archive <commit>`),
 *   B: this tree, metrics listener off (the recording on the redirect path is always there),
 *   C: this tree, metrics listener on and scraped every second during the passes.
 * Prints req/s and p99 min/median/max per side, and the scrape time of C's /metrics (client side:
 * request to last byte) at rest and under load. Usage:
 *   bun scripts/bench/metrics.ts --base /tmp/base-tree [--passes 5] [--seconds 8] [--connections 64]
 */
import { resolve } from 'node:path'
import { $ } from 'bun'
import { arg } from './args'
import { freePort, startBenchServer } from './redirect-server'

const base = arg('base', '')
if (!base) throw new Error('--base DIR: a checkout without the metrics (its node_modules installed or linked)')
const passes = Number(arg('passes', '5'))
const seconds = Number(arg('seconds', '8'))
const connections = Number(arg('connections', '64'))
const ROOT = resolve(import.meta.dir, '../..')
const BROWSER = 'Mozilla/5.0 (iPhone; CPU iPhone OS 17_4 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4 Mobile/15E148 Safari/604.1'

const ms = (v: string) => (v.endsWith('us') ? Number.parseFloat(v) / 1000 : v.endsWith('ms') ? Number.parseFloat(v) : Number.parseFloat(v) * 1000)
async function wrk(url: string, secs = seconds) {
  const out = await $`taskset -c 0 wrk -t2 -c${connections} -d${secs}s --latency -H ${`User-Agent: ${BROWSER}`} ${url}`.text()
  return { rps: Number(/Requests\/sec:\s+([\d.]+)/.exec(out)?.[1] ?? 0), p99: ms(/\s99%\s+(\S+)/.exec(out)?.[1] ?? 'NaN') }
}

// In-process first: what recording one redirect costs (the histogram observation and the status count), by itself.
{
  const { httpRequests, redirectDuration } = await import('../../src/metrics')
  const redirects = httpRequests.labels('redirect')
  const N = 5_000_000
  const runs: number[] = []
  for (let r = 0; r < 7; r++) {
    const t = performance.now()
    for (let i = 0; i < N; i++) {
      redirectDuration.observe(i & 1023 ? 0.0004 : 0.03)
      redirects.inc(i & 255 ? 302 : 404)
    }
    runs.push(((performance.now() - t) * 1e6) / N)
  }
  runs.sort((a, b) => a - b)
  console.log(`recording one redirect in-process (ns, min/median/max of 7 × ${N}): ${runs[0]!.toFixed(1)} / ${runs[3]!.toFixed(1)} / ${runs[6]!.toFixed(1)}`)
}

const metricsPort = await freePort()
const sides = {
  A: await startBenchServer({ root: resolve(base), cpus: '1' }),
  B: await startBenchServer({ root: ROOT, cpus: '1' }),
  C: await startBenchServer({ root: ROOT, cpus: '1', toml: `[metrics]\nlisten = "127.0.0.1:${metricsPort}"\n` }),
}
const url = (s: { httpsPort: number }) => `https://localhost:${s.httpsPort}/bench`
const scrapeUrl = `http://127.0.0.1:${metricsPort}/metrics`

async function scrapeMs(): Promise<number> {
  const t = performance.now()
  await (await fetch(scrapeUrl)).text()
  return performance.now() - t
}
const idleScrapes: number[] = []
for (let i = 0; i < 30; i++) idleScrapes.push(await scrapeMs())

for (const s of Object.values(sides)) await wrk(url(s), 2) // warm-up
const results: Record<string, { rps: number[]; p99: number[] }> = { A: { rps: [], p99: [] }, B: { rps: [], p99: [] }, C: { rps: [], p99: [] } }
const loadedScrapes: number[] = []
const order = ['A', 'B', 'C'] as const
console.log(`uptime: ${(await $`uptime`.text()).trim()}`)
for (let p = 0; p < passes; p++) {
  // Rotate the order every pass, so no side always runs first.
  for (let k = 0; k < 3; k++) {
    const side = order[(p + k) % 3]!
    let scraping: ReturnType<typeof setInterval> | null = null
    if (side === 'C') scraping = setInterval(() => void scrapeMs().then((t) => loadedScrapes.push(t)), 1000)
    const r = await wrk(url(sides[side]))
    if (scraping) clearInterval(scraping)
    results[side]!.rps.push(r.rps)
    results[side]!.p99.push(r.p99)
    console.log(`pass ${p + 1} ${side}: ${r.rps.toFixed(0)} req/s, p99 ${r.p99.toFixed(2)} ms`)
  }
}
const mmm = (xs: number[], d = 0) => {
  const s = [...xs].sort((a, b) => a - b)
  return `${s[0]!.toFixed(d)} / ${s[s.length >> 1]!.toFixed(d)} / ${s[s.length - 1]!.toFixed(d)}`
}
const label = { A: 'A base (no metrics code)', B: 'B metrics recorded, listener off', C: 'C metrics on, scraped every 1 s' }
for (const side of order) console.log(`${label[side]}: req/s min/median/max ${mmm(results[side]!.rps)}, p99 ms ${mmm(results[side]!.p99, 2)}`)
console.log(`scrape of /metrics (ms, min/median/max): at rest ${mmm(idleScrapes, 2)}; under redirect load ${mmm(loadedScrapes, 2)}`)
const text = await (await fetch(scrapeUrl)).text()
console.log(`the scrape: ${text.length} bytes, ${text.split('\n').filter((l) => l && !l.startsWith('#')).length} samples`)
for (const s of Object.values(sides)) await s.stop()
