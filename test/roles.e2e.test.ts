/**
 * Roles against the compiled binary: a key or a dashboard session acts with the lower of
 * its own role and its user's current role, for every pair, and a demotion reaches a
 * running server within a second, whether made through its API or by another process (the
 * CLI). On the PostgreSQL run (scripts/with-postgres.ts) a second node serves the same
 * store and must see every change within a second too.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { json, onPostgres, startServer, type TestServer } from './helpers/server'

type Role = 'admin' | 'member' | 'readonly'
const ROLES: Role[] = ['admin', 'member', 'readonly']
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

let a: TestServer
/** The nodes serving the store: one on SQLite, two on PostgreSQL. */
let nodes: TestServer[] = []

/** The test polls every key of 9 pairs on each node until a change shows: more than the default budget, which the nodes of a cluster share. */
const LIMITS = '[limits]\napiPerMinute = 100000\n'

beforeAll(async () => {
  a = await startServer({ toml: LIMITS })
  nodes = [a]
  if (onPostgres()) {
    // A second node on the same database, serving the first node's certificate.
    const tls = `[tls]\nmode = "files"\ncertFile = "${a.dir}/data/tls/cert.pem"\nkeyFile = "${a.dir}/data/tls/key.pem"\n`
    nodes.push(await startServer({ storeUrl: a.storeUrl, ca: a.ca, toml: LIMITS + tls }))
  }
}, 60_000)
afterAll(async () => {
  await Promise.all(nodes.map((n) => n.stop()))
}, 60_000)

/** Credentials as a client holds them: a bearer key, or the session cookie the dashboard gets for it on `node`. */
interface Credential {
  key?: string
  cookie?: string
}

async function signIn(node: TestServer, apiKey: string): Promise<Credential> {
  const r = await node.api('/session', { method: 'POST', key: null, json: { apiKey } })
  expect(r.status).toBe(200)
  return { cookie: /^[^;]+/.exec(r.headers.get('set-cookie')!)![0] }
}

/** GET /session's role for a cookie. */
async function sessionRole(node: TestServer, cookie: string): Promise<string> {
  return (await json(await node.api('/session', { key: null, headers: { cookie } }))).body.role
}

let tagCount = 0
/** What the credential can do on `node`, as its holder finds out: list users (admin), write (member), read (readonly). */
async function rightsOn(node: TestServer, cred: Credential): Promise<string> {
  const opts = cred.cookie ? { key: null, headers: { cookie: cred.cookie } } : { key: cred.key! }
  const read = await node.api('/tags', opts)
  if (read.status !== 200) return `read ${read.status}`
  if ((await node.api('/users', opts)).status === 200) return 'admin'
  const headers: Record<string, string> = { ...(cred.cookie ? { cookie: cred.cookie } : {}) }
  if (cred.cookie) {
    const session = await json(await node.api('/session', { key: null, headers }))
    Object.assign(headers, { origin: `https://localhost:${node.httpsPort}`, 'x-csrf-token': session.body.csrfToken })
  }
  const write = await node.api('/tags', { method: 'POST', key: cred.cookie ? null : cred.key, headers, json: { name: `t${++tagCount}` } })
  return write.status === 200 ? 'member' : write.status === 403 ? 'readonly' : `write ${write.status}`
}

/**
 * Asks what the credential can do on `node` until it is `wanted` or `ms` have passed (0: the first answer
 * must be it); answers what it was last and whether that came in time.
 */
async function rightsWithin(node: TestServer, cred: Credential, wanted: string, ms: number) {
  const start = performance.now()
  for (let first = true; ; first = false) {
    const now = await rightsOn(node, cred)
    const elapsed = performance.now() - start
    if (now === wanted) return { rights: now, withinDeadline: first || elapsed <= ms }
    if (elapsed > ms) return { rights: now, withinDeadline: false }
  }
}

async function setRole(userId: string, role: Role) {
  expect((await json(await a.api(`/users/${userId}`, { method: 'PATCH', json: { role } }))).body).toMatchObject({ role })
}

describe('a key or session acts with the lower of its role and its user role', () => {
  test('every pair (key role × user role), by key and by session, on every node, as the user goes down and back up', async () => {
    const holders: { keyRole: Role; userId: string; key: string; cookies: string[] }[] = []
    for (const keyRole of ROLES) {
      const userId = `usr_pair_${keyRole}`
      expect((await a.api('/users', { method: 'POST', json: { id: userId, role: 'admin' } })).status).toBe(200)
      const made = await json(await a.api('/keys', { method: 'POST', json: { userId, role: keyRole } }))
      expect(made.body).toMatchObject({ role: keyRole })
      const cookies: string[] = []
      for (const node of nodes) cookies.push((await signIn(node, made.body.key)).cookie!)
      holders.push({ keyRole, userId, key: made.body.key, cookies })
    }
    const seen: Record<string, string> = {}
    const expected: Record<string, string> = {}
    for (const userRole of ['admin', 'member', 'readonly', 'member', 'admin'] as Role[]) {
      for (const h of holders) await setRole(h.userId, userRole)
      for (const h of holders)
        for (const [i, node] of nodes.entries()) {
          const want = ACTS_AS[`${h.keyRole}/${userRole}`]
          // This node took the change: at once. Another node: within a second.
          const ms = node === a ? 0 : 1000
          const byKey = await rightsWithin(node, { key: h.key }, want, ms)
          const bySession = await rightsWithin(node, { cookie: h.cookies[i] }, want, ms)
          const listed = (await json(await node.api(`/keys?userIds=${h.userId}`, { key: a.adminKey }))).body[0]
          const label = `node ${i} ${h.keyRole} key, user ${userRole}`
          seen[label] =
            `key ${byKey.rights} ${byKey.withinDeadline}, session ${bySession.rights} ${bySession.withinDeadline} (says ${await sessionRole(node, h.cookies[i]!)}), listed ${listed.role} of ${listed.grantedRole}`
          expected[label] = `key ${want} true, session ${want} true (says ${want}), listed ${want} of ${h.keyRole}`
        }
    }
    expect(seen).toEqual(expected)
  })

  test('POST /keys never mints above the caller (403) nor above the user (422), on the binary', async () => {
    expect((await a.api('/users', { method: 'POST', json: { id: 'minter', role: 'admin' } })).status).toBe(200)
    const adminKey = (await json(await a.api('/keys', { method: 'POST', json: { userId: 'minter', role: 'admin' } }))).body.key
    await setRole('usr_minter', 'member')
    const tries = async (key: string) => {
      const out: Record<string, string> = {}
      for (const role of ROLES) {
        const r = await json(await a.api('/keys', { method: 'POST', key, json: { userId: 'minter', role } }))
        out[role] = r.status === 200 ? `made ${r.body.role}` : `${r.status} ${r.body.code}`
      }
      return out
    }
    // The demoted admin key acts as a member: it mints member and readonly keys for itself, no admin key.
    expect(await tries(adminKey)).toEqual({ admin: '403 forbidden', member: 'made member', readonly: 'made readonly' })
    // An admin may not mint above the target user's role either.
    expect(await tries(a.adminKey)).toEqual({ admin: '422 parameter_error', member: 'made member', readonly: 'made readonly' })
    await setRole('usr_minter', 'readonly')
    expect(await tries(adminKey)).toEqual({ admin: '403 forbidden', member: '403 forbidden', readonly: '403 forbidden' })
  })

  test('a demotion by another process (the CLI) reaches the running servers within a second, keys and sessions alike', async () => {
    expect((await a.run(['users', 'add', 'ops', '--role', 'admin'])).code).toBe(0)
    const key = (await a.run(['keys', 'create', '--user', 'ops', '--role', 'admin'])).stdout.trim()
    const sessions = await Promise.all(nodes.map((n) => signIn(n, key)))
    for (const [i, node] of nodes.entries()) {
      expect(await rightsOn(node, { key })).toBe('admin')
      expect(await rightsOn(node, sessions[i]!)).toBe('admin')
    }
    // A key above its user's role is refused by the CLI with a line saying what to do.
    expect((await a.run(['users', 'add', 'ops2'])).code).toBe(0)
    expect(await a.run(['keys', 'create', '--user', 'ops2', '--role', 'admin'])).toMatchObject({
      code: 1,
      stderr: expect.stringContaining("'role' admin is above the role of usr_ops2 (member)"),
    })

    for (const role of ['member', 'readonly'] as Role[]) {
      const changed = await a.run(['users', 'add', 'ops', '--role', role])
      expect(changed).toMatchObject({ code: 0, stderr: expect.stringContaining(`its role is ${role}`) })
      for (const [i, node] of nodes.entries()) {
        expect(await rightsWithin(node, { key }, role, 1000)).toEqual({ rights: role, withinDeadline: true })
        expect(await rightsWithin(node, sessions[i]!, role, 1000)).toEqual({ rights: role, withinDeadline: true })
        expect(await sessionRole(node, sessions[i]!.cookie!)).toBe(role)
      }
    }
  })
})
