/**
 * The domain store port, one set of cases run against both adapters: SQLite on ':memory:'
 * (today's store) and PostgreSQL (a real server, a fresh migrated database). Both must give
 * the same answers. Then the domain service over each.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, setDefaultTimeout, test } from 'bun:test'
import { SQL } from 'bun'
import { startPostgres, type TestPostgres } from '../../test/helpers/postgres'
import { createAuthStore } from '../auth'
import { migratePostgres, openStore } from '../store'
import type { DomainState, DomainStorePort } from './domains.store'
import { createDomainStore } from './domains.store'
import { createPgDomainStore } from './domains.store.pg'

setDefaultTimeout(30_000)

let pg: TestPostgres | undefined
let pgSql: SQL | undefined

beforeAll(async () => {
  pg = await startPostgres()
  const admin = new SQL(pg.url)
  await admin`CREATE DATABASE domains_contract LOCALE_PROVIDER icu ICU_LOCALE 'en' TEMPLATE template0`
  await admin.close()
  pgSql = new SQL(pg.url.replace(/\/postgres$/, '/domains_contract'), { max: 4 })
  await migratePostgres(pgSql)
})
afterAll(async () => {
  await pgSql?.close()
  await pg?.destroy()
})

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

const settings = {
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
    await store.insert('go.example.com', settings, 'usr_admin', T0)
    const made: DomainState = {
      slug: 'go.example.com',
      ...settings,
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
    await store.insert('b.example.com', { ...settings, destination: null }, 'usr_admin', T0 + 1)
    expect((await store.all()).map((d) => d.slug).sort()).toEqual(['b.example.com', 'go.example.com'])
    expect(async () => await store.insert('go.example.com', settings, 'usr_admin', T0 + 2)).toThrow()
  })

  test('updateSettings, updateCname, updateSsl change only their own fields', async () => {
    await store.insert('go.example.com', settings, 'usr_admin', T0)
    await store.updateSettings('go.example.com', { ...settings, notFoundUrl: 'https://example.com/404', assetLinks: null, archived: true }, T0 + 5)
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
    await store.updateSettings('go.example.com', { ...settings, archived: false }, T0 + 10)
    expect(await store.get('go.example.com')).toMatchObject({ cnameStatus: 'valid', cnameNextAt: null, sslStatus: 'active', sslNextAt: null, archived: false })
    // A bad status is refused by both schemas.
    expect(async () => await store.updateSsl('go.example.com', { sslStatus: 'bogus' as 'active', sslError: null, sslAttempts: 0, sslNextAt: null })).toThrow()
    // Writes to a domain that is gone change nothing.
    await store.updateSsl('none.example.com', { sslStatus: 'active', sslError: null, sslAttempts: 0, sslNextAt: null })
    expect(await store.get('none.example.com')).toBeNull()
  })

  test('clicks add up per domain (beyond 32 bits); remove drops the domain and its clicks', async () => {
    await store.insert('go.example.com', settings, 'usr_admin', T0)
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
    await store.insert('go.example.com', settings, 'usr_admin', T0)
    expect(await store.clicksOf('go.example.com')).toBe(0)
  })

  test('storeCreatedAt: when the first migration was applied', async () => {
    const at = await store.storeCreatedAt()
    expect(at).toBeNumber()
    expect(at).toBeGreaterThan(T0 - 365 * 86400_000)
    expect(at).toBeLessThanOrEqual(Date.now())
  })
})
