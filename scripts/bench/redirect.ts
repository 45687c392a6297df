/**
 * Redirect throughput, tail latency and memory against a bare Bun.serve baseline answering the
 * same 302 over the same certificate, with wrk over HTTPS on loopback. Both servers run pinned
 * to one core (taskset, default CPU 1) and wrk to the other (CPU 0); passes alternate bare /
 * shortlink in one run. Usage:
 *   bun scripts/bench/redirect.ts [--passes 3] [--seconds 8] [--connections 64] [--bin dist/shortlink]
 *     [--ua browser|bot] [--server-cpu 1] [--wrk-cpu 0]
 * Prints req/s and p99 per pass, then min/median/max of each, the ratio of the medians (goal:
 * ≥ 0.90 and p99 ≤ 1.5× bare's), and shortlink's RSS: idle, peak during the passes, 10 s after.
 */
import { writeFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { $ } from 'bun'
import { arg } from './args'
import { freePort, rssMb, startBenchServer } from './redirect-server'

const connections = Number(arg('connections', '64'))
const seconds = Number(arg('seconds', '8'))
const passes = Number(arg('passes', '3'))
const bin = arg('bin', '')
/** browser: every visit is a counted click; bot: a crawler UA, redirected but not counted. */
const agent = arg('ua', 'browser')
const serverCpu = arg('server-cpu', '1')
const wrkCpu = arg('wrk-cpu', '0')
const ROOT = resolve(import.meta.dir, '../..')

if (!Bun.which('wrk')) throw new Error('wrk is needed: apt-get install wrk')

interface WrkResult {
  rps: number
  p99ms: number
  errors: string
}
const UA_BOT = 'Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)'
const BROWSER = 'Mozilla/5.0 (iPhone; CPU iPhone OS 17_4 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4 Mobile/15E148 Safari/604.1'
const ms = (v: string) => (v.endsWith('us') ? Number.parseFloat(v) / 1000 : v.endsWith('ms') ? Number.parseFloat(v) : Number.parseFloat(v) * 1000)
async function wrk(url: string, secs = seconds): Promise<WrkResult> {
  // A browser User-Agent, so every visit is a counted click (wrk's default UA would be a bot).
  const ua = `User-Agent: ${agent === 'bot' ? UA_BOT : BROWSER}`
  const out = await $`taskset -c ${wrkCpu} wrk -t2 -c${connections} -d${secs}s --latency -H ${ua} ${url}`.text()
  return {
    rps: Number(/Requests\/sec:\s+([\d.]+)/.exec(out)?.[1] ?? 0),
    p99ms: ms(/\s99%\s+(\S+)/.exec(out)?.[1] ?? 'NaN'),
    errors: /Socket errors:.*|Non-2xx or 3xx responses: \d+/.exec(out)?.[0] ?? 'none',
  }
}

// Our server, from a temp dir, on the embedded defaults plus random ports, with the short link /bench.
const server = await startBenchServer({ root: ROOT, bin: bin || undefined, cpus: serverCpu })
const { dir, ca, httpsPort, apiKey: key } = server

// The baseline in a process of its own on the same core: bare Bun.serve, same certificate, same 302.
const barePort = await freePort()
const bareScript = join(dir, 'bare.ts')
writeFileSync(
  bareScript,
  `Bun.serve({ port: ${barePort}, hostname: '127.0.0.1', tls: { cert: Bun.file(${JSON.stringify(`${dir}/data/tls/cert.pem`)}), key: Bun.file(${JSON.stringify(`${dir}/data/tls/key.pem`)}) },
  fetch: () => new Response(null, { status: 302, headers: { location: 'https://example.com/landing?from=bench&utm_source=qr' } }) })
console.log('ready')`,
)
const bare = Bun.spawn(['taskset', '-c', serverCpu, process.execPath, bareScript], { stdout: 'pipe', stderr: 'inherit' })
for await (const chunk of bare.stdout as ReadableStream<Uint8Array>) if (new TextDecoder().decode(chunk).includes('ready')) break

const bareUrl = `https://127.0.0.1:${barePort}/bench`
const oursUrl = `https://localhost:${httpsPort}/bench`
console.log(`wrk -t2 -c${connections} -d${seconds}s over HTTPS on loopback; servers on CPU ${serverCpu}, wrk on CPU ${wrkCpu}; ${passes} alternating passes`)
await wrk(bareUrl, 2) // warm-up
await wrk(oursUrl, 2)
await Bun.sleep(1500)
const idle = rssMb(server.pid)
let peak = idle
const bareIdle = rssMb(bare.pid)
let barePeak = bareIdle
const sampler = setInterval(() => {
  peak = Math.max(peak, rssMb(server.pid))
  barePeak = Math.max(barePeak, rssMb(bare.pid))
}, 100)
const runs: { bare: WrkResult; ours: WrkResult }[] = []
for (let i = 0; i < passes; i++) {
  const b = await wrk(bareUrl)
  const o = await wrk(oursUrl)
  runs.push({ bare: b, ours: o })
  console.log(
    `pass ${i + 1}: bare ${b.rps.toFixed(0)} req/s p99 ${b.p99ms.toFixed(2)} ms (${b.errors}) | shortlink ${o.rps.toFixed(0)} req/s p99 ${o.p99ms.toFixed(2)} ms (${o.errors})`,
  )
}
clearInterval(sampler)
bare.kill()
await Bun.sleep(10_000)
const after = rssMb(server.pid)

const stat = (xs: number[], digits = 0) => {
  const s = [...xs].sort((a, b) => a - b)
  return {
    min: s[0]!,
    median: s[Math.floor(s.length / 2)]!,
    max: s[s.length - 1]!,
    text: `${s[0]!.toFixed(digits)} / ${s[Math.floor(s.length / 2)]!.toFixed(digits)} / ${s[s.length - 1]!.toFixed(digits)}`,
  }
}
const bareRps = stat(runs.map((r) => r.bare.rps))
const oursRps = stat(runs.map((r) => r.ours.rps))
const bareP99 = stat(
  runs.map((r) => r.bare.p99ms),
  2,
)
const oursP99 = stat(
  runs.map((r) => r.ours.p99ms),
  2,
)
console.log(`req/s min/median/max: bare ${bareRps.text} | shortlink ${oursRps.text}`)
console.log(`p99 ms min/median/max: bare ${bareP99.text} | shortlink ${oursP99.text}`)
console.log(
  `shortlink / bare: throughput ${(oursRps.median / bareRps.median).toFixed(3)}× (goal ≥ 0.90), p99 ${(oursP99.median / bareP99.median).toFixed(2)}× (goal ≤ 1.5)`,
)
console.log(`shortlink RSS MB: idle ${idle.toFixed(0)}, peak during the passes ${peak.toFixed(0)}, 10 s after ${after.toFixed(0)}`)
console.log(`bare Bun.serve RSS MB (the same TLS load, no application): idle ${bareIdle.toFixed(0)}, peak ${barePeak.toFixed(0)}`)

const link = (await (
  await fetch(`https://localhost:${httpsPort}/api/links?search=bench`, { headers: { authorization: `Bearer ${key}` }, tls: { ca } } as RequestInit)
).json()) as { links: { clicks: number }[] }
console.log(`clicks recorded for the short link (warm-up + measured passes): ${link.links[0]?.clicks}`)
await server.stop()
