/**
 * The certificate manager hears of domains changed on another node: two domain services over
 * one store stand for two nodes; the second only reloads the domain (as the cluster's
 * `domains` invalidation does, without events), and `wake()` makes its manager plan and order.
 */
import { afterEach, expect, test } from 'bun:test'
import { X509Certificate } from 'node:crypto'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { freePort } from '../../test/helpers/server'
import { buildConfig } from '../config/config.load'
import { deriveSettings } from '../config/settings'
import { createCnameChecker, createDomainService, createDomainStore } from '../domains'
import { createLogger } from '../shared/log'
import { type Db, openStore } from '../store/db'
import type { IssuedCertificate } from './acme'
import { type CertificateManager, createCertificateManager } from './certificate-manager'
import { ensureSelfSigned } from './self-signed'
import { createTls } from './tls'

const admin = { userId: 'usr_admin', role: 'admin' as const, keyId: 'key_x' }
const log = createLogger(true)
const config = buildConfig({ server: { hostname: '127.0.0.1', httpsPort: await freePort() } }, {})
const settings = deriveSettings(config)

function nodeDomains(db: Db) {
  // Nothing answers DNS on port 1: no CNAME check of this test's ever succeeds by itself.
  const cname = createCnameChecker({ target: settings.apiHost, dnsServers: ['127.0.0.1:1'], timeoutMs: 200 })
  return createDomainService({ store: createDomainStore(db), settings, cname, retryMs: 60_000, log })
}

const dirs: string[] = []
const managers: CertificateManager[] = []
afterEach(() => {
  for (const m of managers.splice(0)) m.stop()
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true })
})

async function issued(name: string): Promise<IssuedCertificate> {
  const dir = mkdtempSync(join(tmpdir(), 'shortlink-manager-'))
  dirs.push(dir)
  const pair = await ensureSelfSigned(dir, [name])
  const x509 = new X509Certificate(pair.cert)
  return { name, cert: pair.cert, key: pair.key, notBefore: Date.parse(x509.validFrom), notAfter: Date.parse(x509.validTo) }
}

test('a domain added on another node is ordered here once the manager is woken after the reload', async () => {
  const db = openStore(':memory:')
  db.query("INSERT OR IGNORE INTO users (id, created_at) VALUES ('usr_admin', 0)").run()
  const elsewhere = nodeDomains(db)
  const here = nodeDomains(db)
  const tls = createTls({ db, config, settings, domains: here, log })
  const asked: string[] = []
  const manager = createCertificateManager({
    deps: tls.deps,
    certs: tls.certs,
    // The CA's side is not under test here (test/cluster-acme.e2e.test.ts runs a real one).
    issuer: () => ({
      async issue(name) {
        asked.push(name)
        return issued(name)
      },
    }),
    onCertificates: () => {},
  })
  managers.push(manager)
  manager.start()
  // Its first planning runs on the 0 ms timer start() set: one timer turn later it has planned
  // (the store answers synchronously) and sleeps, with no domain to look at.
  await new Promise((resolve) => setTimeout(resolve, 0))

  // Another node registers the domain and finds its CNAME valid, then stops before ordering.
  elsewhere.create(admin, { domain: 'shop.example.com' })
  createDomainStore(db).updateCname('shop.example.com', {
    cnameStatus: 'valid',
    cnameDetail: 'CNAME shop.example.com → localhost',
    cnameCheckedAt: Date.now(),
    cnameAttempts: 0,
    cnameNextAt: null,
  })
  // This node reloads it (the invalidation bus): no event, so its manager does not know yet.
  here.reload('shop.example.com')
  expect(here.stateOf('shop.example.com')?.cnameStatus).toBe('valid')

  manager.wake()
  const deadline = Date.now() + 4_000
  while (here.stateOf('shop.example.com')?.sslStatus !== 'active' && Date.now() < deadline) await Bun.sleep(10)
  expect(asked).toEqual(['shop.example.com'])
  expect(here.stateOf('shop.example.com')).toMatchObject({ sslStatus: 'active', sslError: null })
  expect(tls.certs.get('shop.example.com')).toMatchObject({ name: 'shop.example.com' })
})
