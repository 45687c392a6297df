/**
 * One node on SQLite (A) against nodes on PostgreSQL (B), and three PostgreSQL nodes behind a
 * round-robin balancer, in one run. Starts its own PostgreSQL (test/helpers/postgres.ts: Debian's
 * package, fsync off) and its servers (test/helpers/server.ts: `bun src/main.ts`, or the binary
 * given with --bin). Usage:
 *   bun scripts/bench/cluster.ts [--rounds 5] [--seconds 5] [--connections 64] [--links 200]
 *     [--misses 300] [--creates 300] [--updates 50] [--revokes 10] [--bin dist/shortlink]
 *     [--ua browser|bot] [--server-cpu 1] [--wrk-cpu 0] [--no-pin]
 *
 * 1. Redirect req/s on cache hits, A and B alternating each round: wrk (scripts/bench/wrk.ts)
 *    rotating over `--links` warmed links; the node under load (and PostgreSQL, which takes its
 *    clicks) pinned to --server-cpu, wrk to --wrk-cpu.
 * 2. Cache-miss latency: the first visit of `--misses` links never visited on that node, A and B
 *    alternating link by link; beside it the same client's latency on a cache hit.
 * 3. Create-link latency: `--creates` POST /links/link, A and B alternating.
 * 4. Redirect req/s through test/helpers/proxy.ts to three PostgreSQL nodes, against the same
 *    proxy to one of them and against that node direct, the order rotating each round. Nothing
 *    is pinned: wrk, the proxy (in this process), the nodes and PostgreSQL share the cores.
 * 5. Cross-node invalidation: `--updates` link updates through node 0, each timed from its 200
 *    until node 1 (polled back to back) redirects to the new destination; `--revokes` keys revoked
 *    through node 0, timed until node 1 answers 401.
 * Prints the load average before and after, and the results as Markdown tables.
 */
import { readdirSync, readFileSync, rmSync } from 'node:fs'
import { join } from 'node:path'
import { $ } from 'bun'
import { postgresBinDir, startPostgres } from '../../test/helpers/postgres'
import { startRoundRobinProxy } from '../../test/helpers/proxy'
import { freePort, startServer, type TestServer } from '../../test/helpers/server'
import { alternate } from './ab'
import { arg } from './args'
import { BOT_UA, BROWSER_UA, type WrkResult, wrk } from './wrk'

const rounds = Number(arg('rounds', '5'))
const seconds = Number(arg('seconds', '5'))
const connections = Number(arg('connections', '64'))
const linkCount = Number(arg('links', '200'))
const misses = Number(arg('misses', '300'))
const creates = Number(arg('creates', '300'))
const updates = Number(arg('updates', '50'))
const revokes = Number(arg('revokes', '10'))
const bin = arg('bin', '')
const ua = arg('ua', 'browser') === 'bot' ? BOT_UA : BROWSER_UA
const pin = !process.argv.includes('--no-pin')
const serverCpu = arg('server-cpu', '1')
const wrkCpu = arg('wrk-cpu', '0')

if (!Bun.which('wrk')) throw new Error('wrk is needed: apt-get install wrk')
if (bin) process.env.SHORTLINK_BIN = bin
// Node A must be SQLite whatever the calling shell provides.
delete process.env.SHORTLINK_TEST_PG_URL

const ADMIN_KEY = 'sk_bench_cluster_admin_key_0123456789'
const loadavg = () => readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ')
const started = performance.now()
const loadStart = loadavg()
console.log(`load average at start: ${loadStart} (${navigator.hardwareConcurrency} CPUs)`)

// --- the servers ---------------------------------------------------------------------------
const pg = await startPostgres()
const running: TestServer[] = []
let finished = false
// A failed run must not leave servers or PostgreSQL behind: 'exit' allows only synchronous work.
process.on('exit', (code) => {
  if (finished) return
  for (const n of running) {
    if (code !== 0)
      console.error(
        `node on ${n.httpsPort}, its errors:\n${n
          .output()
          .split('\n')
          .filter((l) => /"level":"(error|warn)"|error/i.test(l))
          .slice(-20)
          .join('\n')}`,
      )
    n.proc.kill('SIGKILL')
  }
  const pgCtl = join(postgresBinDir()!, 'pg_ctl')
  Bun.spawnSync([...(process.getuid?.() === 0 ? ['runuser', '-u', 'postgres', '--'] : []), pgCtl, '-D', `${pg.dir}/data`, '-m', 'immediate', 'stop'])
  rmSync(pg.dir, { recursive: true, force: true })
})
const storeUrl = await pg.createDatabase('cluster')
const proxyPort = await freePort()
const limits = '[limits]\napiPerMinute = 1000000\n'
const env = { SHORTLINK_ADMIN_KEY: ADMIN_KEY }
const sqliteNode = await startServer({ storeUrl: '', env, toml: limits })
running.push(sqliteNode)
const pgNodes: TestServer[] = []
const startPgNode = (first?: TestServer) =>
  startServer({
    storeUrl,
    publicBaseUrl: `https://localhost:${proxyPort}/api`,
    env,
    ca: first?.ca,
    toml: limits + (first ? `[tls]\nmode = "files"\ncertFile = "${first.dir}/data/tls/cert.pem"\nkeyFile = "${first.dir}/data/tls/key.pem"\n` : ''),
  })
pgNodes.push(await startPgNode())
running.push(pgNodes[0]!)
pgNodes.push(...(await Promise.all([startPgNode(pgNodes[0]), startPgNode(pgNodes[0])])))
running.push(...pgNodes.slice(1))
const [pgNode, otherNode] = pgNodes as [TestServer, TestServer, TestServer]
const sides = [
  { name: 'A (SQLite)', node: sqliteNode },
  { name: 'B (PostgreSQL)', node: pgNode },
] as const

/** The process and its descendants (PostgreSQL's backends, a server's children). */
function processTree(pid: number): number[] {
  const out = [pid]
  let tasks: string[] = []
  try {
    tasks = readdirSync(`/proc/${pid}/task`)
  } catch {
    return out
  }
  for (const t of tasks) {
    let children = ''
    try {
      children = readFileSync(`/proc/${pid}/task/${t}/children`, 'utf8')
    } catch {}
    for (const c of children.split(' ').filter(Boolean)) out.push(...processTree(Number(c)))
  }
  return out
}
const postmasterPid = () => Number(readFileSync(`${pg.dir}/data/postmaster.pid`, 'utf8').split('\n')[0])
async function setAffinity(pids: number[], cpus: string) {
  for (const p of pids) await $`taskset -a -cp ${cpus} ${p}`.quiet().nothrow()
}
const allCpus = `0-${navigator.hardwareConcurrency - 1}`

// --- helpers -------------------------------------------------------------------------------
const visitUrl = (node: TestServer, key: string) => `https://localhost:${node.httpsPort}/${key}`
async function visit(node: TestServer, key: string): Promise<{ status: number; location: string | null }> {
  const r = await node.fetch(visitUrl(node, key), { headers: { 'user-agent': BROWSER_UA } })
  await r.arrayBuffer()
  return { status: r.status, location: r.headers.get('location') }
}
async function createLink(node: TestServer, body: unknown): Promise<{ id: string; key: string }> {
  const r = await node.api('/links/link', { method: 'POST', json: body })
  if (r.status !== 200) throw new Error(`create on ${node.httpsPort}: ${r.status} ${await r.text()}`)
  const made = (await r.json()) as { id: string; shortLink: string }
  return { id: made.id, key: new URL(made.shortLink).pathname.slice(1) }
}
async function createMany(node: TestServer, prefix: string, n: number) {
  const keys: string[] = []
  for (let i = 0; i < n; i += 20) {
    const batch = Array.from({ length: Math.min(20, n - i) }, (_, j) =>
      createLink(node, { data: { url: `https://dest.example/${prefix}/${i + j}?utm_source=qr` }, linkOptions: { key: `${prefix}-${i + j}` } }),
    )
    keys.push(...(await Promise.all(batch)).map((l) => l.key))
  }
  return keys
}
const sorted = (xs: number[]) => [...xs].sort((a, b) => a - b)
const pct = (xs: number[], p: number) => {
  const s = sorted(xs)
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))]!
}
const mmm = (xs: number[], digits = 0) => {
  const s = sorted(xs)
  return `${s[0]!.toFixed(digits)} / ${s[s.length >> 1]!.toFixed(digits)} / ${s[s.length - 1]!.toFixed(digits)}`
}
const f = (v: number, digits = 2) => v.toFixed(digits)

// Links for 1 (warmed) and 2 (never visited) on both sides.
const warmKeys = new Map<TestServer, string[]>()
const missKeys = new Map<TestServer, string[]>()
for (const { node } of sides) {
  warmKeys.set(node, await createMany(node, 'hot', linkCount))
  missKeys.set(node, await createMany(node, 'cold', misses))
}
for (const { node } of sides) for (const key of warmKeys.get(node)!) if ((await visit(node, key)).status !== 302) throw new Error(`warm-up of ${key}`)
// The other PostgreSQL nodes warm the same links (for 4).
for (const node of pgNodes.slice(1)) for (const key of warmKeys.get(pgNode)!) await visit(node, key)
console.log(`servers up and links made in ${((performance.now() - started) / 1000).toFixed(0)} s; load average ${loadavg()}`)

// --- 1. cache hits, A vs B -------------------------------------------------------------------
const hits: Record<string, WrkResult[]> = { A: [], B: [] }
const pgPids = () => processTree(postmasterPid())
if (pin) {
  await setAffinity(processTree(sqliteNode.proc.pid), serverCpu)
  await setAffinity(processTree(pgNode.proc.pid), serverCpu)
  await setAffinity(pgPids(), serverCpu)
}
const hitRun = (node: TestServer, secs = seconds) =>
  wrk({
    url: visitUrl(node, warmKeys.get(node)![0]!),
    paths: warmKeys.get(node)!.map((k) => `/${k}`),
    seconds: secs,
    connections,
    ua,
    cpus: pin ? wrkCpu : undefined,
  })
await hitRun(sqliteNode, 2) // warm-up (JIT, connections)
await hitRun(pgNode, 2)
for (let r = 0; r < rounds; r++) {
  for (const s of r % 2 ? (['B', 'A'] as const) : (['A', 'B'] as const)) {
    const res = await hitRun(s === 'A' ? sqliteNode : pgNode)
    hits[s]!.push(res)
    console.log(`1. round ${r + 1} ${s}: ${f(res.rps, 0)} req/s p50 ${f(res.p50ms)} ms p99 ${f(res.p99ms)} ms (${res.errors})`)
  }
}
const loadAfterHits = loadavg()
if (pin) {
  await setAffinity(processTree(sqliteNode.proc.pid), allCpus)
  await setAffinity(processTree(pgNode.proc.pid), allCpus)
  await setAffinity(pgPids(), allCpus)
}

// --- 2. cache misses, A vs B -------------------------------------------------------------------
const timedVisit = (node: TestServer, keys: string[]) => {
  let i = 0
  return async () => {
    const key = keys[i++ % keys.length]!
    const t = performance.now()
    const v = await visit(node, key)
    const ms = performance.now() - t
    if (v.status !== 302) throw new Error(`visit ${key}: ${v.status}`)
    return { ms, body: '' }
  }
}
const missed = await alternate(misses, timedVisit(sqliteNode, missKeys.get(sqliteNode)!), timedVisit(pgNode, missKeys.get(pgNode)!))
// The same client on links already cached: what a miss adds.
const hit = await alternate(misses, timedVisit(sqliteNode, warmKeys.get(sqliteNode)!), timedVisit(pgNode, warmKeys.get(pgNode)!))
console.log(`2. miss p50 A ${f(pct(missed.aMs, 50))} B ${f(pct(missed.bMs, 50))} ms; hit p50 A ${f(pct(hit.aMs, 50))} B ${f(pct(hit.bMs, 50))} ms`)

// --- 3. create-link latency, A vs B ---------------------------------------------------------------
/** Creates that did not answer 200, by node, with the node's log lines of their request. */
const createFailures = new Map<TestServer, string[]>()
const timedCreate = (node: TestServer) => {
  let i = 0
  return async () => {
    const t = performance.now()
    const r = await node.api('/links/link', { method: 'POST', json: { data: { url: `https://dest.example/new/${i++}` } } })
    const body = await r.text()
    const ms = performance.now() - t
    if (r.status !== 200) {
      const requestId = /req_[A-Za-z0-9_-]+/.exec(body)?.[0] ?? '-'
      const logged = node
        .output()
        .split('\n')
        .filter((l) => l.includes(requestId))
        .join('\n')
      console.error(`3. create on ${node.httpsPort} answered ${r.status} ${body}\n${logged}`)
      createFailures.set(node, [...(createFailures.get(node) ?? []), `${r.status} ${requestId}`])
    }
    return { ms, body: '' }
  }
}
const created = await alternate(creates, timedCreate(sqliteNode), timedCreate(pgNode))
console.log(`3. create p50 A ${f(pct(created.aMs, 50))} B ${f(pct(created.bMs, 50))} ms`)

// --- 4. three PostgreSQL nodes behind the balancer vs one ------------------------------------
const threeProxy = startRoundRobinProxy(
  pgNodes.map((n) => n.httpsPort),
  proxyPort,
)
const oneProxy = startRoundRobinProxy([pgNode.httpsPort])
const proxied = (port: number, secs = seconds) =>
  wrk({ url: `https://localhost:${port}/${warmKeys.get(pgNode)![0]}`, paths: warmKeys.get(pgNode)!.map((k) => `/${k}`), seconds: secs, connections, ua })
await proxied(oneProxy.port, 2)
await proxied(threeProxy.port, 2)
// The same node without the balancer, unpinned as well: what the balancer itself costs.
const scale: Record<string, WrkResult[]> = { direct: [], one: [], three: [] }
const order = ['direct', 'one', 'three'] as const
for (let r = 0; r < rounds; r++) {
  for (const s of [...order.slice(r % 3), ...order.slice(0, r % 3)]) {
    const res = await proxied(s === 'direct' ? pgNode.httpsPort : s === 'one' ? oneProxy.port : threeProxy.port)
    scale[s]!.push(res)
    console.log(`4. round ${r + 1} ${s}: ${f(res.rps, 0)} req/s p50 ${f(res.p50ms)} ms p99 ${f(res.p99ms)} ms (${res.errors})`)
  }
}
const loadAfterScale = loadavg()
const spread = threeProxy.counts()
threeProxy.stop()
oneProxy.stop()

// --- 5. cross-node invalidation -----------------------------------------------------------------
/** Polls `read` back to back until `done`; ms from the call. */
async function untilMs<T>(read: () => Promise<T>, done: (v: T) => boolean, what: string): Promise<number> {
  const t = performance.now()
  for (;;) {
    if (done(await read())) return performance.now() - t
    if (performance.now() - t > 10_000) throw new Error(`${what}: not seen within 10 s`)
  }
}
const moving = await createLink(pgNode, { data: { url: 'https://moves.example/0' }, linkOptions: { key: 'moves' } })
const updateMs: number[] = []
const patchMs: number[] = []
for (let i = 1; i <= updates; i++) {
  if ((await visit(otherNode, moving.key)).status !== 302) throw new Error('moves not served on node 1')
  const url = `https://moves.example/${i}`
  const t = performance.now()
  const r = await pgNode.api(`/links/${moving.id}`, { method: 'PATCH', json: { data: { url } } })
  patchMs.push(performance.now() - t)
  if (r.status !== 200) throw new Error(`update: ${r.status} ${await r.text()}`)
  updateMs.push(
    await untilMs(
      () => visit(otherNode, moving.key),
      (v) => v.location === url,
      'update',
    ),
  )
}
const revokeMs: number[] = []
for (let i = 0; i < revokes; i++) {
  const made = await pgNode.api('/keys', { method: 'POST', json: { userId: 'usr_admin', role: 'readonly', name: `revoked ${i}` } })
  if (made.status !== 200) throw new Error(`key: ${made.status} ${await made.text()}`)
  const { id, key } = (await made.json()) as { id: string; key: string }
  const tags = async () => {
    const r = await otherNode.api('/tags', { key })
    await r.arrayBuffer()
    return r.status
  }
  if ((await tags()) !== 200) throw new Error('new key refused on node 1')
  const r = await pgNode.api(`/keys/${id}`, { method: 'DELETE' })
  if (r.status !== 200) throw new Error(`revoke: ${r.status}`)
  revokeMs.push(await untilMs(tags, (s) => s === 401, 'revoke'))
}

// --- report -----------------------------------------------------------------------------------------
const loadEnd = loadavg()
await Promise.all([sqliteNode, ...pgNodes].map((n) => n.stop()))
await pg.destroy()
finished = true
const total = (performance.now() - started) / 1000

const rps = (xs: WrkResult[]) => mmm(xs.map((x) => x.rps))
const p99 = (xs: WrkResult[]) =>
  mmm(
    xs.map((x) => x.p99ms),
    2,
  )
const med = (xs: WrkResult[]) => sorted(xs.map((x) => x.rps))[xs.length >> 1]!
/** Each round's b/a (the two ran back to back, under the same load), min / median / max. */
const ratios = (b: WrkResult[], a: WrkResult[]) =>
  mmm(
    b.map((x, i) => x.rps / a[i]!.rps),
    2,
  )
const errs = (xs: WrkResult[]) => [...new Set(xs.map((x) => x.errors))].join('; ')
const lat = (xs: number[]) => `${f(pct(xs, 50))} | ${f(pct(xs, 99))} | ${f(Math.max(...xs))}`
console.log(`
Command: bun scripts/bench/cluster.ts ${process.argv.slice(2).join(' ')}
${navigator.hardwareConcurrency} CPUs; load average at start ${loadStart}, after 1: ${loadAfterHits}, after 4: ${loadAfterScale}, at the end: ${loadEnd}; ${f(total, 0)} s in all. ${bin ? `Binary ${bin}` : 'bun src/main.ts'}; ${ua === BOT_UA ? 'bot UA (not counted)' : 'browser UA (every visit a counted click)'}.

1. Redirect cache hits, ${rounds} rounds of wrk -t2 -c${connections} -d${seconds}s over ${linkCount} warmed links${pin ? `, node and PostgreSQL on CPU ${serverCpu}, wrk on CPU ${wrkCpu}` : ', unpinned'}:

| node | req/s min / median / max | p99 ms min / median / max | errors |
|---|---|---|---|
| A (SQLite) | ${rps(hits.A!)} | ${p99(hits.A!)} | ${errs(hits.A!)} |
| B (PostgreSQL) | ${rps(hits.B!)} | ${p99(hits.B!)} | ${errs(hits.B!)} |

B / A req/s: of the medians ${f(med(hits.B!) / med(hits.A!), 3)}; round by round (min / median / max) ${ratios(hits.B!, hits.A!)}

2. First visit of a link never visited on that node (${misses} links per node, alternating), against a cached link, one client, ms:

| node | miss p50 | miss p99 | miss max | hit p50 | hit p99 | hit max |
|---|---|---|---|---|---|---|
| A (SQLite) | ${lat(missed.aMs)} | ${lat(hit.aMs)} |
| B (PostgreSQL) | ${lat(missed.bMs)} | ${lat(hit.bMs)} |

3. POST /links/link (${creates} per node, alternating, one client), ms:

| node | p50 | p99 | max | not 200 |
|---|---|---|---|---|
| A (SQLite) | ${lat(created.aMs)} | ${createFailures.get(sqliteNode)?.length ?? 0} |
| B (PostgreSQL) | ${lat(created.bMs)} | ${createFailures.get(pgNode)?.length ?? 0} |

4. Redirect cache hits through the round-robin balancer (test/helpers/proxy.ts, in the benchmark's process), ${rounds} rounds of wrk -t2 -c${connections} -d${seconds}s, nothing pinned: wrk, balancer, nodes and PostgreSQL share ${navigator.hardwareConcurrency} cores:

| PostgreSQL nodes | req/s min / median / max | p99 ms min / median / max | errors |
|---|---|---|---|
| one, direct (no balancer) | ${rps(scale.direct!)} | ${p99(scale.direct!)} | ${errs(scale.direct!)} |
| one, behind the balancer | ${rps(scale.one!)} | ${p99(scale.one!)} | ${errs(scale.one!)} |
| three, behind the balancer | ${rps(scale.three!)} | ${p99(scale.three!)} | ${errs(scale.three!)} |

three / one req/s: of the medians ${f(med(scale.three!) / med(scale.one!), 3)}; round by round ${ratios(scale.three!, scale.one!)}; connections per node (three): ${spread.join(', ')}; one node through the balancer / direct: ${ratios(scale.one!, scale.direct!)}

5. Cross-node invalidation, node 0 → node 1, ms from the write's 200 until node 1 answers the new state (polled back to back):

| what | n | p50 | p90 | max |
|---|---|---|---|---|
| link update (new destination) | ${updates} | ${f(pct(updateMs, 50))} | ${f(pct(updateMs, 90))} | ${f(Math.max(...updateMs))} |
| key revoked (401) | ${revokes} | ${f(pct(revokeMs, 50))} | ${f(pct(revokeMs, 90))} | ${f(Math.max(...revokeMs))} |

(the PATCH itself on node 0: p50 ${f(pct(patchMs, 50))} ms, max ${f(Math.max(...patchMs))} ms)
`)
