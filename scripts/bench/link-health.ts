/**
 * The link-health goal (issue 27): the checker handles 100,000 distinct URLs an hour on one
 * node in bounded memory. Each trial is a child process holding a SQLite store of N links, each
 * with its own URL on a destination server on loopback (this process: 16 loopback addresses,
 * so 16 hosts of at most 2 requests at a time each), that runs one round of checks unpaced
 * (the walk is not spread over the interval) and reports the URLs it checked per second and
 * its peak RSS (sampled every 50 ms). Sizes alternate in one run (--sizes 10000,100000), so a
 * flat peak RSS across them shows memory bounded by the page and the queue, not by the number
 * of links. Usage:
 *   bun scripts/bench/link-health.ts [--rounds 3] [--sizes 10000,100000] [--hosts 16]
 *
 * Part two, --redirects: redirect latency and throughput (wrk over HTTPS) of the compiled
 * binary with its checker idle ([health] every = "0") and busy (every = "2s" over --busy-urls
 * URLs, far above 100,000 an hour), alternating; needs dist/shortlink (bun run build) and wrk.
 */
import type { Database } from 'bun:sqlite'
import { copyFileSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { openStore } from '../../src/store'
import { arg } from './args'

const HERE = resolve(import.meta.dir, '../..')

interface Trial {
  links: number
  seconds: number
  urlsPerSecond: number
  peakRssMb: number
  checked: number
}

const stats = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b)
  return { min: s[0]!, median: s[Math.floor(s.length / 2)]!, max: s.at(-1)! }
}
const fmt = (xs: number[], digits = 0) => {
  const { min, median, max } = stats(xs)
  return `${min.toFixed(digits)} / ${median.toFixed(digits)} / ${max.toFixed(digits)}`
}

if (process.argv.includes('--child')) await child()
else if (process.argv.includes('--redirects')) await (await import('./link-health.redirects')).redirectsUnderChecks()
else await parent()

/** The destination: every path answers 200 to HEAD, on 127.0.0.1 … 127.0.0.<hosts>. */
async function parent() {
  const rounds = Number(arg('rounds', '3'))
  const sizes = arg('sizes', '10000,100000').split(',').map(Number)
  const hosts = Number(arg('hosts', '16'))
  const servers = Array.from({ length: hosts }, (_, i) =>
    Bun.serve({ hostname: `127.0.0.${i + 1}`, port: 0, fetch: () => new Response(null, { status: 200 }) }),
  )
  const origins = servers.map((s) => `http://${s.hostname}:${s.port}`)
  const trials: Trial[] = []
  // Each size's store is made once, here, and copied for every trial: the trial's memory is the checker's alone.
  const dir = mkdtempSync(join(tmpdir(), 'shortlink-health-bench-'))
  const templates = new Map<number, string>()
  for (const n of sizes) {
    const path = join(dir, `links-${n}.db`)
    const db = openStore(path)
    seed(db, n, origins)
    db.exec('PRAGMA wal_checkpoint(TRUNCATE)')
    db.close()
    templates.set(n, path)
  }
  console.log(`load: ${(await Bun.file('/proc/loadavg').text()).trim()}`)
  for (let r = 0; r < rounds; r++)
    for (const n of sizes) {
      const trialDb = join(dir, `trial-${r}-${n}.db`)
      copyFileSync(templates.get(n)!, trialDb)
      const p = Bun.spawn(['bun', import.meta.path, '--child', '--db', trialDb, '--links', String(n)], { stdout: 'pipe', stderr: 'inherit', cwd: HERE })
      const out = await new Response(p.stdout).text()
      if ((await p.exited) !== 0) throw new Error(`trial failed: ${out}`)
      const t = JSON.parse(out.trim().split('\n').at(-1)!) as Trial
      for (const f of [trialDb, `${trialDb}-wal`, `${trialDb}-shm`]) rmSync(f, { force: true })
      trials.push(t)
      console.log(
        `round ${r + 1}, ${n} links: ${t.checked} URLs in ${t.seconds.toFixed(1)} s = ${t.urlsPerSecond.toFixed(0)} URLs/s, peak RSS ${t.peakRssMb.toFixed(0)} MB`,
      )
    }
  for (const s of servers) s.stop(true)
  rmSync(dir, { recursive: true, force: true })
  console.log(`\nlinks      URLs/s (min / median / max)   peak RSS MB (min / median / max)   an hour's worth (100,000 URLs) takes`)
  for (const n of sizes) {
    const ts = trials.filter((t) => t.links === n)
    const rates = ts.map((t) => t.urlsPerSecond)
    console.log(
      `${String(n).padEnd(10)} ${fmt(rates).padEnd(30)} ${fmt(
        ts.map((t) => t.peakRssMb),
        0,
      ).padEnd(34)} ${(100_000 / stats(rates).median / 60).toFixed(1)} min at the median (goal: under 60)`,
    )
  }
  console.log(`load: ${(await Bun.file('/proc/loadavg').text()).trim()}`)
}

/** One trial: a store of N links, one unpaced round, the rate and the peak RSS. */
async function child() {
  const n = Number(arg('links', '10000'))
  const { createHealthStore, createLinkHealth } = await import('../../src/link-health')
  const { createLogger } = await import('../../src/shared/log')
  const db = openStore(arg('db', ''))
  const store = createHealthStore(db)
  let peak = 0
  const checked = db.query<{ n: number }, []>('SELECT count(*) AS n FROM health_urls WHERE checked_at IS NOT NULL')
  let ticks = 0
  const sampler = setInterval(() => {
    const m = process.memoryUsage()
    peak = Math.max(peak, m.rss)
    if (process.env.BENCH_TIMELINE && ++ticks % 20 === 0)
      console.error(
        `${(ticks / 20).toFixed(0)} s: rss ${(m.rss / 2 ** 20).toFixed(0)} MB, heap ${(m.heapUsed / 2 ** 20).toFixed(0)} MB, checked ${checked.get()!.n}, queued ${health.pending()}`,
      )
  }, 50)
  const health = createLinkHealth({
    store,
    settings: { baseUrl: 'https://bench.test/api' },
    everyMs: 3_600_000,
    timeoutMs: 10_000,
    allowPrivateNetworks: true,
    log: createLogger(true),
    rounds: { spread: 0 },
  })
  const started = performance.now()
  health.start()
  for (;;) {
    await Bun.sleep(250) // a poll interval: the round writes its results in batches
    if (checked.get()!.n >= n) break
  }
  const seconds = (performance.now() - started) / 1000
  await health.stop()
  clearInterval(sampler)
  peak = Math.max(peak, process.memoryUsage().rss)
  db.close()
  const trial: Trial = { links: n, seconds, urlsPerSecond: n / seconds, peakRssMb: peak / 2 ** 20, checked: n }
  console.log(JSON.stringify(trial))
}

/** N links of type link, each with its own URL, spread over the destination's hosts. */
function seed(db: Database, n: number, origins: string[]) {
  db.exec("INSERT INTO users (id, created_at, role) VALUES ('usr_bench', 0, 'admin') ON CONFLICT DO NOTHING")
  const insert = db.query(
    `INSERT INTO links (id, user_id, domain, key, link_type, destination, match_key, data, options, created_at, updated_at)
     VALUES (?, 'usr_bench', 'localhost', ?, 'link', ?, ?, ?, '{}', 0, 0)`,
  )
  db.transaction(() => {
    for (let i = 0; i < n; i++) {
      const url = `${origins[i % origins.length]}/product/${i}?ref=qr`
      insert.run(`lnk_${i}`, `k${i}`, url, url, JSON.stringify({ url }))
    }
  })()
}
