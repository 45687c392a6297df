/**
 * Part two of scripts/bench/link-health.ts (--redirects): does a busy checker slow redirects?
 * The compiled binary serves wrk (HTTPS, a counted visit per request, on one short link) with
 * its checker idle (A: `[health] every = "0"`), at the goal's rate (B: every = "10s" over 280
 * URLs, ~28 a second as 100,000 an hour, walked in the first half of each interval), and far
 * above it (C: every = "2s" over 2,000 URLs, ~1,000 a second). The links are written beside the
 * running server; its next round (within B's 10 s) walks them. A quarter of the destinations
 * hang until the check's deadline. Passes alternate A, B and C in one run; the server and wrk
 * are pinned to different CPUs (taskset).
 */
import { Database } from 'bun:sqlite'
import { resolve } from 'node:path'
import { arg } from './args'
import { startBenchServer } from './redirect-server'
import { wrk } from './wrk'

const ROOT = resolve(import.meta.dir, '../..')

export async function redirectsUnderChecks() {
  const passes = Number(arg('passes', '3'))
  const seconds = Number(arg('seconds', '8'))
  const VARIANTS = {
    A: { label: 'A checker off', every: '0', urls: 2000 },
    B: { label: 'B ~28 URLs/s', every: '10s', urls: 280 },
    C: { label: 'C ~1,000 URLs/s', every: '2s', urls: 2000 },
  } as const
  type Variant = keyof typeof VARIANTS
  const bin = arg('bin', 'dist/shortlink')
  if (!Bun.which('wrk')) throw new Error('wrk is needed: apt-get install wrk')
  let checks = 0
  const servers = Array.from({ length: 16 }, (_, i) =>
    Bun.serve({
      hostname: `127.0.0.${i + 1}`,
      port: 0,
      fetch: (request) => {
        checks++
        // A quarter of the destinations never answer: each of their checks waits for its deadline.
        if (new URL(request.url).pathname.startsWith('/hang/')) return new Promise<Response>(() => {})
        return new Response(null, { status: 200 })
      },
    }),
  )
  const origins = servers.map((s) => `http://${s.hostname}:${s.port}`)
  const results: Record<Variant, { rps: number; p50: number; p99: number; checksPerSecond: number }[]> = { A: [], B: [], C: [] }
  console.log(`load: ${(await Bun.file('/proc/loadavg').text()).trim()}`)
  for (let pass = 0; pass < passes; pass++)
    for (const variant of ['A', 'B', 'C'] as const) {
      const { every, urls: busyUrls } = VARIANTS[variant]
      const server = await startBenchServer({ root: ROOT, bin, cpus: '1', toml: `[health]\nevery = "${every}"\nallowPrivateNetworks = true\n` })
      try {
        // The links the checker walks, written beside the running server (WAL: the server reads them on its next round).
        const db = new Database(`${server.dir}/data/shortlink.db`)
        db.exec('PRAGMA busy_timeout = 5000')
        const insert = db.query(
          `INSERT INTO links (id, user_id, domain, key, link_type, destination, match_key, data, options, created_at, updated_at)
           VALUES (?, 'usr_admin', 'localhost', ?, 'link', ?, ?, ?, '{}', 0, 0)`,
        )
        db.transaction(() => {
          for (let i = 0; i < busyUrls; i++) {
            const url = `${origins[i % origins.length]}/${i % 4 === 0 ? 'hang' : 'p'}/${i}`
            insert.run(`lnk_busy${i}`, `busy${i}`, url, url, JSON.stringify({ url }))
          }
        })()
        db.close()
        await Bun.sleep(10_000) // the checker's next round walks the new links (B, C); A idles as long
        const before = checks
        const r = await wrk({ url: `https://localhost:${server.httpsPort}/bench`, seconds, connections: 64, cpus: '0' })
        const checksPerSecond = (checks - before) / seconds
        results[variant].push({ rps: r.rps, p50: r.p50ms, p99: r.p99ms, checksPerSecond })
        console.log(
          `pass ${pass + 1} ${VARIANTS[variant].label}: ${r.rps.toFixed(0)} req/s, p50 ${r.p50ms.toFixed(2)} ms, p99 ${r.p99ms.toFixed(2)} ms, ${checksPerSecond.toFixed(0)} checks/s, errors ${r.errors}`,
        )
      } finally {
        await server.stop()
      }
    }
  for (const s of servers) s.stop(true)
  const line = (xs: number[], d = 0) => {
    const s = [...xs].sort((a, b) => a - b)
    return `${s[0]!.toFixed(d)} / ${s[Math.floor(s.length / 2)]!.toFixed(d)} / ${s.at(-1)!.toFixed(d)}`
  }
  console.log('\nvariant            req/s (min / median / max)   p50 ms               p99 ms               checks/s')
  for (const v of ['A', 'B', 'C'] as const) {
    const rs = results[v]
    console.log(
      `${VARIANTS[v].label.padEnd(18)} ${line(rs.map((r) => r.rps)).padEnd(28)} ${line(
        rs.map((r) => r.p50),
        2,
      ).padEnd(20)} ${line(
        rs.map((r) => r.p99),
        2,
      ).padEnd(20)} ${line(rs.map((r) => r.checksPerSecond))}`,
    )
  }
  const median = (v: Variant) => [...results[v].map((r) => r.rps)].sort((a, b) => a - b)[Math.floor(results[v].length / 2)]!
  console.log(`median req/s: B / A ${(median('B') / median('A')).toFixed(3)}, C / A ${(median('C') / median('A')).toFixed(3)}`)
  const perPass = (v: Variant) => results[v].map((r, i) => (r.rps / results.A[i]!.rps).toFixed(2)).join(' / ')
  console.log(`pass by pass (the variants of a pass ran back to back): B / A ${perPass('B')}; C / A ${perPass('C')}`)
  console.log(`load: ${(await Bun.file('/proc/loadavg').text()).trim()}`)
}
