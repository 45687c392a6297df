/**
 * What the cluster counters cost on PostgreSQL: visit ordinals (src/store/pg/visit-counter.ts)
 * and the cluster rate limit (src/store/pg/cluster-rate-limit.ts), exact and precheck,
 * against a `SELECT 1` round trip and the in-memory limiter. Starts its own PostgreSQL
 * (Debian's package, as the tests do: fsync and synchronous_commit off, so a commit does
 * not wait for the disk; with them on, every upsert also waits for a WAL flush). Usage:
 *   bun scripts/bench/pg-visit-counter.ts [--calls 20000] [--concurrency 64] [--clients 3]
 * Throughput: `calls` calls with `concurrency` in flight, spread over `clients` Bun.SQL
 * clients (the nodes). Latency: one call at a time on one client, p50/p99.
 */
import { SQL } from 'bun'
import { createRateLimiter } from '../../src/auth'
import { createClusterRateLimiter } from '../../src/store/pg/cluster-rate-limit'
import { createVisitCounter } from '../../src/store/pg/visit-counter'
import { startPostgres } from '../../test/helpers/postgres'
import { arg } from './args'

const calls = Number(arg('calls', '20000'))
const concurrency = Number(arg('concurrency', '64'))
const clientCount = Number(arg('clients', '3'))

const pg = await startPostgres()
const clients = Array.from({ length: clientCount }, () => new SQL(pg.url, { max: Math.ceil(concurrency / clientCount) }))

/** calls/s with `concurrency` workers taking call numbers from one counter. */
async function throughput(call: (i: number) => Promise<unknown>): Promise<number> {
  let next = 0
  const start = performance.now()
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < calls) await call(next++)
    }),
  )
  return Math.round(calls / ((performance.now() - start) / 1000))
}

/** p50/p99 in µs of `n` calls one at a time. */
async function latency(call: (i: number) => unknown, n = 2_000): Promise<string> {
  const times: number[] = []
  for (let i = 0; i < n; i++) {
    const t = performance.now()
    await call(i)
    times.push((performance.now() - t) * 1000)
  }
  times.sort((a, b) => a - b)
  const at = (q: number) => Math.round(times[Math.min(times.length - 1, Math.floor(q * times.length))]!)
  return `p50 ${at(0.5)} µs, p99 ${at(0.99)} µs`
}

const rows: [string, string][] = []
const report = (what: string, value: string) => {
  rows.push([what, value])
  console.log(`${what.padEnd(62)} ${value}`)
}

try {
  console.log(`PostgreSQL (fsync off), ${clientCount} clients, ${calls} calls, ${concurrency} in flight; Bun ${Bun.version}\n`)
  const one = clients[0]!
  await one`SELECT 1`
  report('SELECT 1 round trip', await latency(() => one`SELECT 1`))
  report('SELECT 1 calls/s', `${await throughput((i) => clients[i % clientCount]!`SELECT 1`)}`)

  const counters = clients.map(createVisitCounter)
  await counters[0]!.next('warm')
  report('visit counter next(), one hot link: latency', await latency(() => counters[0]!.next('lat')))
  report('visit counter next(), one hot link: calls/s', `${await throughput((i) => counters[i % clientCount]!.next('hot'))}`)
  report('visit counter next(), 1,000 links: calls/s', `${await throughput((i) => counters[i % clientCount]!.next(`lnk_${i % 1000}`))}`)
  const total = Number((await one`SELECT n FROM visit_counters WHERE link_id = 'hot'`)[0].n)
  if (total !== calls) throw new Error(`hot counter at ${total}, expected ${calls}`)

  const memory = createRateLimiter(1_000_000)
  report('in-memory limiter hit(): latency', await latency((i) => memory.hit(`key:${i % 100}`)))

  const exact = clients.map((sql) => createClusterRateLimiter(sql))
  await exact[0]!.hit('warm', 10, 60_000)
  report('cluster limit exact hit(), 100 keys under limit: latency', await latency((i) => exact[0]!.hit(`lat:${i % 100}`, 1_000_000, 60_000)))
  report('cluster limit exact, 100 keys under limit: calls/s', `${await throughput((i) => exact[i % clientCount]!.hit(`key:${i % 100}`, 1_000_000, 60_000))}`)
  report('cluster limit exact, one key under limit: calls/s', `${await throughput((i) => exact[i % clientCount]!.hit('one', 1_000_000, 60_000))}`)
  report('cluster limit exact, one exhausted key (flood): calls/s', `${await throughput((i) => exact[i % clientCount]!.hit('flood', 10, 60_000))}`)

  const pre = clients.map((sql) => createClusterRateLimiter(sql, { mode: 'precheck' }))
  const asked = () => pre.reduce((n, l) => n + l.queries(), 0)
  let before = asked()
  report('cluster limit precheck, 100 keys (limit 600/min): latency', await latency((i) => pre[0]!.hit(`lat:${i % 100}`, 600, 60_000)))
  report('  statements per hit', (((asked() - before) / 2_000) as number).toFixed(3))
  before = asked()
  report('cluster limit precheck, 100 keys (limit 600/min): calls/s', `${await throughput((i) => pre[i % clientCount]!.hit(`pkey:${i % 100}`, 600, 60_000))}`)
  report('  statements per hit', ((asked() - before) / calls).toFixed(3))
  before = asked()
  report('cluster limit precheck, one exhausted key (flood): calls/s', `${await throughput((i) => pre[i % clientCount]!.hit('pflood', 10, 60_000))}`)
  report('  statements per hit', ((asked() - before) / calls).toFixed(3))
} finally {
  for (const sql of clients) await sql.close()
  await pg.destroy()
}
