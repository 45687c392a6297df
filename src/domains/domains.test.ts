import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { createHarness } from '../../test/helpers/in-process'
import { type Pebble, pebbleInstalled, startPebble } from '../../test/helpers/pebble'
import { buildConfig } from '../config/config.load'
import { deriveSettings } from '../config/settings'
import { createLogger } from '../shared/log'
import { openStore } from '../store/db'
import { createCnameChecker } from './cname'
import { backoffMs } from './domains.cname-state'
import { toAsciiDomain } from './domains.names'
import { createDomainService } from './domains.service'
import { createDomainStore } from './domains.store'

const TARGET = 'edge.shortlink.test'
const admin = { userId: 'usr_admin', role: 'admin' as const, keyId: 'key_x' }

describe('domain names', () => {
  test('IDN becomes punycode; case, trailing dot; IPs and junk are refused', () => {
    expect(toAsciiDomain('Bücher.Example.')).toBe('xn--bcher-kva.example')
    expect(toAsciiDomain('xn--bcher-kva.example')).toBe('xn--bcher-kva.example')
    expect(toAsciiDomain('links.example.com')).toBe('links.example.com')
    for (const bad of [
      '1.2.3.4',
      '::1',
      '[::1]',
      '999',
      '10.1',
      'localhost',
      'a..b',
      '-a.com',
      'a_b.com',
      'a/b.com',
      'user@x.com',
      'x.com:80',
      'ex ample.com',
      '',
    ])
      expect([bad, toAsciiDomain(bad)]).toEqual([bad, null])
  })
})

describe('domains API', () => {
  test('create, get, list, patch, archive, un-archive, delete', async () => {
    const h = createHarness()
    const created = await h.call('POST', '/domains', {
      json: { domain: 'Go.Example.com', notFoundUrl: 'https://example.com/404', assetLinks: '[{"relation":["delegate_permission/common.handle_all_urls"]}]' },
    })
    expect(created.status).toBe(200)
    expect(created.body).toEqual({
      slug: 'go.example.com',
      destination: null,
      clicks: 0,
      cnameStatus: 'pending',
      cnameTarget: 'localhost',
      cnameDetail: null,
      sslStatus: 'pending',
      sslError: null,
      expiredUrl: null,
      notFoundUrl: 'https://example.com/404',
      assetLinks: '[{"relation":["delegate_permission/common.handle_all_urls"]}]',
      appleAppSiteAssociation: null,
      archived: false,
      isDefault: false,
      createdAt: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/),
    })
    expect((await h.call('GET', '/domains/GO.example.com')).body).toEqual(created.body)

    const patched = await h.call('PATCH', '/domains/go.example.com', {
      json: { expiredUrl: 'https://example.com/expired', notFoundUrl: null, destination: 'https://example.com/' },
    })
    expect(patched.status).toBe(200)
    expect(patched.body).toMatchObject({ expiredUrl: 'https://example.com/expired', notFoundUrl: null, destination: 'https://example.com/' })

    expect((await h.call('PATCH', '/domains/go.example.com', { json: { archived: true } })).body.archived).toBe(true)
    const listed = await h.call('GET', '/domains')
    expect(listed.body.map((d: any) => d.slug)).toEqual(['localhost'])
    const withArchived = await h.call('GET', '/domains?includeArchived=true')
    expect(withArchived.body.map((d: any) => d.slug).sort()).toEqual(['go.example.com', 'localhost'])
    expect((await h.call('PATCH', '/domains/go.example.com', { json: { archived: false } })).body.archived).toBe(false)
    expect((await h.call('GET', '/domains')).headers.get('x-total-count')).toBe('2')

    const del = await h.call('DELETE', '/domains/go.example.com')
    expect(del.body).toEqual({ domain: 'go.example.com' })
    expect((await h.call('GET', '/domains/go.example.com')).status).toBe(404)
    expect((await h.call('DELETE', '/domains/go.example.com')).status).toBe(404)
  })

  test('validation: host names, IPs, defaults, the API host, duplicates, URLs, JSON, lengths', async () => {
    const h = createHarness({ server: { baseUrl: 'https://api.example.net/api' }, domains: { defaults: ['s.example.net'] } })
    const idn = await h.call('POST', '/domains', { json: { domain: 'Bücher.example' } })
    expect(idn.body.slug).toBe('xn--bcher-kva.example')
    const cases: [unknown, string][] = [
      [{ domain: 'xn--bcher-kva.example.' }, 'already registered'],
      [{ domain: 'BÜCHER.example' }, 'already registered'],
      [{ domain: '192.0.2.1' }, 'IP address'],
      [{ domain: '[2001:db8::1]' }, 'IP address'],
      [{ domain: 'no_underscores.example' }, "'domain'"],
      [{ domain: 'single' }, "'domain'"],
      [{ domain: 's.example.net' }, 'default short domain'],
      [{ domain: 'api.example.net' }, 'API host'],
      [{ domain: `${'a'.repeat(60)}.${'b'.repeat(60)}.${'c'.repeat(60)}.example.com` }, "'domain'"], // 194 characters
      [{ domain: 'ok.example', notFoundUrl: 'ftp://example.com/x' }, "'notFoundUrl'"],
      [{ domain: 'ok.example', expiredUrl: 'not a url' }, "'expiredUrl'"],
      [{ domain: 'ok.example', destination: 'javascript:alert(1)' }, "'destination'"],
      [{ domain: 'ok.example', expiredUrl: `https://example.com/${'x'.repeat(2000)}` }, "'expiredUrl'"],
      [{ domain: 'ok.example', assetLinks: '{not json' }, "'assetLinks'"],
      [{ domain: 'ok.example', appleAppSiteAssociation: '"just a string"' }, "'appleAppSiteAssociation'"],
      [{ domain: 'ok.example', extra: 1 }, 'extra'],
      [{}, "'domain'"],
      [{ domain: '' }, "'domain'"],
    ]
    for (const [json, inMessage] of cases) {
      const r = await h.call('POST', '/domains', { json })
      expect([json, r.status, r.body.code]).toEqual([json, 422, 'parameter_error'])
      expect(r.body.message).toContain(inMessage)
    }
    const badPatch = await h.call('PATCH', '/domains/xn--bcher-kva.example', { json: { archived: 'yes' } })
    expect(badPatch.status).toBe(422)
    expect(badPatch.body.message).toContain('archived')
  })

  test('default domains are listed, valid and active, and read-only', async () => {
    const h = createHarness({ domains: { defaults: ['localhost', 'short.example'] } })
    const list = await h.call('GET', '/domains?sortBy=domain&sortOrder=asc', { key: h.keys.member })
    expect(list.body.map((d: any) => [d.slug, d.isDefault, d.cnameStatus, d.sslStatus])).toEqual([
      ['localhost', true, 'valid', 'active'],
      ['short.example', true, 'valid', 'active'],
    ])
    expect((await h.call('GET', '/domains/short.example', { key: h.keys.member })).body.isDefault).toBe(true)
    const patch = await h.call('PATCH', '/domains/short.example', { json: { archived: true } })
    expect([patch.status, patch.body.code]).toEqual([403, 'forbidden'])
    expect((await h.call('DELETE', '/domains/short.example')).status).toBe(403)
    expect((await h.call('POST', '/domains', { json: { domain: 'short.example' } })).status).toBe(422)
  })

  test('members and read-only keys may read; only admins manage', async () => {
    const h = createHarness()
    expect((await h.call('POST', '/domains', { json: { domain: 'a.example.com' } })).status).toBe(200)
    for (const [method, path, json] of [
      ['POST', '/domains', { domain: 'b.example.com' }],
      ['PATCH', '/domains/a.example.com', { archived: true }],
      ['DELETE', '/domains/a.example.com', undefined],
      ['POST', '/domains/a.example.com/verify', undefined],
    ] as const) {
      for (const key of [h.keys.member, h.keys.readonly]) {
        const r = await h.call(method, path, { key, json })
        expect([method, path, r.status, r.body.code]).toEqual([method, path, 403, 'forbidden'])
      }
    }
    expect((await h.call('GET', '/domains', { key: h.keys.member })).body).toHaveLength(2)
    expect((await h.call('GET', '/domains/a.example.com', { key: h.keys.readonly })).status).toBe(200)
    expect((await h.call('GET', '/domains', { key: null })).status).toBe(401)
  })

  test('list: domains filter, search (also in Unicode), sort, paging, limits', async () => {
    const h = createHarness()
    for (const d of ['b.example.com', 'a.example.com', 'bücher.example', 'c.example.org']) {
      expect((await h.call('POST', '/domains', { json: { domain: d } })).status).toBe(200)
    }
    const slugs = async (q: string) => {
      const r = await h.call('GET', `/domains${q}`)
      expect(r.status).toBe(200)
      return { slugs: r.body.map((d: any) => d.slug), total: r.headers.get('x-total-count') }
    }
    expect(await slugs('?domains=a.example.com&domains=B.EXAMPLE.COM&domains=nope.example')).toEqual({ slugs: ['a.example.com', 'b.example.com'], total: '2' })
    expect(await slugs('?search=example.com&sortBy=domain&sortOrder=asc')).toEqual({ slugs: ['a.example.com', 'b.example.com'], total: '2' })
    expect((await slugs('?search=bücher')).slugs).toEqual(['xn--bcher-kva.example'])
    expect(await slugs('?sortBy=created_at&sortOrder=desc&pageSize=2&page=1')).toEqual({ slugs: ['c.example.org', 'xn--bcher-kva.example'], total: '5' })
    expect((await slugs('?sortBy=created_at&sortOrder=asc&pageSize=2&page=3')).slugs).toEqual(['c.example.org'])
    for (const q of ['?pageSize=51', '?pageSize=0', '?sortBy=name', '?search=', `?search=${'x'.repeat(191)}`, '?includeArchived=maybe']) {
      const r = await h.call('GET', `/domains${q}`)
      expect([q, r.status]).toEqual([q, 422])
    }
  })

  test('lookup and isUsableForLinks follow every write; onChange tells listeners', async () => {
    const h = createHarness()
    const { domains } = h.deps
    const events: string[] = []
    domains.onChange((e) => events.push(`${e.type}:${e.slug}`))
    expect(domains.lookup('localhost')).toMatchObject({ slug: 'localhost', isDefault: true })
    expect(domains.isUsableForLinks('localhost')).toBe(true)
    expect(domains.lookup('x.example.com')).toBeNull()

    await h.call('POST', '/domains', { json: { domain: 'x.example.com', expiredUrl: 'https://example.com/gone' } })
    expect(domains.lookup('x.example.com')).toEqual({
      slug: 'x.example.com',
      destination: null,
      notFoundUrl: null,
      expiredUrl: 'https://example.com/gone',
      assetLinks: null,
      appleAppSiteAssociation: null,
      hsts: false,
      archived: false,
      isDefault: false,
    })
    expect(domains.lookup('X.Example.com.')?.slug).toBe('x.example.com')
    // Pending CNAME: not usable for links yet.
    expect(domains.isUsableForLinks('x.example.com')).toBe(false)
    await h.call('PATCH', '/domains/x.example.com', { json: { archived: true } })
    expect(domains.lookup('x.example.com')?.archived).toBe(true)
    await h.call('DELETE', '/domains/x.example.com')
    expect(domains.lookup('x.example.com')).toBeNull()
    expect(events).toEqual(['created:x.example.com', 'updated:x.example.com', 'deleted:x.example.com'])
  })
})

describe.skipIf(!pebbleInstalled())('CNAME verification against a real DNS server (pebble-challtestsrv)', () => {
  let dns: Pebble
  beforeAll(async () => {
    dns = await startPebble({ httpPort: 1 })
    await dns.addA(TARGET, ['127.0.0.1'])
    await dns.setCname('good.example.com', TARGET)
    await dns.setCname('two-hops.example.com', 'alias.example.net')
    await dns.setCname('alias.example.net', TARGET)
    await dns.setCname('elsewhere.example.com', 'other-service.example.org')
    await dns.addA('apex.example.com', ['127.0.0.1'])
    await dns.addA('foreign-apex.example.com', ['192.0.2.7'])
    await dns.setServfail('broken.example.com')
  })
  afterAll(async () => {
    await dns?.stop()
  })

  test('outcomes: chain to target, apex addresses, elsewhere, nothing, SERVFAIL', async () => {
    const checker = createCnameChecker({ target: `${TARGET}.`, dnsServers: [dns.dns] })
    const outcomes = Object.fromEntries(
      await Promise.all(
        ['good', 'two-hops', 'apex', 'elsewhere', 'foreign-apex', 'missing', 'broken'].map(async (n) => [n, (await checker.check(`${n}.example.com`)).status]),
      ),
    )
    expect(outcomes).toEqual({
      good: 'valid',
      'two-hops': 'valid',
      apex: 'valid',
      elsewhere: 'invalid',
      'foreign-apex': 'invalid',
      missing: 'invalid',
      broken: 'pending',
    })
    expect((await checker.check('elsewhere.example.com')).detail).toContain('other-service.example.org')
    expect((await checker.check('broken.example.com')).detail).toContain('ESERVFAIL')
  })

  test('POST /domains/{domain}/verify updates the record; links may use the domain once valid', async () => {
    const h = createHarness({ domains: { dnsServers: [dns.dns], cnameTarget: TARGET } })
    for (const d of ['good.example.com', 'elsewhere.example.com', 'broken.example.com'])
      expect((await h.call('POST', '/domains', { json: { domain: d } })).status).toBe(200)
    const link = () =>
      h.call('POST', '/links/link', { key: h.keys.member, json: { data: { url: 'https://example.com/' }, linkOptions: { domain: 'good.example.com' } } })
    expect((await link()).status).toBe(422)

    const good = await h.call('POST', '/domains/good.example.com/verify')
    expect([good.status, good.body.cnameStatus]).toEqual([200, 'valid'])
    expect(h.deps.domains.isUsableForLinks('good.example.com')).toBe(true)
    const made = await link()
    expect(made.status).toBe(200)
    expect(made.body.shortLink).toStartWith('https://good.example.com')

    expect(good.body.cnameTarget).toBe(TARGET)
    const elsewhere = (await h.call('POST', '/domains/elsewhere.example.com/verify')).body
    expect(elsewhere.cnameStatus).toBe('invalid')
    // The record says what the check found, so a person can see which host the name points at instead.
    expect(elsewhere.cnameDetail).toContain('other-service.example.org')
    expect((await h.call('POST', '/domains/broken.example.com/verify')).body.cnameStatus).toBe('pending')
    expect((await h.call('POST', '/domains/localhost/verify')).body).toMatchObject({ isDefault: true, cnameStatus: 'valid' })
    expect((await h.call('POST', '/domains/nope.example.com/verify')).status).toBe(404)
  })

  test('re-checks back off; a temporary failure never changes the status', async () => {
    const clock = 1_000_000
    const db = openStore(':memory:')
    db.query("INSERT INTO users (id, created_at) VALUES ('usr_admin', 0)").run()
    const service = createDomainService({
      store: createDomainStore(db),
      settings: deriveSettings(buildConfig({}, {})),
      cname: createCnameChecker({ target: TARGET, dnsServers: [dns.dns] }),
      retryMs: 1000,
      log: createLogger(true),
      now: () => clock,
    })
    service.create(admin, { domain: 'flaky.example.com' })
    expect(service.stateOf('flaky.example.com')!.cnameNextAt).toBe(clock) // first check due at once

    await dns.setCname('flaky.example.com', 'somewhere.example.org')
    const nextAts: number[] = []
    for (let i = 0; i < 3; i++) {
      const s = (await service.checkCname('flaky.example.com'))!
      expect(s.cnameStatus).toBe('invalid')
      nextAts.push(s.cnameNextAt! - clock)
    }
    expect(nextAts).toEqual([1000, 2000, 4000])
    expect(backoffMs(1000, 40)).toBe(6 * 3600_000)

    await dns.clearCname('flaky.example.com')
    await dns.setCname('flaky.example.com', TARGET)
    const valid = (await service.checkCname('flaky.example.com'))!
    expect([valid.cnameStatus, valid.cnameNextAt, valid.cnameAttempts]).toEqual(['valid', null, 0])

    await dns.setServfail('flaky.example.com')
    const flaky = (await service.checkCname('flaky.example.com'))!
    expect([flaky.cnameStatus, flaky.cnameNextAt! - clock]).toEqual(['valid', 1000])
    await dns.clearServfail('flaky.example.com')
    db.close()
  })
})
