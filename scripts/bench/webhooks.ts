/**
 * Webhooks under load, against the built binary (or `bun src/main.ts`) pinned to one core,
 * with the load and a receiver (Bun.serve, loopback, every delivery verified with the
 * standardwebhooks reference library) in this process; run this process on the other core.
 *
 *   taskset -c 0 bun scripts/bench/webhooks.ts [--bin dist/shortlink] [--rate 1000] [--seconds 10] [--passes 6]
 *     [--server-cpu 1] [--outage-minutes 0] [--outage-rate 100]
 *
 * 1. Redirect latency with and without a busy link.clicked endpoint, A/B in one run: passes of
 *    about `rate` visits a second (wrk on this process's core, paced by a per-connection delay)
 *    alternate between the link's webhook enabled and disabled (disabled: no click event is
 *    written at all). Each visit has its own referer, so no two merge and each event's
 *    `click.at` is its visit's time. After a pass the receiver must hold one event per visit.
 * 2. Delivery latency, event to receiver: link.clicked (visit time → arrival, including the
 *    click writer's flush window) and link.created (API request → arrival).
 * 3. With --outage-minutes N: the receiver is down (connection refused) for N minutes while
 *    visits arrive at --outage-rate a second, then comes back: the time until the backlog is
 *    delivered, and whether every event arrived (by id).
 */
import { mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { $ } from 'bun'
import { Webhook } from 'standardwebhooks'
import { arg } from './args'
import { startBenchServer } from './redirect-server'

const ROOT = resolve(import.meta.dir, '../..')
const rate = Number(arg('rate', '1000'))
const seconds = Number(arg('seconds', '10'))
const passes = Number(arg('passes', '6'))
const outageMinutes = Number(arg('outage-minutes', '0'))
const outageRate = Number(arg('outage-rate', '100'))
const UA = 'Mozilla/5.0 (X11; Linux x86_64; rv:125.0) Gecko/20100101 Firefox/125.0'

const server = await startBenchServer({
  root: ROOT,
  bin: arg('bin', '') || undefined,
  cpus: arg('server-cpu', '1'),
  toml: '[webhooks]\nallowPrivateNetworks = true\n',
})
const api = async (path: string, method = 'GET', body?: unknown) => {
  const r = await fetch(`https://localhost:${server.httpsPort}/api${path}`, {
    method,
    headers: { authorization: `Bearer ${server.apiKey}`, ...(body ? { 'content-type': 'application/json' } : {}) },
    body: body ? JSON.stringify(body) : undefined,
    tls: { ca: server.ca },
  } as RequestInit)
  if (r.status >= 300) throw new Error(`${method} ${path}: ${r.status} ${await r.text()}`)
  return r.json() as Promise<any>
}

// The receiver: verifies every delivery, keeps arrival times by event id.
const arrivals = new Map<string, { at: number; type: string; data: any; times: number }>()
let unverified = 0
let verifier: Webhook
let receiverPort = 0
const startReceiver = () => {
  const started = Bun.serve({
    port: receiverPort,
    hostname: '127.0.0.1',
    async fetch(req) {
      const body = await req.text()
      try {
        const env = verifier.verify(body, Object.fromEntries(req.headers)) as { id: string; type: string; data: unknown }
        const seen = arrivals.get(env.id)
        if (seen) seen.times++
        else arrivals.set(env.id, { at: Date.now(), type: env.type, data: env.data, times: 1 })
        return new Response(null, { status: 204 })
      } catch {
        unverified++
        return new Response(null, { status: 400 })
      }
    },
  })
  receiverPort = started.port!
  return started
}
let receiver = startReceiver()

const link = (await api('/links?search=bench')).links[0] as { id: string; shortLink: string }
const hook = await api('/webhooks', 'POST', { url: `http://127.0.0.1:${receiverPort}/in`, events: ['link.clicked', 'link.created'], linkIds: [link.id] })
verifier = new Webhook(hook.secret)

const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b)
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))] ?? Number.NaN
}
const mmm = (xs: number[], digits = 2) => {
  const s = [...xs].sort((a, b) => a - b)
  return `${s[0]!.toFixed(digits)} / ${s[s.length >> 1]!.toFixed(digits)} / ${s[s.length - 1]!.toFixed(digits)}`
}
const clicksArrived = () => [...arrivals.values()].filter((a) => a.type === 'link.clicked').length
async function until(what: string, done: () => boolean, timeoutMs: number) {
  const deadline = Date.now() + timeoutMs
  while (!done()) {
    if (Date.now() > deadline) throw new Error(`timed out: ${what}`)
    await Bun.sleep(50)
  }
}

/** `count` visits at `perSecond`, open loop; latency from when each was due. */
async function visits(count: number, perSecond: number, tag: string) {
  const latencies: number[] = []
  let errors = 0
  /** What went wrong, by kind: an answer other than 302, or the client's error code. */
  const kinds = new Map<string, number>()
  const failed = (kind: string) => {
    errors++
    kinds.set(kind, (kinds.get(kind) ?? 0) + 1)
  }
  const pending: Promise<unknown>[] = []
  const start = performance.now()
  for (let i = 0; i < count; i++) {
    const due = start + (i * 1000) / perSecond
    const wait = due - performance.now()
    if (wait > 1) await Bun.sleep(wait)
    pending.push(
      fetch(link.shortLink, {
        redirect: 'manual',
        headers: { 'user-agent': UA, referer: `https://ref-${tag}-${i}.example/` },
        tls: { ca: server.ca },
      } as RequestInit).then(
        async (r) => {
          await r.arrayBuffer()
          if (r.status !== 302) failed(`HTTP ${r.status}`)
          latencies.push(performance.now() - due)
        },
        (e: { code?: string }) => failed(e?.code ?? 'error'),
      ),
    )
  }
  await Promise.all(pending)
  return { latencies, errors, kinds: [...kinds].map(([k, n]) => `${k}: ${n}`).join(', ') || 'none', elapsed: (performance.now() - start) / 1000 }
}

/** wrk visits for `secs` at about `perSecond` (CONNECTIONS connections, each waiting between requests, less the redirect time it expects), each with its own referer. */
const CONNECTIONS = 16
async function wrkVisits(secs: number, perSecond: number, tag: string) {
  const script = join(mkdtempSync(join(tmpdir(), 'webhooks-bench-')), 'visits.lua')
  writeFileSync(
    script,
    `local n = 0
local tag = "${tag}-" .. tostring(math.random(1000000000))
request = function()
  n = n + 1
  return wrk.format("GET", "/bench", { ["User-Agent"] = "${UA}", ["Referer"] = "https://ref-${tag}-" .. tag .. "-" .. n .. ".example/" })
end
function delay() return ${Math.max(0, Math.floor((CONNECTIONS * 1000) / perSecond) - 7)} end
`,
  )
  const out =
    await $`taskset -c ${arg('wrk-cpu', '0')} wrk -t1 -c${CONNECTIONS} -d${secs}s --latency -s ${script} https://localhost:${server.httpsPort}/bench`.text()
  const ms = (v: string | undefined) =>
    !v ? Number.NaN : v.endsWith('us') ? Number.parseFloat(v) / 1000 : v.endsWith('ms') ? Number.parseFloat(v) : Number.parseFloat(v) * 1000
  return {
    requests: Number(/(\d+) requests in/.exec(out)?.[1] ?? 0),
    p50: ms(/\s50%\s+(\S+)/.exec(out)?.[1]),
    p99: ms(/\s99%\s+(\S+)/.exec(out)?.[1]),
    max: ms(/Latency\s+\S+\s+\S+\s+(\S+)/.exec(out)?.[1]),
    errors: [...out.matchAll(/Socket errors:.*|Non-2xx or 3xx responses: \d+/g)].map((m) => m[0]).join('; ') || 'none',
  }
}

const load = (await Bun.file('/proc/loadavg').text()).trim()
console.log(`load average before: ${load}`)
console.log(
  `${passes} passes of about ${rate} visits/s (wrk, ${CONNECTIONS} paced connections) for ${seconds} s, alternating the link.clicked webhook enabled (with) and disabled (without)`,
)
const warm = await wrkVisits(2, rate, 'warm') // warm-up, webhook enabled
await until('warm-up delivered', () => clicksArrived() >= warm.requests, 60_000)

const results: Record<'with' | 'without', { p50: number[]; p99: number[]; max: number[] }> = {
  with: { p50: [], p99: [], max: [] },
  without: { p50: [], p99: [], max: [] },
}
const clickLatency: number[] = []
for (let p = 0; p < passes; p++) {
  const mode = p % 2 === 0 ? 'with' : 'without'
  await api(`/webhooks/${hook.id}`, 'PATCH', { disabled: mode === 'without' })
  const before = clicksArrived()
  const tag = `p${p}`
  const r = await wrkVisits(seconds, rate, tag)
  if (mode === 'with') {
    await until(`pass ${p + 1}: every visit delivered`, () => clicksArrived() - before >= r.requests, 120_000)
    for (const a of arrivals.values())
      if (a.type === 'link.clicked' && String(a.data.click.refererUrl).includes(`-${tag}-`)) clickLatency.push(a.at - Date.parse(a.data.click.at))
  }
  const res = results[mode]
  res.p50.push(r.p50)
  res.p99.push(r.p99)
  res.max.push(r.max)
  console.log(
    `pass ${p + 1} ${mode.padEnd(7)}: ${r.requests} visits in ${seconds} s (${r.errors}); redirect p50 ${r.p50.toFixed(2)} ms, p99 ${r.p99.toFixed(2)} ms, max ${r.max.toFixed(1)} ms; events delivered ${clicksArrived() - before}`,
  )
  // Let the store settle (a click flush) before the next pass.
  await Bun.sleep(1500)
}
if (passes > 1) {
  console.log(`redirect p99 ms min / median / max: with a busy link.clicked endpoint ${mmm(results.with.p99)} | without ${mmm(results.without.p99)}`)
  console.log(`redirect p50 ms min / median / max: with ${mmm(results.with.p50)} | without ${mmm(results.without.p50)}`)
  console.log(
    `link.clicked delivery latency (visit → receiver, ms): p50 ${pct(clickLatency, 50)}, p99 ${pct(clickLatency, 99)}, max ${pct(clickLatency, 100)} over ${clickLatency.length} events`,
  )
}

// link.created: request start → arrival.
await api(`/webhooks/${hook.id}`, 'PATCH', { disabled: false, linkIds: [] })
const created: number[] = []
for (let i = 0; i < 200; i++) {
  const t0 = Date.now()
  const l = await api('/links/link', 'POST', { data: { url: `https://created-${i}.example/` } })
  const seen = () => [...arrivals.values()].find((a) => a.type === 'link.created' && a.data.id === l.id)
  await until('link.created delivered', () => !!seen(), 30_000)
  created.push(seen()!.at - t0)
}
console.log(
  `link.created delivery latency (API request → receiver, ms): p50 ${pct(created, 50)}, p99 ${pct(created, 99)}, max ${pct(created, 100)} over 200 links`,
)
const dupes = [...arrivals.values()].filter((a) => a.times > 1).length
console.log(`receiver: ${arrivals.size} distinct events, ${dupes} delivered more than once, ${unverified} not verified`)

if (outageMinutes > 0) {
  await api(`/webhooks/${hook.id}`, 'PATCH', { linkIds: [link.id] })
  const before = clicksArrived()
  console.log(`outage: the receiver is down for ${outageMinutes} min while ${outageRate} visits/s arrive`)
  receiver.stop(true)
  const t0 = Date.now()
  const sent = await visits(Math.round(outageMinutes * 60 * outageRate), outageRate, 'outage')
  const back = Date.now()
  receiver = startReceiver()
  const expected = before + sent.latencies.length
  await until('the backlog delivered', () => clicksArrived() >= expected, 3_600_000)
  const drained = Date.now()
  console.log(
    `outage of ${((back - t0) / 60_000).toFixed(1)} min, ${sent.latencies.length} visits (failed visits ${sent.errors}: ${sent.kinds}): backlog delivered ${((drained - back) / 1000).toFixed(1)} s after the receiver came back; ` +
      `${clicksArrived() - before} of ${sent.latencies.length} events arrived, ${[...arrivals.values()].filter((a) => a.times > 1).length - dupes} more duplicates, ${unverified} not verified`,
  )
}
console.log(`load average after: ${(await Bun.file('/proc/loadavg').text()).trim()}`)
receiver.stop(true)
await server.stop()
