/**
 * In-process API harness: the real app and migrations on an in-memory store, driven
 * through `handle(Request)`; no sockets. For API tests beside each module.
 */

import { createApiApp } from '../../src/app'
import { buildConfig } from '../../src/config/config.load'
import { createDeps, type SqliteDeps } from '../../src/deps'
import { createLogger } from '../../src/shared/log'

export interface ApiHarness {
  deps: SqliteDeps
  keys: { admin: string; member: string; other: string; readonly: string }
  call(
    method: string,
    path: string,
    /** `stream`: a streamed answer (GET /events): its status and headers, and the first chunk as `body`; the rest is cancelled. */
    opts?: { key?: string | null; json?: unknown; body?: BodyInit; headers?: Record<string, string>; ip?: string; stream?: boolean },
  ): Promise<{ status: number; body: any; headers: Headers }>
  /** The response itself (binary bodies), as the admin key. */
  fetch(path: string, key?: string): Promise<Response>
}

export function createHarness(toml: Record<string, unknown> = {}, opts: { busyLinkClicks?: number } = {}): ApiHarness {
  const config = buildConfig(toml, {})
  const deps = createDeps(config, ':memory:', createLogger(true), { now: steppingClock(), ...opts })
  const app = createApiApp(deps)
  for (const u of ['alice', 'bob', 'carol']) deps.auth.addUser(u)
  const keys = {
    admin: deps.auth.createKey('usr_admin', 'admin').key,
    member: deps.auth.createKey('alice', 'member').key,
    other: deps.auth.createKey('bob', 'member').key,
    readonly: deps.auth.createKey('carol', 'readonly').key,
  }
  return {
    deps,
    keys,
    async call(method, path, opts = {}) {
      const headers = new Headers(opts.headers)
      const key = opts.key === undefined ? keys.admin : opts.key
      if (key) headers.set('authorization', `Bearer ${key}`)
      let body = opts.body
      if (opts.json !== undefined) {
        body = JSON.stringify(opts.json)
        if (!headers.has('content-type')) headers.set('content-type', 'application/json')
      }
      const res = await app.handle(new Request(`https://localhost${deps.settings.apiPrefix}${path}`, { method, headers, body }), opts.ip ?? '127.0.0.1')
      if (opts.stream && res.ok && res.body) {
        const reader = res.body.getReader()
        const first = await reader.read()
        await reader.cancel()
        return { status: res.status, body: new TextDecoder().decode(first.value), headers: res.headers }
      }
      const text = await res.text()
      let parsed: unknown = text
      try {
        parsed = JSON.parse(text)
      } catch {}
      return { status: res.status, body: parsed, headers: res.headers }
    },
    fetch: (path, key = keys.admin) =>
      app.handle(new Request(`https://localhost${deps.settings.apiPrefix}${path}`, { headers: { authorization: `Bearer ${key}` } }), '127.0.0.1'),
  }
}

/**
 * A clock near real time that moves forward on every reading: records made one after the
 * other get distinct timestamps (list orders are then exact) without sleeping.
 */
export function steppingClock(): () => number {
  let last = 0
  return () => (last = Math.max(Date.now(), last + 1))
}
