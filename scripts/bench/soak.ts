/**
 * Click soak: wrk (2 threads, 64 connections) on one short link for 30 s, a browser User-Agent and
 * a distinct Referer URL per visit (so no two visits merge into one row: the recorder's worst
 * case), against the server on SQLite and on PostgreSQL (started here, Debian's package, fsync
 * off). Then it waits until the statistics stop moving and compares what was answered with what
 * was stored. Usage:
 *   bun scripts/bench/soak.ts [--stores sqlite,postgres] [--runs 1] [--seconds 30] [--connections 64] [--bin dist/shortlink]
 * Per run and store: visits answered (wrk's completed requests; up to `connections` more may be
 * answered after wrk stops counting), stored (GET /statistics count, and the link's `clicks`),
 * redirect p50/p99, the server's peak RSS under load and while it writes the rest, how long
 * that took (until the count last moved), and the journal's size at the end of the load. Stores
 * alternate within a run.
 */
import { existsSync, mkdtempSync, statSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { $ } from 'bun'
import { startPostgres } from '../../test/helpers/postgres'
import { arg } from './args'
import { rssMb, startBenchServer } from './redirect-server'
import { BROWSER_UA } from './wrk'

const ROOT = resolve(import.meta.dir, '../..')
const stores = arg('stores', 'sqlite,postgres').split(',')
const runs = Number(arg('runs', '1'))
const seconds = Number(arg('seconds', '30'))
const connections = Number(arg('connections', '64'))
const bin = arg('bin', '')

/** Each wrk thread numbers its visits; the Referer carries thread and number, so every visit has its own. */
const script = join(mkdtempSync(join(tmpdir(), 'shortlink-soak-')), 'referers.lua')
writeFileSync(
  script,
  `local threads = 0
setup = function(thread)
  threads = threads + 1
  thread:set("tid", threads)
end
local n = 0
request = function()
  n = n + 1
  wrk.headers["Referer"] = "https://ref.example/t" .. tid .. "/" .. n
  return wrk.format()
end
`,
)

interface Soak {
  store: string
  answered: number
  notRedirected: number
  stored: number
  linkClicks: number
  p50ms: number
  p99ms: number
  rssLoadMb: number
  rssDrainMb: number
  drainS: number
  journalMb: number
}

const ms = (v: string) => (v.endsWith('us') ? Number.parseFloat(v) / 1000 : v.endsWith('ms') ? Number.parseFloat(v) : Number.parseFloat(v) * 1000)

async function soak(store: string): Promise<Soak> {
  const pg = store === 'postgres' ? await startPostgres() : null
  const toml = pg ? `[store]\nurl = "${await pg.createDatabase('soak')}"\n` : ''
  // The server's warnings and errors about clicks, as they come.
  const server = await startBenchServer({
    root: ROOT,
    bin: bin || undefined,
    toml,
    onLog: (line) => {
      if (/"level":"(warn|error)"/.test(line) || /journal/.test(line)) console.error(`  [${store}] ${line.slice(0, 300)}`)
    },
  })
  const base = `https://localhost:${server.httpsPort}`
  const api = async (path: string) => {
    const res = await fetch(`${base}/api${path}`, { headers: { authorization: `Bearer ${server.apiKey}` }, tls: { ca: server.ca } } as RequestInit)
    if (res.status !== 200) throw new Error(`${path}: ${res.status} ${await res.text()}`)
    return res.json() as Promise<Record<string, unknown>>
  }
  let peak = 0
  const sampler = setInterval(() => {
    peak = Math.max(peak, rssMb(server.pid))
  }, 100)
  try {
    const out = await $`wrk -t2 -c${connections} -d${seconds}s --latency -H ${`User-Agent: ${BROWSER_UA}`} -s ${script} ${`${base}/bench`}`.text()
    const answered = Number(/(\d+) requests in/.exec(out)?.[1] ?? Number.NaN)
    const notRedirected = Number(/Non-2xx or 3xx responses: (\d+)/.exec(out)?.[1] ?? 0)
    const rssLoadMb = peak
    peak = 0
    const journal = join(server.dir, 'data', 'clicks.journal')
    const journalMb = existsSync(journal) ? statSync(journal).size / 2 ** 20 : 0
    // Written when the count reaches what wrk saw answered (a few more may have been answered after
    // wrk stopped counting: they are given 5 s more), or when it has not moved for 2 minutes (one
    // batch takes seconds on a loaded machine).
    const drainStart = performance.now()
    let stored = -1
    let moved = performance.now()
    let reached = 0
    for (;;) {
      const now = Number((await api(`/statistics?linkId=${server.linkId}`)).clicks)
      if (now !== stored) {
        stored = now
        moved = performance.now()
      }
      if (stored >= answered) reached ||= performance.now()
      if ((reached && performance.now() - reached > 5000) || performance.now() - moved > 120_000) break
      await Bun.sleep(250)
    }
    const drainS = (moved - drainStart) / 1000
    const linkClicks = Number((await api(`/links/${server.linkId}`)).clicks)
    return {
      store,
      answered,
      notRedirected,
      stored,
      linkClicks,
      p50ms: ms(/\s50%\s+(\S+)/.exec(out)?.[1] ?? 'NaN'),
      p99ms: ms(/\s99%\s+(\S+)/.exec(out)?.[1] ?? 'NaN'),
      rssLoadMb,
      rssDrainMb: peak,
      drainS,
      journalMb,
    }
  } finally {
    clearInterval(sampler)
    await server.stop()
    await pg?.destroy()
  }
}

const load = async () => (await $`cat /proc/loadavg`.text()).split(' ').slice(0, 3).join(' ')
console.log(`soak: wrk -t2 -c${connections} -d${seconds}s, a distinct Referer per visit; ${bin || 'bun src/main.ts'}; Bun ${Bun.version}\n`)
console.log(
  '| run | store | answered | non-3xx | stored (statistics) | link clicks | stored − answered | p50 ms | p99 ms | peak RSS load / drain MB | written after load | journal at end of load | load avg |',
)
console.log('|---|---|---|---|---|---|---|---|---|---|---|---|---|')
for (let run = 0; run < runs; run++)
  for (const store of run % 2 ? [...stores].reverse() : stores) {
    const before = await load()
    const r = await soak(store)
    console.log(
      `| ${run + 1} | ${r.store} | ${r.answered.toLocaleString('en')} | ${r.notRedirected} | ${r.stored.toLocaleString('en')} | ${r.linkClicks.toLocaleString('en')} | ${r.stored - r.answered} | ${r.p50ms.toFixed(1)} | ${r.p99ms.toFixed(1)} | ${r.rssLoadMb.toFixed(0)} / ${r.rssDrainMb.toFixed(0)} | ${r.drainS.toFixed(1)} s | ${r.journalMb.toFixed(1)} MB | ${before} → ${await load()} |`,
    )
  }
