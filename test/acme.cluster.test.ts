/**
 * ACME in a cluster, on CertMagic's model: three nodes (three Bun.SQL clients on one real
 * PostgreSQL, each with its own lease locks, invalidation bus, HTTP-01 responder and HTTPS
 * listener) see the same certificate due at the same moment. Exactly one order reaches the
 * CA (a real pebble); pebble's validation request is answered by every node (a fan-out
 * proxy on pebble's HTTP-01 port asks all three and requires the same answer, so two of them
 * read another node's challenge from the store); afterwards every node serves the certificate
 * by SNI without a restart. A later certificate saved on one node reaches the others'
 * listeners through the `certificates` invalidation channel alone.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { X509Certificate } from 'node:crypto'
import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { type Server, SQL } from 'bun'
import { deriveSettings } from '../src/config'
import { buildConfig } from '../src/config/config.load'
import { createCnameChecker, createDomainService, createPgDomainStore, type DomainStorePort } from '../src/domains'
import type { Logger } from '../src/shared'
import { createInvalidationBus, createLeaseLocks, FLUSH, type InvalidationBus, migratePostgres } from '../src/store'
import { createPgTlsStore, createTls, type HttpsListener, startHttpsListener, type Tls } from '../src/tls'
import { type CertPair, ensureSelfSigned } from '../src/tls/self-signed'
import { type Pebble, servedSerial, startPebble } from './helpers/pebble'
import { until } from './helpers/poll'
import { startPostgres, type TestPostgres } from './helpers/postgres'
import { freePort } from './helpers/server'

const DOMAIN = 'cluster.shortlink.test'

interface Node {
  sql: SQL
  bus: InvalidationBus
  tls: Tls
  http: Server<unknown>
  https: HttpsListener
  /** Orders this node put to the CA (calls through its issuer). */
  orders: string[]
  logs: string[]
}

function recordingLogger(lines: string[]): Logger {
  const at = (level: string) => (msg: string, fields?: Record<string, unknown>) => void lines.push(JSON.stringify({ level, msg, ...fields }))
  return { info: at('info'), warn: at('warn'), error: at('error') }
}

describe('ACME in a cluster (three nodes, one PostgreSQL, pebble)', () => {
  let pg: TestPostgres
  let pebble: Pebble
  let root = ''
  let url = ''
  let proxy: Server<unknown>
  /** Every HTTP-01 request pebble made, with each node's answer to it. */
  const validations: { path: string; answers: { status: number; body: string }[] }[] = []
  const nodes: Node[] = []
  let baseCert: CertPair

  const newOrders = () => (pebble.output().match(/POST \/order-plz/g) ?? []).length

  beforeAll(async () => {
    const proxyPort = await freePort()
    ;[pg, pebble] = await Promise.all([startPostgres(), startPebble({ httpPort: proxyPort })])
    url = await pg.createDatabase('tls_cluster')
    const admin = new SQL(url, { max: 1 })
    await migratePostgres(admin)
    await admin.close()
    await pebble.addA(DOMAIN, ['127.0.0.1'])
    root = await pebble.root()

    // Pebble's HTTP-01 port: asks every node and answers only when all three give the same answer.
    proxy = Bun.serve({
      port: proxyPort,
      hostname: '127.0.0.1',
      async fetch(request) {
        const path = new URL(request.url).pathname
        const answers = await Promise.all(
          nodes.map(async (n) => {
            const r = await fetch(`http://127.0.0.1:${n.http.port}${path}`)
            return { status: r.status, body: await r.text() }
          }),
        )
        validations.push({ path, answers })
        const agreed = answers.every((a) => a.status === 200 && a.body === answers[0]!.body)
        return agreed ? new Response(answers[0]!.body) : new Response(JSON.stringify(answers), { status: 502 })
      },
    })

    baseCert = await ensureSelfSigned(mkdtempSync(join(tmpdir(), 'tls-cluster-')), ['localhost'])
    for (let i = 0; i < 3; i++) {
      const logs: string[] = []
      const log = recordingLogger(logs)
      const sql = new SQL(url, { max: 4 })
      const bus = await createInvalidationBus({ url, channels: ['certificates'], log })
      const config = buildConfig(
        {
          server: { baseUrl: `https://${DOMAIN}`, httpsPort: await freePort(), hostname: '127.0.0.1' },
          tls: { mode: 'acme', acmeDirectory: pebble.directory, acmeCaFile: pebble.apiCaFile, acmePollMs: 50, acmeRetryMs: 1000 },
        },
        {},
      )
      const settings = deriveSettings(config)
      const domains = createDomainService<DomainStorePort>({
        store: createPgDomainStore(sql),
        settings,
        cname: createCnameChecker({ target: DOMAIN, dnsServers: [pebble.dns] }),
        retryMs: 1000,
        log,
      })
      await domains.ready
      const t = createTls({
        store: createPgTlsStore(sql, { publish: bus.publish }),
        locks: createLeaseLocks(sql, { holder: `node${i}`, pollMs: 50 }),
        config,
        settings,
        domains,
        log,
      })
      const orders: string[] = []
      const issuer = t.issuer
      t.issuer = () => ({
        issue(name) {
          orders.push(name)
          return issuer().issue(name)
        },
      })
      const http = Bun.serve({
        port: 0,
        hostname: '127.0.0.1',
        fetch: (request) => t.answerChallenge(new URL(request.url).pathname) ?? new Response('not a challenge\n', { status: 404 }),
      })
      nodes.push({ sql, bus, tls: t, http, https: undefined as unknown as HttpsListener, orders, logs })
    }
  })

  afterAll(async () => {
    for (const n of nodes) {
      await n.https?.stop(true)
      n.http.stop(true)
      await n.bus.close()
      await n.sql.close()
    }
    proxy?.stop(true)
    await pebble?.stop()
    await pg?.destroy()
  })

  test('three nodes due at once: one order reaches the CA, every node answers the challenge, every node serves the certificate', async () => {
    const ordersBefore = newOrders()
    const t0 = performance.now()
    // All three HTTPS listeners (and their certificate managers) start together: each sees the certificate due.
    for (const n of nodes) {
      n.https = startHttpsListener(n.tls, {
        baseCert,
        maxRequestBodySize: 1024,
        fetch: () => new Response('ok'),
        error: () => new Response('error', { status: 500 }),
      })
      n.bus.on('certificates', (key) => (key === FLUSH ? n.https.clear() : n.https.invalidate(key)))
    }
    await Promise.all(nodes.map((n) => n.https.ready))

    const serials = await Promise.all(nodes.map((n) => until(`node ${nodes.indexOf(n)} serving ${DOMAIN}`, () => servedSerial(n.https.port, DOMAIN, root))))
    console.log(`three nodes due at once → all three serving the one certificate: ${(performance.now() - t0).toFixed(0)} ms`)
    expect(new Set(serials).size).toBe(1)
    expect(nodes.map((n) => n.orders.length).sort()).toEqual([0, 0, 1])
    expect(newOrders() - ordersBefore).toBe(1)
    // Pebble validated through the proxy, and every node had the same answer (two of them read it from the store).
    expect(validations.length).toBeGreaterThan(0)
    for (const v of validations) {
      expect(v.answers.map((a) => a.status)).toEqual([200, 200, 200])
      expect(new Set(v.answers.map((a) => a.body)).size).toBe(1)
    }
    // The lock is released, and the challenge is gone from the store (any node now says 404).
    expect(await createLeaseLocks(nodes[0]!.sql).holderOf(`acme:${DOMAIN}`)).toBeNull()
    expect((await fetch(`http://127.0.0.1:${nodes[1]!.http.port}${validations[0]!.path}`)).status).toBe(404)
  })

  test('a certificate saved on one node is served by the others through the invalidation channel, without a restart', async () => {
    const [first, ...others] = nodes as [Node, Node, Node]
    const before = await servedSerial(others[0].https.port, DOMAIN, root)
    const issued = await first.tls.issuer().issue(DOMAIN)
    await first.tls.certs.put(issued)
    const want = new X509Certificate(issued.cert).serialNumber.toUpperCase()
    expect(before?.toUpperCase()).not.toBe(want)
    for (const n of others) await until('the new certificate served', async () => (await servedSerial(n.https.port, DOMAIN, root))?.toUpperCase() === want)
  })
})
