/**
 * `bun scripts/bench/stats.ts --store sqlite:PATH | postgres://… [--sqlite PATH] [--runs 9] [--only text]`: times the
 * statistics queries of stats.queries.ts through the statistics service (no HTTP, no auth, no live writes) on an
 * existing seeded store, opened read-only. With `--sqlite`, alternates every run with that SQLite store and checks
 * both answer the same (the store copied with `migrate-store` must give identical answers).
 */
import { Database } from 'bun:sqlite'
import { SQL } from 'bun'
import type { Caller } from '../../src/auth'
import { deriveSettings } from '../../src/config'
import { buildConfig } from '../../src/config/config.load'
import { parseQuery } from '../../src/shared'
import { StatisticsQuery } from '../../src/stats/stats.schema'
import { createStatsService, type StatsService } from '../../src/stats/stats.service'
import { createStatsStore } from '../../src/stats/stats.store'
import { createPgStatsStore } from '../../src/stats/stats.store.pg'
import { minMedianMax } from './ab'
import { type BenchCaller, statsQueries } from './stats.queries'

interface Target {
  name: string
  service: StatsService
  /** One row of a plain SELECT (the same text on both dialects). */
  one(text: string): Promise<Record<string, unknown>>
  close(): Promise<void> | void
}

const settings = deriveSettings(buildConfig({}, {}))

function open(store: string): Target {
  if (store.startsWith('sqlite:')) {
    const db = new Database(store.slice('sqlite:'.length), { readonly: true })
    return {
      name: 'SQLite',
      service: createStatsService({ store: createStatsStore(db), settings }),
      one: async (text) => db.query(text).get() as Record<string, unknown>,
      close: () => db.close(),
    }
  }
  if (!/^postgres(ql)?:\/\//.test(store)) throw new Error(`--store must be sqlite:PATH or postgres://… (got ${store})`)
  const sql = new SQL(store, { max: 4 })
  return {
    name: 'PostgreSQL',
    service: createStatsService({ store: createPgStatsStore(sql), settings }),
    one: async (text) => ((await sql.unsafe(text)) as Record<string, unknown>[])[0]!,
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
  const main = open(store)
  const other = sqlitePath ? open(`sqlite:${sqlitePath}`) : null
  const end = Number((await main.one("SELECT value FROM kv WHERE key = 'bench_end'")).value)
  const top = String((await main.one('SELECT id FROM links ORDER BY clicks DESC, seq LIMIT 1')).id)
  const median = Number((await main.one('SELECT seq FROM links WHERE clicks > 0 ORDER BY clicks DESC, seq LIMIT 1 OFFSET 2000')).seq)
  const events = Number((await main.one('SELECT count(*) AS n FROM click_events')).n)
  console.log(
    `\n${events.toLocaleString()} events; the statistics service on ${main.name}${other ? ` (B) and ${other.name} (A), alternating` : ''}, ms over ${runs} runs, no live writes`,
  )
  const head = other ? '| A min  | A med  | A max  | B min  | B med  | B max  | result         | answers |' : '| min    | median | max    | result         |'
  console.log(`| ${'query'.padEnd(62)} ${head}`)
  let over = 0
  for (const q of statsQueries(end, { top, median })) {
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
    if (other) console.log(`| ${q.label.padEnd(62)} | ${minMedianMax(a)} | ${minMedianMax(b)} | ${what.padEnd(14)} | ${same ? 'same' : 'DIFFERENT'} |`)
    else console.log(`| ${q.label.padEnd(62)} | ${minMedianMax(b)} | ${what.padEnd(14)} |`)
  }
  console.log(`\n${over} queries with a median of 100 ms or more on ${main.name}`)
  await main.close()
  await other?.close()
}
