/**
 * Redirects while statistics compute: a built binary serves a copy of a seeded store (its data
 * dir: shortlink.db and events.duckdb, e.g. one made by scripts/bench/stats.ts), wrk drives one
 * short link, and runs alternate between no statistics traffic (A) and a loop of the heaviest
 * statistics query (B: one at a time, back to back). Prints redirect p50/p99 and rps of each
 * run, the query's times, and the server's peak RSS (VmHWM). Usage:
 *   bun scripts/bench/stats-redirect.ts --store /var/tmp/bench-new-10m [--bin dist/shortlink] [--runs 3] [--seconds 15]
 *     [--query 'groupBy=country&device=Mobile']
 */
import { cpSync, existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { minMedianMax } from './ab'
import { arg } from './args'
import { freePort } from './redirect-server'
import { BROWSER_UA, wrk } from './wrk'

const ROOT = resolve(import.meta.dir, '../..')
const runs = Number(arg('runs', '3'))
const seconds = Number(arg('seconds', '15'))
const query = arg('query', 'groupBy=country&device=Mobile')
const bin = resolve(ROOT, arg('bin', 'dist/shortlink'))
const dir = mkdtempSync(join(tmpdir(), 'shortlink-stats-redirect-'))
cpSync(arg('store', '/var/tmp/bench-new-10m'), join(dir, 'data'), { recursive: true })
const httpsPort = await freePort()
const key = 'sk_bench_stats_redirect_admin_key_0123456789'
writeFileSync(
  join(dir, 'shortlink.toml'),
  `[server]\nbaseUrl = "https://localhost:${httpsPort}/api"\nhttpsPort = ${httpsPort}\nhttpPort = ${await freePort()}\nhostname = "127.0.0.1"\ndataDir = "${dir}/data"\n[limits]\napiPerMinute = 1000000\n[stats]\nqueryTimeoutMs = 120000\n`,
)
const proc = Bun.spawn([bin, 'serve', '--config', join(dir, 'shortlink.toml')], {
  cwd: dir,
  stdout: 'ignore',
  stderr: 'ignore',
  env: { ...process.env, SHORTLINK_ADMIN_KEY: key },
})
// The server goes down with this script, whatever happens to it.
process.on('exit', () => proc.kill('SIGTERM'))
// Up when the API answers at all (polled every 50 ms).
for (let i = 0; ; i++) {
  const caFile = join(dir, 'data/tls/ca.pem')
  const ok =
    existsSync(caFile) &&
    (await fetch(`https://localhost:${httpsPort}/api/healthz`, { tls: { ca: readFileSync(caFile, 'utf8') } } as RequestInit).then(
      () => true, // any answer: listening (healthz may want a key in this version)
      () => false,
    ))
  if (ok) break
  if (proc.exitCode !== null || i > 1200) throw new Error('the server did not start')
  await Bun.sleep(50)
}
const ca = readFileSync(join(dir, 'data/tls/ca.pem'), 'utf8')
const api = (path: string, init: RequestInit = {}) =>
  fetch(`https://localhost:${httpsPort}/api${path}`, {
    ...init,
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    tls: { ca },
  } as RequestInit)
const made = await api('/links/link', {
  method: 'POST',
  body: JSON.stringify({ data: { url: 'https://example.com/' }, linkOptions: { key: 'redirect-bench' } }),
})
if (made.status !== 200) throw new Error(`create: ${made.status} ${await made.text()}`)
// The first statistics answer waits for the engine to open: not part of the runs.
for (let tries = 0; ; tries++) {
  const first = await api(`/statistics?${query}`).catch(() => null)
  if (first?.status === 200) break
  if (tries > 60) throw new Error(`statistics never answered: ${first?.status}`)
  await Bun.sleep(1000)
}

const peakMb = () => Number(/VmHWM:\s+(\d+)/.exec(readFileSync(`/proc/${proc.pid}/status`, 'utf8'))?.[1] ?? 0) / 1024
const rows: { mode: string; rps: number; p50: number; p99: number }[] = []
const queryMs: number[] = []
for (let run = 0; run < runs; run++)
  for (const mode of ['A idle', 'B heavy query'] as const) {
    let querying = mode.startsWith('B')
    const loop = (async () => {
      while (querying) {
        const t = performance.now()
        const r = await api(`/statistics?${query}`)
        await r.text()
        if (r.status !== 200) throw new Error(`statistics: ${r.status}`)
        queryMs.push(performance.now() - t)
      }
    })()
    const w = await wrk({ url: `https://localhost:${httpsPort}/redirect-bench`, seconds, connections: 16, ua: BROWSER_UA })
    querying = false
    await loop
    rows.push({ mode, rps: w.rps, p50: w.p50ms, p99: w.p99ms })
    console.log(
      `${mode.padEnd(14)} run ${run + 1}: ${Math.round(w.rps)} redirects/s, p50 ${w.p50ms.toFixed(2)} ms, p99 ${w.p99ms.toFixed(2)} ms, errors ${w.errors}`,
    )
  }
for (const mode of ['A idle', 'B heavy query']) {
  const r = rows.filter((x) => x.mode === mode)
  console.log(
    `${mode.padEnd(14)} p99 ms ${minMedianMax(r.map((x) => x.p99))}  p50 ms ${minMedianMax(r.map((x) => x.p50))}  rps ${minMedianMax(r.map((x) => x.rps))}`,
  )
}
console.log(`query ${query}: ${queryMs.length} answers, ms ${minMedianMax(queryMs)}`)
console.log(`server peak RSS (VmHWM): ${peakMb().toFixed(0)} MB`)
proc.kill('SIGTERM')
await proc.exited
