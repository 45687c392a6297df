/**
 * A bigger statistics store from a seeded one, without replaying the recorder: every event of
 * the store `--from` (a data dir made by scripts/bench/stats.ts) is copied `--factor` times into
 * `--to` inside DuckDB (each copy k milliseconds earlier, so the time profile and the dimension
 * mixes stay those of the seed), the links' counters are multiplied alike, and the rollups are
 * derived again from scratch by the engine's own compaction (busy links promoted, tables
 * reordered by scope). Prints how long each step took. Usage:
 *   bun scripts/bench/stats-multiply.ts --from /var/tmp/bench-new-10m --to /var/tmp/bench-100m [--factor 10]
 */
import { cpSync, existsSync } from 'node:fs'
import { join } from 'node:path'
import { eventsPathOf } from '../../src/stats/click-recorder'
import { loadDuckDb } from '../../src/stats/events.duckdb'
import { openEventsEngine } from '../../src/stats/events.engine'
import { openStore } from '../../src/store'
import { arg } from './args'

const from = arg('from', '/var/tmp/bench-new-10m')
const to = arg('to', '/var/tmp/bench-100m')
const factor = Number(arg('factor', '10'))
if (existsSync(to)) throw new Error(`${to} exists`)
const t0 = performance.now()
const step = (what: string, since: number) => console.log(`${what}: ${((performance.now() - since) / 1000).toFixed(1)} s`)
cpSync(from, to, { recursive: true })
step('copied', t0)

const dbPath = join(to, 'shortlink.db')
const api = await loadDuckDb(to)
let t = performance.now()
{
  const instance = await api.DuckDBInstance.create(eventsPathOf(dbPath), { threads: '2', memory_limit: '1GB', temp_directory: join(to, 'tmp') })
  const c = await instance.connect()
  await c.run(`INSERT INTO events SELECT "at" - k, link_seq, owner, ltype, scan, n, 0, continent, country, region, city, os, browser, device, referer, referer_url,
    utm_source, utm_medium, utm_campaign, utm_term, utm_content FROM events, range(1, ${factor}) r(k)`)
  // Rollups derived again by the engine below: from nothing.
  for (const table of ['stats_quarter', 'stats_hour', 'stats_day', 'stats_week', 'stats_busy_links']) await c.run(`DELETE FROM ${table}`)
  await c.run("UPDATE events_meta SET value = 0 WHERE key IN ('rolled_hour', 'rolled_day', 'rolled_week', 'reclustered_day')")
  await c.run('CHECKPOINT')
  const n = (await c.runAndReadAll('SELECT count(*)::DOUBLE AS n, sum(n)::DOUBLE AS clicks FROM events')).getRowObjectsJS()[0]
  console.log(`events: ${JSON.stringify(n)}`)
  c.closeSync()
  instance.closeSync()
}
step(`events copied ×${factor}`, t)
t = performance.now()
const db = openStore(dbPath)
db.run(`UPDATE links SET clicks = clicks * ${factor}`)
const engine = await openEventsEngine(db, {
  path: eventsPathOf(dbPath),
  dataDir: to,
  threads: 2,
  memoryLimit: '1GB',
  log: (m, f) => console.log(m, JSON.stringify(f)),
})
await engine.compact()
step('rolled up from scratch (and reordered)', t)
await engine.close()
db.close()
step('total', t0)
