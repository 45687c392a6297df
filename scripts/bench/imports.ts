/**
 * Import speed and memory: the compiled server (SHORTLINK_BIN, else `bun src/main.ts`) on a fresh
 * data dir per run imports an export of N rows (default 100,000) uploaded over HTTPS, and the
 * run reports rows/s (upload to done) and the server's peak RSS (VmHWM, read from /proc after
 * the import; a fresh process per run, so the peak is that import's) beside its RSS before.
 * A/B in one run: the same links as this dashboard's CSV (A) and as a Bitly API JSON export (B),
 * alternated, min / median / max of each. On PostgreSQL when SHORTLINK_TEST_PG_URL is set
 * (bun scripts/with-postgres.ts bun scripts/bench/imports.ts ...).
 *   bun scripts/bench/imports.ts [--rows 100000] [--runs 3] [--sources csv,bitly]
 */
import { readFileSync } from 'node:fs'
import { json, startServer } from '../../test/helpers/server'
import { minMedianMax } from './ab'
import { arg } from './args'

const ROWS = Number(arg('rows', '100000'))
const RUNS = Number(arg('runs', '3'))
const SOURCES = arg('sources', 'csv,bitly').split(',') as ('csv' | 'bitly')[]

function csvExport(n: number): string {
  const lines = ['url,key,tags,comment']
  for (let i = 0; i < n; i++) lines.push(`https://shop.example/products/${i}?ref=import,p${i},${i % 10 === 0 ? 'sale;spring' : ''},Product ${i}`)
  return `${lines.join('\n')}\n`
}
function bitlyExport(n: number): string {
  const links = Array.from({ length: n }, (_, i) => ({
    created_at: '2021-03-04T10:11:12+0000',
    id: `bit.ly/b${i}`,
    link: `https://bit.ly/b${i}`,
    custom_bitlinks: [],
    long_url: `https://shop.example/products/${i}?ref=bitly`,
    title: `Product ${i}`,
    archived: false,
    tags: i % 10 === 0 ? ['sale', 'spring'] : [],
    deeplinks: [],
    references: {},
  }))
  return JSON.stringify({ links, pagination: { next: '' } })
}

const rssKiB = (pid: number, field: 'VmRSS' | 'VmHWM') => Number(new RegExp(`${field}:\\s+(\\d+)`).exec(readFileSync(`/proc/${pid}/status`, 'utf8'))![1])

async function once(source: 'csv' | 'bitly', content: string) {
  const server = await startServer()
  try {
    const key = await server.keyFor('bench', 'member')
    const before = rssKiB(server.proc.pid, 'VmRSS')
    const form = new FormData()
    form.set('source', source)
    form.set('file', new Blob([content]), source === 'csv' ? 'links.csv' : 'bitlinks.json')
    const t0 = performance.now()
    const started = await json(await server.api('/imports', { method: 'POST', key, body: form }))
    if (started.status !== 202) throw new Error(`POST /imports: ${started.status} ${JSON.stringify(started.body)}`)
    let record = started.body
    while (record.status === 'running') {
      await Bun.sleep(200)
      record = (await json(await server.api(`/imports/${record.id}`, { key }))).body
    }
    const seconds = (performance.now() - t0) / 1000
    if (record.status !== 'done' || record.created !== ROWS) throw new Error(`import ended ${record.status}: ${JSON.stringify(record).slice(0, 300)}`)
    return { rowsPerSecond: ROWS / seconds, seconds, peakMiB: rssKiB(server.proc.pid, 'VmHWM') / 1024, beforeMiB: before / 1024 }
  } finally {
    await server.stop()
  }
}

const files = { csv: SOURCES.includes('csv') ? csvExport(ROWS) : '', bitly: SOURCES.includes('bitly') ? bitlyExport(ROWS) : '' }
process.stderr.write(
  `${ROWS.toLocaleString('en-US')} rows on ${process.env.SHORTLINK_TEST_PG_URL ? 'PostgreSQL' : 'SQLite'}; files: CSV ${(files.csv.length / 2 ** 20).toFixed(1)} MiB, Bitly JSON ${(files.bitly.length / 2 ** 20).toFixed(1)} MiB; load: ${readFileSync('/proc/loadavg', 'utf8').trim()}\n`,
)
const results: Record<'csv' | 'bitly', Awaited<ReturnType<typeof once>>[]> = { csv: [], bitly: [] }
for (let run = 0; run < RUNS; run++)
  for (const source of SOURCES) {
    const r = await once(source, files[source])
    results[source].push(r)
    process.stderr.write(
      `run ${run + 1} ${source}: ${r.rowsPerSecond.toFixed(0)} rows/s (${r.seconds.toFixed(1)} s), peak RSS ${r.peakMiB.toFixed(0)} MiB (before ${r.beforeMiB.toFixed(0)} MiB)\n`,
    )
  }
process.stdout.write('source  rows/s min | median | max       peak RSS MiB min | median | max\n')
for (const source of SOURCES)
  process.stdout.write(
    `${source.padEnd(6)}  ${minMedianMax(results[source].map((r) => r.rowsPerSecond))}    ${minMedianMax(results[source].map((r) => r.peakMiB))}\n`,
  )
