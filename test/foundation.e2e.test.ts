/**
 * The foundation as a user meets it: the real server (the compiled binary in CI) on
 * real sockets with real TLS.
 */

import { Database } from 'bun:sqlite'
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { existsSync, mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { onPostgres, queryStore, runCli, startServer, type TestServer } from './helpers/server'

let s: TestServer
beforeAll(async () => {
  s = await startServer({ toml: '[limits]\napiPerMinute = 60\n' })
})
afterAll(async () => {
  await s?.stop()
})

describe('foundation over HTTPS', () => {
  test('the first admin key printed at start lists tags: []', async () => {
    expect(s.adminKey).toMatch(/^sk_/)
    const r = await s.api('/tags')
    expect(r.status).toBe(200)
    expect(await r.json()).toEqual([])
  })

  test('TLS verifies against the CA the server made in its data dir', async () => {
    expect(s.ca).toContain('BEGIN CERTIFICATE')
    await expect(fetch(`${s.baseUrl}/tags`)).rejects.toThrow()
  })

  test('without a key: 401 with the error body', async () => {
    const r = await s.api('/tags', { key: null })
    expect(r.status).toBe(401)
    expect(await r.json()).toMatchObject({ code: 'unauthorized', message: expect.any(String) })
  })

  test('plain HTTP answers 301 to https and never the API', async () => {
    const r = await fetch(`http://127.0.0.1:${s.httpPort}/api/tags?x=1`, { redirect: 'manual', headers: { host: `localhost:${s.httpPort}` } })
    expect(r.status).toBe(301)
    expect(r.headers.get('location')).toBe(`https://localhost:${s.httpsPort}/api/tags?x=1`)
    const challenge = await fetch(`http://127.0.0.1:${s.httpPort}/.well-known/acme-challenge/unknowntoken`)
    expect(challenge.status).toBe(404)
  })

  test('a plain-HTTP request to the TLS port gets no API answer', async () => {
    const r = await fetch(`http://127.0.0.1:${s.httpsPort}/api/tags`)
      .then((x) => x.status)
      .catch(() => 'refused')
    expect(r).not.toBe(200)
  })

  test('keys created with the CLI while serving: readonly cannot write, member can', async () => {
    const user = await s.run(['users', 'add', 'alice'])
    expect(user.code).toBe(0)
    expect(user.stdout.trim()).toBe('usr_alice')
    const ro = await s.run(['keys', 'create', '--user', 'alice', '--role', 'readonly'])
    expect(ro.code).toBe(0)
    const roKey = ro.stdout.trim()
    expect(roKey).toMatch(/^sk_/)
    const denied = await s.api('/tags', { key: roKey, method: 'POST', json: { name: 'x' } })
    expect(denied.status).toBe(403)
    expect((await denied.json()).code).toBe('forbidden')
    expect((await s.api('/tags', { key: roKey })).status).toBe(200)
    const member = (await s.run(['keys', 'create', '--user', 'alice', '--role', 'member'])).stdout.trim()
    expect((await s.api('/tags', { key: member, method: 'POST', json: { name: 'x' } })).status).toBe(200)
    const bad = await s.run(['keys', 'create', '--user', 'nobody', '--role', 'member'])
    expect(bad.code).not.toBe(0)
    expect(bad.stderr).toContain('not found')
    const badRole = await s.run(['keys', 'create', '--user', 'alice', '--role', 'root'])
    expect(badRole.code).not.toBe(0)
  })

  test('the key is stored only as a hash', async () => {
    const rows = await queryStore<{ key_hash: string }>(s, 'SELECT key_hash FROM api_keys')
    expect(rows.length).toBeGreaterThan(0)
    expect(rows.some((r) => r.key_hash.includes(s.adminKey))).toBe(false)
  })

  test('61 requests in a minute with apiPerMinute = 60 give exactly one 429 with Retry-After', async () => {
    const key = (await s.run(['keys', 'create', '--user', 'alice', '--role', 'member'])).stdout.trim()
    const results = await Promise.all(Array.from({ length: 61 }, () => s.api('/tags', { key })))
    const limited = results.filter((r) => r.status === 429)
    expect(limited).toHaveLength(1)
    expect(Number(limited[0]!.headers.get('retry-after'))).toBeGreaterThan(0)
    expect((await limited[0]!.json()).code).toBe('rate_limit_exceeded')
    expect(results.filter((r) => r.status === 200)).toHaveLength(60)
    expect(results[0]!.headers.get('ratelimit-limit')).toBe('60')
  })

  test('OpenAPI and docs page are served from the binary', async () => {
    const doc = await (await s.api('/openapi.json', { key: null })).json()
    expect(doc.openapi).toBe('3.1.0')
    expect(doc.paths['/tags']).toBeDefined()
    const page = await (await s.api('/docs', { key: null })).text()
    expect(page).toContain('swagger-ui')
    const css = await s.api('/docs/swagger-ui.css', { key: null })
    expect(css.status).toBe(200)
  })

  test('a second server on the same data dir is refused', async () => {
    const second = await runCli(['serve', '--config', join(s.dir, 'shortlink.toml')], { cwd: s.dir })
    expect(second.code).not.toBe(0)
    expect(second.stderr).toContain('another shortlink server')
  })

  test('backup makes a consistent copy of the live database (SQLite); on PostgreSQL it points to pg_dump and writes nothing', async () => {
    await s.api('/tags', { method: 'POST', json: { name: 'before-backup' } })
    const target = join(s.dir, 'backup.tar.zst')
    const r = await s.run(['backup', target])
    if (onPostgres()) {
      expect([r.code, r.stderr]).toEqual([1, expect.stringContaining('pg_dump')])
      expect(existsSync(target)).toBe(false)
      return
    }
    expect(r.code).toBe(0)
    // The backup is an archive (docs/operations.md): restored into a new data dir, its store holds the tag.
    const restored = join(s.dir, 'restored')
    expect((await s.run(['restore', target, '--data-dir', restored])).code).toBe(0)
    const copy = new Database(join(restored, 'shortlink.db'), { readonly: true })
    const names = copy
      .query<{ name: string }, []>('SELECT name FROM tags')
      .all()
      .map((x) => x.name)
    copy.close()
    expect(names).toContain('before-backup')
    expect((await s.run(['backup', target])).code).not.toBe(0)
  })
})

describe('lifecycle', () => {
  test('SIGTERM exits 0, data survives a restart, and kill -9 leaves a lock that is taken over', async () => {
    const a = await startServer()
    await a.api('/tags', { method: 'POST', json: { name: 'kept' } })
    expect(await a.stop('SIGTERM')).toBe(0)
    expect(existsSync(`${a.dir}/data/shortlink.pid`)).toBe(false)
    const b = await startServer({ dir: a.dir })
    expect(b.adminKey).toBe('') // not printed again: keys already exist
    const names = (await (await b.api('/tags', { key: a.adminKey })).json()).map((t: any) => t.name)
    expect(names).toEqual(['kept'])
    await b.api('/tags', { key: a.adminKey, method: 'POST', json: { name: 'after-kill' } })
    b.proc.kill('SIGKILL')
    await b.proc.exited
    expect(existsSync(`${a.dir}/data/shortlink.pid`)).toBe(true)
    const c = await startServer({ dir: a.dir })
    const after = (await (await c.api('/tags', { key: a.adminKey })).json()).map((t: any) => t.name)
    expect(after.sort()).toEqual(['after-kill', 'kept'])
    expect(await c.stop()).toBe(0)
  })

  test('a garbage config value stops check and serve with a message naming the key', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'shortlink-badcfg-'))
    writeFileSync(join(dir, 'shortlink.toml'), '[server]\nhttpsPort = "lots"\n[limits]\napiPerMinute = -5\n')
    for (const cmd of ['check', 'serve']) {
      const r = await runCli([cmd], { cwd: dir })
      expect(r.code).not.toBe(0)
      expect(r.stderr).toContain('server.httpsPort')
      expect(r.stderr).toContain('limits.apiPerMinute')
    }
    const env = await runCli(['check'], { cwd: dir, env: { SHORTLINK_CONFIG: join(dir, 'nope.toml') } })
    expect(env.code).not.toBe(0)
    writeFileSync(join(dir, 'shortlink.toml'), '[server]\nhttpsPort = 9443\n')
    const ok = await runCli(['check'], { cwd: dir })
    expect(ok.code).toBe(0)
    expect(ok.stdout).toContain('configuration OK')
    expect(ok.stdout).toMatch(/statistics: (events engine DuckDB \d+\.\d+\.\d+|click events and rollups in PostgreSQL)/)
    const envBad = await runCli(['check'], { cwd: dir, env: { SHORTLINK_SERVER_HTTPPORT: 'abc' } })
    expect(envBad.code).not.toBe(0)
    expect(envBad.stderr).toContain('server.httpPort')
  })

  test('with no config file, serve starts on the embedded default (8443/8080, localhost)', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'shortlink-default-'))
    const busy = await fetch('https://localhost:8443/', { tls: { rejectUnauthorized: false } } as RequestInit)
      .then(() => true)
      .catch(() => false)
    expect(busy).toBe(false) // the embedded default needs 8443 free on this machine
    const { shortlinkCommand } = await import('./helpers/server')
    const proc = Bun.spawn([...shortlinkCommand(), 'serve'], { cwd: dir, stdout: 'pipe', stderr: 'pipe' })
    let out = ''
    const reader = (proc.stdout as ReadableStream<Uint8Array>).getReader()
    const deadline = Date.now() + 15_000
    while (!/sk_[A-Za-z0-9_-]+/.test(out) && Date.now() < deadline) {
      const { value, done } = await reader.read()
      if (done) break
      out += new TextDecoder().decode(value)
    }
    const key = /(sk_[A-Za-z0-9_-]+)/.exec(out)![1]
    const ca = await Bun.file(join(dir, 'data/tls/ca.pem')).text()
    let r: Response | null = null
    for (let i = 0; i < 100 && !r; i++) {
      r = await fetch('https://localhost:8443/api/tags', { headers: { authorization: `Bearer ${key}` }, tls: { ca } } as RequestInit).catch(() => null)
      if (!r) await Bun.sleep(50)
    }
    expect(r!.status).toBe(200)
    expect(await r!.json()).toEqual([])
    const http = await fetch('http://localhost:8080/api/tags', { redirect: 'manual' })
    expect(http.status).toBe(301)
    proc.kill('SIGTERM')
    expect(await proc.exited).toBe(0)
  })
})
