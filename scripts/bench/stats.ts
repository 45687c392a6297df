/**
 * Statistics at scale: seeds N click events (default 10,000,000) into a store file with
 * the real migrations — spread over a year, skewed like real traffic (Zipf over 20,000
 * links, a few owners with most links, diurnal and weekly cycles, growth, realistic
 * country/city, UA, referer and UTM mixes, 3 % of rows merged visits) — written through
 * the events engine (deps.events: events in DuckDB, counters in SQLite, rollups derived as
 * hours close), then times GET /statistics through the real API app (in-process) while the
 * click recorder keeps writing visits from its worker thread. Every file of the store lies in
 * the folder of --db (shortlink.db, events.duckdb). Usage:
 *   bun scripts/bench/stats.ts [--events 10000000] [--db /tmp/stats-bench.db] [--reuse] [--runs 9] [--only <label text>]
 * A/B in one run: `--compare <checkout dir> --compare-db <its copy of the store>` (with --reuse) also opens that
 * checkout's app (its own code, migrations and recorder) on its copy, and alternates the two on every run of every
 * query (A = the other checkout, B = this one), with both answers compared. `--bytes` prints where the store's
 * bytes are (dbstat: pages per table and index).
 * The cross-dimension set (each event dimension filtered, each other grouped; 7 days, 30 days, a year, all time) runs
 * with the rest; `--ingest N` first measures the recorder's rate on N visits with a distinct referer each (one row per
 * visit). `--bytes` prints the bytes per click of every file of the store.
 * `--store sqlite:PATH | postgres://…` (with `--sqlite PATH` to alternate with that SQLite store): times the queries
 * through the statistics service on an existing store, read-only (stats-store.ts); copy the SQLite store into
 * PostgreSQL first with `bun src/main.ts migrate-store --from sqlite:PATH --to postgres://…`.
 */
import { readdirSync, statSync } from 'node:fs'
import { dirname, join } from 'node:path'
import type { ClickEvent } from '../../src/stats/click-writer'
import { alternate, minMedianMax } from './ab'
import { arg, benchApp, seededRandom } from './args'
import { statsQueries } from './stats.queries'

if (arg('store', '')) {
  await (await import('./stats-store')).benchStore(arg('store', ''), arg('sqlite', ''), Number(arg('runs', '9')), arg('only', ''))
  process.exit(0)
}

const N = Number(arg('events', '10000000'))
const RUNS = Number(arg('runs', '9'))
/** Time only the queries whose label contains this text; `--skip`: not those containing that text. */
const ONLY = arg('only', '')
const SKIP = arg('skip', '')
const dbPath = arg('db', '/tmp/stats-bench.db')
const { reuse, deps, app } = benchApp(dbPath)
const db = deps.db
// A store of the previous release (events in SQLite) moves them into the events engine first: timed.
const moveStarted = performance.now()
await deps.events.moved()
if (performance.now() - moveStarted > 1000) console.log(`events moved into the events engine in ${((performance.now() - moveStarted) / 1000).toFixed(1)} s`)
const compareDir = arg('compare', '')
const other = compareDir ? (await import(`${compareDir}/scripts/bench/args.ts`)).benchApp(arg('compare-db', '')) : null
if (other && !(reuse && other.reuse)) throw new Error('--compare needs --reuse and an existing --compare-db')
const LINKS = 20_000
const USERS = 100
/** The data ends at the hour the seed ran (kept in kv for --reuse): a year of traffic up to "now". */
const savedEnd = reuse ? (db.query("SELECT value FROM kv WHERE key = 'bench_end'").get() as { value: string } | null)?.value : undefined
const END = savedEnd ? Number(savedEnd) : Math.floor(Date.now() / 3_600_000) * 3_600_000
if (!savedEnd) db.query("INSERT OR REPLACE INTO kv (key, value) VALUES ('bench_end', ?)").run(String(END))
const HOURS = 365 * 24
const START = END - HOURS * 3_600_000

const rnd = seededRandom(7)
function weighted<T>(items: [T, number][]): () => T {
  const total = items.reduce((a, [, w]) => a + w, 0)
  const cdf: number[] = []
  let acc = 0
  for (const [, w] of items) {
    acc += w / total
    cdf.push(acc)
  }
  return () => {
    const r = rnd()
    let lo = 0
    let hi = cdf.length - 1
    while (lo < hi) {
      const m = (lo + hi) >> 1
      if (cdf[m]! < r) lo = m + 1
      else hi = m
    }
    return items[lo]![0]
  }
}

type Place = [country: string, continent: string, weight: number, regions: [string, string[]][]]
const PLACES: Place[] = [
  [
    'US',
    'North America',
    30,
    [
      ['California', ['Los Angeles', 'San Francisco', 'San Diego', 'San Jose']],
      ['New York', ['New York', 'Buffalo']],
      ['Texas', ['Houston', 'Austin', 'Dallas']],
      ['Florida', ['Miami', 'Orlando']],
      ['Illinois', ['Chicago']],
    ],
  ],
  [
    'DE',
    'Europe',
    12,
    [
      ['Bavaria', ['Munich', 'Nuremberg', 'Falkenstein']],
      ['Berlin', ['Berlin']],
      ['Hesse', ['Frankfurt am Main']],
      ['Hamburg', ['Hamburg']],
    ],
  ],
  [
    'GB',
    'Europe',
    10,
    [
      ['England', ['London', 'Manchester', 'Birmingham']],
      ['Scotland', ['Edinburgh', 'Glasgow']],
    ],
  ],
  [
    'FR',
    'Europe',
    8,
    [
      ['Île-de-France', ['Paris']],
      ['Auvergne-Rhône-Alpes', ['Lyon']],
      ["Provence-Alpes-Côte d'Azur", ['Marseille', 'Nice']],
    ],
  ],
  [
    'IN',
    'Asia',
    8,
    [
      ['Maharashtra', ['Mumbai', 'Pune']],
      ['Karnataka', ['Bengaluru']],
      ['Delhi', ['New Delhi']],
    ],
  ],
  [
    'BR',
    'South America',
    5,
    [
      ['São Paulo', ['São Paulo', 'Campinas']],
      ['Rio de Janeiro', ['Rio de Janeiro']],
    ],
  ],
  [
    'JP',
    'Asia',
    5,
    [
      ['Tokyo', ['Tokyo']],
      ['Osaka', ['Osaka']],
    ],
  ],
  [
    'CA',
    'North America',
    4,
    [
      ['Ontario', ['Toronto', 'Ottawa']],
      ['Quebec', ['Montreal']],
    ],
  ],
  [
    'AU',
    'Oceania',
    3,
    [
      ['New South Wales', ['Sydney']],
      ['Victoria', ['Melbourne']],
    ],
  ],
  [
    'NL',
    'Europe',
    3,
    [
      ['North Holland', ['Amsterdam']],
      ['Limburg', ['Maastricht']],
    ],
  ],
  [
    'BE',
    'Europe',
    2,
    [
      ['Limburg', ['Hasselt']],
      ['Brussels Capital', ['Brussels']],
    ],
  ],
  [
    'ES',
    'Europe',
    3,
    [
      ['Madrid', ['Madrid']],
      ['Catalonia', ['Barcelona']],
    ],
  ],
  [
    'IT',
    'Europe',
    3,
    [
      ['Lazio', ['Rome']],
      ['Lombardy', ['Milan']],
    ],
  ],
  ['MX', 'North America', 2, [['Mexico City', ['Mexico City']]]],
  ['NG', 'Africa', 1, [['Lagos', ['Lagos']]]],
  ['ZA', 'Africa', 1, [['Gauteng', ['Johannesburg']]]],
  ['AR', 'South America', 1, [['Buenos Aires', ['Buenos Aires']]]],
  ['NZ', 'Oceania', 1, [['Auckland', ['Auckland']]]],
]
const PLACE = weighted<Place | null>([...PLACES.map((p) => [p, p[2]] as [Place, number]), [null, 1]])
const UA = weighted<[string, string, string]>([
  [['IOS', 'Safari', 'Mobile'], 30],
  [['Android', 'Chrome', 'Mobile'], 28],
  [['Windows', 'Chrome', 'Desktop'], 15],
  [['MacOS', 'Safari', 'Desktop'], 6],
  [['MacOS', 'Chrome', 'Desktop'], 5],
  [['Windows', 'Edge', 'Desktop'], 5],
  [['Android', 'Samsung Internet', 'Mobile'], 4],
  [['IOS', 'Safari', 'Tablet'], 3],
  [['Linux', 'Firefox', 'Desktop'], 1.5],
  [['Windows', 'Firefox', 'Desktop'], 1.5],
  [['Android', 'Chrome', 'Tablet'], 1],
  [['Other', 'Others', 'Others'], 0.5],
  [['HarmonyOS', 'Others', 'Mobile'], 0.3],
  [['Linux', 'Chrome', 'SmartTv'], 0.2],
  [['Android', 'Opera', 'Mobile'], 0.5],
])
const REFERER = weighted<string | null>([
  [null, 50],
  ['www.google.com', 12],
  ['l.facebook.com', 8],
  ['t.co', 4],
  ['www.instagram.com', 6],
  ['www.linkedin.com', 3],
  ['mail.google.com', 4],
  ['outlook.live.com', 2],
  ['www.reddit.com', 2],
  ['news.ycombinator.com', 1],
  ['duckduckgo.com', 1],
  ['www.bing.com', 2],
  ['blog.example.net', 1],
])
const TYPE = weighted<string>([
  ['link', 6],
  ['text', 1],
  ['menu', 1],
  ['wi-fi', 1],
  ['email', 1],
])
const DOMAIN = weighted<string>([
  ['localhost', 6],
  ['go.example.com', 3],
  ['qr.example.org', 1],
])

for (let u = 0; u < USERS; u++) if (!reuse) deps.auth.addUser(`u${u}`)
const adminKey = deps.auth.createKey('usr_admin', 'admin').key
const bigMemberKey = deps.auth.createKey('usr_u0', 'member').key
const smallMemberKey = deps.auth.createKey('usr_u40', 'member').key
/** The same callers on the compared store. */
const otherKeys = other
  ? new Map(
      [adminKey, bigMemberKey, smallMemberKey].map((k, i) => [k, other.deps.auth.createKey(['usr_admin', 'usr_u0', 'usr_u40'][i], i ? 'member' : 'admin').key]),
    )
  : null

if (!reuse) {
  const t0 = performance.now()
  const insTag = db.query('INSERT INTO tags (id, user_id, name, name_key, color, created_at, updated_at) VALUES (?, ?, ?, ?, ?, 0, 0)')
  const insLink = db.query(`INSERT INTO links (seq, id, user_id, domain, key, link_type, destination, match_key, data, options, created_at, updated_at)
    VALUES (?, ?, ?, ?, ?, ?, ?, ?, '{}', '{}', ?, ?)`)
  const insLinkTag = db.query('INSERT INTO link_tags (tag_id, link_seq, pos) VALUES (?, ?, 0)')
  const linkUtm: ([string, string, string] | null)[] = [null]
  db.transaction(() => {
    for (let u = 0; u < USERS; u++) for (let k = 0; k < 10; k++) insTag.run(`tag_u${u}_${k}`, `usr_u${u}`, `tag${k}`, `tag${k}`, 'blue')
    for (let seq = 1; seq <= LINKS; seq++) {
      // Skewed ownership: a few users own most links.
      const u = Math.min(USERS - 1, Math.floor(USERS * rnd() ** 3))
      insLink.run(
        seq,
        `lnk_b${seq}`,
        `usr_u${u}`,
        DOMAIN(),
        seq.toString(36),
        TYPE(),
        `https://shop${seq % 3000}.example.com/p/${seq}`,
        `m${seq}`,
        START,
        START,
      )
      if (rnd() < 0.4) insLinkTag.run(`tag_u${u}_${Math.floor(rnd() * 10)}`, seq)
      linkUtm.push(
        rnd() < 0.4
          ? [['newsletter', 'poster', 'instagram', 'flyer', 'google'][seq % 5]!, ['email', 'print', 'social', 'cpc'][seq % 4]!, `campaign-${seq % 150}`]
          : null,
      )
    }
  })()
  // Zipf over links: the r-th most popular link gets weight 1/r^1.05.
  const LINK = weighted(Array.from({ length: LINKS }, (_, r) => [1 + Math.floor(rnd() * LINKS), 1 / (r + 1) ** 1.05] as [number, number]))
  const hourWeight: number[] = []
  for (let h = 0; h < HOURS; h++) {
    const hod = h % 24
    const dow = (Math.floor((START / 3_600_000 + h) / 24) + 4) % 7 // 0 = Sunday
    hourWeight.push((0.3 + Math.max(0, Math.sin(((hod - 6) / 24) * 2 * Math.PI)) * 1.4) * (dow === 0 || dow === 6 ? 0.8 : 1.1) * (0.6 + 0.8 * (h / HOURS)))
  }
  const totalWeight = hourWeight.reduce((a, b) => a + b, 0)
  const write = (rows: ClickEvent[]) => deps.events.write(rows)
  let made = 0
  let carry = 0
  let batch: ClickEvent[] = []
  for (let h = 0; h < HOURS; h++) {
    const want = (N * hourWeight[h]!) / totalWeight + carry
    const k = Math.floor(want)
    carry = want - k
    for (let i = 0; i < k; i++) {
      const seq = LINK()
      const place = PLACE()
      const [region, cities] = place ? place[3][Math.floor(rnd() * place[3].length)]! : [null, [null]]
      const [os, browser, device] = UA()
      const scan = rnd() < (seq % 3 === 0 ? 0.7 : 0.15)
      const referer = scan ? null : REFERER()
      const utm = linkUtm[seq]
      batch.push({
        linkSeq: seq,
        domain: '',
        at: START + h * 3_600_000 + Math.floor((i / k) * 3_600_000),
        scan,
        continent: place?.[1] ?? null,
        country: place?.[0] ?? null,
        region,
        city: cities[Math.floor(rnd() * cities.length)] ?? null,
        os,
        browser,
        device,
        referer,
        refererUrl: referer ? `https://${referer}/${['', 'search', 'feed', `post/${seq % 50}`][Math.floor(rnd() * 4)]}` : null,
        utmSource: utm?.[0] ?? null,
        utmMedium: utm?.[1] ?? null,
        utmCampaign: utm?.[2] ?? null,
        utmTerm: null,
        utmContent: utm && rnd() < 0.3 ? `v${Math.floor(rnd() * 3)}` : null,
        n: rnd() < 0.03 ? 2 + Math.floor(rnd() * 4) : 1,
      })
    }
    made += k
    // A day of traffic per transaction (the server writes one per second; the rows are the same).
    if (h % 24 === 23 || h === HOURS - 1) {
      await write(batch)
      batch = []
      if (h % 720 === 719) console.log(`seeded ${made.toLocaleString()} events, ${((performance.now() - t0) / 1000).toFixed(0)} s`)
    }
  }
  await deps.events.compact()
  db.exec('ANALYZE')
  console.log(`\nseed: ${((performance.now() - t0) / 1000).toFixed(1)} s, store files ${(storeBytes() / 1e9).toFixed(2)} GB`)
  for (const table of ['events', 'stats_hour', 'stats_day'])
    console.log(`  ${table}: ${(await countOf(`SELECT count(*)::DOUBLE AS n FROM ${table}`)).toLocaleString()} rows`)
}

/** Every file of the store (the folder of --db, without the DuckDB library a compiled binary writes there). */
function storeBytes(): number {
  const dir = dirname(dbPath)
  return readdirSync(dir)
    .filter((f) => !f.startsWith('libduckdb') && !f.endsWith('.log'))
    .reduce((a, f) => a + statSync(join(dir, f)).size, 0)
}
async function countOf(sql: string): Promise<number> {
  return (await deps.events.snapshot(async (tx) => (await tx.run([{ sql, args: [] }]))[0]![0]!.n)) as number
}

if (arg('ingest', '')) {
  // The recorder's rate: visits with a distinct referer each (no two merge), recorded as fast as the loop
  // goes, flushed at its batch size, until the last is stored.
  const n = Number(arg('ingest', ''))
  const before = await countOf('SELECT coalesce(sum(n), 0)::DOUBLE AS n FROM events')
  const t = performance.now()
  for (let i = 0; i < n; i++) {
    deps.recorder.record({
      linkSeq: 1 + (i % LINKS),
      domain: 'localhost',
      at: Date.now(),
      scan: false,
      referer: 'ingest.example',
      refererUrl: `https://ingest.example/${i}`,
      visitor: { id: 1, os: 'Android', browser: 'Chrome', device: 'Mobile' },
      geo: { id: 1, continent: 'Europe', country: 'DE', region: 'Bavaria', city: 'Munich' },
      utm: { id: 1, source: null, medium: null, campaign: null, term: null, content: null },
    })
    // Paced by the writer: the recorder holds at most half its bound (the rest would be dropped, not measured).
    if (i % 1000 === 999) while (deps.recorder.held().rows > 50_000) await Bun.sleep(5)
  }
  while (deps.recorder.pendingCount() > 0) await deps.recorder.flush()
  const ms = performance.now() - t
  const stored = (await countOf('SELECT coalesce(sum(n), 0)::DOUBLE AS n FROM events')) - before
  console.log(
    `\ningest: ${n.toLocaleString()} visits (one row each) recorded and stored in ${(ms / 1000).toFixed(2)} s: ${Math.round(n / (ms / 1000)).toLocaleString()} clicks/s; stored ${stored.toLocaleString()}`,
  )
}

// Live traffic during the timings: the real recorder, flushing each second from its worker.
const liveSeqs = [1, 2, 3, 50, 500, 5000]
let live = 0
deps.recorder.start()
other?.deps.recorder.start()
const traffic = setInterval(() => {
  for (let i = 0; i < 50; i++) {
    live++
    // With --compare the visits alternate between the two stores: the machine carries the same write load.
    const recorder = other && i % 2 ? other.deps.recorder : deps.recorder
    recorder.record({
      linkSeq: liveSeqs[i % liveSeqs.length]!,
      domain: 'localhost',
      at: Date.now(),
      scan: i % 3 === 0,
      referer: null,
      refererUrl: null,
      visitor: { id: 1, os: 'Android', browser: 'Chrome', device: 'Mobile' },
      geo: { id: 1, continent: 'Europe', country: 'DE', region: 'Bavaria', city: 'Munich' },
      utm: { id: 1, source: null, medium: null, campaign: null, term: null, content: null },
    })
  }
}, 10)

type App = typeof app
async function timeOne(target: App, query: string, key: string): Promise<{ ms: number; body: string }> {
  const t = performance.now()
  const res = await target.handle(new Request(`https://localhost/api/statistics?${query}`, { headers: { authorization: `Bearer ${key}` } }), '127.0.0.1')
  const body = await res.text()
  const ms = performance.now() - t
  if (res.status !== 200) throw new Error(`${query}: ${res.status} ${body}`)
  return { ms, body }
}

async function time(label: string, query: string, key = adminKey) {
  if ((ONLY && !label.includes(ONLY)) || (SKIP && label.includes(SKIP))) return
  const {
    aMs: samples,
    bMs: otherSamples,
    body,
    same,
  } = await alternate(
    RUNS,
    () => timeOne(app, query, key),
    other ? () => timeOne(other.app as App, query, otherKeys!.get(key)!) : null,
    () => Bun.sleep(1),
  )
  const parsed = JSON.parse(body)
  const what = Array.isArray(parsed) ? `${parsed.length} rows` : `${parsed.clicks} clicks`
  if (other)
    console.log(`| ${label.padEnd(62)} | ${minMedianMax(otherSamples)} | ${minMedianMax(samples)} | ${what.padEnd(14)} | ${same ? 'same' : 'DIFFERENT'} |`)
  else console.log(`| ${label.padEnd(62)} | ${minMedianMax(samples)} | ${what.padEnd(14)} |`)
}

if (process.argv.includes('--bytes')) {
  await deps.events.compact()
  const rows = await countOf('SELECT count(*)::DOUBLE AS n FROM events')
  const clicks = await countOf('SELECT sum(n)::DOUBLE AS n FROM events')
  const dir = dirname(dbPath)
  const files = readdirSync(dir).filter((f) => !f.startsWith('libduckdb') && !f.endsWith('.log'))
  const total = storeBytes()
  console.log(
    `\nstore (every file in ${dir}): ${(total / 1e6).toFixed(1)} MB for ${rows.toLocaleString()} event rows, ${clicks.toLocaleString()} clicks: ${(total / clicks).toFixed(1)} B per click`,
  )
  for (const f of files)
    console.log(
      `  ${f.padEnd(28)} ${(statSync(join(dir, f)).size / 1e6).toFixed(1).padStart(8)} MB ${(statSync(join(dir, f)).size / clicks).toFixed(1).padStart(7)} B/click`,
    )
}

await Bun.sleep(1500)
const seeded = reuse ? await countOf('SELECT count(*)::DOUBLE AS n FROM events') : N
console.log(`\n${seeded.toLocaleString()} events; GET /statistics through the API app, ms over ${RUNS} runs, while ~5,000 visits/s are recorded`)
if (other) {
  console.log(`A = ${compareDir}, B = this checkout; runs alternate A/B`)
  console.log(`| ${'query'.padEnd(62)} | A min  | A med  | A max  | B min  | B med  | B max  | result         | answers |`)
  console.log(`|${'-'.repeat(64)}|--------|--------|--------|--------|--------|--------|----------------|---------|`)
} else {
  console.log(`| ${'query'.padEnd(62)} | min    | median | max    | result         |`)
  console.log(`|${'-'.repeat(64)}|--------|--------|--------|----------------|`)
}
const callerKeys = { admin: adminKey, bigMember: bigMemberKey, smallMember: smallMemberKey }
for (const q of statsQueries(END, { top: topLink(), median: medianLink() })) await time(q.label, q.query, callerKeys[q.caller])
clearInterval(traffic)
await deps.recorder.stop()
await other?.deps.recorder.stop()
await other?.deps.close()
console.log(`\nlive visits recorded during the timings: ${live.toLocaleString()}`)
await deps.close()

function topLink(): string {
  return (db.query('SELECT id FROM links ORDER BY clicks DESC LIMIT 1').get() as { id: string }).id
}
function medianLink(): number {
  return (db.query('SELECT seq FROM links WHERE clicks > 0 ORDER BY clicks DESC LIMIT 1 OFFSET 2000').get() as { seq: number }).seq
}
