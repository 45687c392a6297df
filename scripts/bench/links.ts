/**
 * Links list/count at scale: seeds N links (default 1,000,000) straight into a store
 * file with the real migrations, then times typical filtered, sorted pages, searches and
 * counts through the real API app (in-process, no sockets): min, median and max. Usage:
 *   bun scripts/bench/links.ts [--links 1000000] [--db /tmp/links-bench.db] [--reuse] [--runs 15] [--only <label text>]
 * A/B in one run: `--compare <checkout dir> --compare-db <its copy of the store>` (with --reuse) also opens that
 * checkout's app on its copy and alternates the two on every run of every query (A = the other checkout,
 * B = this one), with both answers compared.
 */
import type { createApiApp } from '../../src/app'
import { alternate, minMedianMax } from './ab'
import { arg, benchApp, seededRandom } from './args'

type App = ReturnType<typeof createApiApp>
const N = Number(arg('links', '1000000'))
const RUNS = Number(arg('runs', '15'))
/** Time only the queries whose label contains this text. */
const ONLY = arg('only', '')
const dbPath = arg('db', '/tmp/links-bench.db')
const { reuse, deps, app } = benchApp(dbPath)
const compareDir = arg('compare', '')
const other = compareDir ? (await import(`${compareDir}/scripts/bench/args.ts`)).benchApp(arg('compare-db', '')) : null
if (other && !(reuse && other.reuse)) throw new Error('--compare needs --reuse and an existing --compare-db')
const USERS = 100
for (let u = 0; u < USERS; u++) deps.auth.addUser(`u${u}`)
const adminKey = deps.auth.createKey('usr_admin', 'admin').key
const memberKey = deps.auth.createKey('u1', 'member').key
/** The same callers on the compared store. */
const otherKeys = other
  ? new Map([
      [adminKey, other.deps.auth.createKey('usr_admin', 'admin').key],
      [memberKey, other.deps.auth.createKey('u1', 'member').key],
    ])
  : null

// Deterministic pseudo-random numbers so runs are comparable.
const rnd = seededRandom(42)
const TYPES = ['link', 'link', 'link', 'link', 'text', 'email', 'wi-fi', 'menu', 'google-form', 'map']
const WORDS = ['shoes', 'summer', 'sale', 'menu', 'wifi', 'poster', 'flyer', 'promo', 'event', 'launch', 'coupon', 'store']

if (!reuse) {
  const t0 = performance.now()
  const db = deps.db
  const tagIds: string[][] = []
  const insTag = db.query('INSERT INTO tags (id, user_id, name, name_key, color, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?)')
  db.transaction(() => {
    for (let u = 0; u < USERS; u++) {
      tagIds[u] = []
      for (let k = 0; k < 10; k++) {
        const id = `tag_u${u}_${k}`
        insTag.run(id, `usr_u${u}`, `tag${k}`, `tag${k}`, 'blue', 0, 0)
        tagIds[u]!.push(id)
      }
    }
  })()
  db.exec('PRAGMA synchronous = OFF')
  const ins =
    db.query(`INSERT INTO links (seq, id, user_id, domain, key, link_type, destination, match_key, data, options, archived, clicks, last_clicked, created_at, updated_at)
    VALUES (?, ?, ?, 'localhost', ?, ?, ?, ?, ?, '{}', ?, ?, ?, ?, ?)`)
  const insTagLink = db.query('INSERT INTO link_tags (tag_id, link_seq, pos) VALUES (?, ?, 0)')
  const insSearch = db.query('INSERT INTO links_search (rowid, body) VALUES (?, ?)')
  const start = Date.UTC(2025, 0, 1)
  const span = 365 * 86_400_000
  const BATCH = 50_000
  for (let b = 0; b < N; b += BATCH) {
    db.transaction(() => {
      for (let i = b; i < Math.min(N, b + BATCH); i++) {
        const seq = i + 1
        // Skewed ownership: a few users own most links.
        const u = Math.min(USERS - 1, Math.floor(USERS * rnd() ** 3))
        const type = TYPES[Math.floor(rnd() * TYPES.length)]!
        const word = WORDS[Math.floor(rnd() * WORDS.length)]!
        const dest = `https://shop${i % 5000}.example.com/${word}/${i}`
        const created = start + Math.floor((i / N) * span)
        const clicks = rnd() < 0.3 ? 0 : Math.floor(1000 * rnd() ** 4)
        const last = clicks ? created + Math.floor(rnd() * (start + span - created)) : null
        const key = seq.toString(36).padStart(7, '0')
        ins.run(seq, `lnk_bench${seq}`, `usr_u${u}`, key, type, dest, dest, `{"url":"${dest}"}`, rnd() < 0.05 ? 1 : 0, clicks, last, created, created)
        if (rnd() < 0.4) insTagLink.run(tagIds[u]![Math.floor(rnd() * 10)]!, seq)
        insSearch.run(seq, `${key} ${dest}`)
      }
    })()
    process.stdout.write(`\rseeded ${Math.min(N, b + BATCH).toLocaleString()} links`)
  }
  db.exec('PRAGMA synchronous = NORMAL')
  db.exec('ANALYZE')
  console.log(`\nseed: ${((performance.now() - t0) / 1000).toFixed(1)} s`)
}

async function timeOne(target: App, path: string, key: string): Promise<{ ms: number; body: string }> {
  const t = performance.now()
  const res = await target.handle(new Request(`https://localhost/api${path}`, { headers: { authorization: `Bearer ${key}` } }), '127.0.0.1')
  const body = await res.text()
  const ms = performance.now() - t
  if (res.status !== 200) throw new Error(`${path}: ${res.status} ${body}`)
  return { ms, body }
}

async function time(label: string, path: string, key: string) {
  if (ONLY && !label.includes(ONLY)) return
  const {
    aMs: samples,
    bMs: otherSamples,
    body,
    same,
  } = await alternate(RUNS, () => timeOne(app, path, key), other ? () => timeOne(other.app as App, path, otherKeys!.get(key)!) : null)
  const parsed = JSON.parse(body)
  const what = `${parsed.total ?? parsed.count} matches`
  if (other)
    console.log(`| ${label.padEnd(58)} | ${minMedianMax(otherSamples)} | ${minMedianMax(samples)} | ${what.padEnd(15)} | ${same ? 'same' : 'DIFFERENT'} |`)
  else console.log(`| ${label.padEnd(58)} | ${minMedianMax(samples)} | ${what.padEnd(15)} |`)
}

console.log(`\n${N.toLocaleString()} links; ms through the API app over ${RUNS} runs`)
if (other) {
  console.log(`A = ${compareDir}, B = this checkout; runs alternate A/B`)
  console.log(`| ${'query'.padEnd(58)} | A min  | A med  | A max  | B min  | B med  | B max  | result          | answers |`)
  console.log(`|${'-'.repeat(60)}|--------|--------|--------|--------|--------|--------|-----------------|---------|`)
} else {
  console.log(`| ${'query'.padEnd(58)} | min    | median | max    | result          |`)
  console.log(`|${'-'.repeat(60)}|--------|--------|--------|-----------------|`)
}
await time('admin: newest page (pageSize 20)', '/links', adminKey)
await time('admin: page 50, sort clicks desc', '/links?sortBy=clicks&page=50', adminKey)
await time('admin: sort last click asc (never-clicked last)', '/links?sortBy=last_created_at&sortOrder=asc', adminKey)
await time('admin: linkType=email, newest, pageSize 100', '/links?linkType=email&pageSize=100', adminKey)
await time('admin: linkType=link, sort clicks desc', '/links?linkType=link&sortBy=clicks', adminKey)
await time('admin: tagIds (2), sort last click', '/links?tagIds=tag_u0_1&tagIds=tag_u0_2&sortBy=last_created_at', adminKey)
await time('admin: domain=localhost, page 10, sort clicks asc', '/links?domain=localhost&page=10&sortBy=clicks&sortOrder=asc', adminKey)
await time('admin: userIds=usr_u3, sort clicks', '/links?userIds=usr_u3&sortBy=clicks', adminKey)
await time('admin: search "summer" (trigram), newest', '/links?search=summer', adminKey)
await time('admin: search "shop42.example" (trigram)', '/links?search=shop42.example', adminKey)
await time('member: newest page', '/links', memberKey)
await time('member: linkType=text, sort last click', '/links?linkType=text&sortBy=last_created_at', memberKey)
await time('member: tagIds=tag_u1_3, newest', '/links?tagIds=tag_u1_3', memberKey)
await time('member: search "sale", sort clicks', '/links?search=sale&sortBy=clicks', memberKey)
await time('count: admin, all', '/links/count', adminKey)
await time('count: admin, linkType=link', '/links/count?linkType=link', adminKey)
await time('count: admin, includeArchived', '/links/count?includeArchived=true', adminKey)
await time('count: member', '/links/count', memberKey)
await time('count: member, tagIds', '/links/count?tagIds=tag_u1_3&tagIds=tag_u1_4', memberKey)
await time('count: admin, search "promo"', '/links/count?search=promo', adminKey)
await time('count: member, search "sale"', '/links/count?search=sale', memberKey)
// Common terms (each matches about 1 link in 12) under every sort, as an admin and as a member.
const SORTS = ['sortBy=created_at', 'sortBy=created_at&sortOrder=asc', 'sortBy=clicks', 'sortBy=clicks&sortOrder=asc', 'sortBy=last_created_at']
for (const [who, key, term] of [
  ['admin', adminKey, 'summer'],
  ['member', memberKey, 'sale'],
] as const)
  for (const sort of SORTS) await time(`${who}: search "${term}", ${sort}`, `/links?search=${term}&${sort}`, key)
await time('admin: search "promo", page 20, sort clicks', '/links?search=promo&page=20&sortBy=clicks', adminKey)
await time('admin: search "coupon", userIds=usr_u3, newest', '/links?search=coupon&userIds=usr_u3', adminKey)
await time('admin: search "flyer", linkType=link, includeArchived', '/links?search=flyer&linkType=link&includeArchived=true', adminKey)
deps.db.close()
other?.deps.db.close()
