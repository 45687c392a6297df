/**
 * The events engine's pair rows (stats.rollup.ts PAIRS) against raw events, on their own (no API,
 * no worker): N synthetic events over a year (skewed like scripts/bench/stats.ts: few devices,
 * OSes and browsers, a Zipf-like spread of countries, cities, referers and UTM values) in one
 * DuckDB file with the engine's events columns, the pair day rows derived from them as the
 * engine derives them, and the cross-dimension questions (one event dimension filtered, another
 * grouped; 7 days, 30 days, a year, all time) in the statements the planner writes for them:
 * A without pair rows (`pairDay` 0: raw events, what main reads), B with them, alternating A
 * and B on every question of every run, answers compared. Usage:
 *   bun scripts/bench/stats-pairs.ts [--events 10000000] [--db /tmp/stats-pairs.duckdb] [--reuse] [--runs 5] [--threads 2] [--memory 256MB]
 */
import { existsSync, rmSync } from 'node:fs'
import { DuckDBInstance } from '@duckdb/node-api'
import { bindArgs } from '../../src/stats/events.engine'
import { planQuery, planReads } from '../../src/stats/stats.plan'
import { PAIRS } from '../../src/stats/stats.rollup'
import type { StatisticsQuery } from '../../src/stats/stats.schema'
import { readSql } from '../../src/stats/stats.sql'
import { minMedianMax } from './ab'
import { arg } from './args'
import { CROSS_FILTERS, CROSS_GROUPS } from './stats.queries'

const N = Number(arg('events', '10000000'))
const RUNS = Number(arg('runs', '5'))
const path = arg('db', '/tmp/stats-pairs.duckdb')
const reuse = process.argv.includes('--reuse') && existsSync(path)
if (!reuse) rmSync(path, { force: true })
const instance = await DuckDBInstance.create(path, { memory_limit: arg('memory', '256MB'), threads: arg('threads', '2') })
const c = await instance.connect()
const DAY = 86_400_000
const END = 1_764_028_800_000 // 2025-11-25
const START = END - 365 * DAY

/** One weighted pick among `values` from a uniform r in [0,1): value i has weight 1/(i+1)^s. */
const zipf = (values: string[], s: number, r: string) => {
  const w = values.map((_, i) => 1 / (i + 1) ** s)
  const total = w.reduce((a, b) => a + b, 0)
  let acc = 0
  const cases = values.map((v, i) => {
    acc += w[i]! / total
    return `WHEN ${r} < ${acc.toFixed(6)} THEN '${v}'`
  })
  return `CASE ${cases.join(' ')} ELSE '${values[values.length - 1]}' END`
}
const names = (prefix: string, n: number) => Array.from({ length: n }, (_, i) => `${prefix}${i}`)
const COUNTRIES = ['US', 'DE', 'GB', 'FR', 'NL', 'IN', 'BR', 'ES', 'IT', 'CA', 'JP', 'PL', 'BE', 'SE', 'AU', ...names('C', 45)]

if (!reuse) {
  const started = performance.now()
  await c.run(`CREATE TABLE events AS SELECT
    (${START} + (r0 * ${365 * DAY})::BIGINT) AS "at", (r1 * r1 * 20000)::INTEGER + 1 AS link_seq, (r1 * r1 * 100)::INTEGER AS owner,
    (r2 * 5)::INTEGER AS ltype, r3 < 0.3 AS scan, CASE WHEN r4 < 0.03 THEN 2 ELSE 1 END AS n, 0::BIGINT AS batch,
    CASE WHEN country IN ('US', 'CA') THEN 'North America' WHEN country IN ('IN', 'JP') THEN 'Asia' WHEN country = 'BR' THEN 'South America' WHEN country = 'AU' THEN 'Oceania' ELSE 'Europe' END AS continent,
    country, country || '-R' || (r5 * 20)::INTEGER AS region, country || '-city' || (r5 * r5 * 60)::INTEGER AS city,
    ${zipf(['Android', 'IOS', 'Windows', 'MacOS', 'Linux', 'ChromeOS', 'Other'], 1.2, 'r6')} AS os,
    ${zipf(['Chrome', 'Safari', 'Edge', 'Firefox', 'Samsung', 'Opera', 'Other', 'IE', 'UC', 'Yandex'], 1.3, 'r7')} AS browser,
    ${zipf(['Mobile', 'Desktop', 'Tablet', 'Other'], 1.5, 'r8')} AS device,
    CASE WHEN r9 < 0.4 THEN NULL ELSE ${zipf(['www.google.com', 't.co', 'www.facebook.com', 'l.instagram.com', 'www.linkedin.com', ...names('ref', 195).map((n) => `${n}.example`)], 1.1, 'r10')} END AS referer,
    CASE WHEN r9 < 0.4 THEN NULL ELSE 'https://' || referer || '/p' || (r11 * 50)::INTEGER END AS referer_url,
    CASE WHEN r12 < 0.5 THEN NULL ELSE ${zipf(['newsletter', 'twitter', 'facebook', 'poster', 'flyer', ...names('src', 15)], 1.1, 'r13')} END AS utm_source,
    CASE WHEN utm_source IS NULL THEN NULL ELSE ${zipf(['email', 'social', 'print', 'cpc', 'banner'], 1.0, 'r14')} END AS utm_medium,
    CASE WHEN utm_source IS NULL THEN NULL ELSE ${zipf(names('campaign', 50), 1.0, 'r15')} END AS utm_campaign,
    NULL::VARCHAR AS utm_term, NULL::VARCHAR AS utm_content
  FROM (SELECT random() AS r0, random() AS r1, random() AS r2, random() AS r3, random() AS r4, random() AS r5, random() AS r6, random() AS r7,
     random() AS r8, random() AS r9, random() AS r10, random() AS r11, random() AS r12, random() AS r13, random() AS r14, random() AS r15,
     ${zipf(COUNTRIES, 1.1, 'random()')} AS country FROM range(${N}))
  ORDER BY "at"`)
  console.log(`A: ${N} events generated in ${((performance.now() - started) / 1000).toFixed(1)} s`)
}

if (!reuse || !(await c.runAndReadAll("SELECT 1 FROM duckdb_tables() WHERE table_name = 'stats_pair_day'")).getRows().length) {
  const started = performance.now()
  await c.run(
    'CREATE OR REPLACE TABLE stats_pair_day (scope INTEGER NOT NULL, dim TINYINT NOT NULL, t BIGINT NOT NULL, a VARCHAR NOT NULL, b VARCHAR NOT NULL, clicks BIGINT NOT NULL, scans BIGINT NOT NULL)',
  )
  // Day by day as the engine's roll-ups append them (a week per statement here), then in (scope, dim, t) order as its re-ordering leaves them.
  for (let from = START; from < END; from += 7 * DAY)
    for (const p of PAIRS)
      await c.run(`INSERT INTO stats_pair_day SELECT 0, ${p.dim}, e."at" // ${DAY}, coalesce(e.${p.first}, ''), coalesce(e.${p.second}, ''), sum(e.n), sum(CASE WHEN e.scan THEN e.n ELSE 0 END)
        FROM events e WHERE e."at" >= ${from} AND e."at" < ${Math.min(from + 7 * DAY, END)} GROUP BY ALL ORDER BY 3`)
  await c.run('CREATE OR REPLACE TABLE stats_pair_day AS SELECT * FROM stats_pair_day ORDER BY scope, dim, t')
  const rows = (await c.runAndReadAll('SELECT count(*)::DOUBLE AS n FROM stats_pair_day')).getRowObjectsJS()[0]!.n
  console.log(`pair rows: ${rows} (${(Number(rows) / N).toFixed(2)} per event), built in ${((performance.now() - started) / 1000).toFixed(1)} s`)
}
await c.run('CHECKPOINT')
const blocks = async (table: string) =>
  (await c.runAndReadAll(`SELECT count(DISTINCT block_id)::DOUBLE AS n FROM pragma_storage_info('${table}') WHERE block_id >= 0`)).getRowObjectsJS()[0]!
    .n as number
const [eventBlocks, pairBlocks] = [await blocks('events'), await blocks('stats_pair_day')]
console.log(
  `storage blocks (256 KiB): events ${eventBlocks} (${((eventBlocks * 262144) / N).toFixed(1)} B/event), pair rows ${pairBlocks} (${((pairBlocks * 262144) / N).toFixed(1)} B/event)`,
)

const filters = CROSS_FILTERS as [keyof StatisticsQuery, string][]
const columnOf: Record<string, string> = { utmSource: 'utm_source' }
const groups = CROSS_GROUPS
const iso = (t: number) => new Date(t).toISOString()
const ranges: [string, number][] = [
  ['7 days', END - 7 * DAY],
  ['30 days', END - 30 * DAY],
  ['1 year', END - 365 * DAY],
  ['all time', 0],
]
/** The statements the planner writes for `q`, with or without pair rows. */
function statements(q: StatisticsQuery, pairs: boolean) {
  const rolled = { hour: END, day: END, week: END, pairDay: pairs ? END : 0 }
  const plan = planReads(planQuery(q, END), {}, { groupNum: () => null, countLinks: () => 0, firstClickHour: () => START, rolledUp: () => rolled })!
  return plan.reads.map((r) => {
    const s = readSql(plan, r, false, 'duckdb')
    return { ...bindArgs(s.sql, s.args), pair: r.level !== null }
  })
}

const only = arg('only', '')
const times = new Map<string, { a: number[]; b: number[]; aWorst: string; bWorst: string; aMax: number; bMax: number }>()
let pairRead = 0
let rawRead = 0
for (let run = 0; run < RUNS; run++)
  for (const [rangeName, from] of ranges)
    for (const [param, value] of filters)
      for (const g of groups) {
        // country by city reads the geo rollups (stats_day), not part of this comparison.
        if (g === (columnOf[param] ?? param) || (param === 'country' && g === 'city')) continue
        const name = `${param}=${value} by ${g}, ${rangeName}`
        if (only && !name.includes(only)) continue
        const q = { [param]: value, groupBy: g, start: iso(from), end: iso(END) } as StatisticsQuery
        // Per range, and per range for the questions B answers from pair rows (those without city).
        const label = g === 'city' ? `${rangeName}, by city` : rangeName
        const t = times.get(label) ?? { a: [], b: [], aWorst: '', bWorst: '', aMax: 0, bMax: 0 }
        times.set(label, t)
        const answers: string[] = []
        for (const side of run % 2 ? (['b', 'a'] as const) : (['a', 'b'] as const)) {
          const list = statements(q, side === 'b')
          if (side === 'b' && run === 0) for (const s of list) s.pair ? pairRead++ : rawRead++
          const started = performance.now()
          const rows: Record<string, unknown>[] = []
          for (const s of list) rows.push(...(await c.runAndReadAll(s.text, s.params as never)).getRowObjectsJS())
          const ms = performance.now() - started
          t[side].push(ms)
          if (ms > t[side === 'a' ? 'aMax' : 'bMax']) {
            if (side === 'a') [t.aMax, t.aWorst] = [ms, name]
            else [t.bMax, t.bWorst] = [ms, name]
          }
          const sums = new Map<string, number>()
          for (const r of rows) sums.set(String(r.k), (sums.get(String(r.k)) ?? 0) + (r.c as number))
          answers.push(JSON.stringify([...sums].filter(([, v]) => v > 0).sort()))
        }
        if (answers[0] !== answers[1]) throw new Error(`A and B differ: ${name}`)
      }
console.log(`B read pair rows in ${pairRead} statements, raw events in ${rawRead} (questions with city: raw on both sides)`)
console.log(`load: ${(await Bun.file('/proc/loadavg').text()).trim()}`)
console.log('range (by city: raw on both sides) | A (raw) min | median | max (ms) | B (pairs) min | median | max (ms) | slowest A / slowest B')
for (const [label, t] of [...times].sort(([x], [y]) => (x < y ? -1 : 1)))
  console.log(`${label.padEnd(18)} | ${minMedianMax(t.a)} | ${minMedianMax(t.b)} | ${t.aWorst} / ${t.bWorst}`)
c.closeSync()
instance.closeSync()
