/**
 * Click ingest on PostgreSQL (src/stats/click-writer.pg.ts, createPgClickRecorder). Starts its
 * own PostgreSQL (Debian's package, as the tests do: fsync and synchronous_commit off, so a
 * commit does not wait for the disk). Usage:
 *   bun scripts/bench/pg-click-ingest.ts [--runs 3] [--visits 200000] [--sizes 1000,10000,50000] [--links 2000] [--compare DIR]
 *
 * Visits: Zipf over the links, 60 user agents, 40 places, 3 UTM sets; 30 % without a referer,
 * 50 % from 20 sites, 20 % with a referer URL of their own (each such visit is a row and a
 * rollup value of its own). Figures, each min / median / max over `--runs` runs:
 * - writer: `--visits` visits in batches of each of `--sizes` (one row per visit, as the
 *   recorder hands them over), back to back: visits/s, and the mean ms per batch of each step.
 * - one recorder (one node): `--visits` visits recorded as fast as a loop can (yielding every
 *   1,000), with its own flushing, until drain() has written everything (the visits put in the
 *   journal at the memory bound included): visits/s.
 * - three recorders (three nodes) on one PostgreSQL doing the same at once: visits/s together.
 * - one recorder offered `--rate` visits/s (paced, every millisecond or so) for `--paced-seconds`: visits/s from the
 *   first visit until drain() has written everything, how far behind the store was when the feed ended (visits not
 *   yet written), and how many of them went through the journal. Offered above what it can write, this is the
 *   node's sustained rate.
 * - the events of 1,000 visits alone, COPY against one INSERT from unnest arrays.
 * `--figures writer,recorder,nodes,paced,events` runs only those (all by default). The recorder figures also give
 * the CPU seconds per 100,000 visits of this process (Bun: feed, recorder, writer's JavaScript) and of PostgreSQL (all
 * its processes), to say which of the two bounds the rate.
 * `--compare DIR`: the same figures for the checkout in DIR (A, its own code and migrations, its
 * own database in the same cluster), alternating with this one (B) within each run.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { SQL } from 'bun'
import type { ClickEvent } from '../../src/stats/click-event'
import { toRow, type Visit } from '../../src/stats/click-recorder'
import { createPgValueIds, insertClickEvents } from '../../src/stats/click-writer.pg'
import { startPostgres } from '../../test/helpers/postgres'
import { arg, seededRandom } from './args'
import { procStat } from './redirect-server'

const runs = Number(arg('runs', '3'))
const visitsPerFigure = Number(arg('visits', '200000'))
const sizes = arg('sizes', '1000,10000,50000').split(',').map(Number)
const linkCount = Number(arg('links', '2000'))
const compareDir = arg('compare', '')
/** Rows per write of the recorders (the recorder's MAX_WRITE_ROWS when absent). */
const maxWriteRows = Number(arg('max-write-rows', '0'))
const pacedRate = Number(arg('rate', '70000'))
const pacedSeconds = Number(arg('paced-seconds', '10'))
const only = new Set(arg('figures', 'writer,recorder,nodes,paced,events').split(','))

type Fields = Record<string, unknown>
const log = { info() {}, warn(_m: string, _f?: Fields) {}, error: (m: string, f?: Fields) => console.error(m, f) }
const pg = await startPostgres()

/** CPU seconds used so far by this process and by the PostgreSQL cluster (its postmaster, its live children and the children it reaped). */
function cpuSeconds(): { bun: number; pg: number } {
  /** proc(5)'s stat fields from the third on (state, ppid, …), or null for a process that has ended since the listing. */
  const statOf = (pid: number | string) => procStat(`/proc/${pid}/stat`)?.fields ?? null
  // Fields 14-17: utime, stime, cutime, cstime, in clock ticks (100 a second).
  const ticks = (stat: number[] | null, withChildren: boolean) => (stat ? stat[11]! + stat[12]! + (withChildren ? stat[13]! + stat[14]! : 0) : 0)
  const postmaster = Number(readFileSync(join(pg.dir, 'data', 'postmaster.pid'), 'utf8').split('\n')[0])
  let pgTicks = ticks(statOf(postmaster), true)
  for (const pid of readdirSync('/proc')) {
    if (!/^\d+$/.test(pid)) continue
    const stat = statOf(pid)
    if (stat?.[1] === postmaster) pgTicks += ticks(stat, false)
  }
  return { bun: ticks(statOf('self'), false) / 100, pg: pgTicks / 100 }
}

const rnd = seededRandom(42)
const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rnd() * xs.length)]!
const COUNTRIES = ['DE', 'FR', 'US', 'GB', 'IN', 'BR', 'JP', 'ES', 'IT', 'NL']
const geos = Array.from({ length: 40 }, (_, i) => ({ id: i + 1, continent: 'EU', country: COUNTRIES[i % 10]!, region: `R${i % 7}`, city: `City ${i}` }))
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

type Writer = (events: ClickEvent[]) => Promise<unknown>
interface Recorder {
  record(v: Visit): void
  start(): void
  pendingCount(): number
  drain(): Promise<void>
  stop(): Promise<void>
}
/** One checkout's writer and recorder, on a database of its own migrated by its own code. */
interface Side {
  name: string
  url: string
  writer(sql: SQL, onStep?: (step: string, ms: number) => void): Writer
  recorder(sql: SQL, journalDir: string, logger?: typeof log): Recorder
}

async function sideOf(name: string, dir: string): Promise<Side> {
  const { createPgEventWriter } = await import(`${dir}/src/stats/click-writer.pg.ts`)
  const { createPgClickRecorder } = await import(`${dir}/src/stats/click-recorder.ts`)
  const { migratePostgres } = await import(`${dir}/src/store/index.ts`)
  const url = await pg.createDatabase(`ingest_${name.toLowerCase()}`)
  const admin = new SQL(url, { max: 2 })
  await migratePostgres(admin)
  await admin`INSERT INTO users (id, created_at) SELECT 'u' || i, 1 FROM generate_series(1, 50) AS i`
  await admin`INSERT INTO links (seq, id, user_id, domain, key, link_type, destination, match_key, data, created_at, updated_at)
    SELECT i, 'lnk_' || i, 'u' || (i % 50 + 1), 'localhost', 'k' || i, CASE WHEN i % 5 = 0 THEN 'menu' ELSE 'link' END,
      'https://dest.example/', 'm' || i, '{}', 1, 1
    FROM generate_series(1, ${linkCount}) AS i`
  await admin.close()
  return {
    name,
    url,
    writer: (sql, onStep) => createPgEventWriter(sql, { onStep }),
    // stop() waits for the last writes however long they take on a loaded machine.
    recorder: (sql, journalDir, logger = log) =>
      createPgClickRecorder(sql, logger, { journalDir, stopWaitMs: 3_600_000, ...(maxWriteRows ? { maxWriteRows } : {}) }),
  }
}

const figures = new Map<string, number[]>()
const note = (what: string, value: number) => figures.set(what, [...(figures.get(what) ?? []), value])

/** `visitsPerFigure` visits through the writer in batches of `size`: visits/s, and per-step ms per batch (B). */
async function writerRun(side: Side, size: number) {
  const sql = new SQL(side.url, { max: 2 })
  const steps = new Map<string, number>()
  const write = side.writer(sql, (step, ms) => steps.set(step, (steps.get(step) ?? 0) + ms))
  await write([toRow(visit())]) // partitions and groups, out of the timing
  steps.clear()
  const batches = Math.max(1, Math.round(visitsPerFigure / size))
  let elapsed = 0
  for (let b = 0; b < batches; b++) {
    const rows = Array.from({ length: size }, () => toRow(visit()))
    const t = performance.now()
    await write(rows)
    elapsed += performance.now() - t
  }
  note(`${side.name} writer, batches of ${size.toLocaleString('en')} visits: visits/s`, (batches * size) / (elapsed / 1000))
  for (const [step, ms] of steps) note(`${side.name}   ${size.toLocaleString('en')}: ${step}, ms per batch`, ms / batches)
  await sql.close()
}

/** visits/s of `nodes` recorders fed as fast as a loop can, until each has written everything. */
async function recorderRun(side: Side, nodes: number) {
  const clients = Array.from({ length: nodes }, () => new SQL(side.url, { max: 2 }))
  const dirs = clients.map(() => mkdtempSync(join(tmpdir(), 'ingest-journal-')))
  const recorders = clients.map((sql, i) => side.recorder(sql, dirs[i]!))
  const per = Math.round(visitsPerFigure / nodes)
  const stored = async () => Number((await clients[0]!`SELECT coalesce(sum(n), 0)::float8 AS n FROM click_events`)[0].n)
  const before = await stored()
  const cpuBefore = cpuSeconds()
  const start = performance.now()
  await Promise.all(
    recorders.map(async (r) => {
      for (let i = 0; i < per; i++) {
        r.record(visit())
        if (i % 1000 === 999) await new Promise((done) => setImmediate(done))
      }
      // Everything, the visits put in the journal at the memory bound included.
      await r.drain()
      await r.stop()
    }),
  )
  const s = (performance.now() - start) / 1000
  const cpu = cpuSeconds()
  const written = (await stored()) - before
  const what = nodes === 1 ? 'one recorder (one node)' : `${nodes} recorders (nodes) together`
  note(`${side.name} ${what}: CPU s per 100,000 visits, Bun`, ((cpu.bun - cpuBefore.bun) * 100_000) / written)
  note(`${side.name} ${what}: CPU s per 100,000 visits, PostgreSQL`, ((cpu.pg - cpuBefore.pg) * 100_000) / written)
  // Visits written per second; a recorder that drops visits at its bound (no journal) counts only what it wrote.
  note(`${side.name} ${what}: visits/s`, written / s)
  note(`${side.name} ${what}: visits not written`, nodes * per - written)
  for (const sql of clients) await sql.close()
  for (const d of dirs) rmSync(d, { recursive: true, force: true })
}

/** One recorder offered `pacedRate` visits/s for `pacedSeconds`: visits/s until all is written, the lag at the feed's end, the journal's share. */
async function pacedRun(side: Side) {
  const sql = new SQL(side.url, { max: 10 })
  const dir = mkdtempSync(join(tmpdir(), 'ingest-journal-'))
  let journaled = 0
  const warnLog = {
    ...log,
    warn: (m: string, f?: Record<string, unknown>) => {
      if (m.includes('journal')) journaled += Number(f?.visits ?? 0)
    },
  }
  const recorder = side.recorder(sql, dir, warnLog)
  recorder.start()
  const total = pacedRate * pacedSeconds
  const start = performance.now()
  for (let sent = 0; sent < total; ) {
    const due = Math.min(total, Math.floor(((performance.now() - start) / 1000) * pacedRate))
    for (; sent < due; sent++) recorder.record(visit())
    await new Promise((done) => setTimeout(done, 1))
  }
  const behind = recorder.pendingCount()
  await recorder.drain()
  const s = (performance.now() - start) / 1000
  await recorder.stop()
  const what = `one recorder offered ${pacedRate.toLocaleString('en')}/s for ${pacedSeconds} s`
  note(`${side.name} ${what}: visits/s`, total / s)
  note(`${side.name} ${what}: visits not written when the feed ended`, behind)
  note(`${side.name} ${what}: visits through the journal`, journaled)
  await sql.close()
  rmSync(dir, { recursive: true, force: true })
}

/** ms per 1,000 events inserted alone (no counters, no rollups), one transaction each. */
async function eventsRun(side: Side, mode: 'copy' | 'unnest') {
  const sql = new SQL(side.url, { max: 2 })
  const idsOf = createPgValueIds(sql)
  const data = []
  for (let b = 0; b < 20; b++) data.push(await idsOf(Array.from({ length: 1000 }, () => toRow(visit()))))
  const start = performance.now()
  for (const b of data) await sql.begin((tx) => insertClickEvents(tx, b, mode))
  note(`${side.name} events alone, 1,000 rows, by ${mode}: ms per batch`, (performance.now() - start) / data.length)
  await sql.close()
}

const stat = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b)
  const f = (x: number) => (x >= 100 ? Math.round(x).toLocaleString('en') : x.toFixed(1))
  return `${f(s[0]!)} / ${f(s[Math.floor(s.length / 2)]!)} / ${f(s.at(-1)!)}`
}

const sides = [...(compareDir ? [await sideOf('A', resolve(compareDir))] : []), await sideOf('B', resolve(import.meta.dir, '../..'))]
const load = async () => (await Bun.file('/proc/loadavg').text()).split(' ').slice(0, 3).join(' ')
try {
  console.log(
    `PostgreSQL (fsync off), ${linkCount} links, ${runs} runs, ${visitsPerFigure.toLocaleString('en')} visits per figure; Bun ${Bun.version}${compareDir ? `; A = ${compareDir}, B = this checkout` : ''}`,
  )
  console.log(`load average at the start: ${await load()}\n`)
  for (let run = 0; run < runs; run++) {
    const order = run % 2 ? [...sides].reverse() : sides
    if (only.has('writer')) for (const size of sizes) for (const side of order) await writerRun(side, size)
    if (only.has('recorder')) for (const side of order) await recorderRun(side, 1)
    if (only.has('nodes')) for (const side of order) await recorderRun(side, 3)
    if (only.has('paced') && pacedRate > 0) for (const side of order) await pacedRun(side)
    const last = sides.at(-1)!
    if (only.has('events')) for (const mode of run % 2 ? (['unnest', 'copy'] as const) : (['copy', 'unnest'] as const)) await eventsRun(last, mode)
  }
  console.log(`${'figure'.padEnd(70)} min / median / max`)
  for (const [what, xs] of [...figures].sort(([a], [b]) => (a < b ? -1 : 1))) console.log(`${what.padEnd(70)} ${stat(xs)}`)
  console.log(`\nload average at the end: ${await load()}`)
} finally {
  await pg.destroy()
}
