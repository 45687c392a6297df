import { describe, expect, test } from 'bun:test'
import { createHarness } from '../../test/helpers/in-process'
import { seededRandom } from '../../test/helpers/random'
import { createAuthService } from './auth.service'
import { createAuthStore } from './auth.store'

const expectError = (r: { status: number; body: any }, status: number, code: string, text?: string) => {
  expect({ status: r.status, code: r.body.code }).toEqual({ status, code })
  if (text) expect(r.body.message).toContain(text)
}

describe('POST /keys', () => {
  test("an admin creates a key for any user and role; a missing user is created with the key's role; the key works", async () => {
    const h = createHarness()
    const r = await h.call('POST', '/keys', { json: { userId: 'dave', role: 'admin', name: 'ci' } })
    expect(r.status).toBe(200)
    expect(r.body).toEqual({
      id: expect.stringMatching(/^key_/),
      key: expect.stringMatching(/^sk_/),
      userId: 'usr_dave',
      role: 'admin',
      name: 'ci',
      createdAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
    })
    expect((await h.call('GET', '/users/dave')).body).toMatchObject({ id: 'usr_dave', role: 'admin', disabled: false, hasPassword: false })
    // The new admin key acts as an admin: it can list users.
    expect((await h.call('GET', '/users', { key: r.body.key })).status).toBe(200)
    const unnamed = await h.call('POST', '/keys', { json: { userId: 'usr_alice', role: 'readonly' } })
    expect(unnamed.body).toMatchObject({ userId: 'usr_alice', role: 'readonly', name: null })
  })

  test('a member creates member or readonly keys for itself only', async () => {
    const h = createHarness()
    const own = await h.call('POST', '/keys', { key: h.keys.member, json: { userId: 'alice', role: 'readonly' } })
    expect(own.status).toBe(200)
    expect(own.body.userId).toBe('usr_alice')
    expect((await h.call('POST', '/keys', { key: h.keys.member, json: { userId: 'usr_alice', role: 'member' } })).status).toBe(200)
    expectError(await h.call('POST', '/keys', { key: h.keys.member, json: { userId: 'bob', role: 'member' } }), 403, 'forbidden', 'usr_bob')
    expectError(await h.call('POST', '/keys', { key: h.keys.member, json: { userId: 'newbie', role: 'member' } }), 403, 'forbidden')
    expectError(await h.call('POST', '/keys', { key: h.keys.member, json: { userId: 'alice', role: 'admin' } }), 403, 'forbidden', 'member or readonly')
    expectError(await h.call('POST', '/keys', { key: h.keys.readonly, json: { userId: 'carol', role: 'readonly' } }), 403, 'forbidden', 'read-only')
    // Nothing was made by the refused calls: alice has her harness key plus the two above.
    expect((await h.call('GET', '/keys?userIds=alice')).headers.get('x-total-count')).toBe('3')
    expect((await h.call('GET', '/users/newbie')).status).toBe(404)
  })

  test('bad bodies are 422 naming the field and change nothing', async () => {
    const h = createHarness()
    const cases: [unknown, string][] = [
      [{ userId: 'alice', role: 'owner' }, 'role'],
      [{ userId: 'alice' }, 'role'],
      [{ role: 'member' }, 'userId'],
      [{ userId: 'al ice', role: 'member' }, 'userId'],
      [{ userId: 'x'.repeat(65), role: 'member' }, 'userId'],
      [{ userId: 'alice', role: 'member', name: '' }, 'name'],
      [{ userId: 'alice', role: 'member', name: 'n'.repeat(101) }, 'name'],
      [{ userId: 'alice', role: 'member', secret: 'x' }, 'secret'],
    ]
    for (const [json, field] of cases) expectError(await h.call('POST', '/keys', { json }), 422, 'parameter_error', field)
    expect((await h.call('GET', '/keys')).headers.get('x-total-count')).toBe('4')
  })

  test('a deleted user gets no new key', async () => {
    const h = createHarness()
    expect((await h.call('DELETE', '/users/bob')).status).toBe(200)
    expectError(await h.call('POST', '/keys', { json: { userId: 'bob', role: 'member' } }), 422, 'parameter_error', 'deleted')
  })
})

describe('GET /keys', () => {
  test('admins list every key, members and readonly keys their own; never the secret', async () => {
    const h = createHarness()
    const all = await h.call('GET', '/keys')
    expect(all.status).toBe(200)
    expect(all.headers.get('x-total-count')).toBe('4')
    expect(all.body.map((k: any) => k.userId).sort()).toEqual(['usr_admin', 'usr_alice', 'usr_bob', 'usr_carol'])
    for (const k of all.body) {
      expect(Object.keys(k).sort()).toEqual(['createdAt', 'grantedRole', 'id', 'lastUsedAt', 'name', 'prefix', 'revokedAt', 'role', 'userId'])
      expect(k.prefix).toMatch(/^sk_/)
      expect(JSON.stringify(k)).not.toContain(
        Object.values(h.keys)
          .find((s) => s.startsWith(k.prefix))!
          .slice(8),
      )
    }
    const mine = await h.call('GET', '/keys', { key: h.keys.member })
    expect(mine.body.map((k: any) => k.userId)).toEqual(['usr_alice'])
    expect(mine.headers.get('x-total-count')).toBe('1')
    const ro = await h.call('GET', '/keys', { key: h.keys.readonly })
    expect(ro.body.map((k: any) => k.userId)).toEqual(['usr_carol'])
    expectError(await h.call('GET', '/keys?userIds=bob', { key: h.keys.member }), 403, 'forbidden', 'usr_bob')
    expect((await h.call('GET', '/keys?userIds=alice', { key: h.keys.member })).body).toHaveLength(1)
    expect((await h.call('GET', '/keys?userIds=bob&userIds=carol')).body.map((k: any) => k.userId).sort()).toEqual(['usr_bob', 'usr_carol'])
  })

  test('lastUsedAt shows a use at once, before it is written, and after the flush', async () => {
    const h = createHarness()
    const made = await h.call('POST', '/keys', { json: { userId: 'dave', role: 'member' } })
    const before = (await h.call('GET', '/keys?userIds=dave')).body[0]
    expect(before.lastUsedAt).toBeNull()
    expect((await h.call('GET', '/tags', { key: made.body.key })).status).toBe(200)
    const after = (await h.call('GET', '/keys?userIds=dave')).body[0]
    expect(after.lastUsedAt).toMatch(/Z$/)
    h.deps.auth.flushLastUsed()
    const stored = h.deps.db.query<{ t: number }, [string]>('SELECT last_used_at AS t FROM api_keys WHERE id = ?').get(made.body.id)!
    expect(new Date(stored.t).toISOString()).toBe(after.lastUsedAt)
  })

  test('pages with page/pageSize; revoked keys only with includeRevoked', async () => {
    const h = createHarness()
    const first = await h.call('GET', '/keys?pageSize=3')
    expect(first.body).toHaveLength(3)
    expect(first.headers.get('x-total-count')).toBe('4')
    const second = await h.call('GET', '/keys?pageSize=3&page=2')
    expect(second.body).toHaveLength(1)
    expect([...first.body, ...second.body].map((k: any) => k.id).sort()).toEqual((await h.call('GET', '/keys')).body.map((k: any) => k.id).sort())
    expectError(await h.call('GET', '/keys?pageSize=101'), 422, 'parameter_error', 'pageSize')
    const bob = (await h.call('GET', '/keys?userIds=bob')).body[0]
    await h.call('DELETE', `/keys/${bob.id}`)
    expect((await h.call('GET', '/keys?userIds=bob')).body).toEqual([])
    const withRevoked = await h.call('GET', '/keys?userIds=bob&includeRevoked=true')
    expect(withRevoked.body).toEqual([{ ...bob, revokedAt: expect.stringMatching(/Z$/) }])
  })
})

describe('DELETE /keys/{id}', () => {
  test('a revoked key answers 401 on its very next request', async () => {
    const h = createHarness()
    const made = await h.call('POST', '/keys', { key: h.keys.member, json: { userId: 'alice', role: 'member' } })
    expect((await h.call('GET', '/tags', { key: made.body.key })).status).toBe(200)
    const r = await h.call('DELETE', `/keys/${made.body.id}`, { key: h.keys.member })
    expect(r.status).toBe(200)
    expect(r.body).toEqual({ id: made.body.id })
    expectError(await h.call('GET', '/tags', { key: made.body.key }), 401, 'unauthorized', 'revoked')
    // The other keys keep working.
    expect((await h.call('GET', '/tags', { key: h.keys.member })).status).toBe(200)
    expectError(await h.call('DELETE', `/keys/${made.body.id}`), 410, 'record_gone')
  })

  test('admins revoke any key; members only their own; readonly none; unknown ids 404', async () => {
    const h = createHarness()
    const bobKey = (await h.call('GET', '/keys?userIds=bob')).body[0].id
    expectError(await h.call('DELETE', `/keys/${bobKey}`, { key: h.keys.member }), 403, 'forbidden', 'another user')
    const carolKey = (await h.call('GET', '/keys', { key: h.keys.readonly })).body[0].id
    expectError(await h.call('DELETE', `/keys/${carolKey}`, { key: h.keys.readonly }), 403, 'forbidden', 'read-only')
    expect((await h.call('GET', '/tags', { key: h.keys.other })).status).toBe(200)
    expectError(await h.call('DELETE', '/keys/key_nope'), 404, 'not_found')
    expect((await h.call('DELETE', `/keys/${bobKey}`)).status).toBe(200)
    expectError(await h.call('GET', '/tags', { key: h.keys.other }), 401, 'unauthorized')
  })

  test('an admin revoking its own key loses access at once', async () => {
    const h = createHarness()
    const made = await h.call('POST', '/keys', { json: { userId: 'admin', role: 'admin' } })
    expect((await h.call('DELETE', `/keys/${made.body.id}`, { key: made.body.key })).status).toBe(200)
    expectError(await h.call('GET', '/keys', { key: made.body.key }), 401, 'unauthorized')
  })
})

describe('users', () => {
  test('admin only: every other key gets 403', async () => {
    const h = createHarness()
    for (const key of [h.keys.member, h.keys.readonly]) {
      expectError(await h.call('GET', '/users', { key }), 403, 'forbidden')
      expectError(await h.call('GET', '/users/alice', { key }), 403, 'forbidden')
    }
    expectError(await h.call('POST', '/users', { key: h.keys.member, json: { id: 'eve' } }), 403, 'forbidden')
    expectError(await h.call('PATCH', '/users/alice', { key: h.keys.member, json: { role: 'admin' } }), 403, 'forbidden')
    expectError(await h.call('DELETE', '/users/bob', { key: h.keys.member }), 403, 'forbidden')
    expect((await h.call('GET', '/users/eve')).status).toBe(404)
    expect((await h.call('GET', '/users/alice')).body.role).toBe('member')
  })

  test('POST creates a user; role defaults to member; the password is hashed with argon2id and never returned', async () => {
    const h = createHarness()
    const r = await h.call('POST', '/users', { json: { id: 'eve', password: 'correct horse' } })
    expect(r.status).toBe(200)
    expect(r.body).toEqual({ id: 'usr_eve', role: 'member', createdAt: expect.stringMatching(/\.\d{3}Z$/), disabled: false, hasPassword: true })
    const stored = h.deps.db.query<{ h: string }, []>("SELECT password_hash AS h FROM users WHERE id = 'usr_eve'").get()!.h
    expect(stored).toStartWith('$argon2id$')
    expect(await Bun.password.verify('correct horse', stored)).toBe(true)
    expect((await h.call('POST', '/users', { json: { id: 'usr_frank', role: 'readonly' } })).body).toMatchObject({
      id: 'usr_frank',
      role: 'readonly',
      hasPassword: false,
    })
    expectError(await h.call('POST', '/users', { json: { id: 'eve' } }), 422, 'parameter_error', 'already exists')
    expectError(await h.call('POST', '/users', { json: { id: 'usr_eve' } }), 422, 'parameter_error', 'already exists')
  })

  test('bad user bodies are 422 naming the field', async () => {
    const h = createHarness()
    const cases: [string, string, unknown, string][] = [
      ['POST', '/users', { id: 'g', password: 'short' }, 'password'],
      ['POST', '/users', { id: 'g', password: 'p'.repeat(257) }, 'password'],
      ['POST', '/users', { id: 'g', role: 'root' }, 'role'],
      ['POST', '/users', { id: 'g/h' }, 'id'],
      ['POST', '/users', { id: 'g', disabled: true }, 'disabled'],
      ['PATCH', '/users/alice', { password: 7 }, 'password'],
      ['PATCH', '/users/alice', { disabled: 'yes' }, 'disabled'],
      ['PATCH', '/users/alice', { id: 'usr_x' }, 'id'],
    ]
    for (const [method, path, json, field] of cases) expectError(await h.call(method, path, { json }), 422, 'parameter_error', field)
    expect((await h.call('GET', '/users/g')).status).toBe(404)
    expect((await h.call('GET', '/users/alice')).body).toMatchObject({ disabled: false, hasPassword: false })
  })

  test('GET /users lists live users with paging and X-Total-Count', async () => {
    const h = createHarness()
    const all = await h.call('GET', '/users')
    expect(all.headers.get('x-total-count')).toBe('4')
    expect(all.body.map((u: any) => u.id).sort()).toEqual(['usr_admin', 'usr_alice', 'usr_bob', 'usr_carol'])
    expect(all.body.find((u: any) => u.id === 'usr_admin').role).toBe('admin')
    const page2 = await h.call('GET', '/users?pageSize=3&page=2')
    expect(page2.body).toHaveLength(1)
    await h.call('DELETE', '/users/bob')
    expect((await h.call('GET', '/users')).headers.get('x-total-count')).toBe('3')
  })

  test('PATCH sets a password, removes it, changes the role', async () => {
    const h = createHarness()
    expect((await h.call('PATCH', '/users/alice', { json: { password: 'a long password' } })).body.hasPassword).toBe(true)
    expect((await h.call('PATCH', '/users/alice', { json: { role: 'admin' } })).body).toMatchObject({ role: 'admin', hasPassword: true })
    expect((await h.call('PATCH', '/users/alice', { json: { password: null } })).body.hasPassword).toBe(false)
    expectError(await h.call('PATCH', '/users/nobody', { json: { role: 'admin' } }), 404, 'not_found')
  })

  test("a disabled user's keys answer 401 at once, and work again when enabled", async () => {
    const h = createHarness()
    expect((await h.call('GET', '/tags', { key: h.keys.member })).status).toBe(200)
    expect((await h.call('PATCH', '/users/alice', { json: { disabled: true } })).body.disabled).toBe(true)
    expectError(await h.call('GET', '/tags', { key: h.keys.member }), 401, 'unauthorized', 'disabled')
    expect((await h.call('PATCH', '/users/alice', { json: { disabled: false } })).body.disabled).toBe(false)
    expect((await h.call('GET', '/tags', { key: h.keys.member })).status).toBe(200)
  })

  test("a deleted user's keys answer 401 at once, are revoked, and the id stays taken", async () => {
    const h = createHarness()
    expect((await h.call('POST', '/tags', { key: h.keys.other, json: { name: 'kept' } })).status).toBe(200)
    expect((await h.call('DELETE', '/users/bob')).body).toEqual({ id: 'usr_bob' })
    expectError(await h.call('GET', '/tags', { key: h.keys.other }), 401, 'unauthorized')
    expect((await h.call('GET', '/keys?userIds=bob&includeRevoked=true')).body[0].revokedAt).not.toBeNull()
    expectError(await h.call('GET', '/users/bob'), 410, 'record_gone')
    expectError(await h.call('PATCH', '/users/bob', { json: { disabled: false } }), 410, 'record_gone')
    expectError(await h.call('DELETE', '/users/bob'), 410, 'record_gone')
    expectError(await h.call('POST', '/users', { json: { id: 'bob' } }), 422, 'parameter_error', 'never reused')
    // Records the user owned stay (an admin still sees them).
    expect((await h.call('GET', '/tags')).body.map((t: any) => t.userId)).toContain('usr_bob')
  })

  test('no lock-out: usr_admin and your own user cannot be disabled, deleted or demoted', async () => {
    const h = createHarness()
    const other = (await h.call('POST', '/keys', { json: { userId: 'root2', role: 'admin' } })).body.key
    await h.call('PATCH', '/users/root2', { json: { role: 'admin' } })
    for (const [key, id] of [
      [h.keys.admin, 'admin'],
      [other, 'admin'],
      [other, 'root2'],
    ] as const) {
      expectError(await h.call('PATCH', `/users/${id}`, { key, json: { disabled: true } }), 422, 'parameter_error')
      expectError(await h.call('PATCH', `/users/${id}`, { key, json: { role: 'member' } }), 422, 'parameter_error')
      expectError(await h.call('DELETE', `/users/${id}`, { key }), 422, 'parameter_error')
    }
    expect((await h.call('GET', '/keys', { key: other })).status).toBe(200)
    // Another admin may demote and then disable root2.
    expect((await h.call('PATCH', '/users/root2', { json: { role: 'member', disabled: true } })).body).toMatchObject({ role: 'member', disabled: true })
    expectError(await h.call('GET', '/keys', { key: other }), 401, 'unauthorized')
  })
})

describe('authentication cache', () => {
  test('a key revoked or a user disabled by another process answers 401 once the epoch is seen', async () => {
    const h = createHarness()
    // epochCheckMs 0: every request compares the store's epoch (the server does it every 250 ms).
    h.deps.auth = createAuthService(createAuthStore(h.deps.db), { adminKey: '', epochCheckMs: 0 })
    expect((await h.call('GET', '/tags', { key: h.keys.member })).status).toBe(200)
    expect((await h.call('GET', '/tags', { key: h.keys.other })).status).toBe(200)
    // As the CLI or an operator with sqlite3 would: straight to the store, not through this service.
    h.deps.db.query("UPDATE api_keys SET revoked_at = 1 WHERE user_id = 'usr_alice'").run()
    h.deps.db.query("UPDATE users SET disabled = 1 WHERE id = 'usr_bob'").run()
    expectError(await h.call('GET', '/tags', { key: h.keys.member }), 401, 'unauthorized')
    expectError(await h.call('GET', '/tags', { key: h.keys.other }), 401, 'unauthorized')
    expect((await h.call('GET', '/tags', { key: h.keys.readonly })).status).toBe(200)
  })

  test('recording a use does not move the epoch (it would empty every cache once a minute)', async () => {
    const h = createHarness()
    const epoch = () => h.deps.db.query<{ e: number }, []>('SELECT epoch AS e FROM auth_epoch').get()!.e
    const before = epoch()
    await h.call('GET', '/tags', { key: h.keys.member })
    h.deps.auth.flushLastUsed()
    expect(epoch()).toBe(before)
  })

  test('the cache is bounded by entries, evicting the least recently used; evicted keys still work', async () => {
    const h = createHarness()
    const auth = createAuthService(createAuthStore(h.deps.db), { adminKey: '', cacheMaxEntries: 3 })
    const keys = Array.from({ length: 5 }, (_, i) => auth.createKey('alice', 'member', `k${i}`).key)
    const bearer = (key: string) => `Bearer ${key}`
    for (const key of keys) auth.authenticate(bearer(key))
    expect(auth.cacheSize()).toBe(3)
    // keys[0] was evicted: it is looked up again and still authenticates.
    expect((await auth.authenticate(bearer(keys[0]!))).userId).toBe('usr_alice')
    expect(auth.cacheSize()).toBe(3)
    // A revoked key is refused even after it was cached and evicted.
    h.deps.db.query("UPDATE api_keys SET revoked_at = 1 WHERE name = 'k1'").run()
    expect(() => auth.authenticate(bearer(keys[1]!))).toThrow('revoked')
  })
})

describe('malformed input', () => {
  test('no key or user operation answers 500, and the OpenAPI document describes them', async () => {
    const h = createHarness()
    const strings = ['', ' ', 'a'.repeat(5000), '../x', '%00', '\u0000', '💥', 'usr_', 'usr_admin', 'admin', 'key_x', 'null', '-1']
    const values: unknown[] = [null, true, false, 0, -1, 1.5, [], {}, [null], ...strings]
    const rnd = seededRandom(11)
    const pick = <T>(xs: T[]): T => xs[Math.floor(rnd() * xs.length)]!
    const fields = ['userId', 'role', 'name', 'id', 'password', 'disabled', 'key', pick(strings)]
    const failures: string[] = []
    for (let i = 0; i < 400; i++) {
      const [method, template] = pick([
        ['POST', '/keys'],
        ['GET', '/keys'],
        ['DELETE', '/keys/{}'],
        ['GET', '/users'],
        ['POST', '/users'],
        ['GET', '/users/{}'],
        ['PATCH', '/users/{}'],
        ['DELETE', '/users/{}'],
      ] as const)
      const path = template.replace('{}', encodeURIComponent(pick(strings.filter((s) => s && s.length < 100))))
      const q = new URLSearchParams()
      for (let j = 0; j < rnd() * 3; j++) q.append(pick(['page', 'pageSize', 'userIds', 'includeRevoked']), pick(strings.filter((s) => s.length < 100)))
      const body =
        method === 'POST' || method === 'PATCH'
          ? rnd() < 0.2
            ? pick(values)
            : Object.fromEntries(Array.from({ length: 1 + Math.floor(rnd() * 3) }, () => [pick(fields), pick(values)]))
          : undefined
      const key = pick([h.keys.admin, h.keys.member, h.keys.readonly])
      const r = await h.call(method, `${path}?${q}`, { key, json: body })
      if (r.status >= 500) failures.push(`${method} ${path}?${q} ${JSON.stringify(body)?.slice(0, 100)} → ${r.status}`)
      else if (r.status >= 400) expect(typeof r.body.code).toBe('string')
    }
    expect(failures).toEqual([])
    // The harness's admin key still works: nothing above locked the operator out.
    expect((await h.call('GET', '/users/admin')).body).toMatchObject({ role: 'admin', disabled: false })
    const doc = (await h.call('GET', '/openapi.json', { key: null })).body
    expect(Object.keys(doc.paths)).toEqual(expect.arrayContaining(['/keys', '/keys/{id}', '/users', '/users/{id}']))
    expect(doc.paths['/keys'].get.tags).toEqual(['Keys and users'])
    expect(doc.paths['/keys'].get.responses['200'].content['application/json'].schema.items.properties.lastUsedAt.description).toContain('about a minute')
  })
})
