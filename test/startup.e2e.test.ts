/**
 * A restart answers before its GeoIP database is loaded (a city database takes 100-300
 * ms to read): the visits that come first must still get their exact location, in the
 * statistics and in location targeting. The restart reads its database from a named pipe
 * that the test fills only after those visits are answered, so they surely come first.
 */
import { afterAll, expect, test } from 'bun:test'
import { readFileSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { CITY_DB, UA } from './helpers/agents'
import { startServer, type TestServer } from './helpers/server'

const toml = (database: string) => `trustProxy = ["127.0.0.1", "::1"]\n[geoip]\ndatabase = "${database}"\n`
const servers: TestServer[] = []
afterAll(async () => {
  for (const s of servers) await s.stop()
  if (servers[0]) rmSync(servers[0].dir, { recursive: true, force: true })
})
const start = async (dir?: string, database = CITY_DB) => {
  const s = await startServer({ toml: toml(database), dir })
  servers.push(s)
  return s
}

test('the first visits after a restart keep their exact location', async () => {
  const first = await start()
  const adminKey = first.adminKey
  const make = async (data: unknown, linkOptions: Record<string, unknown>) => {
    const r = await first.api('/links/link', { method: 'POST', json: { data, linkOptions } })
    expect(r.status).toBe(200)
  }
  await make({ url: 'https://plain.example/' }, { key: 'early' })
  await make(
    { url: 'https://world.example/' },
    { key: 'early-geo', Targeting: { targetType: 'location', targetDatas: [{ country: 'GB', url: 'https://gb.example/' }] } },
  )
  expect(await first.stop()).toBe(0)

  // The restart; its first requests while its GeoIP database is still being read.
  const pipe = join(first.dir, 'geo.mmdb')
  expect(Bun.spawnSync(['mkfifo', pipe]).exitCode).toBe(0)
  const restarted = await start(first.dir, pipe)
  const visit = (path: string) =>
    restarted.fetch(`https://localhost:${restarted.httpsPort}${path}`, { headers: { 'user-agent': UA.mac, 'x-forwarded-for': '81.2.69.142' } })
  const targeted = visit('/early-geo') // waits for the location it is targeted by
  const plain = await visit('/early') // answered at once
  expect(plain.headers.get('location')).toBe('https://plain.example/')
  writeFileSync(pipe, readFileSync(CITY_DB)) // now the database arrives
  expect((await targeted).headers.get('location')).toBe('https://gb.example/')
  expect(await restarted.stop()).toBe(0) // SIGTERM writes the held visits

  const after = await start(first.dir)
  const stats = async (groupBy: string) => (await (await after.api(`/statistics?groupBy=${groupBy}&interval=24h`, { key: adminKey })).json()) as unknown
  expect(await stats('country')).toEqual([{ country: 'GB', clicks: 2, scans: 0 }])
  expect(await stats('city')).toEqual([{ city: 'London', clicks: 2, scans: 0 }])
})
