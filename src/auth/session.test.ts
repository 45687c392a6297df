/**
 * Dashboard sessions through the real app on an in-memory store: sign-in forms and their
 * failures, the cookie, the envelope's Origin and CSRF checks, what ends a session (sign-out,
 * a revoked key, a disabled or deleted user, a password change, idleness, age), the sign-in
 * limit per address. A clock the test moves stands in for waiting hours.
 */
import { beforeEach, describe, expect, test } from 'bun:test'
import { createApiApp } from '../app'
import { buildConfig } from '../config/config.load'
import { createDeps, type SqliteDeps } from '../deps'
import { createLogger } from '../shared/log'
import { createSignInLimiter, SIGN_IN_LIMITS } from './session.limiter'
import { LAST_SEEN_WRITE_MS, SESSION_COOKIE, SESSION_IDLE_MS, SESSION_MAX_MS } from './session.service'
import { MAX_SESSIONS_PER_USER } from './session.store'

const ORIGIN = 'https://localhost:8443'
const PASSWORD = 'correct horse battery'

interface Reply {
  status: number
  body: any
  headers: Headers
}

let deps: SqliteDeps
let clock: number
let keys: { admin: string; member: string; readonly: string }
let call: (
  method: string,
  path: string,
  opts?: { key?: string; cookie?: string; json?: unknown; headers?: Record<string, string>; ip?: string },
) => Promise<Reply>

beforeEach(() => {
  clock = Date.parse('2026-03-01T12:00:00Z')
  deps = createDeps(buildConfig({}, {}), ':memory:', createLogger(true), { now: () => clock })
  const app = createApiApp(deps)
  for (const u of ['alice', 'carol']) deps.auth.addUser(u)
  keys = {
    admin: deps.auth.createKey('usr_admin', 'admin').key,
    member: deps.auth.createKey('alice', 'member').key,
    readonly: deps.auth.createKey('carol', 'readonly').key,
  }
  call = async (method, path, opts = {}) => {
    const headers = new Headers(opts.headers)
    if (opts.key) headers.set('authorization', `Bearer ${opts.key}`)
    if (opts.cookie) headers.set('cookie', opts.cookie)
    let body: string | undefined
    if (opts.json !== undefined) {
      body = JSON.stringify(opts.json)
      headers.set('content-type', 'application/json')
    }
    const res = await app.handle(new Request(`${ORIGIN}/api${path}`, { method, headers, body }), opts.ip ?? '198.51.100.7')
    const text = await res.text()
    return { status: res.status, body: text ? JSON.parse(text) : null, headers: res.headers }
  }
})

/** Signs in; returns the cookie to send back and the session's answer. */
async function signIn(json: unknown, ip?: string) {
  const r = await call('POST', '/session', { json, ip })
  expect(r.status).toBe(200)
  const token = new RegExp(`^${SESSION_COOKIE}=([^;]+)`).exec(r.headers.get('set-cookie') ?? '')![1]!
  return { cookie: `${SESSION_COOKIE}=${token}`, session: r.body as { userId: string; role: string; method: string; csrfToken: string; expiresAt: string } }
}

const writeHeaders = (csrfToken: string) => ({ origin: ORIGIN, 'x-csrf-token': csrfToken })

async function addUserWithPassword(id: string, role = 'member') {
  expect((await call('POST', '/users', { key: keys.admin, json: { id, password: PASSWORD, role } })).status).toBe(200)
}

describe('sign-in', () => {
  test('with an API key: the session acts with the key, in an HttpOnly Secure SameSite=Strict __Host- cookie', async () => {
    const r = await call('POST', '/session', { json: { apiKey: keys.member } })
    expect(r.status).toBe(200)
    expect(r.body).toEqual({
      userId: 'usr_alice',
      role: 'member',
      method: 'apiKey',
      csrfToken: expect.any(String),
      expiresAt: new Date(clock + SESSION_IDLE_MS).toISOString(),
    })
    const cookie = r.headers.get('set-cookie')!
    expect(cookie).toMatch(new RegExp(`^${SESSION_COOKIE}=[A-Za-z0-9_-]{43};`))
    expect(cookie.split('; ').slice(1).sort()).toEqual(['HttpOnly', `Max-Age=${SESSION_MAX_MS / 1000}`, 'Path=/', 'SameSite=Strict', 'Secure'])
    // The store keeps the token's hash, not the token.
    const token = /=([^;]+)/.exec(cookie)![1]!
    expect(JSON.stringify(deps.db.query('SELECT * FROM sessions').all())).not.toContain(token)
  })

  test('with a password set through POST /users; the session acts with the user role', async () => {
    await addUserWithPassword('dave', 'readonly')
    const { session, cookie } = await signIn({ userId: 'dave', password: PASSWORD })
    expect(session).toMatchObject({ userId: 'usr_dave', role: 'readonly', method: 'password' })
    expect((await call('GET', '/session', { cookie })).body).toMatchObject({ userId: 'usr_dave', role: 'readonly', method: 'password' })
  })

  test('every failure is the same 401: wrong password, unknown user, no password, disabled or deleted user, revoked or unknown key', async () => {
    await addUserWithPassword('dave')
    await addUserWithPassword('erin')
    await addUserWithPassword('frank')
    expect((await call('PATCH', '/users/erin', { key: keys.admin, json: { disabled: true } })).status).toBe(200)
    expect((await call('DELETE', '/users/frank', { key: keys.admin })).status).toBe(200)
    const revoked = await call('POST', '/keys', { key: keys.admin, json: { userId: 'alice', role: 'member' } })
    expect((await call('DELETE', `/keys/${revoked.body.id}`, { key: keys.admin })).status).toBe(200)
    const attempts = [
      { userId: 'dave', password: 'wrong horse battery' },
      { userId: 'nobody', password: PASSWORD },
      { userId: 'alice', password: PASSWORD }, // has no password
      { userId: 'erin', password: PASSWORD },
      { userId: 'frank', password: PASSWORD },
      { userId: '../etc', password: PASSWORD },
      { apiKey: revoked.body.key },
      { apiKey: 'sk_not_a_key' },
      { apiKey: 'two words' },
    ]
    const answers = new Set<string>()
    for (const [i, json] of attempts.entries()) {
      const r = await call('POST', '/session', { json, ip: `203.0.113.${i}` })
      expect([JSON.stringify(json), r.status, r.body.code, r.headers.get('set-cookie')]).toEqual([JSON.stringify(json), 401, 'unauthorized', null])
      answers.add(r.body.message)
    }
    expect(answers.size).toBe(1)
  })

  test('a stored hash that is not one (SQL by hand) is a 401, not a 500', async () => {
    await addUserWithPassword('dave')
    deps.db.query("UPDATE users SET password_hash = 'not-a-hash' WHERE id = 'usr_dave'").run()
    const r = await call('POST', '/session', { json: { userId: 'dave', password: PASSWORD } })
    expect([r.status, r.body.code]).toEqual([401, 'unauthorized'])
  })

  test('exactly one form, and no unknown fields (422); no bearer key needed', async () => {
    for (const json of [
      {},
      { userId: 'alice' },
      { password: PASSWORD },
      { userId: 'alice', password: PASSWORD, apiKey: keys.member },
      { apiKey: keys.member, remember: true },
    ]) {
      const r = await call('POST', '/session', { json })
      expect([JSON.stringify(json), r.status, r.body.code]).toEqual([JSON.stringify(json), 422, 'parameter_error'])
    }
    expect((await call('POST', '/session', { json: { apiKey: keys.member, remember: true } })).body.message).toBe("unknown field 'remember' in body")
  })

  test('a sign-in from another origin is refused (login CSRF); from this origin it works', async () => {
    const foreign = await call('POST', '/session', { json: { apiKey: keys.member }, headers: { origin: 'https://evil.example' } })
    expect([foreign.status, foreign.body.code, foreign.headers.get('set-cookie')]).toEqual([403, 'forbidden', null])
    expect((await call('POST', '/session', { json: { apiKey: keys.member }, headers: { origin: ORIGIN } })).status).toBe(200)
  })

  test('signing in again with a cookie ends the session it named', async () => {
    const first = await signIn({ apiKey: keys.member })
    const r = await call('POST', '/session', { json: { apiKey: keys.member }, cookie: first.cookie })
    expect(r.status).toBe(200)
    expect((await call('GET', '/links', { cookie: first.cookie })).status).toBe(401)
  })
})

describe('requests with the cookie', () => {
  test('reads need only the cookie; the rate limit counts by the key', async () => {
    const { cookie } = await signIn({ apiKey: keys.member })
    const r = await call('GET', '/links', { cookie })
    expect(r.status).toBe(200)
    expect(r.headers.get('ratelimit-remaining')).toBe(String(deps.config.limits.apiPerMinute - 1))
    // The key's bucket: a bearer request with the same key continues the count.
    expect((await call('GET', '/links', { key: keys.member })).headers.get('ratelimit-remaining')).toBe(String(deps.config.limits.apiPerMinute - 2))
  })

  const spoil = (token: string) => {
    const at = token.length >> 1
    return `${token.slice(0, at)}${token[at] === 'x' ? 'y' : 'x'}${token.slice(at + 1)}`
  }

  test('writes need the server origin and the CSRF token, each 403 naming its check', async () => {
    const { cookie, session } = await signIn({ apiKey: keys.member })
    const noCsrf = await call('POST', '/tags', { cookie, json: { name: 'a' }, headers: { origin: ORIGIN } })
    expect([noCsrf.status, noCsrf.body.code]).toEqual([403, 'forbidden'])
    expect(noCsrf.body.message).toStartWith('CSRF check failed')
    const badCsrf = await call('POST', '/tags', {
      cookie,
      json: { name: 'a' },
      // A character in the middle changed (the last ones carry unused bits of base64: changing them may not change the token).
      headers: { origin: ORIGIN, 'x-csrf-token': spoil(session.csrfToken) },
    })
    expect([badCsrf.status, badCsrf.body.message]).toEqual([403, expect.stringMatching(/^CSRF check failed/)])
    const foreign = await call('POST', '/tags', { cookie, json: { name: 'a' }, headers: { origin: 'https://evil.example', 'x-csrf-token': session.csrfToken } })
    expect([foreign.status, foreign.body.message]).toEqual([403, expect.stringMatching(/^origin check failed/)])
    const noOrigin = await call('POST', '/tags', { cookie, json: { name: 'a' }, headers: { 'x-csrf-token': session.csrfToken } })
    expect([noOrigin.status, noOrigin.body.message]).toEqual([403, expect.stringMatching(/^origin check failed/)])
    expect((await call('GET', '/tags', { key: keys.member })).body).toEqual([])
    // Both right: the write is made as the key's user.
    const ok = await call('POST', '/tags', { cookie, json: { name: 'a' }, headers: writeHeaders(session.csrfToken) })
    expect([ok.status, ok.body.userId]).toEqual([200, 'usr_alice'])
    // A browser that sends no Origin says same-origin in Sec-Fetch-Site.
    const fetchSite = await call('POST', '/tags', {
      cookie,
      json: { name: 'b' },
      headers: { 'sec-fetch-site': 'same-origin', 'x-csrf-token': session.csrfToken },
    })
    expect(fetchSite.status).toBe(200)
  })

  test("another session's CSRF token does not work", async () => {
    const mine = await signIn({ apiKey: keys.member })
    const other = await signIn({ apiKey: keys.member })
    const r = await call('POST', '/tags', { cookie: mine.cookie, json: { name: 'a' }, headers: writeHeaders(other.session.csrfToken) })
    expect([r.status, r.body.message]).toEqual([403, expect.stringMatching(/^CSRF check failed/)])
  })

  test('an Authorization header decides alone: a bearer write needs no CSRF token, a bad bearer is 401 even with a good cookie', async () => {
    const { cookie } = await signIn({ apiKey: keys.member })
    expect((await call('POST', '/tags', { key: keys.admin, cookie, json: { name: 'a' } })).body.userId).toBe('usr_admin')
    expect((await call('GET', '/links', { key: 'sk_wrong', cookie })).status).toBe(401)
  })

  test('a readonly session cannot write, but can sign out', async () => {
    const { cookie, session } = await signIn({ apiKey: keys.readonly })
    const r = await call('POST', '/tags', { cookie, json: { name: 'a' }, headers: writeHeaders(session.csrfToken) })
    expect([r.status, r.body.code, r.body.message]).toEqual([403, 'forbidden', 'this session is read-only (its role is readonly)'])
    expect((await call('DELETE', '/session', { cookie, headers: writeHeaders(session.csrfToken) })).status).toBe(200)
  })

  test('password sessions are rate-limited per user: two sessions of one user share a count, another user has their own', async () => {
    await addUserWithPassword('dave')
    await addUserWithPassword('erin')
    const dave = [await signIn({ userId: 'dave', password: PASSWORD }), await signIn({ userId: 'dave', password: PASSWORD })]
    const erin = await signIn({ userId: 'erin', password: PASSWORD })
    const remaining = async (cookie: string) => Number((await call('GET', '/links', { cookie })).headers.get('ratelimit-remaining'))
    const limit = deps.config.limits.apiPerMinute
    expect([await remaining(dave[0]!.cookie), await remaining(dave[1]!.cookie), await remaining(erin.cookie)]).toEqual([limit - 1, limit - 2, limit - 1])
  })
})

describe('what ends a session', () => {
  test('sign-out: 200 {}, the cookie expired, the session 401 from then on (GET /session: 204, expiring it)', async () => {
    const { cookie, session } = await signIn({ apiKey: keys.member })
    const r = await call('DELETE', '/session', { cookie, headers: writeHeaders(session.csrfToken) })
    expect([r.status, r.body]).toEqual([200, {}])
    expect(r.headers.get('set-cookie')).toStartWith(`${SESSION_COOKIE}=; Path=/; Max-Age=0;`)
    expect((await call('GET', '/links', { cookie })).status).toBe(401)
    const probe = await call('GET', '/session', { cookie })
    expect(probe.status).toBe(204)
    expect(probe.headers.get('set-cookie')).toStartWith(`${SESSION_COOKIE}=; Path=/; Max-Age=0;`)
    expect(deps.db.query('SELECT count(*) AS n FROM sessions').get()).toEqual({ n: 0 })
  })

  test('sign-out is a cookie write: without the CSRF token it is 403 and the session lives', async () => {
    const { cookie } = await signIn({ apiKey: keys.member })
    expect((await call('DELETE', '/session', { cookie, headers: { origin: ORIGIN } })).status).toBe(403)
    expect((await call('GET', '/links', { cookie })).status).toBe(200)
  })

  test("revoking the session's key (DELETE /keys/{id}): 401 at once", async () => {
    const made = await call('POST', '/keys', { key: keys.admin, json: { userId: 'alice', role: 'member' } })
    const { cookie } = await signIn({ apiKey: made.body.key })
    expect((await call('GET', '/links', { cookie })).status).toBe(200)
    expect((await call('DELETE', `/keys/${made.body.id}`, { key: keys.admin })).status).toBe(200)
    expect((await call('GET', '/links', { cookie })).status).toBe(401)
  })

  test('disabling the user: its key and password sessions 401 at once; deleting it ends them for good', async () => {
    await addUserWithPassword('dave')
    const made = await call('POST', '/keys', { key: keys.admin, json: { userId: 'dave', role: 'member' } })
    const byKey = await signIn({ apiKey: made.body.key })
    const byPassword = await signIn({ userId: 'dave', password: PASSWORD })
    expect((await call('PATCH', '/users/dave', { key: keys.admin, json: { disabled: true } })).status).toBe(200)
    expect((await call('GET', '/links', { cookie: byKey.cookie })).status).toBe(401)
    expect((await call('GET', '/links', { cookie: byPassword.cookie })).status).toBe(401)
    expect((await call('DELETE', '/users/dave', { key: keys.admin })).status).toBe(200)
    expect(deps.db.query("SELECT count(*) AS n FROM sessions WHERE user_id = 'usr_dave'").get()).toEqual({ n: 0 })
  })

  test("a password change ends the user's other password sessions, not the one that changed it, nor key sessions", async () => {
    await addUserWithPassword('dave', 'admin')
    const changer = await signIn({ userId: 'dave', password: PASSWORD })
    const other = await signIn({ userId: 'dave', password: PASSWORD })
    const made = await call('POST', '/keys', { key: keys.admin, json: { userId: 'dave', role: 'member' } })
    const byKey = await signIn({ apiKey: made.body.key })
    const r = await call('PATCH', '/users/dave', {
      cookie: changer.cookie,
      json: { password: 'another good one' },
      headers: writeHeaders(changer.session.csrfToken),
    })
    expect(r.status).toBe(200)
    expect((await call('GET', '/links', { cookie: changer.cookie })).status).toBe(200)
    expect((await call('GET', '/links', { cookie: other.cookie })).status).toBe(401)
    expect((await call('GET', '/links', { cookie: byKey.cookie })).status).toBe(200)
    // Through a key (as `shortlink users passwd` acts), every password session of the user ends.
    expect((await call('PATCH', '/users/dave', { key: keys.admin, json: { password: null } })).status).toBe(200)
    expect((await call('GET', '/links', { cookie: changer.cookie })).status).toBe(401)
    expect((await call('POST', '/session', { json: { userId: 'dave', password: 'another good one' } })).status).toBe(401)
  })

  test('12 hours unused: 401 (and the row is gone); use keeps it alive, last-seen written at most once a minute', async () => {
    const { cookie } = await signIn({ apiKey: keys.member })
    const lastSeen = () => (deps.db.query('SELECT last_seen_at AS t FROM sessions').get() as { t: number }).t
    const signedInAt = clock
    clock += LAST_SEEN_WRITE_MS - 1
    expect((await call('GET', '/links', { cookie })).status).toBe(200)
    expect(lastSeen()).toBe(signedInAt)
    clock += 1
    expect((await call('GET', '/links', { cookie })).status).toBe(200)
    expect(lastSeen()).toBe(clock)
    clock += SESSION_IDLE_MS - 1
    const still = await call('GET', '/session', { cookie })
    expect([still.status, still.body.expiresAt]).toEqual([200, new Date(clock + SESSION_IDLE_MS).toISOString()])
    clock += SESSION_IDLE_MS
    expect((await call('GET', '/links', { cookie })).status).toBe(401)
    expect(deps.db.query('SELECT count(*) AS n FROM sessions').get()).toEqual({ n: 0 })
  })

  test('an idle session another process kept using still works here', async () => {
    const { cookie } = await signIn({ apiKey: keys.member })
    expect((await call('GET', '/links', { cookie })).status).toBe(200)
    clock += SESSION_IDLE_MS + 1
    deps.db.query('UPDATE sessions SET last_seen_at = ?').run(clock - 1000)
    expect((await call('GET', '/links', { cookie })).status).toBe(200)
  })

  test('7 days after sign-in it ends, however much it is used', async () => {
    const { cookie } = await signIn({ apiKey: keys.member })
    const end = clock + SESSION_MAX_MS
    while (clock + SESSION_IDLE_MS / 2 < end) {
      clock += SESSION_IDLE_MS / 2
      expect((await call('GET', '/links', { cookie })).status).toBe(200)
    }
    clock = end
    expect((await call('GET', '/links', { cookie })).status).toBe(401)
  })

  test('the store stays bounded: at most MAX_SESSIONS_PER_USER per user (the oldest end), ended sessions swept on a later sign-in', async () => {
    const first = await signIn({ apiKey: keys.member })
    for (let i = 0; i < MAX_SESSIONS_PER_USER; i++) {
      clock += 1
      await signIn({ apiKey: keys.member })
    }
    expect(deps.db.query("SELECT count(*) AS n FROM sessions WHERE user_id = 'usr_alice'").get()).toEqual({ n: MAX_SESSIONS_PER_USER })
    expect((await call('GET', '/links', { cookie: first.cookie })).status).toBe(401)
    // Nobody uses them for 12 hours; the next sign-in (an hour or more since the last sweep) sweeps them.
    clock += SESSION_IDLE_MS
    await signIn({ apiKey: keys.admin })
    expect(deps.db.query('SELECT user_id AS userId FROM sessions').all()).toEqual([{ userId: 'usr_admin' }])
  })

  test('a session deleted by another process (SQL by hand) ends once the epoch is read', async () => {
    const { cookie } = await signIn({ apiKey: keys.member })
    expect((await call('GET', '/links', { cookie })).status).toBe(200)
    const epoch = () => (deps.db.query('SELECT epoch FROM auth_epoch').get() as { epoch: number }).epoch
    const before = epoch()
    deps.db.query('DELETE FROM sessions').run()
    expect(epoch()).toBe(before + 1) // the trigger every process's epoch check sees
    deps.auth.invalidate() // what that check does when it sees the epoch move
    expect((await call('GET', '/links', { cookie })).status).toBe(401)
  })

  test('without a session: GET /session is 204 (a signed-out page asks without an error), a key plays no part; a forged or malformed cookie is 401', async () => {
    const none = await call('GET', '/session')
    expect([none.status, none.headers.get('set-cookie')]).toEqual([204, null])
    expect((await call('GET', '/session', { key: keys.member })).status).toBe(204)
    expect((await call('GET', '/session', { cookie: `${SESSION_COOKIE}=${'A'.repeat(43)}` })).status).toBe(204)
    for (const cookie of [`${SESSION_COOKIE}=${'A'.repeat(43)}`, `${SESSION_COOKIE}=short`, `${SESSION_COOKIE}=${'x'.repeat(5000)}`, 'other=1'])
      expect((await call('GET', '/links', { cookie })).status).toBe(401)
  })
})

describe('failed sign-ins per address', () => {
  test('after 10 failures in 15 minutes: 429 with Retry-After, for the whole IPv6 /64; other addresses unaffected; the window ends', async () => {
    await addUserWithPassword('dave')
    const ip = '2001:db8:1:2::10'
    for (let i = 0; i < SIGN_IN_LIMITS.failures; i++)
      expect((await call('POST', '/session', { json: { userId: 'dave', password: `wrong ${i}-guess` }, ip })).status).toBe(401)
    const limited = await call('POST', '/session', { json: { userId: 'dave', password: PASSWORD }, ip: '2001:db8:1:2:ffff::1' })
    expect([limited.status, limited.body.code, limited.headers.get('retry-after')]).toEqual([
      429,
      'rate_limit_exceeded',
      String(SIGN_IN_LIMITS.windowMs / 1000),
    ])
    expect((await call('POST', '/session', { json: { userId: 'dave', password: PASSWORD }, ip: '2001:db8:1:3::10' })).status).toBe(200)
    clock += SIGN_IN_LIMITS.windowMs
    expect((await call('POST', '/session', { json: { userId: 'dave', password: PASSWORD }, ip })).status).toBe(200)
  })

  test('successful sign-ins do not count', async () => {
    for (let i = 0; i < SIGN_IN_LIMITS.failures * 2; i++) await signIn({ apiKey: keys.member })
    expect((await call('POST', '/session', { json: { apiKey: 'sk_wrong' } })).status).toBe(401)
  })

  test('memory stays bounded under a flood of addresses, and a blocked address stays blocked', () => {
    let t = 0
    const limiter = createSignInLimiter(() => t, { maxCounters: 100 })
    for (let i = 0; i < SIGN_IN_LIMITS.failures; i++) limiter.attempt('192.0.2.1')
    for (let i = 0; i < 10_000; i++) limiter.attempt(`10.${i >> 16}.${(i >> 8) & 255}.${i & 255}`)
    expect(limiter.size()).toBeLessThanOrEqual(200)
    t += 1000
    expect(limiter.attempt('192.0.2.1')).toEqual({ allowed: false, retryAfterS: SIGN_IN_LIMITS.windowMs / 1000 - 1 })
  })
})
