/**
 * A node on PostgreSQL whose connections PostgreSQL ends while visits come in (a restart, a
 * failover, an idle-session reaper): the process serves on, and every answered visit is stored.
 * Bun ends the process on an unhandled rejection, so an error escaping the driver's pool on a
 * connection ended mid-query (seen once in a unit test's pool) would end the server. Its own
 * PostgreSQL.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { SQL } from 'bun'
import { until } from './helpers/poll'
import { startPostgres, type TestPostgres } from './helpers/postgres'
import { startServer, type TestServer } from './helpers/server'

const BROWSER_UA = 'Mozilla/5.0 (X11; Linux x86_64; rv:125.0) Gecko/20100101 Firefox/125.0'

let pg: TestPostgres
let server: TestServer
let storeUrl: string

beforeAll(async () => {
  pg = await startPostgres()
  storeUrl = await pg.createDatabase('connections_ended')
  server = await startServer({ storeUrl })
})

afterAll(async () => {
  await server?.stop()
  await pg?.destroy()
})

test("PostgreSQL ends the node's connections again and again while visits come in: the server lives on and stores every visit", async () => {
  const made = await server.api('/links/link', { method: 'POST', json: { data: { url: 'https://dest.example/' }, linkOptions: { key: 'ended' } } })
  expect(made.status).toBe(200)
  const link = (await made.json()) as { id: string; shortLink: string }
  const admin = new SQL(storeUrl, { max: 1 })
  let answered = 0
  let visiting = true
  // Visits keep coming, each with a referer of its own (a row each), so writes are in flight when connections end.
  const visits = (async () => {
    for (let i = 0; visiting; i += 20)
      await Promise.all(
        Array.from({ length: 20 }, async (_, j) => {
          const r = await server.fetch(link.shortLink, { headers: { 'user-agent': BROWSER_UA, referer: `https://ref.example/${i + j}` }, redirect: 'manual' })
          expect(r.status).toBe(302)
          answered++
        }),
      )
  })()
  const stored = async () => ((await (await server.api(`/links/${link.id}`)).json()) as { clicks: number }).clicks
  // Over several flush windows: each round waits for a write of clicks to land, then ends every connection of the
  // node (writes, lookups and polls in flight among them), and again after 100 more visits.
  let ended = 0
  const endAll = async () => {
    const [{ n }] = await admin`SELECT count(pg_terminate_backend(pid))::int AS n FROM pg_stat_activity
      WHERE datname = current_database() AND pid <> pg_backend_pid() AND backend_type = 'client backend'`
    ended += n
  }
  let seen = 0
  for (let round = 0; round < 6; round++) {
    seen = await until('a write of clicks', stored, (n) => n > seen)
    await endAll()
    const before = answered
    await until(
      '100 more visits answered',
      async () => answered,
      (n) => n >= before + 100,
    )
    await endAll()
  }
  visiting = false
  await visits
  expect(ended).toBeGreaterThan(0)
  expect(server.proc.exitCode).toBeNull()
  await until(
    'every answered visit stored',
    async () => ((await (await server.api(`/links/${link.id}`)).json()) as { clicks: number }).clicks,
    (clicks) => clicks === answered,
  )
  expect(server.proc.exitCode).toBeNull()
  await admin.close()
})
