/**
 * Link health on three nodes of the binary on one PostgreSQL (started by this file on
 * loopback): only the node holding the lease checks (one request per URL per interval, not
 * three), a change is made once (one node logs it, so its hook runs once) and reaches every
 * node's redirect cache, and when the checking node dies another takes over.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { type Cluster, startCluster } from './helpers/cluster'
import { type Destination, startDestination } from './helpers/destination'
import { until } from './helpers/poll'
import { freePort, queryStore, type TestServer } from './helpers/server'

const ADMIN_KEY = 'sk_cluster_health_admin_key_0123456789'
const BROWSER_UA = 'Mozilla/5.0 (X11; Linux x86_64; rv:125.0) Gecko/20100101 Firefox/125.0'

let cluster: Cluster
let storeUrl: string
let publicPort: number
let nodes: TestServer[] = []
let d: Destination

beforeAll(async () => {
  d = startDestination()
  publicPort = await freePort()
  cluster = await startCluster({
    database: 'cluster_health',
    adminKey: ADMIN_KEY,
    publicBaseUrl: `https://localhost:${publicPort}/api`,
    toml: '[health]\nevery = "1s"\ntimeout = "1s"\nallowPrivateNetworks = true\n',
  })
  ;({ nodes, storeUrl } = cluster)
})

afterAll(async () => {
  await cluster?.stop()
  d?.stop()
})

/** A node's own port in place of the public one: the same short link, served by that node. */
const visit = async (node: TestServer, shortLink: string) =>
  (await node.fetch(shortLink.replace(`:${publicPort}/`, `:${node.httpsPort}/`), { headers: { 'user-agent': BROWSER_UA } })).headers.get('location')
/** Gaps between the checks of a path, in ms. */
const gaps = (path: string, from = 0) => {
  const at = d
    .requests(path)
    .map((r) => r.at)
    .filter((t) => t >= from)
  return at.slice(1).map((t, i) => t - at[i]!)
}
const leaderPid = async () => {
  const [row] = await queryStore<{ holder: string }>({ dataDir: '', storeUrl }, "SELECT holder FROM locks WHERE key = 'link-health-checks'")
  return Number(/:(\d+)#/.exec(row?.holder ?? '')?.[1])
}

describe('link health on three nodes', () => {
  test('one node checks: one request per interval for a URL two links use, however many nodes serve them', async () => {
    const [a] = nodes as [TestServer]
    for (const key of ['c1', 'c2'])
      expect((await a.api('/links/link', { method: 'POST', json: { data: { url: `${d.origin}/c-shared` }, linkOptions: { key } } })).status).toBe(200)
    await until(
      'six checks',
      async () => d.requests('/c-shared').length,
      (n) => n >= 6,
    )
    // Three nodes checking would make bursts of three; one makes one request per round.
    for (const gap of gaps('/c-shared')) expect(gap).toBeGreaterThanOrEqual(450)
    expect(nodes.map((n) => n.proc.pid)).toContain(await leaderPid())
  })

  test('broken once, on one node; every node sends visits to the fallback at once, and back when it recovers', async () => {
    const [a, b, c] = nodes as [TestServer, TestServer, TestServer]
    const made = await a.api('/links/link', {
      method: 'POST',
      json: { data: { url: `${d.origin}/c-flaky` }, linkOptions: { key: 'c-flaky', healthFallbackUrl: 'https://brand.example/sorry' } },
    })
    const link = (await made.json()) as { id: string; shortLink: string }
    await until(
      'ok',
      async () => ((await (await b.api(`/links/${link.id}`)).json()) as { health: { status: string } }).health.status,
      (s) => s === 'ok',
    )
    // Every node caches the link as it is.
    for (const n of nodes) expect(await visit(n, link.shortLink)).toBe(`${d.origin}/c-flaky`)

    d.set('/c-flaky', 'down')
    await until(
      'broken',
      async () => ((await (await c.api(`/links/${link.id}`)).json()) as { health: { status: string } }).health.status,
      (s) => s === 'broken',
    )
    for (const n of nodes)
      await until(
        `node ${n.httpsPort} serving the fallback`,
        () => visit(n, link.shortLink),
        (l) => l === 'https://brand.example/sorry',
      )
    const logged = (to: string) =>
      nodes.flatMap((n) => n.output().split('\n')).filter((l) => l.includes('"msg":"link health changed"') && l.includes(link.id) && l.includes(`"to":"${to}"`))
    expect(logged('broken')).toHaveLength(1)

    d.set('/c-flaky', 'up')
    for (const n of nodes)
      await until(
        `node ${n.httpsPort} back on the destination`,
        () => visit(n, link.shortLink),
        (l) => l === `${d.origin}/c-flaky`,
      )
    expect(logged('ok').length).toBeGreaterThanOrEqual(1)
    expect(logged('broken')).toHaveLength(1)
  })

  test('the checking node dies (kill -9): another takes the lease over and the checks go on, still one per interval', async () => {
    const pid = await leaderPid()
    const leader = nodes.find((n) => n.proc.pid === pid)!
    leader.proc.kill('SIGKILL')
    await leader.proc.exited
    const killedAt = Date.now()
    // The lease runs out within 15 s; a node tries for it every 5 s.
    await until(
      'checks after the takeover',
      async () => d.requests('/c-shared').filter((r) => r.at > killedAt).length,
      (n) => n >= 4,
      60_000,
    )
    const next = await leaderPid()
    expect(next).not.toBe(pid)
    expect(nodes.filter((n) => n !== leader).map((n) => n.proc.pid)).toContain(next)
    for (const gap of gaps('/c-shared', killedAt)) expect(gap).toBeGreaterThanOrEqual(450)
  })
})
