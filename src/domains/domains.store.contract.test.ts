/**
 * The domain store port, one set of cases run against both adapters: SQLite on ':memory:'
 * (today's store) and PostgreSQL (a real server, a fresh migrated database). Both must give
 * the same answers. Then the domain service over each.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, test } from 'bun:test'
import type { SQL } from 'bun'
import { startMigratedDatabase } from '../../test/helpers/postgres'
import { type Caller, createAuthStore } from '../auth'
import { deriveSettings } from '../config'
import { buildConfig } from '../config/config.load'
import { createLogger } from '../shared'
import { openStore } from '../store'
import type { CnameChecker, CnameOutcome } from './cname'
import { createDomainService } from './domains.service'
import type { DomainState, DomainStorePort } from './domains.store'
import { createDomainStore } from './domains.store'
import { createPgDomainStore } from './domains.store.pg'

let pgSql: SQL | undefined
let closePg: (() => Promise<void>) | undefined

beforeAll(async () => {
  const started = await startMigratedDatabase('domains_contract')
  pgSql = started.sql
  closePg = started.close
})
afterAll(() => closePg?.())

const T0 = Date.parse('2026-03-01T12:00:00Z')

const adapters: [string, () => Promise<DomainStorePort>][] = [
  [
    'sqlite',
    async () => {
      const db = openStore(':memory:')
      createAuthStore(db).addUser('usr_admin', 'admin')
      return createDomainStore(db)
    },
  ],
  [
    'postgres',
    async () => {
      const sql = pgSql!
      await sql`TRUNCATE domains, domain_clicks`
      return createPgDomainStore(sql)
    },
  ],
]

const input = {
  destination: 'https://example.com/',
  notFoundUrl: null,
  expiredUrl: 'https://example.com/gone',
  assetLinks: '[]',
  appleAppSiteAssociation: null,
}

describe.each(adapters)('domain store port on %s', (_name, open) => {
  let store: DomainStorePort
  beforeEach(async () => {
    store = await open()
  })

  test('insert, get, all: a new domain is pending, its first CNAME check due at once', async () => {
    await store.insert('go.example.com', input, 'usr_admin', T0)
    const made: DomainState = {
      slug: 'go.example.com',
      ...input,
      archived: false,
      cnameStatus: 'pending',
      cnameDetail: null,
      cnameCheckedAt: null,
      cnameAttempts: 0,
      cnameNextAt: T0,
      sslStatus: 'pending',
      sslError: null,
      sslAttempts: 0,
      sslNextAt: null,
      createdBy: 'usr_admin',
      createdAt: T0,
      updatedAt: T0,
    }
    expect(await store.get('go.example.com')).toEqual(made)
    expect(await store.get('none.example.com')).toBeNull()
    await store.insert('b.example.com', { ...input, destination: null }, 'usr_admin', T0 + 1)
    expect((await store.all()).map((d) => d.slug).sort()).toEqual(['b.example.com', 'go.example.com'])
    expect(async () => await store.insert('go.example.com', input, 'usr_admin', T0 + 2)).toThrow()
  })

  test('updateSettings, updateCname, updateSsl change only their own fields', async () => {
    await store.insert('go.example.com', input, 'usr_admin', T0)
    await store.updateSettings('go.example.com', { ...input, notFoundUrl: 'https://example.com/404', assetLinks: null, archived: true }, T0 + 5)
    await store.updateCname('go.example.com', {
      cnameStatus: 'invalid',
      cnameDetail: 'points at x',
      cnameCheckedAt: T0 + 6,
      cnameAttempts: 3,
      cnameNextAt: T0 + 7,
    })
    await store.updateSsl('go.example.com', { sslStatus: 'failed', sslError: 'no', sslAttempts: 2, sslNextAt: T0 + 8 })
    expect(await store.get('go.example.com')).toMatchObject({
      destination: 'https://example.com/',
      notFoundUrl: 'https://example.com/404',
      assetLinks: null,
      archived: true,
      cnameStatus: 'invalid',
      cnameDetail: 'points at x',
      cnameCheckedAt: T0 + 6,
      cnameAttempts: 3,
      cnameNextAt: T0 + 7,
      sslStatus: 'failed',
      sslError: 'no',
      sslAttempts: 2,
      sslNextAt: T0 + 8,
      createdAt: T0,
      updatedAt: T0 + 5,
    })
    await store.updateCname('go.example.com', { cnameStatus: 'valid', cnameDetail: null, cnameCheckedAt: T0 + 9, cnameAttempts: 0, cnameNextAt: null })
    await store.updateSsl('go.example.com', { sslStatus: 'active', sslError: null, sslAttempts: 0, sslNextAt: null })
    await store.updateSettings('go.example.com', { ...input, archived: false }, T0 + 10)
    expect(await store.get('go.example.com')).toMatchObject({ cnameStatus: 'valid', cnameNextAt: null, sslStatus: 'active', sslNextAt: null, archived: false })
    // A bad status is refused by both schemas.
    expect(async () => await store.updateSsl('go.example.com', { sslStatus: 'bogus' as 'active', sslError: null, sslAttempts: 0, sslNextAt: null })).toThrow()
    // Writes to a domain that is gone change nothing.
    await store.updateSsl('none.example.com', { sslStatus: 'active', sslError: null, sslAttempts: 0, sslNextAt: null })
    expect(await store.get('none.example.com')).toBeNull()
  })

  test('clicks add up per domain (beyond 32 bits); remove drops the domain and its clicks', async () => {
    await store.insert('go.example.com', input, 'usr_admin', T0)
    expect(await store.clicksOf('go.example.com')).toBe(0)
    await store.addClicks(new Map())
    await store.addClicks(
      new Map([
        ['go.example.com', 3],
        ['other.example.com', 2 ** 33],
      ]),
    )
    await store.addClicks(new Map([['go.example.com', 4]]))
    expect(await store.clicksOf('go.example.com')).toBe(7)
    expect(await store.clicksOf('other.example.com')).toBe(2 ** 33)

    expect(await store.remove('go.example.com')).toBe(true)
    expect(await store.remove('go.example.com')).toBe(false)
    expect(await store.get('go.example.com')).toBeNull()
    expect(await store.clicksOf('go.example.com')).toBe(0)
    // A domain created again under the name starts from zero.
    await store.insert('go.example.com', input, 'usr_admin', T0)
    expect(await store.clicksOf('go.example.com')).toBe(0)
  })

  test('storeCreatedAt: when the first migration was applied', async () => {
    const at = await store.storeCreatedAt()
    expect(at).toBeNumber()
    expect(at).toBeGreaterThan(T0 - 365 * 86400_000)
    expect(at).toBeLessThanOrEqual(Date.now())
  })
})

/** DNS answers the test decides: the service's CNAME handling is under test here, not the resolver (cname.ts, domains.test.ts). */
function fakeCname(): CnameChecker & { answers: Map<string, CnameOutcome> } {
  const answers = new Map<string, CnameOutcome>()
  return { target: 'edge.shortlink.test', answers, check: async (d) => answers.get(d) ?? { status: 'invalid', detail: 'no record' } }
}

/** The domain service over each adapter: the answers the API, the redirect server and the certificate manager get. */
describe.each(adapters)('domain service on %s', (name, open) => {
  const admin: Caller = { userId: 'usr_admin', role: 'admin', keyId: 'key_admin' }
  const member: Caller = { userId: 'usr_m', role: 'member', keyId: 'key_m' }
  const settings = deriveSettings(buildConfig({ domains: { defaults: ['s.test'] } }, {}))
  const synchronous = name === 'sqlite'

  async function service(store?: DomainStorePort) {
    const cname = fakeCname()
    const s = createDomainService<DomainStorePort>({ store: store ?? (await open()), settings, cname, retryMs: 1000, log: createLogger(true), now: () => T0 })
    await s.ready
    return { s, cname }
  }
  /** Store reads and writes answer at once on SQLite (no promise), with a promise on PostgreSQL. */
  const answered = async <T>(r: T | Promise<T>): Promise<T> => {
    expect(r instanceof Promise).toBe(!synchronous)
    return await r
  }

  test('create, lookup and isUsableForLinks from memory, verify, get, list with clicks, update, ssl, remove', async () => {
    const store = await open()
    const { s, cname } = await service(store)
    expect(s.lookup('S.test.')).toMatchObject({ slug: 's.test', isDefault: true, hsts: true })
    expect(await answered(s.get(member, 's.test'))).toMatchObject({ isDefault: true, createdAt: new Date(await store.storeCreatedAt()).toISOString() })

    const made = await answered(s.create(admin, { domain: 'Go.Example.com', destination: 'https://example.com/' }))
    expect(made).toMatchObject({ slug: 'go.example.com', clicks: 0, cnameStatus: 'pending', sslStatus: 'pending', createdAt: new Date(T0).toISOString() })
    expect(s.lookup('go.example.com')).toMatchObject({ destination: 'https://example.com/', isDefault: false, hsts: false })
    expect(s.isUsableForLinks('go.example.com')).toBe(false)
    expect(() => s.create(member, { domain: 'x.example.com' })).toThrow('admin')
    expect(async () => await s.create(admin, { domain: 'go.example.com' })).toThrow('already registered')
    // Registered through another node: not in this one's memory, but in the store.
    await store.insert('other.example.com', input, 'usr_admin', T0)
    expect(async () => await s.create(admin, { domain: 'other.example.com' })).toThrow('already registered')

    cname.answers.set('go.example.com', { status: 'valid', detail: 'ok' })
    expect(await s.verify(admin, 'go.example.com')).toMatchObject({ cnameStatus: 'valid' })
    expect(s.isUsableForLinks('GO.example.com')).toBe(true)
    expect(s.stateOf('go.example.com')).toMatchObject({ cnameStatus: 'valid', cnameNextAt: null })

    await answered(
      s.addClicks(
        new Map([
          ['go.example.com', 5],
          ['s.test', 2],
        ]),
      ),
    )
    expect((await answered(s.get(member, 'go.example.com'))).clicks).toBe(5)
    const listed = await answered(s.list(member, { sortBy: 'domain', sortOrder: 'asc' }))
    expect(listed.domains.map((d) => [d.slug, d.clicks])).toEqual([
      ['go.example.com', 5],
      ['s.test', 2],
    ])
    expect(listed.total).toBe(2)

    const archived = await answered(s.update(admin, 'go.example.com', { archived: true, notFoundUrl: 'https://example.com/404' }))
    expect(archived).toMatchObject({ archived: true, notFoundUrl: 'https://example.com/404', destination: 'https://example.com/' })
    expect(s.isUsableForLinks('go.example.com')).toBe(false)
    expect((await answered(s.list(member, {}))).total).toBe(1)
    expect(() => s.update(admin, 's.test', {})).toThrow('default short domain')

    await answered(s.setSsl('go.example.com', { sslStatus: 'active', sslError: null, sslAttempts: 0, sslNextAt: null }))
    expect(s.lookup('go.example.com')!.hsts).toBe(true)
    expect((await store.get('go.example.com'))!.sslStatus).toBe('active')

    // A second node starting on the same store has every domain in memory once ready.
    const { s: second } = await service(store)
    expect(second.lookup('go.example.com')).toMatchObject({ archived: true, hsts: true })
    expect(
      second
        .customDomains()
        .map((d) => d.slug)
        .sort(),
    ).toEqual(['go.example.com', 'other.example.com'])

    expect(await answered(s.remove(admin, 'go.example.com'))).toEqual({ domain: 'go.example.com' })
    expect(s.lookup('go.example.com')).toBeNull()
    expect(await store.get('go.example.com')).toBeNull()
    expect(await store.clicksOf('go.example.com')).toBe(0)
    expect(() => s.get(member, 'go.example.com')).toThrow('not found')
    // Removed through another node: an update here is a 404, not a crash.
    expect(async () => await second.update(admin, 'go.example.com', { archived: false })).toThrow('not found')
    expect(second.lookup('go.example.com')).toBeNull()
  })

  test('CNAME checks back off and tell the listeners; a valid name with a certificate order waiting starts it now', async () => {
    const { s, cname } = await service()
    const events: string[] = []
    s.onChange((e) => events.push(`${e.type} ${e.slug}`))
    await s.create(admin, { domain: 'flaky.example.com' })
    cname.answers.set('flaky.example.com', { status: 'invalid', detail: 'points elsewhere' })
    const waits: number[] = []
    for (let i = 0; i < 3; i++) waits.push((await s.checkCname('flaky.example.com'))!.cnameNextAt! - T0)
    expect(waits).toEqual([1000, 2000, 4000])
    await s.setSsl('flaky.example.com', { sslStatus: 'failed', sslError: 'boom', sslAttempts: 3, sslNextAt: T0 + 60_000 })
    cname.answers.set('flaky.example.com', { status: 'valid', detail: 'ok' })
    expect(await s.verify(admin, 'flaky.example.com')).toMatchObject({ cnameStatus: 'valid', sslStatus: 'failed' })
    expect(s.stateOf('flaky.example.com')).toMatchObject({ sslAttempts: 0, sslNextAt: null })
    expect(events).toEqual([
      'created flaky.example.com',
      'cname flaky.example.com',
      'cname flaky.example.com',
      'cname flaky.example.com',
      'ssl flaky.example.com',
      'cname flaky.example.com',
      'cname flaky.example.com',
    ])
    expect(await s.checkCname('gone.example.com')).toBeNull()
  })
})

describe('domain invalidation on postgres', () => {
  test("every write of a domain publishes 'domains' <host> in its own transaction; a write that changes nothing publishes nothing", async () => {
    await pgSql!`TRUNCATE domains, domain_clicks`
    const published: { channel: string; keys: string | readonly string[]; inTransaction: boolean }[] = []
    const store = createPgDomainStore(pgSql!, {
      publish: async (tx, channel, keys) => void published.push({ channel, keys, inTransaction: tx !== pgSql }),
    })
    const slug = 'go.example.com'
    await store.insert(slug, input, 'usr_admin', T0)
    await store.updateSettings(slug, { ...input, archived: true }, T0 + 1)
    await store.updateCname(slug, { cnameStatus: 'valid', cnameDetail: null, cnameCheckedAt: T0 + 2, cnameAttempts: 0, cnameNextAt: null })
    await store.updateSsl(slug, { sslStatus: 'active', sslError: null, sslAttempts: 0, sslNextAt: null })
    await store.updateSsl('unknown.example.com', { sslStatus: 'active', sslError: null, sslAttempts: 0, sslNextAt: null })
    expect(await store.remove(slug)).toBe(true)
    expect(await store.remove(slug)).toBe(false)
    expect(published).toEqual(Array(5).fill({ channel: 'domains', keys: slug, inTransaction: true }))

    // A publish that fails rolls the write back: no node would hear of it.
    const failing = createPgDomainStore(pgSql!, {
      publish: async () => {
        throw new Error('bus down')
      },
    })
    await expect(failing.insert('gone.example.com', input, 'usr_admin', T0)).rejects.toThrow('bus down')
    expect(await failing.get('gone.example.com')).toBeNull()
  })
})

describe("re-reads of a domain on an asynchronous store (another node's news and a write's own re-read cross)", () => {
  const settings = deriveSettings(buildConfig({ domains: { defaults: ['s.test'] } }, {}))
  /** The SQLite store behind promises whose reads the test answers in the order it chooses, each with what the store held when it was issued. */
  function heldReads() {
    const db = openStore(':memory:')
    createAuthStore(db).addUser('usr_admin', 'admin')
    const inner = createDomainStore(db)
    const pending: { answer: () => void }[] = []
    const store: DomainStorePort = {
      ...Object.fromEntries(Object.entries(inner).map(([k, f]) => [k, async (...a: unknown[]) => (f as (...x: unknown[]) => unknown)(...a)])),
      get(slug: string) {
        const snapshot = inner.get(slug)
        return new Promise<DomainState | null>((resolve) => pending.push({ answer: () => resolve(snapshot) }))
      },
    } as DomainStorePort
    return { inner, store, pending }
  }
  const settings0 = { destination: null, notFoundUrl: null, expiredUrl: null, assetLinks: null, appleAppSiteAssociation: null }

  test('an answer goes into memory at once, unless a later read has answered already', async () => {
    const { inner, store, pending } = heldReads()
    const s = createDomainService<DomainStorePort>({ store, settings, cname: fakeCname(), retryMs: 1000, log: createLogger(true), now: () => T0 })
    await s.ready
    inner.insert('go.example.com', settings0, 'usr_admin', T0)
    const first = s.reload('go.example.com') // issued before the update: an old snapshot
    inner.updateSettings('go.example.com', { ...settings0, destination: 'https://new.example/', archived: false }, T0 + 1)
    const second = s.reload('go.example.com') // after it
    const third = s.reload('go.example.com') // another node's news of the same update
    pending[1]!.answer() // the second read answers first: in memory at once, not held for the third
    await second
    expect(s.stateOf('go.example.com')?.destination).toBe('https://new.example/')
    pending[0]!.answer() // the old snapshot arrives late: it does not overwrite the newer answer
    await first
    expect(s.stateOf('go.example.com')?.destination).toBe('https://new.example/')
    pending[2]!.answer()
    await third
    expect(s.stateOf('go.example.com')?.destination).toBe('https://new.example/')
  })
})
