/**
 * A failed promise nothing handles (a bug; the test-only SHORTLINK_TEST_UNHANDLED_REJECTION leaves one right after
 * the start): Bun ends a process on one by default. The server logs it with its stack, counts it in
 * shortlink_unhandled_rejections_total, and goes on redirecting and counting; a SIGTERM still stops it cleanly.
 */
import { afterAll, expect, test } from 'bun:test'
import { rmSync } from 'node:fs'
import { UA } from './helpers/agents'
import { until } from './helpers/poll'
import { freePort, logLines, startServer, type TestServer } from './helpers/server'

let server: TestServer | undefined
afterAll(async () => {
  await server?.stop()
  if (server) rmSync(server.dir, { recursive: true, force: true })
})

test('an unhandled rejection is logged with its stack and counted; the server goes on redirecting and stops cleanly', async () => {
  const metricsPort = await freePort()
  const s = await startServer({
    env: { SHORTLINK_TEST_UNHANDLED_REJECTION: 'test: a promise nobody awaited failed' },
    toml: `\n[metrics]\nlisten = "127.0.0.1:${metricsPort}"\n`,
  })
  server = s
  const said = await until('the log line of the rejection', async () => logLines(s).find((l) => l.msg.startsWith('unhandled rejection')))
  expect(said.level).toBe('error')
  expect(said.error).toContain('test: a promise nobody awaited failed')
  expect(said.error).toContain('main.ts') // the stack says where the promise failed
  const made = await s.api('/links/link', { method: 'POST', json: { data: { url: 'https://dest.example/' }, linkOptions: { key: 'still-up' } } })
  expect(made.status).toBe(200)
  const { id } = (await made.json()) as { id: string }
  const visit = await s.fetch(`https://localhost:${s.httpsPort}/still-up`, { headers: { 'user-agent': UA.mac } })
  expect([visit.status, visit.headers.get('location')]).toEqual([302, 'https://dest.example/'])
  await s.clicksFlushed()
  expect(((await (await s.api(`/links/${id}`)).json()) as { clicks: number }).clicks).toBe(1)
  const scraped = await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text()
  expect(scraped).toContain('\nshortlink_unhandled_rejections_total 1\n')
  expect(await s.stop()).toBe(0)
  server = undefined
  rmSync(s.dir, { recursive: true, force: true })
})
