/**
 * Keys and users against the real server: keys made through the API, revoked through the
 * API and through the CLI (another process on the same store), passwords set from stdin.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { join } from 'node:path'
import { json, shortlinkCommand, startServer, type TestServer } from './helpers/server'

let s: TestServer
beforeAll(async () => {
  s = await startServer()
})
afterAll(async () => {
  await s?.stop()
})

async function createKey(userId: string, role: string, name?: string) {
  const r = await json(await s.api('/keys', { method: 'POST', json: { userId, role, name } }))
  expect(r.status).toBe(200)
  return r.body as { id: string; key: string }
}

/** Statuses of GET /tags with `key` until it answers 401 or the deadline passes; the last one is returned. */
async function statusUntil401(key: string, deadline: number): Promise<number> {
  for (;;) {
    const status = (await s.api('/tags', { key })).status
    if (status === 401 || Date.now() > deadline) return status
    await Bun.sleep(20)
  }
}

/** The CLI with `input` on its stdin (not a terminal). */
async function cli(args: string[], input = '') {
  const p = Bun.spawn([...shortlinkCommand(), ...args, '--config', join(s.dir, 'shortlink.toml')], {
    cwd: s.dir,
    stdin: new Blob([input]),
    stdout: 'pipe',
    stderr: 'pipe',
  })
  const [stdout, stderr] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text()])
  return { code: await p.exited, stdout, stderr }
}

describe('keys', () => {
  test('a key made through the API works, and answers 401 right after DELETE /keys', async () => {
    const made = await createKey('alice', 'member', 'laptop')
    expect((await s.api('/tags', { key: made.key })).status).toBe(200)
    const listed = await json(await s.api('/keys?userIds=alice'))
    expect(listed.body.find((k: any) => k.id === made.id)).toMatchObject({ name: 'laptop', lastUsedAt: expect.stringMatching(/Z$/), revokedAt: null })
    expect(JSON.stringify(listed.body)).not.toContain(made.key)
    expect((await s.api(`/keys/${made.id}`, { method: 'DELETE', key: made.key })).status).toBe(200)
    expect(await json(await s.api('/tags', { key: made.key }))).toMatchObject({ status: 401, body: { code: 'unauthorized' } })
  })

  test('shortlink keys revoke (another process) makes the key answer 401 within a second; keys list shows it revoked', async () => {
    const made = await createKey('bob', 'member')
    expect((await s.api('/tags', { key: made.key })).status).toBe(200)
    const revoked = await cli(['keys', 'revoke', made.id])
    expect(revoked).toMatchObject({ code: 0, stdout: `revoked ${made.id}\n` })
    expect(await statusUntil401(made.key, Date.now() + 1000)).toBe(401)
    const list = await cli(['keys', 'list'])
    expect(list.code).toBe(0)
    const line = list.stdout.split('\n').find((l) => l.startsWith(made.id))
    expect(line).toContain('usr_bob')
    expect(line).toMatch(/revoked \d{4}-/)
    expect(list.stdout).not.toContain(made.key)
    // Revoking again, or an unknown key, fails with a message and a non-zero exit.
    expect(await cli(['keys', 'revoke', made.id])).toMatchObject({ code: 1, stderr: expect.stringContaining('already revoked') })
    expect(await cli(['keys', 'revoke', 'key_nope'])).toMatchObject({ code: 1, stderr: expect.stringContaining('not found') })
  })

  test('a user disabled through the API: its key answers 401 at once, and again 200 when enabled', async () => {
    const made = await createKey('carol', 'readonly')
    expect((await s.api('/tags', { key: made.key })).status).toBe(200)
    expect((await s.api('/users/carol', { method: 'PATCH', json: { disabled: true } })).status).toBe(200)
    expect((await s.api('/tags', { key: made.key })).status).toBe(401)
    expect((await s.api('/users/carol', { method: 'PATCH', json: { disabled: false } })).status).toBe(200)
    expect((await s.api('/tags', { key: made.key })).status).toBe(200)
  })
})

describe('users', () => {
  test('shortlink users passwd ID reads the password from stdin and sets hasPassword', async () => {
    expect((await json(await s.api('/users', { method: 'POST', json: { id: 'dave' } }))).body.hasPassword).toBe(false)
    const r = await cli(['users', 'passwd', 'dave'], 'a long enough password\n')
    expect(r).toMatchObject({ code: 0, stderr: expect.stringContaining('password set for usr_dave') })
    expect((await json(await s.api('/users/usr_dave'))).body).toMatchObject({ id: 'usr_dave', hasPassword: true })
    const short = await cli(['users', 'passwd', 'dave'], 'short\n')
    expect(short).toMatchObject({ code: 1, stderr: expect.stringContaining('8-256') })
    expect(await cli(['users', 'passwd', 'nobody'], 'a long enough password\n')).toMatchObject({ code: 1, stderr: expect.stringContaining('not found') })
  })
})
