/**
 * A key or a dashboard session acts with the lower of its own role and its user's current
 * role (contract, "Authentication and users"): every pair of key role and user role, through
 * a bearer key and through a session opened with it, as the user's role moves down and up
 * again, here and through another writer; and POST /keys never mints above the caller's
 * effective role (403) nor above the target user's role (422). Through the real app on an
 * in-memory store; test/roles.e2e.test.ts does the same against the binary.
 */
import { describe, expect, test } from 'bun:test'
import { createHarness } from '../../test/helpers/in-process'
import { createAuthService } from './auth.service'
import { createAuthStore, type Role } from './auth.store'
import { createSessionService, SESSION_COOKIE } from './session.service'
import { createSessionStore } from './session.store'

const ROLES: Role[] = ['admin', 'member', 'readonly']
/** What each pair acts with, written out rather than computed by the code under test. */
const ACTS_AS: Record<`${Role}/${Role}`, Role> = {
  'admin/admin': 'admin',
  'admin/member': 'member',
  'admin/readonly': 'readonly',
  'member/admin': 'member',
  'member/member': 'member',
  'member/readonly': 'readonly',
  'readonly/admin': 'readonly',
  'readonly/member': 'readonly',
  'readonly/readonly': 'readonly',
}

type Harness = ReturnType<typeof createHarness>

/** What a caller can do, as a user of the API sees it: admin-only reads, member writes, reads. */
async function rightsOf(h: Harness, auth: { key?: string; cookie?: string }): Promise<Role | 'none'> {
  const opts = auth.cookie ? { key: null, headers: { cookie: auth.cookie } } : { key: auth.key! }
  const users = await h.call('GET', '/users', opts)
  const write = await h.call('POST', '/tags', {
    ...opts,
    // A cookie write needs the origin and the session's CSRF token; a bearer write needs neither.
    headers: auth.cookie ? { ...opts.headers, origin: 'https://localhost:8443', 'x-csrf-token': (await sessionOf(h, auth.cookie)).csrfToken } : undefined,
    json: { name: `t${crypto.randomUUID().slice(0, 8)}` },
  })
  const read = await h.call('GET', '/tags', opts)
  if (read.status !== 200) return 'none'
  if (users.status === 200) {
    expect(write.status).toBe(200)
    return 'admin'
  }
  expect(users.body.code).toBe('forbidden')
  if (write.status === 200) return 'member'
  expect({ status: write.status, code: write.body.code }).toEqual({ status: 403, code: 'forbidden' })
  return 'readonly'
}

async function sessionOf(h: Harness, cookie: string): Promise<{ role: string; csrfToken: string }> {
  const r = await h.call('GET', '/session', { key: null, headers: { cookie } })
  expect(r.status).toBe(200)
  return r.body
}

async function signInWith(h: Harness, apiKey: string): Promise<string> {
  const r = await h.call('POST', '/session', { key: null, json: { apiKey } })
  expect(r.status).toBe(200)
  return new RegExp(`^${SESSION_COOKIE}=[^;]+`).exec(r.headers.get('set-cookie') ?? '')![0]
}

async function setRole(h: Harness, userId: string, role: Role) {
  expect((await h.call('PATCH', `/users/${userId}`, { json: { role } })).body).toMatchObject({ role })
}

describe('a key or session acts with the lower of its role and its user role', () => {
  test('every pair (key role × user role), by bearer key and by a session opened with it, as the user goes down and back up', async () => {
    const h = createHarness()
    const seen: string[] = []
    for (const keyRole of ROLES) {
      const userId = `usr_k_${keyRole}`
      expect((await h.call('POST', '/users', { json: { id: userId, role: 'admin' } })).status).toBe(200)
      const made = await h.call('POST', '/keys', { json: { userId, role: keyRole } })
      expect(made.body).toMatchObject({ role: keyRole })
      const cookie = await signInWith(h, made.body.key)
      // Down (admin → member → readonly) and back up (→ member → admin): every pair, each change at once.
      for (const userRole of ['admin', 'member', 'readonly', 'member', 'admin'] as Role[]) {
        await setRole(h, userId, userRole)
        const expected = ACTS_AS[`${keyRole}/${userRole}`]
        const listed = (await h.call('GET', `/keys?userIds=${userId}`)).body[0]
        seen.push(
          `${keyRole}/${userRole}: key ${await rightsOf(h, { key: made.body.key })}, session ${await rightsOf(h, { cookie })} (says ${(await sessionOf(h, cookie)).role}), listed ${listed.role} of ${listed.grantedRole}`,
        )
        expect(seen.at(-1)).toBe(`${keyRole}/${userRole}: key ${expected}, session ${expected} (says ${expected}), listed ${expected} of ${keyRole}`)
      }
    }
    expect(new Set(seen.map((s) => s.slice(0, s.indexOf(':')))).size).toBe(9)
  })

  test('a password session acts with its user role, which follows every change at once', async () => {
    const h = createHarness()
    expect((await h.call('POST', '/users', { json: { id: 'pat', password: 'correct horse battery', role: 'admin' } })).status).toBe(200)
    const r = await h.call('POST', '/session', { key: null, json: { userId: 'pat', password: 'correct horse battery' } })
    const cookie = /^[^;]+/.exec(r.headers.get('set-cookie')!)![0]
    for (const role of ['admin', 'member', 'readonly', 'admin'] as Role[]) {
      await setRole(h, 'pat', role)
      expect({ says: (await sessionOf(h, cookie)).role, can: await rightsOf(h, { cookie }) }).toEqual({ says: role, can: role })
    }
  })

  test('a role changed by another writer (another node, the CLI, SQL by hand) reaches cached keys and sessions once the epoch is read', async () => {
    const h = createHarness()
    // epochCheckMs 0: every request compares the store's epoch (the server does it every 250 ms).
    const authStore = createAuthStore(h.deps.db)
    h.deps.auth = createAuthService(authStore, { adminKey: '', epochCheckMs: 0 })
    h.deps.sessions = createSessionService({ store: createSessionStore(h.deps.db), authStore, auth: h.deps.auth, publicOrigin: 'https://localhost:8443' })
    expect((await h.call('POST', '/users', { json: { id: 'root2', role: 'admin' } })).status).toBe(200)
    const key = (await h.call('POST', '/keys', { json: { userId: 'root2', role: 'admin' } })).body.key
    const cookie = await signInWith(h, key)
    expect(await rightsOf(h, { key })).toBe('admin')
    expect((await h.deps.sessions.probe(cookie)).session?.role).toBe('admin')
    for (const role of ['member', 'readonly', 'admin'] as Role[]) {
      // Straight to the store, not through this process's services.
      h.deps.db.query("UPDATE users SET role = ? WHERE id = 'usr_root2'").run(role)
      // What GET /session answers (its route holds the harness's first session service, not this one).
      const says = (await h.deps.sessions.probe(cookie)).session?.role
      expect({ key: await rightsOf(h, { key }), session: await rightsOf(h, { cookie }), says }).toEqual({
        key: role,
        session: role,
        says: role,
      })
    }
  })
})

describe('POST /keys never mints above the caller nor above the user', () => {
  test('every caller (key role × user role) minting its own keys: above the role it acts with is 403; a readonly one writes nothing', async () => {
    const h = createHarness()
    const outcomes: Record<string, number> = {}
    for (const keyRole of ROLES)
      for (const userRole of ROLES) {
        const userId = `usr_c_${keyRole}_${userRole}`
        expect((await h.call('POST', '/users', { json: { id: userId, role: 'admin' } })).status).toBe(200)
        const key = (await h.call('POST', '/keys', { json: { userId, role: keyRole } })).body.key
        await setRole(h, userId, userRole)
        for (const wanted of ROLES) {
          const r = await h.call('POST', '/keys', { key, json: { userId, role: wanted } })
          outcomes[`${keyRole}/${userRole} mints ${wanted}`] = r.status
          if (r.status === 403) expect(r.body.code).toBe('forbidden')
          if (r.status === 200) expect(r.body.role).toBe(wanted)
        }
      }
    const expected: Record<string, number> = {}
    const rank = { readonly: 0, member: 1, admin: 2 }
    for (const keyRole of ROLES)
      for (const userRole of ROLES) {
        const actsAs = ACTS_AS[`${keyRole}/${userRole}`]
        for (const wanted of ROLES) expected[`${keyRole}/${userRole} mints ${wanted}`] = actsAs !== 'readonly' && rank[wanted] <= rank[actsAs] ? 200 : 403
      }
    expect(outcomes).toEqual(expected)
  })

  test("an admin minting for users of every role: a key above the user's role is 422 naming 'role', and nothing is made", async () => {
    const h = createHarness()
    const outcomes: Record<string, string> = {}
    for (const userRole of ROLES) {
      const userId = `usr_t_${userRole}`
      expect((await h.call('POST', '/users', { json: { id: userId, role: userRole } })).status).toBe(200)
      for (const wanted of ROLES) {
        const r = await h.call('POST', '/keys', { json: { userId, role: wanted } })
        outcomes[`${wanted} for ${userRole}`] = r.status === 200 ? `200 ${r.body.role}` : `${r.status} ${r.body.code} ${r.body.message.includes("'role'")}`
      }
      const listed = (await h.call('GET', `/keys?userIds=${userId}`)).body as { role: string }[]
      expect(listed.map((k) => k.role).sort()).toEqual(ROLES.filter((r) => ROLES.indexOf(r) >= ROLES.indexOf(userRole)).sort())
    }
    expect(outcomes).toEqual({
      'admin for admin': '200 admin',
      'member for admin': '200 member',
      'readonly for admin': '200 readonly',
      'admin for member': '422 parameter_error true',
      'member for member': '200 member',
      'readonly for member': '200 readonly',
      'admin for readonly': '422 parameter_error true',
      'member for readonly': '422 parameter_error true',
      'readonly for readonly': '200 readonly',
    })
  })

  test('the operator path (CLI) refuses a key above its user role and says how to give the role; users add --role gives it', async () => {
    const h = createHarness()
    expect(() => h.deps.auth.createKey('alice', 'admin')).toThrow("'role' admin is above the role of usr_alice (member)")
    expect(h.deps.auth.addUser('alice', 'admin')).toEqual({ id: 'usr_alice', created: false, role: 'admin' })
    const made = h.deps.auth.createKey('alice', 'admin')
    expect(await rightsOf(h, { key: made.key })).toBe('admin')
    expect(h.deps.auth.addUser('newbie', 'readonly')).toEqual({ id: 'usr_newbie', created: true, role: 'readonly' })
    expect(h.deps.auth.addUser('newbie')).toEqual({ id: 'usr_newbie', created: false, role: 'readonly' })
    expect(() => h.deps.auth.addUser('newbie', 'owner')).toThrow('role must be one of')
    // Demoting through the operator path reaches the cached key at once.
    h.deps.auth.addUser('alice', 'member')
    expect(await rightsOf(h, { key: made.key })).toBe('member')
  })
})
