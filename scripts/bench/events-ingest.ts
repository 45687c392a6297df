/**
 * Ingest of the single-node events engine (src/stats/events.engine.ts, what the recorder's worker
 * runs per batch): a batch's events into DuckDB (in one transaction with its late rollup rows and
 * its batch number), then the links' counters in SQLite. A/B in one run, alternating (and the
 * order flipped each round, so neither always runs first on a loaded machine):
 *   csv:      the events written as a CSV file that DuckDB reads with read_csv (the first way);
 *   appender: DuckDB's Appender, value by value from JavaScript (`connection.createAppender`);
 *   either with `@<size>`: DuckDB's checkpoint_threshold (default 16MB), e.g. appender@64MB.
 * Usage: bun scripts/bench/events-ingest.ts [--events 200000] [--batch 5000] [--rounds 5] [--links 2000] [--ways csv,appender]
 * (enough events that the WAL passes the threshold several times, or the checkpoints are left out).
 *
 * Each run: a fresh store file (SQLite with `--links` links, and its events.duckdb), one warm-up
 * batch (the first roll-up of an empty store runs then), then `--events` events in batches of
 * `--batch`, one row per visit (a referer URL of its own: nothing merges), Zipf over the links.
 * Prints events/s of each run, then min / median / max per way.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { ClickEvent } from '../../src/stats/click-event'
import { eventsPathOf } from '../../src/stats/click-recorder'
import { openEventsEngine } from '../../src/stats/events.engine'
import { openStore } from '../../src/store'
import { arg, seededRandom } from './args'

const events = Number(arg('events', '200000'))
const batchSize = Number(arg('batch', '5000'))
const rounds = Number(arg('rounds', '5'))
const linkCount = Number(arg('links', '2000'))
const ways = arg('ways', 'csv,appender').split(',')

const OS = ['IOS', 'Android', 'Windows', 'MacOS', 'Linux']
const BROWSERS = ['Safari', 'Chrome', 'Firefox', 'Edge']
const PLACES = [
  ['Europe', 'DE', 'Bavaria', 'Munich'],
  ['Europe', 'GB', 'England', 'London'],
  ['North America', 'US', 'California', 'Mountain View'],
  ['Asia', 'IN', 'Maharashtra', 'Mumbai'],
] as const

/** `n` events of the last seconds (as the recorder hands them over: none late for the roll-up), each a row of its own. */
function makeEvents(n: number, seed: number): ClickEvent[] {
  const random = seededRandom(seed)
  const now = Date.now()
  const out: ClickEvent[] = []
  for (let i = 0; i < n; i++) {
    const place = PLACES[Math.floor(random() * PLACES.length)]!
    const referred = random() < 0.7
    out.push({
      linkSeq: 1 + Math.min(linkCount - 1, Math.floor(linkCount * random() ** 3)),
      domain: 'localhost',
      at: now - 5_000 + Math.floor((i / n) * 5_000),
      scan: random() < 0.3,
      continent: place[0],
      country: place[1],
      region: place[2],
      city: place[3],
      os: OS[Math.floor(random() * OS.length)]!,
      browser: BROWSERS[Math.floor(random() * BROWSERS.length)]!,
      device: random() < 0.6 ? 'Mobile' : 'Desktop',
      referer: referred ? 'news.example.org' : null,
      refererUrl: referred ? `https://news.example.org/story/${seed}-${i}` : null,
      utmSource: random() < 0.3 ? 'newsletter' : null,
      utmMedium: null,
      utmCampaign: random() < 0.2 ? 'spring' : null,
      utmTerm: null,
      utmContent: null,
      n: 1,
    })
  }
  return out
}

async function run(way: string, round: number): Promise<number> {
  const [ingest, checkpointThreshold] = way.split('@') as ['csv' | 'appender', string | undefined]
  const dir = mkdtempSync(join(tmpdir(), 'events-ingest-'))
  try {
    const path = join(dir, 'shortlink.db')
    const db = openStore(path)
    db.run("INSERT INTO users (id, created_at) VALUES ('u1', 1)")
    const insert = db.prepare(
      `INSERT INTO links (seq, id, user_id, domain, key, link_type, destination, match_key, data, created_at, updated_at)
       VALUES (?, ?, 'u1', 'localhost', ?, 'link', 'https://dest.example/', ?, '{}', 1, 1)`,
    )
    db.transaction(() => {
      for (let s = 1; s <= linkCount; s++) insert.run(s, `lnk_${s}`, `k${s}`, `m${s}`)
    })()
    const engine = await openEventsEngine(db, { path: eventsPathOf(path), dataDir: dir, threads: 2, memoryLimit: '256MB', ingest, checkpointThreshold })
    await engine.write(makeEvents(batchSize, round * 1000 + 999))
    const all = makeEvents(events, round)
    const started = performance.now()
    for (let i = 0; i < all.length; i += batchSize) await engine.write(all.slice(i, i + batchSize))
    const seconds = (performance.now() - started) / 1000
    const stored = db.query<{ n: number }, []>('SELECT sum(clicks) AS n FROM links').get()!.n
    if (stored !== events + batchSize) throw new Error(`${way}: ${stored} clicks counted, ${events + batchSize} written`)
    await engine.close()
    db.close()
    return events / seconds
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}

const results: Record<string, number[]> = Object.fromEntries(ways.map((w) => [w, []]))
const fmt = (n: number) => Math.round(n).toLocaleString('en-US')
console.log(
  `events ${fmt(events)} in batches of ${fmt(batchSize)}, ${rounds} rounds; load ${(await Bun.file('/proc/loadavg').text()).split(' ').slice(0, 3).join(' ')}`,
)
for (let round = 0; round < rounds; round++) {
  const order = round % 2 === 0 ? ways : [...ways].reverse()
  for (const way of order) {
    const rate = await run(way, round)
    results[way]!.push(rate)
    console.log(`round ${round + 1} ${way.padEnd(14)} ${fmt(rate)} events/s`)
  }
}
for (const way of ways) {
  const sorted = [...results[way]!].sort((a, b) => a - b)
  console.log(`${way.padEnd(14)} events/s min / median / max: ${fmt(sorted[0]!)} / ${fmt(sorted[Math.floor(sorted.length / 2)]!)} / ${fmt(sorted.at(-1)!)}`)
}
console.log(`load after ${(await Bun.file('/proc/loadavg').text()).split(' ').slice(0, 3).join(' ')}`)
