/**
 * Redirect throughput, tail latency and memory against two baselines over the same certificate,
 * with wrk over HTTPS on loopback:
 *   bare:      bare Bun.serve answering the same 302 and reading nothing;
 *   reads:     bare Bun.serve that also reads what any real handler must (the URL, the Host header,
 *              the peer address) and looks the key up in a Map: how much of the gap Bun itself imposes;
 *   shortlink: our server (click capture on with the browser User-Agent);
 *   main:      with --compare-bin: another build of our server (say main's), in the same alternation.
 * All run pinned to one core (taskset, default CPU 1) and wrk to the other (CPU 0); passes alternate
 * bare / reads / shortlink in one run (the order rotates each pass). Usage:
 *   bun scripts/bench/redirect.ts [--passes 3] [--seconds 8] [--connections 64] [--bin dist/shortlink]
 *     [--ua browser|bot] [--visits same|distinct] [--server-cpu 1] [--wrk-cpu 0] [--targets bare,reads,shortlink]
 *     [--compare-bin old/shortlink]  (adds the target `main`, run like shortlink)
 * --visits distinct: every request carries its own Referer and its own client address in
 *   X-Forwarded-For (the server trusts the loopback proxy), so referers and geo lookups vary as in
 *   real traffic (scripts/bench/wrk.ts distinctVisitsScript). A 3-minute soak:
 *   --visits distinct --passes 1 --seconds 180 --targets shortlink (only ours: the soak is about its memory,
 *   latency and stored clicks; the ratios need the baselines).
 * Prints req/s and p99 per pass, min/median/max per target, the ratios of the medians (goal:
 * ≥ 0.85× bare and p99 ≤ 1.5× bare's), our servers' CPU per request by thread (the event loop,
 * the click writer's worker, Bun's pool where DuckDB runs; redirect-server.ts threadCpuSeconds),
 * their RSS (idle, lowest and highest during their passes, 10 s after) and whether every click was stored (the link's clicks against the 302s
 * wrk received; wrk may drop up to --connections answers in flight when a run ends).
 */
import { resolve } from 'node:path'
import { arg } from './args'
import { cpuSeconds, rssMb, rssPartsMb, startBareServer, startBenchServer, threadCpuSeconds } from './redirect-server'
import { BOT_UA, BROWSER_UA, distinctVisitsScript, type WrkResult, wrk } from './wrk'

const connections = Number(arg('connections', '64'))
const seconds = Number(arg('seconds', '8'))
const passes = Number(arg('passes', '3'))
const bin = arg('bin', '')
/** browser: every visit is a counted click; bot: a crawler UA, redirected but not counted. */
const agent = arg('ua', 'browser')
const visits = arg('visits', 'same')
const serverCpu = arg('server-cpu', '1')
const wrkCpu = arg('wrk-cpu', '0')
const ROOT = resolve(import.meta.dir, '../..')
const loadavg = async () => (await Bun.file('/proc/loadavg').text()).split(' ').slice(0, 3).join(' ')

if (!Bun.which('wrk')) throw new Error('wrk is needed: apt-get install wrk')
if (visits !== 'same' && visits !== 'distinct') throw new Error('--visits same|distinct')

// Our server, from a temp dir, on the embedded defaults plus random ports, with the short link /bench;
// it trusts wrk's X-Forwarded-For from loopback (without the header, the peer address is the client's).
const startOurs = (b: string) => startBenchServer({ root: ROOT, bin: b || undefined, cpus: serverCpu, serverToml: 'trustProxy = ["127.0.0.1", "::1"]' })
const compareBin = arg('compare-bin', '')
const server = await startOurs(bin)
const other = compareBin ? await startOurs(compareBin) : null
await Bun.sleep(2000) // let start-up work settle
/** Our servers: this build, and the one compared with it. */
const ours = { shortlink: server, ...(other ? { main: other } : {}) } as Record<Ours, typeof server>
type Ours = 'shortlink' | 'main'
const OURS = Object.keys(ours) as Ours[]
const fresh = Object.fromEntries(OURS.map((t) => [t, rssMb(ours[t].pid)])) as Record<Ours, number>
const LOCATION = 'https://example.com/landing?from=bench&utm_source=qr'

/** A baseline in a process of its own on the same core as ours, over the same certificate. */
async function baseline(name: string, fetchSource: string) {
  const { proc, origin } = await startBareServer(server, name, fetchSource, serverCpu)
  return { proc, url: `${origin}/bench` }
}
const bare = await baseline('bare', `const fetch = () => new Response(null, { status: 302, headers: { location: ${JSON.stringify(LOCATION)} } })`)
// What every real handler pays before its own work: the URL string, the Host header, the peer address, a key lookup.
const reads = await baseline(
  'reads',
  `const links = new Map([['bench', ${JSON.stringify(LOCATION)}]])
function fetch(request, server) {
  const url = request.url
  const host = request.headers.get('host')
  const peer = server.requestIP(request)?.address
  const start = url.indexOf('/', url.indexOf('//') + 2)
  const q = url.indexOf('?', start)
  const location = links.get(url.slice(start + 1, q < 0 ? undefined : q))
  if (location === undefined || host === null || peer === undefined) return new Response(null, { status: 404 })
  return new Response(null, { status: 302, headers: { location } })
}`,
)

const targets = {
  bare: { url: bare.url, pid: bare.proc.pid },
  reads: { url: reads.url, pid: reads.proc.pid },
  shortlink: { url: `https://localhost:${server.httpsPort}/bench`, pid: server.pid },
  main: { url: `https://localhost:${other?.httpsPort}/bench`, pid: other?.pid ?? 0 },
} as const
type Target = keyof typeof targets
const isOurs = (t: Target): t is Ours => t === 'shortlink' || t === 'main'
const ORDER = arg('targets', other ? 'bare,reads,main,shortlink' : 'bare,reads,shortlink').split(',') as Target[]
if (!ORDER.includes('shortlink') || ORDER.some((t) => !(t in targets)) || (ORDER.includes('main') && !other))
  throw new Error('--targets: shortlink and any of bare, reads, main (main with --compare-bin)')
const script = visits === 'distinct' ? distinctVisitsScript('/bench') : undefined
const run = (t: Target, secs = seconds) =>
  wrk({ url: targets[t].url, seconds: secs, connections, cpus: wrkCpu, ua: agent === 'bot' ? BOT_UA : BROWSER_UA, script })
/** 302s our servers sent that wrk received: each one a counted visit (browser User-Agent). */
const redirected: Record<Ours, number> = { shortlink: 0, main: 0 }
const count302 = (t: Ours, r: WrkResult) => {
  redirected[t] += r.statuses ? (r.statuses['302'] ?? 0) : r.requests - Number(/Non-2xx or 3xx responses: (\d+)/.exec(r.errors)?.[1] ?? 0)
  return r
}

console.log(
  `load ${await loadavg()}; wrk -t2 -c${connections} -d${seconds}s over HTTPS on loopback, ${visits === 'distinct' ? 'a distinct Referer and X-Forwarded-For per visit' : 'the same visit every time'}; servers on CPU ${serverCpu}, wrk on CPU ${wrkCpu}; ${passes} alternating passes`,
)
for (const t of ORDER)
  if (isOurs(t))
    count302(t, await run(t, 2)) // warm-up
  else await run(t, 2)
await Bun.sleep(1500)
const idle = Object.fromEntries(OURS.map((t) => [t, rssMb(ours[t].pid)])) as Record<Ours, number>
/** Per thread kind, from here to 10 s after the last pass (so the click writer's catch-up counts). */
const threadsBefore = Object.fromEntries(OURS.map((t) => [t, threadCpuSeconds(ours[t].pid)])) as Record<Ours, Record<string, number>>
const rss = Object.fromEntries(OURS.map((t) => [t, { low: Number.POSITIVE_INFINITY, high: idle[t], highParts: '' }])) as Record<
  Ours,
  { low: number; high: number; highParts: string }
>
const peaks: Record<Target, number> = { bare: rssMb(bare.proc.pid), reads: rssMb(reads.proc.pid), shortlink: idle.shortlink, main: idle.main ?? 0 }
let loaded: Target | null = null
const sampler = setInterval(() => {
  for (const t of ORDER) peaks[t] = Math.max(peaks[t], rssMb(targets[t].pid))
  if (loaded && isOurs(loaded)) {
    const now = rssPartsMb(ours[loaded].pid)
    const r = rss[loaded]
    r.low = Math.min(r.low, now.rss)
    if (now.rss > r.high) {
      r.high = now.rss
      r.highParts = `anon ${now.anon.toFixed(0)} + file ${now.file.toFixed(0)}`
    }
  }
}, 100)
const results: Record<Target, WrkResult[]> = { bare: [], reads: [], shortlink: [], main: [] }
/**
 * CPU µs the server spent per answered request: on a shared, loaded machine req/s measures the
 * scheduler as much as the server; CPU per request does not (1e6 / it = req/s on a whole core).
 */
const cpuUs: Record<Target, number[]> = { bare: [], reads: [], shortlink: [], main: [] }
for (let i = 0; i < passes; i++) {
  const order = [...ORDER.slice(i % ORDER.length), ...ORDER.slice(0, i % ORDER.length)]
  const line: string[] = []
  for (const t of order) {
    loaded = t
    const cpuBefore = cpuSeconds(targets[t].pid)
    const r = await run(t)
    cpuUs[t].push(((cpuSeconds(targets[t].pid) - cpuBefore) * 1e6) / r.requests)
    loaded = null
    if (isOurs(t)) count302(t, r)
    results[t].push(r)
    line.push(
      `${t} ${r.rps.toFixed(0)} req/s p99 ${r.p99ms.toFixed(2)} ms ${cpuUs[t].at(-1)!.toFixed(1)} CPU µs/req${r.errors === 'none' ? '' : ` (${r.errors})`}`,
    )
  }
  console.log(`pass ${i + 1}: ${line.join(' | ')}`)
}
clearInterval(sampler)
const loadAfter = await loadavg()
bare.proc.kill()
reads.proc.kill()
await Bun.sleep(10_000)
const after = Object.fromEntries(OURS.map((t) => [t, rssMb(ours[t].pid)])) as Record<Ours, number>
const threadSplit = Object.fromEntries(
  OURS.map((t) => {
    const now = threadCpuSeconds(ours[t].pid)
    const requests = results[t].reduce((sum, r) => sum + r.requests, 0)
    const parts = Object.keys(now).map((k) => `${k} ${(((now[k]! - (threadsBefore[t][k] ?? 0)) * 1e6) / requests).toFixed(1)}`)
    return [t, parts.join(', ')]
  }),
) as Record<Ours, string>

const stat = (xs: number[], digits = 0) => {
  const s = [...xs].sort((a, b) => a - b)
  const median = s[Math.floor(s.length / 2)]!
  return { median, text: `${s[0]!.toFixed(digits)} / ${median.toFixed(digits)} / ${s[s.length - 1]!.toFixed(digits)}` }
}
const rps = (t: Target) => stat(results[t].map((r) => r.rps))
const p99 = (t: Target) =>
  stat(
    results[t].map((r) => r.p99ms),
    2,
  )
const cpu = (t: Target) => stat(cpuUs[t], 1)
for (const t of ORDER)
  console.log(`${t.padEnd(9)} req/s min/median/max ${rps(t).text}   p99 ms ${p99(t).text}   CPU µs/req ${cpu(t).text}   peak RSS ${peaks[t].toFixed(0)} MB`)
if (ORDER.includes('bare') && ORDER.includes('reads')) {
  console.log(
    `CPU per request, bare / shortlink (the throughput ratio on a whole core each): ${(cpu('bare').median / cpu('shortlink').median).toFixed(3)}×; bare / reads ${(cpu('bare').median / cpu('reads').median).toFixed(3)}×`,
  )
  for (const t of OURS)
    console.log(
      `${t} / bare: throughput ${(rps(t).median / rps('bare').median).toFixed(3)}× (goal ≥ 0.85), p99 ${(p99(t).median / p99('bare').median).toFixed(2)}× (goal ≤ 1.5), CPU per request ${(cpu('bare').median / cpu(t).median).toFixed(3)}×`,
    )
  console.log(
    `reads / bare (what Bun imposes on any handler that reads URL, Host and peer): throughput ${(rps('reads').median / rps('bare').median).toFixed(3)}×, p99 ${(p99('reads').median / p99('bare').median).toFixed(2)}×; shortlink / reads: ${(rps('shortlink').median / rps('reads').median).toFixed(3)}×`,
  )
}
for (const t of OURS)
  console.log(
    `${t} CPU µs per request by thread over its passes (to 10 s after them): ${threadSplit[t]}\n${t} RSS MB: fresh ${fresh[t].toFixed(0)}, after the warm-up ${idle[t].toFixed(0)}, during its passes ${rss[t].low.toFixed(0)}-${rss[t].high.toFixed(0)} (at the high: ${rss[t].highParts}), 10 s after ${after[t].toFixed(0)}`,
  )
console.log(`load at the end ${loadAfter}`)

if (agent === 'browser') {
  for (const t of OURS) {
    const { httpsPort, apiKey, ca } = ours[t]
    // The clicks are written within the flush window, later when the writer falls behind: read until every
    // 302 is counted, or the count has not moved for 15 s (3 min at most), and say how long that took.
    const clicksNow = async () =>
      (
        (await (
          await fetch(`https://localhost:${httpsPort}/api/links?search=bench`, { headers: { authorization: `Bearer ${apiKey}` }, tls: { ca } } as RequestInit)
        ).json()) as { links: { clicks: number }[] }
      ).links[0]?.clicks ?? 0
    const waitStarted = performance.now()
    let clicks = await clicksNow()
    for (let still = 0, i = 0; clicks < redirected[t] && still < 15 && i < 180; i++) {
      await Bun.sleep(1000)
      const c = await clicksNow()
      still = c === clicks ? still + 1 : 0
      clicks = c
    }
    console.log(`${t}: clicks caught up ${((performance.now() - waitStarted) / 1000 + 10).toFixed(0)} s after the last pass`)
    const runs = passes + 1
    const lost = redirected[t] - clicks
    console.log(
      `${t}: clicks stored ${clicks}, 302s wrk received ${redirected[t]} (warm-up included): ${lost <= 0 && -lost <= connections * runs ? 'every click stored' : lost > 0 ? `${lost} CLICKS MISSING` : `${-lost} more clicks than 302s, beyond the ${connections * runs} answers wrk may drop in flight`}`,
    )
  }
}
await other?.stop()
await server.stop()
