/**
 * Click ingest on PostgreSQL (src/stats/click-writer.pg.ts, createPgClickRecorder). Starts its
 * own PostgreSQL (Debian's package, as the tests do: fsync and synchronous_commit off, so a
 * commit does not wait for the disk). Usage:
 *   bun scripts/bench/pg-click-ingest.ts [--runs 5] [--batches 20] [--links 2000]
 *
 * - Events of 1,000-row batches: COPY against one INSERT from unnest arrays, alone (one
 *   transaction of events each) and as full writer batches (events, link counters, every
 *   rollup, in one transaction); the two alternate.
 * - One recorder (one node): `--batches` chunks of 1,000 visits, each recorded then flushed;
 *   visits/s from the first record to the last commit.
 * - Three recorders (three Bun.SQL clients = three nodes) doing the same at once on one
 *   PostgreSQL, overlapping links: visits/s of the three together.
 * Each figure: min / median / max over `--runs` runs, the kinds alternating within a run.
 */
import { SQL } from 'bun'
import type { ClickEvent } from '../../src/stats/click-event'
import { createPgClickRecorder, toRow, type Visit } from '../../src/stats/click-recorder'
import { createPgEventWriter, createPgValueIds, insertClickEvents } from '../../src/stats/click-writer.pg'
import { migratePostgres } from '../../src/store'
import { startPostgres } from '../../test/helpers/postgres'
import { arg, seededRandom } from './args'

const runs = Number(arg('runs', '5'))
const batches = Number(arg('batches', '20'))
const linkCount = Number(arg('links', '2000'))
const CHUNK = 1000

const log = { info() {}, warn() {}, error: (m: string, f?: Record<string, unknown>) => console.error(m, f) }
const pg = await startPostgres()
const url = await pg.createDatabase('ingest')
const admin = new SQL(url, { max: 2 })
await migratePostgres(admin)
await admin`INSERT INTO users (id, created_at) SELECT 'u' || i, 1 FROM generate_series(1, 50) AS i`
await admin`INSERT INTO links (seq, id, user_id, domain, key, link_type, destination, match_key, data, created_at, updated_at)
  SELECT i, 'lnk_' || i, 'u' || (i % 50 + 1), 'localhost', 'k' || i, CASE WHEN i % 5 = 0 THEN 'menu' ELSE 'link' END,
    'https://dest.example/', 'm' || i, '{}', 1, 1
  FROM generate_series(1, ${linkCount}) AS i`

const rnd = seededRandom(42)
const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rnd() * xs.length)]!
const COUNTRIES = ['DE', 'FR', 'US', 'GB', 'IN', 'BR', 'JP', 'ES', 'IT', 'NL']
const geos = Array.from({ length: 40 }, (_, i) => ({
  id: i + 1,
  continent: 'EU',
  country: COUNTRIES[i % 10]!,
  region: `R${i % 7}`,
  city: `City ${i}`,
}))
const visitors = Array.from({ length: 60 }, (_, i) => ({
  id: i + 1,
  os: pick(['IOS', 'Android', 'Windows', 'MacOS']),
  browser: pick(['Chrome', 'Safari', 'Firefox']),
  device: pick(['Mobile', 'Desktop']),
}))
const utms = [
  { id: 0, source: null, medium: null, campaign: null, term: null, content: null },
  { id: 1, source: 'mail', medium: 'email', campaign: 'spring', term: null, content: null },
  { id: 2, source: 'ad', medium: 'cpc', campaign: 'brand', term: 'shoes', content: 'a' },
]
let visitNo = 0
/** A visit now to a link picked Zipf-like; a fifth carry a referer URL of their own (a row of their own). */
function visit(): Visit {
  const r = rnd()
  const refererUrl = r < 0.3 ? null : r < 0.8 ? `https://site${Math.floor(rnd() * 20)}.example/` : `https://social.example/p/${visitNo}`
  visitNo++
  return {
    linkSeq: 1 + Math.floor(rnd() ** 3 * linkCount),
    domain: 'localhost',
    at: Date.now(),
    scan: rnd() < 0.3,
    referer: refererUrl ? new URL(refererUrl).hostname : null,
    refererUrl,
    visitor: pick(visitors),
    geo: pick(geos),
    utm: pick(utms),
  }
}
/** A visit as the recorder writes it. */
const event = (): ClickEvent => toRow(visit())

const figures = new Map<string, number[]>()
const note = (what: string, value: number) => figures.set(what, [...(figures.get(what) ?? []), value])

/** ms per 1,000-row batch through the writer, `batches` batches. */
async function writerRun(mode: 'copy' | 'unnest', sql: SQL) {
  const write = createPgEventWriter(sql, { eventInsert: mode })
  const data = Array.from({ length: batches }, () => Array.from({ length: CHUNK }, event))
  await write(data[0]!.slice(0, 10)) // partitions and groups, out of the timing
  const start = performance.now()
  for (const b of data) await write(b)
  note(`writer, 1,000-row batches, events by ${mode}: ms per batch`, (performance.now() - start) / batches)
}

/** ms per 1,000 events inserted alone (no counters, no rollups), one transaction each. */
async function eventsRun(mode: 'copy' | 'unnest', sql: SQL) {
  const idsOf = createPgValueIds(sql)
  const data = await Promise.all(Array.from({ length: batches }, () => idsOf(Array.from({ length: CHUNK }, event))))
  const start = performance.now()
  for (const b of data) await sql.begin((tx) => insertClickEvents(tx, b, mode))
  note(`events alone, 1,000 rows, by ${mode}: ms per batch`, (performance.now() - start) / batches)
}

/** visits/s of `nodes` recorders, each `batches` chunks of 1,000 visits. */
async function recorderRun(clients: SQL[]) {
  const recorders = clients.map((sql) => createPgClickRecorder(sql, log, { maxBatch: 1_000_000 }))
  const data = clients.map(() => Array.from({ length: batches }, () => Array.from({ length: CHUNK }, visit)))
  const start = performance.now()
  await Promise.all(
    recorders.map(async (r, k) => {
      for (const chunk of data[k]!) {
        for (const v of chunk) r.record(v)
        await r.flush()
      }
      await r.stop()
    }),
  )
  const s = (performance.now() - start) / 1000
  note(`${clients.length === 1 ? 'one recorder (one node)' : `${clients.length} recorders (nodes) together`}: visits/s`, (clients.length * batches * CHUNK) / s)
}

const stat = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b)
  const f = (x: number) => (x >= 100 ? Math.round(x).toLocaleString('en') : x.toFixed(1))
  return `${f(s[0]!)} / ${f(s[Math.floor(s.length / 2)]!)} / ${f(s.at(-1)!)}`
}

const one = new SQL(url, { max: 2 })
const three = [0, 1, 2].map(() => new SQL(url, { max: 2 }))
try {
  console.log(`PostgreSQL (fsync off), ${linkCount} links, ${runs} runs × ${batches} batches of ${CHUNK}; Bun ${Bun.version}\n`)
  for (let run = 0; run < runs; run++) {
    const modes: ('copy' | 'unnest')[] = run % 2 ? ['unnest', 'copy'] : ['copy', 'unnest']
    for (const mode of modes) await eventsRun(mode, one)
    for (const mode of modes) await writerRun(mode, one)
    if (run % 2) {
      await recorderRun(three)
      await recorderRun([one])
    } else {
      await recorderRun([one])
      await recorderRun(three)
    }
  }
  const [{ events, rows }] = await admin`SELECT (SELECT count(*) FROM click_events)::int AS events,
    (SELECT count(*) FROM stats_day)::int + (SELECT count(*) FROM stats_hour)::int AS rows`
  console.log(`${'figure'.padEnd(62)} min / median / max`)
  for (const [what, xs] of figures) console.log(`${what.padEnd(62)} ${stat(xs)}`)
  console.log(`\nat the end: ${events.toLocaleString('en')} event rows, ${rows.toLocaleString('en')} day+hour rollup rows`)
} finally {
  for (const sql of [one, ...three, admin]) await sql.close()
  await pg.destroy()
}
