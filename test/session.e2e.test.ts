/**
 * Dashboard sign-in against the real server over TLS: the session cookie, reads and writes
 * with it (Origin and CSRF checks), sign-out, what ends a session, password sessions, the
 * sign-in limit. Idle and absolute expiry are tested in src/auth/session.test.ts on a
 * moved clock.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { join } from 'node:path'
import { json, shortlinkCommand, startServer, type TestServer } from './helpers/server'

const COOKIE = '__Host-shortlink_session'
const PASSWORD = 'correct horse battery'

let s: TestServer
let origin: string
beforeAll(async () => {
  s = await startServer()
  origin = `https://localhost:${s.httpsPort}`
})
afterAll(async () => {
  await s?.stop()
})

/** POST /session without a bearer key; the cookie to send back and the answer. */
async function signIn(body: unknown) {
  const r = await s.api('/session', { method: 'POST', key: null, json: body, headers: { origin } })
  const setCookie = r.headers.get('set-cookie')
  const answer = await json(r)
  expect(answer.status).toBe(200)
  return { cookie: `${COOKIE}=${new RegExp(`^${COOKIE}=([^;]+)`).exec(setCookie ?? '')![1]}`, setCookie: setCookie!, session: answer.body }
}

/** A request with only the session cookie (and `headers`). */
const withCookie = (cookie: string, path: string, init: RequestInit & { json?: unknown } = {}) =>
  s.api(path, { ...init, key: null, headers: { ...(init.headers as Record<string, string>), cookie } })

async function createKey(userId: string, role: string) {
  const r = await json(await s.api('/keys', { method: 'POST', json: { userId, role } }))
  expect(r.status).toBe(200)
  return r.body as { id: string; key: string }
}

describe('dashboard session', () => {
  test('sign-in with an API key sets an HttpOnly, Secure, SameSite=Strict __Host- cookie; GET /links with only the cookie works', async () => {
    const member = await createKey('alice', 'member')
    const { cookie, setCookie, session } = await signIn({ apiKey: member.key })
    expect(session).toMatchObject({ userId: 'usr_alice', role: 'member', method: 'apiKey', csrfToken: expect.any(String) })
    const attributes = setCookie.split(';').map((a) => a.trim())
    expect(attributes[0]).toMatch(new RegExp(`^${COOKIE}=[A-Za-z0-9_-]+$`))
    expect(attributes.slice(1).sort()).toEqual(['HttpOnly', 'Max-Age=604800', 'Path=/', 'SameSite=Strict', 'Secure'])
    expect((await withCookie(cookie, '/links')).status).toBe(200)
    expect(await json(await withCookie(cookie, '/session'))).toMatchObject({ status: 200, body: { userId: 'usr_alice', csrfToken: expect.any(String) } })
  })

  test('a write with the cookie needs the CSRF token and this origin (403 each); with both it works; a bearer write needs neither', async () => {
    const member = await createKey('bob', 'member')
    const { cookie, session } = await signIn({ apiKey: member.key })
    const tag = (name: string, headers: Record<string, string>) => withCookie(cookie, '/tags', { method: 'POST', json: { name }, headers })
    const noCsrf = await json(await tag('a', { origin }))
    expect(noCsrf).toMatchObject({ status: 403, body: { code: 'forbidden', message: expect.stringContaining('CSRF') } })
    const foreign = await json(await tag('a', { origin: 'https://evil.example', 'x-csrf-token': session.csrfToken }))
    expect(foreign).toMatchObject({ status: 403, body: { code: 'forbidden', message: expect.stringContaining('origin') } })
    const ok = await json(await tag('a', { origin, 'x-csrf-token': session.csrfToken }))
    expect(ok).toMatchObject({ status: 200, body: { name: 'a', userId: 'usr_bob' } })
    expect((await s.api('/tags', { method: 'POST', key: member.key, json: { name: 'b' } })).status).toBe(200)
  })

  test('sign-out: 200 {}, the cookie expired, and the cookie no longer works', async () => {
    const member = await createKey('carol', 'member')
    const { cookie, session } = await signIn({ apiKey: member.key })
    const out = await withCookie(cookie, '/session', { method: 'DELETE', headers: { origin, 'x-csrf-token': session.csrfToken } })
    expect(out.headers.get('set-cookie')).toMatch(new RegExp(`^${COOKIE}=;.*Max-Age=0`))
    expect(await json(out)).toEqual({ status: 200, body: {} })
    expect((await withCookie(cookie, '/links')).status).toBe(401)
  })

  test("revoking the session's key (DELETE /keys/{id}) makes the session answer 401 at once", async () => {
    const made = await createKey('dave', 'member')
    const { cookie } = await signIn({ apiKey: made.key })
    expect((await withCookie(cookie, '/links')).status).toBe(200)
    expect((await s.api(`/keys/${made.id}`, { method: 'DELETE' })).status).toBe(200)
    expect(await json(await withCookie(cookie, '/links'))).toMatchObject({ status: 401, body: { code: 'unauthorized' } })
  })

  test('a readonly key’s session can read but not write (403)', async () => {
    const readonly = await createKey('erin', 'readonly')
    const { cookie, session } = await signIn({ apiKey: readonly.key })
    expect((await withCookie(cookie, '/links')).status).toBe(200)
    const r = await json(await withCookie(cookie, '/tags', { method: 'POST', json: { name: 'x' }, headers: { origin, 'x-csrf-token': session.csrfToken } }))
    expect(r).toMatchObject({ status: 403, body: { code: 'forbidden', message: expect.stringContaining('read-only') } })
  })

  test('a password session for a user made by POST /users; disabling the user (PATCH /users) makes it 401', async () => {
    expect((await s.api('/users', { method: 'POST', json: { id: 'frank', password: PASSWORD, role: 'member' } })).status).toBe(200)
    const { cookie, session } = await signIn({ userId: 'frank', password: PASSWORD })
    expect(session).toMatchObject({ userId: 'usr_frank', role: 'member', method: 'password' })
    const made = await json(
      await withCookie(cookie, '/links/link', {
        method: 'POST',
        json: { data: { url: 'https://example.com/frank' } },
        headers: { origin, 'x-csrf-token': session.csrfToken },
      }),
    )
    expect(made).toMatchObject({ status: 200, body: { userId: 'usr_frank' } })
    expect((await s.api('/users/frank', { method: 'PATCH', json: { disabled: true } })).status).toBe(200)
    expect((await withCookie(cookie, '/links')).status).toBe(401)
  })

  test('`shortlink users passwd` (another process) ends the user’s password sessions within a second; the new password signs in', async () => {
    expect((await s.api('/users', { method: 'POST', json: { id: 'hugo', password: PASSWORD } })).status).toBe(200)
    const { cookie } = await signIn({ userId: 'hugo', password: PASSWORD })
    expect((await withCookie(cookie, '/links')).status).toBe(200)
    const p = Bun.spawn([...shortlinkCommand(), 'users', 'passwd', 'hugo', '--config', join(s.dir, 'shortlink.toml')], {
      cwd: s.dir,
      stdin: new Blob(['a brand new password\n']),
      stdout: 'pipe',
      stderr: 'pipe',
    })
    expect(await p.exited).toBe(0)
    const deadline = Date.now() + 1000
    let status = 200
    while (status !== 401 && Date.now() <= deadline) {
      status = (await withCookie(cookie, '/links')).status
      if (status !== 401) await Bun.sleep(20) // a poll interval: the server reads the store's auth epoch every 250 ms
    }
    expect(status).toBe(401)
    expect((await signIn({ userId: 'hugo', password: 'a brand new password' })).session.method).toBe('password')
  })

  // Last: it uses up this address's sign-in budget.
  test('a wrong password is 401; the 11th failure from one address is 429 with Retry-After', async () => {
    expect((await s.api('/users', { method: 'POST', json: { id: 'gina', password: PASSWORD } })).status).toBe(200)
    for (let i = 1; i <= 10; i++) {
      const r = await s.api('/session', { method: 'POST', key: null, json: { userId: 'gina', password: `wrong guess ${i}` } })
      expect([i, (await json(r)).status, r.headers.get('set-cookie')]).toEqual([i, 401, null])
    }
    const limited = await s.api('/session', { method: 'POST', key: null, json: { userId: 'gina', password: PASSWORD } })
    expect(limited.status).toBe(429)
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(0)
    expect((await json(limited)).body.code).toBe('rate_limit_exceeded')
  })
})
