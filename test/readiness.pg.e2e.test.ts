/**
 * Readiness follows the store: a node on PostgreSQL turns not-ready when PostgreSQL goes down
 * (liveness stays ok: the process serves, a restart would not help) and ready again by itself
 * when it comes back. Its own PostgreSQL, stopped and started by the test.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { until } from './helpers/poll'
import { startPostgres, type TestPostgres } from './helpers/postgres'
import { freePort, json, startServer, type TestServer } from './helpers/server'

let pg: TestPostgres
let server: TestServer
let metricsPort: number

beforeAll(async () => {
  pg = await startPostgres()
  metricsPort = await freePort()
  server = await startServer({ storeUrl: await pg.createDatabase('readiness'), toml: `\n[metrics]\nlisten = "127.0.0.1:${metricsPort}"\n` })
})

afterAll(async () => {
  await server?.stop()
  await pg?.destroy()
})

const storeUp = async () => Number(/^shortlink_store_up (\S+)$/m.exec(await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text())?.[1])

test('PostgreSQL down: not ready (store failing), still alive; back up: ready again without a restart', async () => {
  expect(await json(await server.api('/readyz', { key: null }))).toEqual({
    status: 200,
    body: { status: 'ok', checks: { store: 'ok', listeners: 'ok', clickWriter: 'ok' } },
  })
  await pg.stop()
  const down = await until(
    'readyz to fail',
    async () => json(await server.api('/readyz', { key: null })),
    (r) => r.status === 503,
  )
  expect(down.body).toEqual({ status: 'unavailable', checks: { store: 'failing', listeners: 'ok', clickWriter: 'ok' } })
  expect(await json(await server.api('/healthz', { key: null }))).toEqual({ status: 200, body: { status: 'ok' } })
  expect(await storeUp()).toBe(0)
  await pg.start()
  const up = await until(
    'readyz to recover',
    async () => json(await server.api('/readyz', { key: null })),
    (r) => r.status === 200,
  )
  expect(up.body).toEqual({ status: 'ok', checks: { store: 'ok', listeners: 'ok', clickWriter: 'ok' } })
  expect(await storeUp()).toBe(1)
  expect(server.proc.exitCode).toBeNull()
})
