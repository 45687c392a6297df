/**
 * The TLS store port, one set of cases run against both adapters: SQLite on ':memory:'
 * (today's store) and PostgreSQL (a real server, a fresh migrated database under an ICU
 * locale). Both must give the same answers.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, test } from 'bun:test'
import type { SQL } from 'bun'
import { startMigratedDatabase } from '../../test/helpers/postgres'
import { openStore } from '../store'
import { createCertStore } from './cert-store'
import { createChallengeStore } from './challenges'
import { createTlsStore, type TlsStorePort } from './tls.store'
import { createPgTlsStore } from './tls.store.pg'

let pgSql: SQL | undefined
let closePg: (() => Promise<void>) | undefined

beforeAll(async () => {
  const started = await startMigratedDatabase('tls_contract')
  pgSql = started.sql
  closePg = started.close
})
afterAll(() => closePg?.())

const T0 = Date.parse('2026-03-01T12:00:00Z')

const adapters: [string, () => Promise<TlsStorePort>][] = [
  ['sqlite', async () => createTlsStore(openStore(':memory:'))],
  [
    'postgres',
    async () => {
      await pgSql!`TRUNCATE tls_certificates, acme_accounts, acme_challenges`
      return createPgTlsStore(pgSql!)
    },
  ],
]

const cert = (name: string, notAfter = T0 + 90 * 86_400_000) => ({
  name,
  cert: `-----BEGIN CERTIFICATE-----\n${name}\n-----END CERTIFICATE-----\n`,
  key: `key of ${name}`,
  notBefore: T0,
  notAfter,
})

describe.each(adapters)('tls store port on %s', (_name, open) => {
  let store: TlsStorePort
  beforeEach(async () => {
    store = await open()
  })

  test('certificates: put, get, all by code point, replace, remove', async () => {
    expect(await store.certificate('go.example')).toBeNull()
    expect(await store.allCertificates()).toEqual([])
    // An ICU 'en' order would put 'a.example' before 'Z.example'; SQLite orders by code point.
    for (const n of ['go.example', 'a.example', 'Z.example']) await store.putCertificate(cert(n), T0 + 1)
    expect(await store.certificate('go.example')).toEqual({ ...cert('go.example'), issuedAt: T0 + 1 })
    expect((await store.allCertificates()).map((c) => c.name)).toEqual(['Z.example', 'a.example', 'go.example'])

    const renewed = { ...cert('go.example', T0 + 180 * 86_400_000), cert: 'renewed', key: 'new key', notBefore: T0 + 5 }
    await store.putCertificate(renewed, T0 + 9)
    expect(await store.certificate('go.example')).toEqual({ ...renewed, issuedAt: T0 + 9 })
    expect(await store.allCertificates()).toHaveLength(3)

    expect(await store.removeCertificate('go.example')).toBe(true)
    expect(await store.removeCertificate('go.example')).toBe(false)
    expect(await store.certificate('go.example')).toBeNull()
    expect((await store.allCertificates()).map((c) => c.name)).toEqual(['Z.example', 'a.example'])
  })

  test('challenges: put, answer, replace, drop, drop those older than a time', async () => {
    expect(await store.challengeAnswer('tok1')).toBeNull()
    await store.putChallenge('tok1', 'tok1.thumb', T0)
    await store.putChallenge('tok2', 'tok2.thumb', T0 + 10)
    expect(await store.challengeAnswer('tok1')).toBe('tok1.thumb')
    // A second answer replaces the first; the token keeps its age.
    await store.putChallenge('tok1', 'tok1.other', T0 + 20)
    expect(await store.challengeAnswer('tok1')).toBe('tok1.other')

    await store.dropChallengesBefore(T0 + 10)
    expect(await store.challengeAnswer('tok1')).toBeNull()
    expect(await store.challengeAnswer('tok2')).toBe('tok2.thumb')

    await store.dropChallenge('tok2')
    await store.dropChallenge('tok2')
    expect(await store.challengeAnswer('tok2')).toBeNull()
  })

  test('accounts: none, inserted without a URL, URL set; per directory', async () => {
    const dir = 'https://acme.example/directory'
    expect(await store.account(dir)).toBeNull()
    await store.insertAccount(dir, 'PEM key', T0)
    expect(await store.account(dir)).toEqual({ accountKey: 'PEM key', accountUrl: null })
    await store.setAccountUrl(dir, 'https://acme.example/acct/1')
    expect(await store.account(dir)).toEqual({ accountKey: 'PEM key', accountUrl: 'https://acme.example/acct/1' })
    expect(await store.account('https://other.example/directory')).toBeNull()
    // One account per directory: a second insert is refused on both.
    await expect((async () => store.insertAccount(dir, 'other key', T0))()).rejects.toThrow()
    expect(await store.account(dir)).toEqual({ accountKey: 'PEM key', accountUrl: 'https://acme.example/acct/1' })
  })
})

describe.each(adapters)('challenge and certificate stores on %s', (name, open) => {
  const sqlite = name === 'sqlite'

  test('a challenge put through one node is answered by another (a fresh memory) once put settles; a drop reaches both', async () => {
    const store = await open()
    const issuing = createChallengeStore(store)
    const other = createChallengeStore(sqlite ? store : createPgTlsStore(pgSql!))
    const put = issuing.put('tok-a', 'tok-a.thumb')
    // SQLite: every call answers at once (the port-80 listener answers without a promise).
    expect(put instanceof Promise).toBe(!sqlite)
    await put
    const answered = other.answer('tok-a')
    expect(answered instanceof Promise).toBe(!sqlite)
    expect(await answered).toBe('tok-a.thumb')
    expect(await issuing.answer('tok-a')).toBe('tok-a.thumb')
    expect(await other.answer('tok-unknown')).toBeNull()

    await issuing.drop('tok-a')
    expect(await issuing.answer('tok-a')).toBeNull()
    expect(await other.answer('tok-a')).toBeNull()
  })

  test('challenges left over for longer than the given time are dropped', async () => {
    const store = await open()
    await store.putChallenge('tok-old', 'old', Date.now() - 2 * 86_400_000)
    const challenges = createChallengeStore(store)
    await challenges.put('tok-new', 'new')
    await challenges.dropOlderThan(86_400_000)
    expect(await challenges.answer('tok-old')).toBeNull()
    expect(await challenges.answer('tok-new')).toBe('new')
  })

  test('certificates: synchronous on SQLite; put, get, all, remove', async () => {
    const certs = createCertStore(await open())
    const listed = certs.all()
    expect(listed instanceof Promise).toBe(!sqlite)
    expect(await listed).toEqual([])
    const before = Date.now()
    await certs.put(cert('go.example'))
    const got = await certs.get('go.example')
    expect(got).toMatchObject(cert('go.example'))
    expect(got!.issuedAt).toBeGreaterThanOrEqual(before)
    expect((await certs.all()).map((c) => c.name)).toEqual(['go.example'])
    expect(await certs.remove('go.example')).toBe(true)
    expect(await certs.get('go.example')).toBeNull()
  })
})

describe('certificate invalidation on postgres', () => {
  test("saving or removing a certificate publishes 'certificates' <host name> in its own transaction; removing none publishes nothing", async () => {
    await pgSql!`TRUNCATE tls_certificates`
    const published: { channel: string; keys: string | readonly string[]; inTransaction: boolean }[] = []
    const store = createPgTlsStore(pgSql!, {
      publish: async (tx, channel, keys) => void published.push({ channel, keys, inTransaction: tx !== pgSql }),
    })
    await store.putCertificate(cert('go.example'), T0)
    await store.removeCertificate('go.example')
    await store.removeCertificate('go.example')
    expect(published).toEqual([
      { channel: 'certificates', keys: 'go.example', inTransaction: true },
      { channel: 'certificates', keys: 'go.example', inTransaction: true },
    ])

    // A publish that fails rolls the write back: no node would hear of it.
    const failing = createPgTlsStore(pgSql!, {
      publish: async () => {
        throw new Error('bus down')
      },
    })
    await expect(failing.putCertificate(cert('gone.example'), T0)).rejects.toThrow('bus down')
    expect(await failing.certificate('gone.example')).toBeNull()
  })
})
