/**
 * `bun scripts/bench/stats.ts --store sqlite:PATH | postgres://… [--sqlite PATH] [--runs 9] [--only text] [--set bench|cross]`:
 * times the statistics queries of stats.queries.ts through the statistics service (no HTTP, no auth, no live writes) on
 * an existing seeded store, opened read-only. With `--sqlite`, alternates every run with that SQLite store and checks
 * both answer the same (the store copied with `migrate-store` must give identical answers). With `--compare-store
 * URL --compare DIR`, the other side is that store read by the code of checkout DIR (A/B of a change of code and
 * schema: DIR's code on a copy made before the change; `--code DIR2` reads the main store with DIR2's code). `--set cross` times the cross-dimension set instead (every
 * event dimension filtered, grouped by every other; `--ranges 7d,30d,1y,all`).
 */
import { Database } from 'bun:sqlite'
import { SQL } from 'bun'
import type { Caller } from '../../src/auth'
import { parseQuery } from '../../src/shared'
import { StatisticsQuery } from '../../src/stats/stats.schema'
import type { StatsService } from '../../src/stats/stats.service'
import { minMedianMax } from './ab'
import { arg } from './args'
import { type BenchCaller, fullCrossDimensionSet, statsQueries } from './stats.queries'

interface Target {
  name: string
  service: StatsService
  /** One row of a plain SELECT (the same text on both dialects). */
  one(text: string): Promise<Record<string, unknown>>
  /** The links with their `clicks` (a column of links on SQLite; of link_clicks on PostgreSQL, migration 0009). */
  linksWithClicks: string
  close(): Promise<void> | void
}

/** The store, read by the statistics service of the checkout at `code` (this one by default). */
async function open(store: string, code = `${import.meta.dir}/../..`): Promise<Target> {
  const { deriveSettings } = await import(`${code}/src/config`)
  const { buildConfig } = await import(`${code}/src/config/config.load`)
  const { createStatsService } = await import(`${code}/src/stats/stats.service`)
  const settings = deriveSettings(buildConfig({}, {}))
  if (store.startsWith('sqlite:')) {
    const { createStatsStore } = await import(`${code}/src/stats/stats.store`)
    const db = new Database(store.slice('sqlite:'.length), { readonly: true })
    return {
      name: 'SQLite',
      service: createStatsService({ store: createStatsStore(db), settings }),
      one: async (text) => db.query(text).get() as Record<string, unknown>,
      linksWithClicks: 'links',
      close: () => db.close(),
    }
  }
  if (!/^postgres(ql)?:\/\//.test(store)) throw new Error(`--store must be sqlite:PATH or postgres://… (got ${store})`)
  const { createPgStatsStore } = await import(`${code}/src/stats/stats.store.pg`)
  const sql = new SQL(store, { max: 4 })
  return {
    name: 'PostgreSQL',
    service: createStatsService({ store: createPgStatsStore(sql), settings }),
    one: async (text) => ((await sql.unsafe(text)) as Record<string, unknown>[])[0]!,
    linksWithClicks: 'links JOIN link_clicks USING (seq)',
    close: () => sql.close(),
  }
}

const CALLERS: Record<BenchCaller, Caller> = {
  admin: { userId: 'usr_admin', role: 'admin', keyId: null },
  bigMember: { userId: 'usr_u0', role: 'member', keyId: null },
  smallMember: { userId: 'usr_u40', role: 'member', keyId: null },
}

async function timeOne(target: Target, caller: Caller, query: string): Promise<{ ms: number; body: string }> {
  const t = performance.now()
  const body = JSON.stringify(await target.service.statistics(caller, parseQuery(StatisticsQuery, new URLSearchParams(query))))
  return { ms: performance.now() - t, body }
}

export async function benchStore(store: string, sqlitePath: string, runs: number, only: string): Promise<void> {
  const main = await open(store, arg('code', '') || undefined)
  const compareStore = arg('compare-store', '')
  const other = compareStore ? await open(compareStore, arg('compare', '')) : sqlitePath ? await open(`sqlite:${sqlitePath}`) : null
  const end = Number((await main.one("SELECT value FROM kv WHERE key = 'bench_end'")).value)
  const top = String((await main.one(`SELECT id FROM ${main.linksWithClicks} ORDER BY clicks DESC, seq LIMIT 1`)).id)
  const median = Number((await main.one(`SELECT seq FROM ${main.linksWithClicks} WHERE clicks > 0 ORDER BY clicks DESC, seq LIMIT 1 OFFSET 2000`)).seq)
  const events = Number((await main.one('SELECT count(*) AS n FROM click_events')).n)
  console.log(
    `\n${events.toLocaleString()} events; the statistics service on ${main.name}${other ? ` (B) and ${other.name} (A), alternating` : ''}, ms over ${runs} runs, no live writes`,
  )
  const head = other ? '| A min  | A med  | A max  | B min  | B med  | B max  | result         | answers |' : '| min    | median | max    | result         |'
  console.log(`| ${'query'.padEnd(62)} ${head}`)
  let over = 0
  const set = arg('set', 'bench') === 'cross' ? fullCrossDimensionSet(end, arg('ranges', '7d,30d,1y,all').split(',')) : statsQueries(end, { top, median })
  const medians: { label: string; a: number | null; b: number }[] = []
  for (const q of set) {
    if (only && !q.label.includes(only)) continue
    const caller = CALLERS[q.caller]
    const b: number[] = []
    const a: number[] = []
    let body = ''
    let same = true
    for (let i = 0; i < runs; i++) {
      if (other) {
        const ra = await timeOne(other, caller, q.query)
        a.push(ra.ms)
        if (body && ra.body !== body) same = false
        body ||= ra.body
      }
      const rb = await timeOne(main, caller, q.query)
      b.push(rb.ms)
      if (body && rb.body !== body) same = false
      body ||= rb.body
    }
    const parsed = JSON.parse(body)
    const what = Array.isArray(parsed) ? `${parsed.length} rows` : `${parsed.clicks} clicks`
    const median = [...b].sort((x, y) => x - y)[Math.floor(b.length / 2)]!
    if (median >= 100) over++
    medians.push({ label: q.label, a: other ? [...a].sort((x, y) => x - y)[Math.floor(a.length / 2)]! : null, b: median })
    if (other) console.log(`| ${q.label.padEnd(62)} | ${minMedianMax(a)} | ${minMedianMax(b)} | ${what.padEnd(14)} | ${same ? 'same' : 'DIFFERENT'} |`)
    else console.log(`| ${q.label.padEnd(62)} | ${minMedianMax(b)} | ${what.padEnd(14)} |`)
  }
  console.log(`\n${over} queries with a median of 100 ms or more on ${main.name}`)
  summarise(medians, other !== null)
  await main.close()
  await other?.close()
}

/** Per range label (the word after `x ` in cross-dimension labels): count, over 100 ms, over 1 s, worst median; A then B. */
function summarise(medians: { label: string; a: number | null; b: number }[], ab: boolean) {
  const ranges = new Map<string, typeof medians>()
  for (const m of medians) {
    const range = m.label.startsWith('x ') ? m.label.split(' ')[1]! : 'all queries'
    ranges.set(range, [...(ranges.get(range) ?? []), m])
  }
  const line = (ms: number[]) => {
    const worst = Math.max(...ms)
    return `${ms.filter((x) => x >= 100).length} ≥ 100 ms, ${ms.filter((x) => x >= 1000).length} ≥ 1 s, worst median ${worst.toFixed(1)} ms`
  }
  for (const [range, list] of ranges) {
    const worstB = list.reduce((w, m) => (m.b > w.b ? m : w))
    console.log(`${range} (${list.length} queries): ${ab ? `A ${line(list.map((m) => m.a!))}; B ` : ''}${line(list.map((m) => m.b))} (${worstB.label})`)
  }
}
