/**
 * The auth and session store ports, one set of cases run against both adapters: SQLite on
 * ':memory:' (today's store) and PostgreSQL (a real server, a fresh migrated database). Both
 * must give the same answers, the auth epoch included: it moves by one per changed row, as
 * SQLite's triggers move it. Then the services over each: a cached credential is answered
 * without a promise on both.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, test } from 'bun:test'
import type { SQL } from 'bun'
import { startMigratedDatabase } from '../../test/helpers/postgres'
import { openStore } from '../store'
import { type Caller, createAuthService } from './auth.service'
import { type AuthStorePort, createAuthStore } from './auth.store'
import { createPgAuthStore } from './auth.store.pg'
import { createKeyService } from './keys.service'
import { type ActiveSession, createSessionService } from './session.service'
import { createSessionStore, MAX_SESSIONS_PER_USER, type NewSession, type SessionStorePort } from './session.store'
import { createPgSessionStore } from './session.store.pg'
import { createUserService } from './users.service'

interface Stores {
  auth: AuthStorePort
  sessions: SessionStorePort
}

let pgSql: SQL | undefined
let closePg: (() => Promise<void>) | undefined

beforeAll(async () => {
  const started = await startMigratedDatabase('auth_contract')
  pgSql = started.sql
  closePg = started.close
})
afterAll(() => closePg?.())

const adapters: [string, () => Promise<Stores>][] = [
  [
    'sqlite',
    async () => {
      const db = openStore(':memory:')
      return { auth: createAuthStore(db), sessions: createSessionStore(db) }
    },
  ],
  [
    'postgres',
    async () => {
      const sql = pgSql!
      await sql`TRUNCATE sessions, api_keys, users CASCADE`
      await sql`UPDATE cache_epochs SET epoch = 0 WHERE channel = 'auth'`
      return { auth: createPgAuthStore(sql), sessions: createPgSessionStore(sql) }
    },
  ],
]

const T0 = Date.parse('2026-03-01T12:00:00Z')

describe.each(adapters)('auth store ports on %s', (_name, open) => {
  let auth: AuthStorePort
  let sessions: SessionStorePort
  beforeEach(async () => {
    ;({ auth, sessions } = await open())
  })

  const key = (id: string, userId: string, over: Partial<{ role: 'admin' | 'member' | 'readonly'; name: string | null; createdAt: number }> = {}) =>
    auth.insertKey({
      id,
      userId,
      role: over.role ?? 'member',
      hash: `hash_${id}`,
      prefix: `sk_${id}`.slice(0, 7),
      name: over.name ?? null,
      createdAt: over.createdAt ?? T0,
    })

  /** Runs `change` and returns how far the auth epoch moved. */
  async function epochMove(change: () => unknown): Promise<number> {
    const before = await auth.authEpoch()
    await change()
    return (await auth.authEpoch()) - before
  }

  test('users: add, get, exists, list, update and soft delete', async () => {
    expect(await auth.addUser('usr_a')).toBe(true)
    expect(await auth.addUser('usr_a', 'admin')).toBe(false)
    expect(await auth.addUser('usr_b', 'readonly')).toBe(true)
    const a = await auth.getUser('usr_a')
    expect(a).toEqual({ id: 'usr_a', role: 'member', createdAt: expect.any(Number), disabled: 0, hasPassword: 0, deletedAt: null })
    expect(Math.abs(a!.createdAt - Date.now())).toBeLessThan(60_000)
    expect(await auth.getUser('usr_none')).toBeNull()
    expect(await auth.userExists('usr_b')).toBe(true)
    expect(await auth.userExists('usr_none')).toBe(false)

    expect(await epochMove(() => auth.updateUser('usr_a', { role: 'admin', disabled: true }))).toBe(1)
    expect(await epochMove(() => auth.updateUser('usr_a', {}))).toBe(0)
    expect(await epochMove(() => auth.updateUser('usr_none', { disabled: true }))).toBe(0)
    expect(await auth.getUser('usr_a')).toMatchObject({ role: 'admin', disabled: 1 })
    expect(await epochMove(() => auth.updateUser('usr_a', { disabled: false }))).toBe(1)
    expect((await auth.getUser('usr_a'))!.disabled).toBe(0)

    const listed = await auth.listUsers({ limit: 10, offset: 0 })
    expect(listed.total).toBe(2)
    expect(listed.users.map((u) => u.id).sort()).toEqual(['usr_a', 'usr_b'])
    expect((await auth.listUsers({ limit: 1, offset: 1 })).users).toHaveLength(1)

    await key('key_a1', 'usr_a')
    await key('key_a2', 'usr_a')
    await auth.revokeKey('key_a2', T0)
    await auth.updateUser('usr_a', { passwordHash: 'h' })
    await sessions.insert(session('ses_a', 'usr_a'))
    // The user row, its one active key and its one session: three changes.
    expect(await epochMove(() => auth.deleteUser('usr_a', T0 + 5))).toBe(3)
    expect(await auth.getUser('usr_a')).toMatchObject({ deletedAt: T0 + 5, hasPassword: 0 })
    expect(await auth.passwordHashOf('usr_a')).toBeNull()
    expect((await auth.getKey('key_a1'))!.revokedAt).toBe(T0 + 5)
    expect((await auth.getKey('key_a2'))!.revokedAt).toBe(T0)
    expect(await sessions.find('ses_a')).toBeNull()
    expect(await epochMove(() => auth.deleteUser('usr_a', T0 + 9))).toBe(0)
    expect((await auth.getUser('usr_a'))!.deletedAt).toBe(T0 + 5)
    // Deleted users are not listed, and their id stays taken.
    expect(await auth.listUsers({ limit: 10, offset: 0 })).toEqual({ users: [expect.objectContaining({ id: 'usr_b' })], total: 1 })
    expect(await auth.addUser('usr_a')).toBe(false)
  })

  test('password hash: set, read, remove', async () => {
    await auth.addUser('usr_p')
    expect(await auth.passwordHashOf('usr_p')).toBeNull()
    expect(await auth.passwordHashOf('usr_none')).toBeNull()
    expect(await epochMove(() => auth.updateUser('usr_p', { passwordHash: '$argon2id$v=19$x' }))).toBe(1)
    expect(await auth.passwordHashOf('usr_p')).toBe('$argon2id$v=19$x')
    expect((await auth.getUser('usr_p'))!.hasPassword).toBe(1)
    expect(await epochMove(() => auth.updateUser('usr_p', { passwordHash: null }))).toBe(1)
    expect(await auth.passwordHashOf('usr_p')).toBeNull()
    expect((await auth.getUser('usr_p'))!.hasPassword).toBe(0)
  })

  test('keys: insert, find by hash, get, list, revoke, touch, count', async () => {
    await auth.addUser('usr_k')
    await auth.addUser('usr_l')
    expect(await epochMove(() => key('key_1', 'usr_k', { role: 'readonly', name: 'ci', createdAt: T0 }))).toBe(0)
    await key('key_2', 'usr_k', { createdAt: T0 + 1 })
    await key('key_3', 'usr_l', { role: 'admin', createdAt: T0 + 2 })
    expect(await auth.activeKeyCount()).toBe(3)

    expect(await auth.findKeyByHash('hash_key_1')).toEqual({
      id: 'key_1',
      userId: 'usr_k',
      role: 'readonly',
      revokedAt: null,
      userDisabled: 0,
      userDeletedAt: null,
    })
    expect(await auth.findKeyByHash('hash_none')).toBeNull()
    expect(await auth.getKey('key_1')).toEqual({
      id: 'key_1',
      userId: 'usr_k',
      role: 'readonly',
      name: 'ci',
      prefix: 'sk_key_',
      createdAt: T0,
      lastUsedAt: null,
      revokedAt: null,
    })
    expect(await auth.getKey('key_none')).toBeNull()

    expect(await epochMove(async () => expect(await auth.revokeKey('key_2', T0 + 10)).toBe(true))).toBe(1)
    expect(await epochMove(async () => expect(await auth.revokeKey('key_2', T0 + 11)).toBe(false))).toBe(0)
    expect(await auth.revokeKey('key_none', T0)).toBe(false)
    expect((await auth.findKeyByHash('hash_key_2'))!.revokedAt).toBe(T0 + 10)
    expect(await auth.activeKeyCount()).toBe(2)

    const ids = async (q: Parameters<AuthStorePort['listKeys']>[0]) => {
      const { keys, total } = await auth.listKeys(q)
      return { ids: keys.map((k) => k.id), total }
    }
    expect(await ids({ includeRevoked: false, limit: 10, offset: 0 })).toEqual({ ids: ['key_3', 'key_1'], total: 2 })
    expect(await ids({ includeRevoked: true, limit: 10, offset: 0 })).toEqual({ ids: ['key_3', 'key_2', 'key_1'], total: 3 })
    expect(await ids({ includeRevoked: true, limit: 1, offset: 1 })).toEqual({ ids: ['key_2'], total: 3 })
    expect(await ids({ userIds: ['usr_k'], includeRevoked: true, limit: 10, offset: 0 })).toEqual({ ids: ['key_2', 'key_1'], total: 2 })
    expect(await ids({ userIds: ['usr_k', 'usr_l'], includeRevoked: false, limit: 10, offset: 0 })).toEqual({ ids: ['key_3', 'key_1'], total: 2 })
    expect(await ids({ userIds: ['usr_none'], includeRevoked: true, limit: 10, offset: 0 })).toEqual({ ids: [], total: 0 })
    expect((await auth.listKeys({ userIds: ['usr_l'], includeRevoked: false, limit: 10, offset: 0 })).keys[0]).toEqual({
      id: 'key_3',
      userId: 'usr_l',
      role: 'admin',
      name: null,
      prefix: 'sk_key_',
      createdAt: T0 + 2,
      lastUsedAt: null,
      revokedAt: null,
    })

    // Last use only moves forward, and is not a change the epoch watches.
    expect(
      await epochMove(() =>
        auth.touchKeys([
          ['key_1', T0 + 100],
          ['key_3', T0 + 50],
        ]),
      ),
    ).toBe(0)
    await auth.touchKeys([['key_1', T0 + 20]])
    await auth.touchKeys([])
    expect((await auth.getKey('key_1'))!.lastUsedAt).toBe(T0 + 100)
    expect((await auth.getKey('key_3'))!.lastUsedAt).toBe(T0 + 50)

    // A disabled or deleted user shows on its keys.
    await auth.updateUser('usr_l', { disabled: true })
    expect((await auth.findKeyByHash('hash_key_3'))!.userDisabled).toBe(1)
    await auth.deleteUser('usr_k', T0 + 200)
    expect((await auth.findKeyByHash('hash_key_1'))!.userDeletedAt).toBe(T0 + 200)
    expect(await auth.activeKeyCount()).toBe(1)
  })

  const session = (id: string, userId: string, over: Partial<NewSession> = {}): NewSession => ({
    id,
    userId,
    keyId: null,
    configKeyHash: null,
    method: 'password',
    csrfSecret: `csrf_${id}`,
    createdAt: T0,
    expiresAt: T0 + 1000,
    ...over,
  })

  test('sessions: insert, find, touch, remove', async () => {
    await auth.addUser('usr_s')
    await auth.updateUser('usr_s', { passwordHash: 'h' })
    await key('key_s', 'usr_s', { role: 'readonly' })
    expect(await epochMove(async () => expect(await sessions.insert(session('ses_p', 'usr_s'))).toBe(0))).toBe(0)
    await sessions.insert(session('ses_k', 'usr_s', { method: 'apiKey', keyId: 'key_s', createdAt: T0 + 1 }))
    await sessions.insert(session('ses_c', 'usr_s', { method: 'apiKey', configKeyHash: 'cfg', createdAt: T0 + 2 }))

    expect(await sessions.find('ses_p')).toEqual({
      id: 'ses_p',
      userId: 'usr_s',
      keyId: null,
      configKeyHash: null,
      method: 'password',
      csrfSecret: 'csrf_ses_p',
      createdAt: T0,
      lastSeenAt: T0,
      expiresAt: T0 + 1000,
      userRole: 'member',
      userDisabled: 0,
      userDeletedAt: null,
      userHasPassword: 1,
      keyRole: null,
      keyRevokedAt: null,
    })
    expect(await sessions.find('ses_k')).toMatchObject({ method: 'apiKey', keyId: 'key_s', keyRole: 'readonly', keyRevokedAt: null })
    expect(await sessions.find('ses_c')).toMatchObject({ method: 'apiKey', keyId: null, configKeyHash: 'cfg' })
    expect(await sessions.find('ses_none')).toBeNull()

    await auth.revokeKey('key_s', T0 + 3)
    expect((await sessions.find('ses_k'))!.keyRevokedAt).toBe(T0 + 3)

    // Last seen only moves forward, and is not a change the epoch watches.
    expect(await epochMove(() => sessions.touch('ses_p', T0 + 60))).toBe(0)
    await sessions.touch('ses_p', T0 + 30)
    await sessions.touch('ses_none', T0 + 30)
    expect((await sessions.find('ses_p'))!.lastSeenAt).toBe(T0 + 60)

    expect(await epochMove(async () => expect(await sessions.remove('ses_c')).toBe(true))).toBe(1)
    expect(await epochMove(async () => expect(await sessions.remove('ses_c')).toBe(false))).toBe(0)
    expect(await sessions.find('ses_c')).toBeNull()
  })

  test('sessions: a password change ends the other password sessions; expired ones are swept', async () => {
    await auth.addUser('usr_s')
    await auth.addUser('usr_t')
    await key('key_s', 'usr_s')
    await sessions.insert(session('ses_1', 'usr_s'))
    await sessions.insert(session('ses_2', 'usr_s'))
    await sessions.insert(session('ses_3', 'usr_s'))
    await sessions.insert(session('ses_k', 'usr_s', { method: 'apiKey', keyId: 'key_s' }))
    await sessions.insert(session('ses_t', 'usr_t'))

    expect(await epochMove(async () => expect(await sessions.removePasswordSessions('usr_s', 'ses_2')).toBe(2))).toBe(2)
    expect(await sessions.find('ses_1')).toBeNull()
    expect(await sessions.find('ses_2')).not.toBeNull()
    expect(await sessions.find('ses_k')).not.toBeNull()
    expect(await sessions.find('ses_t')).not.toBeNull()
    expect(await sessions.removePasswordSessions('usr_s', null)).toBe(1)
    expect(await sessions.find('ses_2')).toBeNull()
    expect(await sessions.removePasswordSessions('usr_s', null)).toBe(0)

    await sessions.insert(session('ses_old', 'usr_t', { expiresAt: T0 + 10 }))
    await sessions.insert(session('ses_idle', 'usr_t', { expiresAt: T0 + 10_000 }))
    await sessions.insert(session('ses_live', 'usr_t', { expiresAt: T0 + 10_000 }))
    await sessions.touch('ses_live', T0 + 500)
    await sessions.touch('ses_t', T0 + 500)
    await sessions.touch('ses_k', T0 + 500)
    // Past its end (ses_old), or not seen since before T0 + 100 (ses_idle).
    expect(await epochMove(async () => expect(await sessions.removeExpired(T0 + 10, T0 + 100)).toBe(2))).toBe(2)
    expect(await sessions.find('ses_old')).toBeNull()
    expect(await sessions.find('ses_idle')).toBeNull()
    expect(await sessions.find('ses_live')).not.toBeNull()
    expect(await sessions.removeExpired(T0 + 10, T0 + 100)).toBe(0)
  })

  test('sessions: past MAX_SESSIONS_PER_USER a sign-in ends the oldest', async () => {
    await auth.addUser('usr_m')
    await auth.addUser('usr_n')
    await sessions.insert(session('ses_n', 'usr_n'))
    for (let i = 0; i < MAX_SESSIONS_PER_USER; i++)
      expect(await sessions.insert(session(`ses_${String(i).padStart(2, '0')}`, 'usr_m', { createdAt: T0 + i }))).toBe(0)
    expect(await epochMove(async () => expect(await sessions.insert(session('ses_new', 'usr_m', { createdAt: T0 + 100 }))).toBe(1))).toBe(1)
    expect(await sessions.find('ses_00')).toBeNull()
    expect(await sessions.find('ses_01')).not.toBeNull()
    expect(await sessions.find('ses_new')).not.toBeNull()
    expect(await sessions.find('ses_n')).not.toBeNull()
    // Created in the same millisecond: the greater id is the newer.
    await sessions.insert(session('ses_zz', 'usr_m', { createdAt: T0 + 100 }))
    expect(await sessions.find('ses_01')).toBeNull()
    expect(await sessions.find('ses_zz')).not.toBeNull()
  })
})

/** The services over each adapter: what the port must be good for, and the hot path's shape. */
describe.each(adapters)('auth services on %s', (name, open) => {
  const ORIGIN = 'https://localhost:8443'
  let stores: Stores
  beforeEach(async () => {
    stores = await open()
  })
  const services = (epochCheckMs: number) => {
    const auth = createAuthService(stores.auth, { adminKey: '', epochCheckMs })
    const sessions = createSessionService({ store: stores.sessions, authStore: stores.auth, auth, publicOrigin: ORIGIN })
    return { auth, keys: createKeyService(stores.auth, auth), users: createUserService(stores.auth, auth, sessions), sessions }
  }
  const ADMIN: Caller = { userId: 'usr_admin', role: 'admin', keyId: 'key_cli' }

  test('a cached key is answered without a promise; a miss reads the store (a promise only on PostgreSQL)', async () => {
    const { auth } = services(60_000)
    await auth.ensureAdminUser()
    await stores.auth.addUser('usr_alice')
    const { key } = await auth.createKey('alice', 'member')
    const miss = auth.authenticate(`Bearer ${key}`)
    expect(miss instanceof Promise).toBe(name === 'postgres')
    expect(await miss).toMatchObject({ userId: 'usr_alice', role: 'member' })
    const hit = auth.authenticate(`Bearer ${key}`)
    expect(hit).not.toBeInstanceOf(Promise)
    expect(hit).toMatchObject({ userId: 'usr_alice', role: 'member' })
    expect(await auth.bootstrapAdminKey()).toBeNull()
  })

  test('revoking through the key service refuses the key at once; a change by another writer once the epoch is read', async () => {
    const { auth, keys } = services(0)
    await auth.ensureAdminUser()
    const made = await keys.create(ADMIN, { userId: 'bob', role: 'member', name: 'ci' })
    const other = await keys.create(ADMIN, { userId: 'bob', role: 'readonly' })
    expect(await auth.authenticate(`Bearer ${made.key}`)).toMatchObject({ userId: 'usr_bob' })
    expect(await auth.authenticate(`Bearer ${other.key}`)).toMatchObject({ role: 'readonly' })
    expect((await keys.list(ADMIN, { userIds: ['bob'] })).total).toBe(2)
    await keys.revoke(ADMIN, made.id)
    expect(async () => await auth.authenticate(`Bearer ${made.key}`)).toThrow('revoked')
    // Another writer (a second node, the CLI): this service hears of it through the epoch only.
    await stores.auth.revokeKey(other.id, Date.now())
    expect(async () => await auth.authenticate(`Bearer ${other.key}`)).toThrow('revoked')
  })

  test('users and dashboard sessions: sign in, a cached session without a promise, a password change and sign-out end sessions', async () => {
    const { auth, users, sessions } = services(60_000)
    await auth.ensureAdminUser()
    const password = 'correct horse battery'
    expect(await users.create(ADMIN, { id: 'carol', password })).toMatchObject({ id: 'usr_carol', hasPassword: true })
    const request = { clientIp: '127.0.0.1', origin: ORIGIN, previousToken: null }
    const signIn = async () => {
      const { cookie, session } = await sessions.signIn({ userId: 'carol', password }, request)
      expect(session.userId).toBe('usr_carol')
      return sessions.tokenOf(cookie.split(';')[0]!)!
    }
    const first = await signIn()
    const second = await signIn()
    const cached = sessions.authenticate(first)
    expect(cached).not.toBeInstanceOf(Promise)
    expect((cached as ActiveSession).caller).toMatchObject({ userId: 'usr_carol', role: 'member', keyId: null })
    // A password change made in the first session ends the second.
    await users.update({ ...ADMIN, sessionId: (cached as ActiveSession).id }, 'carol', { password: 'another horse battery' })
    expect(async () => await sessions.authenticate(second)).toThrow('the session has ended')
    const s = await sessions.authenticate(first)
    await sessions.signOut(s.caller)
    expect(async () => await sessions.authenticate(first)).toThrow('the session has ended')
    await users.remove(ADMIN, 'carol')
    expect(async () => await users.get(ADMIN, 'carol')).toThrow('was deleted')
  })
})
