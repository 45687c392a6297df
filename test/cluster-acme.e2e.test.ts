/**
 * ACME on a cluster of the binary: three nodes on one PostgreSQL in `[tls] mode = "acme"`,
 * ordering from a real CA (Debian's pebble, with pebble-challtestsrv as DNS). Pebble's
 * HTTP-01 validation goes through a round-robin TCP balancer in front of the three nodes'
 * plain-HTTP listeners, as an operator's would be, so it is answered by whichever node the
 * balancer picks: a node that did not order reads the challenge from the store. Each domain
 * gets one order however many nodes see it due (the lease lock `acme:<name>`), and every node
 * then serves the certificate by SNI on its own HTTPS port, without a restart. A domain whose
 * node stops before ordering is checked and ordered by the others, which heard of it over the
 * `domains` invalidation (server.ts wakes each node's certificate manager on it).
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { type Pebble, pebbleInstalled, servedSerial, startPebble } from './helpers/pebble'
import { until } from './helpers/poll'
import { startPostgres, type TestPostgres } from './helpers/postgres'
import { type RoundRobinProxy, startRoundRobinProxy } from './helpers/proxy'
import { freePort, json, startServer, type TestServer } from './helpers/server'

const ADMIN_KEY = 'sk_cluster_acme_admin_key_0123456789'
/** The host custom domains CNAME to; challtestsrv points it at loopback. */
const TARGET = 'edge.cluster-acme.test'
const AT_START = 'boot.cluster-acme.test'
const ADDED = 'added.cluster-acme.test'
const ORPHANED = 'orphaned.cluster-acme.test'
/**
 * How long after a failed CNAME check the next one is due: longer than three nodes take to
 * start here, so all three are up and plan it for the same moment (not a wait in the test:
 * the nodes' own timers).
 */
const DUE_IN_MS = 6000

describe.skipIf(!pebbleInstalled())('ACME on three nodes of one PostgreSQL (pebble)', () => {
  let pg: TestPostgres
  let pebble: Pebble
  let storeUrl = ''
  let root = ''
  /** Pebble validates HTTP-01 on this port: the balancer's. */
  let pebblePort = 0
  /** Each node's plain-HTTP port, chosen before it starts so the balancer can be up first. */
  let httpPorts: number[] = []
  let publicPort = 0
  let nodes: TestServer[] = []
  let proxy: RoundRobinProxy | null = null
  /** Node indexes in the balancer's order: `proxyOrder[i]` is the node behind its backend i. */
  let proxyOrder: number[] = []

  const ordersAtCa = () => (pebble.output().match(/POST \/order-plz/g) ?? []).length
  /** Nodes (indexes) whose log says they obtained a certificate for `name`. */
  const orderedBy = (name: string) => nodes.flatMap((n, i) => (n.output().includes(`"msg":"certificate issued","name":"${name}"`) ? [i] : []))
  /** The nodes that logged the order, once one has: the certificate is stored (and served) before its node's log line is read here. */
  const loggedOrderers = (name: string) =>
    until(
      `a node's log saying it ordered ${name}`,
      async () => orderedBy(name),
      (o) => o.length > 0,
    )
  /** Validation connections the balancer handed to each node (by node index). */
  const askedPerNode = () => {
    const counts = proxy?.counts() ?? []
    const out = [0, 0, 0]
    for (const [i, node] of proxyOrder.entries()) out[node]! += counts[i] ?? 0
    return out
  }
  /** (Re)starts the balancer on pebble's port, its round robin beginning with `order[0]`. */
  function balance(order: number[]) {
    proxy?.stop()
    proxyOrder = order
    proxy = startRoundRobinProxy(
      order.map((i) => httpPorts[i]!),
      pebblePort,
    )
  }

  function startNode(i: number, dir?: string, retryMs = 1000): Promise<TestServer> {
    return startServer({
      dir,
      storeUrl,
      publicBaseUrl: `https://localhost:${publicPort}/api`,
      env: { SHORTLINK_ADMIN_KEY: ADMIN_KEY, SHORTLINK_SERVER_HTTPPORT: String(httpPorts[i]) },
      toml: `
[tls]
mode = "acme"
acmeDirectory = "${pebble.directory}"
acmeCaFile = "${pebble.apiCaFile}"
acmePollMs = 50
acmeRetryMs = ${retryMs}

[domains]
cnameTarget = "${TARGET}"
dnsServers = ["${pebble.dns}"]
`,
    })
  }

  /** Every node serves one and the same certificate for `name`, issued by pebble: its serial. */
  async function servedByEveryNode(name: string): Promise<string> {
    const serials = await Promise.all(nodes.map((n, i) => until(`node ${i} serving ${name}`, () => servedSerial(n.httpsPort, name, root))))
    expect(new Set(serials).size).toBe(1)
    return serials[0]!
  }

  beforeAll(async () => {
    pebblePort = await freePort()
    ;[pg, pebble] = await Promise.all([startPostgres(), startPebble({ httpPort: pebblePort })])
    storeUrl = await pg.createDatabase('cluster_acme')
    await pebble.addA(TARGET, ['127.0.0.1'])
    root = await pebble.root()
    httpPorts = await Promise.all([freePort(), freePort(), freePort()])
    publicPort = await freePort()
  })

  afterAll(async () => {
    for (const [i, n] of nodes.entries())
      if (process.env.DEBUG_CLUSTER || n.proc.exitCode !== null) console.error(`node ${i} exited ${n.proc.exitCode}:\n${n.output()}`)
    if (process.env.DEBUG_CLUSTER) console.error(pebble?.output())
    proxy?.stop()
    await Promise.all(nodes.map((n) => n.stop().catch(() => 0)))
    await pebble?.stop()
    await pg?.destroy()
  })

  test('three nodes started together with a domain due: one order reaches the CA, and every node serves its certificate', async () => {
    balance([0, 1, 2])
    // A domain whose CNAME could not be checked (DNS failing): registered, not ordered, its
    // next check due DUE_IN_MS after the failed one, so that nodes starting meanwhile all wake for it at once.
    await pebble.setServfail(AT_START)
    const first = await startNode(0, undefined, DUE_IN_MS)
    nodes = [first]
    const created = await json(await first.api('/domains', { method: 'POST', json: { domain: AT_START } }))
    expect(created.status).toBe(200)
    expect(created.body).toMatchObject({ cnameStatus: 'pending', sslStatus: 'pending' })
    await until('the first CNAME check', async () => (await json(await first.api(`/domains/${AT_START}`))).body.cnameDetail)
    expect(await first.stop()).toBe(0)

    // DNS answers now; the three nodes start together and each finds the domain due for a CNAME check, then an order.
    await pebble.clearServfail(AT_START)
    await pebble.setCname(AT_START, TARGET)
    const ordersBefore = ordersAtCa()
    nodes = await Promise.all([startNode(0, first.dir), startNode(1), startNode(2)])

    await servedByEveryNode(AT_START)
    expect(ordersAtCa() - ordersBefore).toBe(1)
    expect(await loggedOrderers(AT_START)).toHaveLength(1)
    console.log(`started together: ordered by node ${orderedBy(AT_START)[0]}; validations answered per node ${JSON.stringify(askedPerNode())}`)
    // Pebble's validation went through the balancer.
    expect(askedPerNode().reduce((a, b) => a + b, 0)).toBeGreaterThan(0)
    const d = await until('the domain active on every node', async () => {
      const all = await Promise.all(nodes.map(async (n) => (await json(await n.api(`/domains/${AT_START}`))).body))
      return all.every((x) => x.sslStatus === 'active') && all
    })
    expect(d[2]).toMatchObject({ cnameStatus: 'valid', sslStatus: 'active', sslError: null })
  })

  test('a domain added through node A: one order, the challenge answered by a node that did not order, every node serves the certificate', async () => {
    const [a, b, c] = nodes as [TestServer, TestServer, TestServer]
    // The balancer hands pebble's first validation to node B. Node A hears of the domain first,
    // B and C over the invalidation bus; the lease lock picks the one that orders.
    balance([1, 2, 0])
    await pebble.setCname(ADDED, TARGET)
    for (const n of nodes) expect(await servedSerial(n.httpsPort, ADDED, root)).toBeNull()
    const ordersBefore = ordersAtCa()

    const created = await json(await a.api('/domains', { method: 'POST', json: { domain: ADDED } }))
    expect(created.status).toBe(200)
    const active = await until('the domain active on node C', async () => {
      const d = (await json(await c.api(`/domains/${ADDED}`))).body
      return d.sslStatus === 'active' && d
    })
    expect(active).toMatchObject({ slug: ADDED, cnameStatus: 'valid', sslStatus: 'active', sslError: null })
    const serial = await servedByEveryNode(ADDED)
    expect(serial).toBeTruthy()

    expect(ordersAtCa() - ordersBefore).toBe(1)
    const orderer = await loggedOrderers(ADDED)
    expect(orderer).toHaveLength(1)
    // Whichever node ordered, a node other than the orderer was asked and the validation
    // passed (one order, no retry).
    const asked = askedPerNode()
    console.log(`added through node A: ordered by node ${orderer[0]}; validations answered per node ${JSON.stringify(asked)}`)
    expect(asked[1]).toBeGreaterThan(0)
    expect(asked.some((count, i) => count > 0 && i !== orderer[0])).toBe(true)
    // Pebble validates from three perspectives, all of which must pass: here each node answered one.
    expect(asked.every((count) => count > 0)).toBe(true)
    // B and C learned of the domain over the invalidation bus and show it too.
    expect((await json(await b.api(`/domains/${ADDED}`))).body.sslStatus).toBe('active')
  })
  test('node A stops right after a domain is added through it: the other nodes check its CNAME and one of them orders', async () => {
    const [a, , c] = nodes as [TestServer, TestServer, TestServer]
    balance([0, 1, 2])
    // DNS fails at first, so node A registers the domain and checks it once, without ordering.
    await pebble.setServfail(ORPHANED)
    const ordersBefore = ordersAtCa()
    expect((await a.api('/domains', { method: 'POST', json: { domain: ORPHANED } })).status).toBe(200)
    await until('the first CNAME check', async () => (await json(await a.api(`/domains/${ORPHANED}`))).body.cnameDetail)
    expect(await a.stop()).toBe(0)
    await pebble.clearServfail(ORPHANED)
    await pebble.setCname(ORPHANED, TARGET)

    // Nodes B and C heard of the domain over the invalidation bus; its next check is theirs.
    const active = await until(
      'the domain active on node C',
      async () => {
        const d = (await json(await c.api(`/domains/${ORPHANED}`))).body
        return d.sslStatus === 'active' && d
      },
      undefined,
      15_000,
    )
    expect(active).toMatchObject({ slug: ORPHANED, cnameStatus: 'valid', sslStatus: 'active', sslError: null })
    expect(ordersAtCa() - ordersBefore).toBe(1)
    const orderer = await loggedOrderers(ORPHANED)
    expect(orderer).toHaveLength(1)
    expect(orderer).not.toContain(0)
    // Node A, started again, serves the certificate from the store as the others do.
    nodes[0] = await startNode(0, a.dir)
    await servedByEveryNode(ORPHANED)
  })
})
