/**
 * The port-80 challenge answers and the HTTPS listener's certificate list, over the store
 * port: a token put by another node (a fresh memory) is answered from the store, bad tokens
 * never reach it, an unreachable store is a 503; a domain that arrives with a certificate
 * already stored (issued by another node) is served without a restart.
 */
import { afterEach, describe, expect, test } from 'bun:test'
import { X509Certificate } from 'node:crypto'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { SQL } from 'bun'
import { freePort } from '../../test/helpers/server'
import { buildConfig } from '../config/config.load'
import { deriveSettings } from '../config/settings'
import { createCnameChecker, createDomainService, createDomainStore } from '../domains'
import { createLogger } from '../shared/log'
import { type Db, openStore } from '../store/db'
import { type HttpsListener, sameCertificates, startHttpsListener } from './https-listener'
import { ensureSelfSigned } from './self-signed'
import { createTls } from './tls'
import { createPgTlsStore } from './tls.store.pg'

const admin = { userId: 'usr_admin', role: 'admin' as const, keyId: 'key_x' }
const log = createLogger(true)
const config = buildConfig({ server: { hostname: '127.0.0.1', httpsPort: await freePort() } }, {})
const settings = deriveSettings(config)

function domainsOf(db: Db) {
  db.query("INSERT OR IGNORE INTO users (id, created_at) VALUES ('usr_admin', 0)").run()
  // Nothing answers DNS on port 1: CNAMEs stay pending, no order is ever placed here.
  const cname = createCnameChecker({ target: settings.apiHost, dnsServers: ['127.0.0.1:1'], timeoutMs: 200 })
  return createDomainService({ store: createDomainStore(db), settings, cname, retryMs: 60_000, log })
}

const dirs: string[] = []
const listeners: HttpsListener[] = []
afterEach(async () => {
  for (const l of listeners.splice(0)) await l.stop(true)
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true })
})
const tempDir = () => {
  const d = mkdtempSync(join(tmpdir(), 'shortlink-tls-'))
  dirs.push(d)
  return d
}

describe('ACME challenge answers on the HTTP port', () => {
  const path = (token: string) => `/.well-known/acme-challenge/${token}`

  test("another node's token is answered from the store; unknown tokens are 404; other paths are not challenges", async () => {
    const db = openStore(':memory:')
    const domains = domainsOf(db)
    const ordering = createTls({ db, config, settings, domains, log })
    const other = createTls({ db, config, settings, domains, log })
    await ordering.challenges.put('tok_1-A', 'tok_1-A.thumbprint')

    const answer = other.answerChallenge(path('tok_1-A'))
    // SQLite: answered at once, without a promise.
    expect(answer).toBeInstanceOf(Response)
    const res = answer as Response
    expect([res.status, res.headers.get('content-type'), await res.text()]).toEqual([200, 'application/octet-stream', 'tok_1-A.thumbprint'])

    const unknown = other.answerChallenge(path('nope')) as Response
    expect([unknown.status, await unknown.text()]).toEqual([404, 'unknown challenge token\n'])
    expect(other.answerChallenge('/robots.txt')).toBeNull()
    expect(other.answerChallenge(`${path('tok')}/more`)).toBeNull()
    expect(other.answerChallenge(path('tok.dot'))).toBeNull()
  })

  test('an unreachable store answers 503 (the CA retries); an oversized token is refused without reading the store', async () => {
    const db = openStore(':memory:')
    const unreachable = new SQL(`postgres://postgres@127.0.0.1:${await freePort()}/none`, { max: 1, connectionTimeout: 2 })
    const node = createTls({ store: createPgTlsStore(unreachable), config, settings, domains: domainsOf(db), log })

    const answer = node.answerChallenge(path('tok'))
    expect(answer).toBeInstanceOf(Promise)
    const res = await answer!
    expect([res.status, res.headers.get('retry-after'), await res.text()]).toEqual([503, '1', 'challenge store unavailable\n'])

    const long = node.answerChallenge(path('a'.repeat(257)))
    expect(long).toBeInstanceOf(Response)
    expect((long as Response).status).toBe(404)
    await unreachable.close()
  })
})

describe('HTTPS listener certificates', () => {
  test('a domain that arrives with a certificate already in the store is served by SNI without a restart', async () => {
    const db = openStore(':memory:')
    const domains = domainsOf(db)
    const tls = createTls({ db, config, settings, domains, log })
    const baseCert = await ensureSelfSigned(tempDir(), ['localhost'])
    // Issued elsewhere (another node, on a shared store) before this node knows the domain.
    const shop = await ensureSelfSigned(tempDir(), ['shop.example.com'])
    const x509 = new X509Certificate(shop.cert)
    tls.certs.put({ name: 'shop.example.com', cert: shop.cert, key: shop.key, notBefore: Date.parse(x509.validFrom), notAfter: Date.parse(x509.validTo) })

    const https = startHttpsListener(tls, {
      baseCert,
      maxRequestBodySize: 1024,
      swapDebounceMs: 0,
      fetch: () => new Response('ok'),
      error: () => new Response('error', { status: 500 }),
    })
    listeners.push(https)
    await https.ready
    expect(https.serverNames()).toEqual([settings.apiHost])

    domains.create(admin, { domain: 'shop.example.com' })
    const deadline = Date.now() + 10_000
    while (!https.serverNames().includes('shop.example.com') && Date.now() < deadline) await Bun.sleep(10)
    expect(https.serverNames()).toEqual([settings.apiHost, 'shop.example.com'])
  })
})

test('a re-read that finds the same certificates makes no new listener (a swap may reset connections being accepted)', () => {
  const a = { serverName: 'localhost', cert: 'CERT-A', key: 'KEY-A' }
  const b = { serverName: 'shop.example.com', cert: 'CERT-B', key: 'KEY-B' }
  expect(sameCertificates([a, b], [{ ...a }, { ...b }])).toBe(true)
  expect(sameCertificates([a, b], [a])).toBe(false)
  expect(sameCertificates([a, b], [a, { ...b, cert: 'CERT-B2' }])).toBe(false)
  expect(sameCertificates([a, b], [a, { ...b, key: 'KEY-B2' }])).toBe(false)
  expect(sameCertificates([a, b], [b, a])).toBe(false)
})
