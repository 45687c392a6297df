/**
 * Redirect throughput and latency against the bare-Bun baseline, with wrk over HTTPS
 * on loopback (both servers on the same certificate). Usage:
 *   bun scripts/bench/redirect.ts [--connections 64] [--seconds 10] [--bin dist/shortlink] [--ua browser|bot]
 * Prints requests/s and latency percentiles for each, and the ratio.
 */
import { readFileSync } from 'node:fs'
import { resolve } from 'node:path'
import { $ } from 'bun'
import { arg } from './args'
import { freePort, startBenchServer } from './redirect-server'

const connections = Number(arg('connections', '64'))
const seconds = Number(arg('seconds', '10'))
const bin = arg('bin', '')
/** browser: every visit is a counted click; bot: a crawler UA, redirected but not counted. */
const agent = arg('ua', 'browser')
const ROOT = resolve(import.meta.dir, '../..')

if (!Bun.which('wrk')) throw new Error('wrk is needed: apt-get install wrk')

interface WrkResult {
  rps: number
  p50: string
  p99: string
  errors: string
}
const UA_BOT = 'Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)'
const BROWSER = 'Mozilla/5.0 (iPhone; CPU iPhone OS 17_4 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4 Mobile/15E148 Safari/604.1'
async function wrk(url: string): Promise<WrkResult> {
  // A browser User-Agent, so every visit is a counted click (wrk's default UA would be a bot).
  const out = await $`wrk -t2 -c${connections} -d${seconds}s --latency -H ${`User-Agent: ${agent === 'bot' ? UA_BOT : BROWSER}`} ${url}`.text()
  const rps = Number(/Requests\/sec:\s+([\d.]+)/.exec(out)?.[1] ?? 0)
  const p50 = /\s50%\s+(\S+)/.exec(out)?.[1] ?? '?'
  const p99 = /\s99%\s+(\S+)/.exec(out)?.[1] ?? '?'
  const errors = /Socket errors:.*|Non-2xx or 3xx responses: \d+/.exec(out)?.[0] ?? 'none'
  return { rps, p50, p99, errors }
}

// Our server, from a temp dir, on the embedded defaults plus random ports, with the short link /bench.
const server = await startBenchServer({ root: ROOT, bin: bin || undefined })
const { dir, ca, httpsPort, apiKey: key } = server

// The baseline: bare Bun.serve with the same certificate answering the same 302.
const cert = readFileSync(`${dir}/data/tls/cert.pem`, 'utf8')
const tlsKey = readFileSync(`${dir}/data/tls/key.pem`, 'utf8')
const barePort = await freePort()
const bare = Bun.serve({
  port: barePort,
  hostname: '127.0.0.1',
  tls: { cert, key: tlsKey },
  fetch: () => new Response(null, { status: 302, headers: { location: 'https://example.com/landing?from=bench&utm_source=qr' } }),
})

console.log(`wrk -t2 -c${connections} -d${seconds}s over HTTPS on loopback (2 cores shared by wrk and the server)`)
await wrk(`https://127.0.0.1:${barePort}/bench`) // warm-up
const baseline = await wrk(`https://127.0.0.1:${barePort}/bench`)
console.log(`bare Bun.serve 302      ${baseline.rps.toFixed(0).padStart(8)} req/s  p50 ${baseline.p50}  p99 ${baseline.p99}  errors: ${baseline.errors}`)
bare.stop(true)
await wrk(`https://localhost:${httpsPort}/bench`)
const ours = await wrk(`https://localhost:${httpsPort}/bench`)
console.log(`shortlink redirect      ${ours.rps.toFixed(0).padStart(8)} req/s  p50 ${ours.p50}  p99 ${ours.p99}  errors: ${ours.errors}`)
console.log(`ratio: ${((100 * ours.rps) / baseline.rps).toFixed(1)}% of bare Bun.serve`)

await Bun.sleep(1500) // one flush window
const link = (await (
  await fetch(`https://localhost:${httpsPort}/api/links?search=bench`, { headers: { authorization: `Bearer ${key}` }, tls: { ca } } as RequestInit)
).json()) as any
console.log(`clicks recorded for the short link (warm-up + measured runs): ${link.links[0]?.clicks}`)
await server.stop()
