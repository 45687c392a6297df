/**
 * Three nodes of the binary on one PostgreSQL (`[store] url`), behind a round-robin TCP
 * load balancer, as the README's "Scale out" runs them. PostgreSQL is Debian's, started by
 * this file in a temp dir on loopback, and stopped and started again mid-test. Nodes share
 * one TLS certificate (the first node's self-signed one) and the balancer's baseUrl.
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test'
import { until } from './helpers/poll'
import { startPostgres, type TestPostgres } from './helpers/postgres'
import { type RoundRobinProxy, startRoundRobinProxy } from './helpers/proxy'
import { freePort, queryStore, startServer, type TestServer } from './helpers/server'

setDefaultTimeout(180_000)

const ADMIN_KEY = 'sk_cluster_test_admin_key_0123456789'
const BROWSER_UA = 'Mozilla/5.0 (X11; Linux x86_64; rv:125.0) Gecko/20100101 Firefox/125.0'
/** The cluster-wide API budget per key and minute set for these nodes. */
const API_PER_MINUTE = 400

let pg: TestPostgres
let storeUrl: string
let proxy: RoundRobinProxy
let proxyPort: number
let nodes: TestServer[] = []
let ca = ''

async function startNode(i: number, dir?: string): Promise<TestServer> {
  const first = nodes[0]
  const tls = i === 0 || !first ? '' : `[tls]\nmode = "files"\ncertFile = "${first.dir}/data/tls/cert.pem"\nkeyFile = "${first.dir}/data/tls/key.pem"\n`
  return startServer({
    dir,
    storeUrl,
    publicBaseUrl: `https://localhost:${proxyPort}/api`,
    env: { SHORTLINK_ADMIN_KEY: ADMIN_KEY },
    ca: first?.ca,
    toml: `[limits]\napiPerMinute = ${API_PER_MINUTE}\n${tls}`,
  })
}

beforeAll(async () => {
  pg = await startPostgres()
  storeUrl = await pg.createDatabase('cluster')
  // The balancer's port is the cluster's public address; its backends are known once nodes listen.
  proxyPort = await freePort()
  nodes = []
  // The first node migrates an empty database; the other two start together against it.
  nodes.push(await startNode(0))
  nodes.push(...(await Promise.all([startNode(1), startNode(2)])))
  ca = nodes[0]!.ca
  proxy = startRoundRobinProxy(
    nodes.map((n) => n.httpsPort),
    proxyPort,
  )
})

afterAll(async () => {
  // A node that died mid-run explains the failures above: show its log.
  for (const n of nodes)
    if (process.env.DEBUG_CLUSTER || n.proc.exitCode !== null) console.error(`node on ${n.httpsPort} exited ${n.proc.exitCode}:\n${n.output()}`)
  proxy?.stop()
  await Promise.all(nodes.map((n) => n.stop().catch(() => 0)))
  await pg?.destroy()
})

const viaProxy = (path: string, init: RequestInit = {}) =>
  fetch(`https://localhost:${proxyPort}${path}`, { ...init, tls: { ca }, redirect: 'manual' } as RequestInit)
/** The node's own port in place of the balancer's: the same short link, served by that node. */
const onNode = (node: TestServer, shortLink: string) => shortLink.replace(`:${proxyPort}/`, `:${node.httpsPort}/`)
const visit = (node: TestServer, shortLink: string) => node.fetch(onNode(node, shortLink), { headers: { 'user-agent': BROWSER_UA } })

async function createLink(node: TestServer, body: unknown) {
  const r = await node.api('/links/link', { method: 'POST', json: body })
  expect(r.status).toBe(200)
  return (await r.json()) as { id: string; shortLink: string; clicks: number }
}

describe('three nodes on one PostgreSQL', () => {
  test('every node serves what another wrote; an update and a deletion through node A reach B and C', async () => {
    const [a, b, c] = nodes as [TestServer, TestServer, TestServer]
    const link = await createLink(a, { data: { url: 'https://one.example/' }, linkOptions: { key: 'moves' } })
    expect(link.shortLink).toBe(`https://localhost:${proxyPort}/moves`)
    // B and C cache it now.
    for (const n of [b, c]) expect((await visit(n, link.shortLink)).headers.get('location')).toBe('https://one.example/')
    const upd = await a.api(`/links/${link.id}`, { method: 'PATCH', json: { data: { url: 'https://two.example/' } } })
    expect(upd.status).toBe(200)
    for (const n of [b, c])
      await until(
        `node ${n.httpsPort} after the update`,
        async () => (await visit(n, link.shortLink)).headers.get('location'),
        (l) => l === 'https://two.example/',
      )
    expect((await a.api(`/links/${link.id}`, { method: 'DELETE' })).status).toBe(200)
    for (const n of [b, c])
      await until(
        `node ${n.httpsPort} after the deletion`,
        async () => (await visit(n, link.shortLink)).status,
        (s) => s === 404,
      )
  })

  test('a key revoked through node A is refused by every node', async () => {
    const [a, b, c] = nodes as [TestServer, TestServer, TestServer]
    const made = await a.api('/keys', { method: 'POST', json: { userId: 'usr_admin', role: 'readonly', name: 'revoked soon' } })
    expect(made.status).toBe(200)
    const { id, key } = (await made.json()) as { id: string; key: string }
    for (const n of [a, b, c]) expect((await n.api('/tags', { key })).status).toBe(200)
    expect((await b.api(`/keys/${id}`, { method: 'DELETE' })).status).toBe(200)
    for (const n of [a, b, c])
      await until(
        `node ${n.httpsPort} with the revoked key`,
        async () => (await n.api('/tags', { key })).status,
        (s) => s === 401,
      )
  })

  test('PostgreSQL restarted: invalidations still reach every node', async () => {
    const [a, b, c] = nodes as [TestServer, TestServer, TestServer]
    const link = await createLink(a, { data: { url: 'https://before.example/' }, linkOptions: { key: 'restart' } })
    for (const n of [b, c]) expect((await visit(n, link.shortLink)).headers.get('location')).toBe('https://before.example/')
    await pg.stop()
    await pg.start()
    // Node A's pool reconnects on its own; a write may meet a connection PostgreSQL cut.
    const updated = await until(
      'the update after the restart',
      async () => (await a.api(`/links/${link.id}`, { method: 'PATCH', json: { data: { url: 'https://after.example/' } } })).status,
      (s) => s === 200,
    )
    expect(updated).toBe(200)
    for (const n of [b, c])
      await until(
        `node ${n.httpsPort} after the restart`,
        async () => (await visit(n, link.shortLink)).headers.get('location'),
        (l) => l === 'https://after.example/',
      )
  })

  test('number targeting over three nodes: 50 visits spread over the balancer get ordinals 1..50 exactly', async () => {
    const items = Array.from({ length: 50 }, (_, i) => ({ from: i + 1, to: i + 1, url: `https://visit-${i + 1}.example/` }))
    const link = await createLink(nodes[0]!, {
      data: { url: 'https://later.example/' },
      linkOptions: { key: 'ordinals', Targeting: { targetType: 'number', targetDatas: items } },
    })
    const path = new URL(link.shortLink).pathname
    // Each visit on its own connection, so the balancer spreads them over the nodes.
    const locations = await Promise.all(
      Array.from({ length: 60 }, () => viaProxy(path, { headers: { 'user-agent': BROWSER_UA, connection: 'close' } }).then((r) => r.headers.get('location'))),
    )
    const firstFifty = items.map((i) => i.url)
    expect(locations.filter((l) => l !== 'https://later.example/').sort()).toEqual([...firstFifty].sort())
    expect(locations.filter((l) => l === 'https://later.example/')).toHaveLength(10)
    expect(proxy.counts().every((n) => n > 0)).toBe(true)
  })

  test('the API rate limit holds for the cluster: one key gets its budget once over three nodes', async () => {
    const made = await nodes[0]!.api('/keys', { method: 'POST', json: { userId: 'usr_admin', role: 'readonly', name: 'budget' } })
    const { key } = (await made.json()) as { key: string }
    // Windows are aligned on the minute: start the burst early in one, so it ends in the same one.
    const intoMinute = Date.now() % 60_000
    if (intoMinute > 40_000) await Bun.sleep(60_000 - intoMinute + 50)
    const statuses = await Promise.all(Array.from({ length: API_PER_MINUTE + 60 }, (_, i) => nodes[i % 3]!.api('/tags', { key }).then((r) => r.status)))
    expect(statuses.filter((s) => s === 200)).toHaveLength(API_PER_MINUTE)
    expect(statuses.filter((s) => s === 429)).toHaveLength(60)
  })

  test('password guesses and dashboard sign-in failures are limited for the cluster: the 11th from one address is refused, whichever node gets it', async () => {
    const link = await createLink(nodes[0]!, { data: { url: 'https://locked.example/' }, linkOptions: { key: 'cluster-locked', password: 'right one' } })
    const form = { 'content-type': 'application/x-www-form-urlencoded', 'user-agent': BROWSER_UA }
    const guesses: number[] = []
    for (let i = 0; i < 11; i++)
      guesses.push((await nodes[i % 3]!.fetch(onNode(nodes[i % 3]!, link.shortLink), { method: 'POST', body: 'password=guess', headers: form })).status)
    expect(guesses).toEqual([...Array(10).fill(403), 429])

    expect((await nodes[0]!.api('/users', { method: 'POST', json: { id: 'gina', password: 'a long enough password' } })).status).toBe(200)
    const signIns: number[] = []
    for (let i = 0; i < 11; i++)
      signIns.push((await nodes[i % 3]!.api('/session', { method: 'POST', key: null, json: { userId: 'gina', password: `wrong guess ${i}` } })).status)
    expect(signIns).toEqual([...Array(10).fill(401), 429])
  })

  test('PostgreSQL stopped and started under redirect load: cached links never fail, the API answers 503 with Retry-After, all recovers and every visit is counted', async () => {
    const [a, b] = nodes as [TestServer, TestServer, TestServer]
    const links = await Promise.all([1, 2, 3].map((i) => createLink(a, { data: { url: `https://cached-${i}.example/` }, linkOptions: { key: `cached-${i}` } })))
    // Every node has every link in its cache.
    for (const n of nodes) for (const l of links) expect((await visit(n, l.shortLink)).status).toBe(302)
    let visits = nodes.length * links.length
    const failures: string[] = []
    let running = true
    const worker = async (w: number) => {
      for (let i = 0; running; i++) {
        const n = nodes[(w + i) % nodes.length]!
        const r = await visit(n, links[i % links.length]!.shortLink).catch((e) => String(e))
        visits++
        if (!(r instanceof Response) || r.status !== 302) failures.push(r instanceof Response ? String(r.status) : r)
      }
    }
    const load = Promise.all(Array.from({ length: 6 }, (_, w) => worker(w)))
    await pg.stop()
    const down = await b.api('/links?pageSize=1')
    expect(down.status).toBe(503)
    expect(Number(down.headers.get('retry-after'))).toBeGreaterThan(0)
    expect(await down.json()).toEqual({ code: 'service_unavailable', message: expect.stringContaining('retry'), requestId: expect.any(String) })
    await pg.start()
    await until(
      'the API after PostgreSQL came back',
      async () => (await b.api('/links?pageSize=1')).status,
      (st) => st === 200,
    )
    running = false
    await load
    expect(failures).toEqual([])
    // Visits made while PostgreSQL was down were held in memory and written once it was back.
    const counted = async () => {
      let sum = 0
      for (const l of links) sum += ((await (await a.api(`/links/${l.id}`)).json()) as { clicks: number }).clicks
      return sum
    }
    expect(await until('clicks after the outage', counted, (n) => n === visits)).toBe(visits)
  })

  test('SIGTERM every node: every counted visit of the cluster is stored', async () => {
    const link = await createLink(nodes[0]!, { data: { url: 'https://final.example/' }, linkOptions: { key: 'final-count' } })
    const path = new URL(link.shortLink).pathname
    let sent = 0
    for (let batch = 0; batch < 6; batch++) {
      const statuses = await Promise.all(
        Array.from({ length: 50 }, () => viaProxy(path, { headers: { 'user-agent': BROWSER_UA, connection: 'close' } }).then((r) => r.status)),
      )
      expect(statuses.filter((st) => st !== 302)).toEqual([])
      sent += statuses.length
    }
    expect(await Promise.all(nodes.map((n) => n.stop('SIGTERM')))).toEqual([0, 0, 0])
    const again = await startNode(0, nodes[0]!.dir)
    try {
      expect(((await (await again.api(`/links/${link.id}`)).json()) as { clicks: number }).clicks).toBe(sent)
      const stats = await again.api(`/statistics?linkId=${link.id}&groupBy=count&interval=all`)
      expect(await stats.json()).toEqual({ clicks: sent, scans: 0 })
    } finally {
      await again.stop()
    }
  })
})

test('three nodes starting together on an empty database: the store is migrated once and one first admin key is printed, by one node', async () => {
  const url = await pg.createDatabase('fresh_cluster')
  const started = await Promise.all([0, 1, 2].map(() => startServer({ storeUrl: url })))
  try {
    const printed = started.filter((n) => n.output().includes('First admin API key'))
    expect(printed).toHaveLength(1)
    const key = /(sk_[A-Za-z0-9_-]+)/.exec(printed[0]!.output())![1]!
    // The key works on every node, and is the only key.
    for (const n of started) expect((await n.api('/tags', { key })).status).toBe(200)
    const keys = await started[0]!.api('/keys', { key })
    expect(((await keys.json()) as unknown[]).length).toBe(1)
    // Each migration was applied by one node: the nodes' logs name as many as the store recorded.
    const applied = started.reduce((sum, n) => sum + (n.output().match(/applying store migration/g)?.length ?? 0), 0)
    const [recorded] = await queryStore<{ n: number }>({ dataDir: '', storeUrl: url }, 'SELECT CAST(count(*) AS integer) AS n FROM schema_migrations')
    expect(applied).toBe(recorded!.n)
  } finally {
    await Promise.all(started.map((n) => n.stop()))
  }
}, 120_000)
