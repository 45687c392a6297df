/**
 * Backup and restore at scale, and what a backup costs the redirects meanwhile. Takes a store
 * seeded by scripts/bench/stats.ts (10M click events over 20,000 links), tops its links up to
 * --links (default 1,000,000), in place and once, with SQL that copies the shape of the seeded rows (each with its
 * own id, key and destination; the search-index triggers fire as for any insert), starts the
 * server on it (pinned to CPU 1, wrk on CPU 0), and per pass: redirect load in 10 s wrk windows
 * with no backup, then the same windows while `shortlink backup` runs through the server; then
 * `shortlink restore` into a new dir. Prints p99 per window, backup and restore times and sizes,
 * and the scrape time of /metrics on this node. Usage:
 *   bun scripts/bench/backup.ts --db /var/tmp/stats-bench.db [--links 1000000] [--passes 2] [--bin dist/shortlink] [--dir /var/tmp/x]
 */
import { Database } from 'bun:sqlite'
import { cpSync, existsSync, mkdirSync, rmSync, writeFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { $ } from 'bun'
import { arg } from './args'
import { freePort } from './redirect-server'

const source = arg('db', '')
if (!source || !existsSync(source)) throw new Error('--db PATH: a store seeded by scripts/bench/stats.ts')
const LINKS = Number(arg('links', '1000000'))
const passes = Number(arg('passes', '2'))
const ROOT = resolve(import.meta.dir, '../..')
const bin = arg('bin', '')
const dir = arg('dir', '/var/tmp/shortlink-backup-bench')
const cmd = bin ? [resolve(ROOT, bin)] : ['bun', join(ROOT, 'src/main.ts')]
const ADMIN_KEY = 'bench_admin_key_0123456789abcdef'
const BROWSER = 'Mozilla/5.0 (iPhone; CPU iPhone OS 17_4 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4 Mobile/15E148 Safari/604.1'
const mb = (bytes: number) => `${(bytes / 2 ** 20).toFixed(0)} MiB`
const du = async (path: string) => Number((await $`du -sb ${path}`.text()).split('\t')[0])

let t = performance.now()
// Top the seeded store's links up to LINKS (in place, once: later runs find them there), copying the shape of seeded rows.
{
  const db = new Database(source)
  db.exec('PRAGMA journal_mode = WAL')
  db.exec('PRAGMA cache_size = -1000000')
  const have = (db.query('SELECT count(*) AS n FROM links').get() as { n: number }).n
  const maxSeq = (db.query('SELECT max(seq) AS m FROM links').get() as { m: number }).m
  t = performance.now()
  // One statement per 100,000 links (a recursive count joined to the seeded rows): 7,000 links/s here, where
  // a statement per link spent most of its time in JavaScript. Each insert fires the search-index triggers.
  db.exec('PRAGMA synchronous = OFF')
  const insert = db.query(`WITH RECURSIVE nums(n) AS (SELECT ?1 UNION ALL SELECT n + 1 FROM nums WHERE n + 1 < ?2)
    INSERT INTO links (id, user_id, domain, key, link_type, destination, match_key, data, options, qr_options, created_at, updated_at)
    SELECT 'lnk_bulk' || n, l.user_id, l.domain, 'bulk' || n, l.link_type, 'https://example.com/bulk/' || n, 'https://example.com/bulk/' || n,
      json_set(l.data, '$.url', 'https://example.com/bulk/' || n), l.options, l.qr_options, l.created_at, l.updated_at
    FROM nums JOIN links l ON l.seq = 1 + (nums.n % ?3)`)
  for (let n = have; n < LINKS; n += 100_000) insert.run(n, Math.min(n + 100_000, LINKS), maxSeq)
  db.exec('PRAGMA wal_checkpoint(TRUNCATE)')
  console.log(`links: ${have} seeded, topped up to ${LINKS} in ${((performance.now() - t) / 1000).toFixed(0)} s`)
  const clicks = (db.query('SELECT sum(n) AS n FROM click_events_compact').get() as { n: number }).n
  console.log(`click events: ${clicks}; store ${mb(Bun.file(source).size)}`)
  db.close()
}

rmSync(dir, { recursive: true, force: true })
mkdirSync(join(dir, 'data'), { recursive: true, mode: 0o700 })
t = performance.now()
cpSync(source, join(dir, 'data/shortlink.db'))
console.log(`copied the seeded store (${mb(Bun.file(source).size)}) in ${((performance.now() - t) / 1000).toFixed(1)} s`)

const httpsPort = await freePort()
const metricsPort = await freePort()
writeFileSync(
  join(dir, 'shortlink.toml'),
  `[server]\nbaseUrl = "https://localhost:${httpsPort}/api"\nhttpsPort = ${httpsPort}\nhttpPort = ${await freePort()}\nhostname = "127.0.0.1"\ndataDir = "${dir}/data"\n[limits]\napiPerMinute = 1000000\n[metrics]\nlisten = "127.0.0.1:${metricsPort}"\n`,
)
const config = ['--config', join(dir, 'shortlink.toml')]
const server = Bun.spawn(['taskset', '-c', '1', ...cmd, 'serve', ...config], {
  cwd: dir,
  env: { ...process.env, SHORTLINK_ADMIN_KEY: ADMIN_KEY },
  stdout: 'ignore',
  stderr: 'pipe',
})
let log = ''
void (async () => {
  for await (const c of server.stderr as ReadableStream<Uint8Array>) log += new TextDecoder().decode(c)
})()
t = performance.now()
while (!log.includes('"msg":"started"')) {
  if (server.exitCode !== null) throw new Error(`server exited:\n${log}`)
  await Bun.sleep(100)
}
console.log(`server started on the store in ${((performance.now() - t) / 1000).toFixed(1)} s (migrations included)`)
const ca = await Bun.file(join(dir, 'data/tls/ca.pem')).text()
const created = await fetch(`https://localhost:${httpsPort}/api/links/link`, {
  method: 'POST',
  headers: { authorization: `Bearer ${ADMIN_KEY}`, 'content-type': 'application/json' },
  body: JSON.stringify({ data: { url: 'https://example.com/landing' }, linkOptions: { key: 'bench-backup' } }),
  tls: { ca },
} as RequestInit)
if (created.status !== 200) throw new Error(`create: ${created.status} ${await created.text()}`)

const ms = (v: string) => (v.endsWith('us') ? Number.parseFloat(v) / 1000 : v.endsWith('ms') ? Number.parseFloat(v) : Number.parseFloat(v) * 1000)
async function window(secs = 10) {
  const out = await $`taskset -c 0 wrk -t2 -c32 -d${secs}s --latency -H ${`User-Agent: ${BROWSER}`} ${`https://localhost:${httpsPort}/bench-backup`}`.text()
  return { rps: Number(/Requests\/sec:\s+([\d.]+)/.exec(out)?.[1] ?? 0), p99: ms(/\s99%\s+(\S+)/.exec(out)?.[1] ?? 'NaN') }
}
const mmm = (xs: number[], d = 1) => {
  const s = [...xs].sort((a, b) => a - b)
  return `${s[0]!.toFixed(d)} / ${s[s.length >> 1]!.toFixed(d)} / ${s[s.length - 1]!.toFixed(d)}`
}

await window(3) // warm-up
const quiet: { rps: number; p99: number }[] = []
const during: { rps: number; p99: number }[] = []
console.log(`uptime: ${(await $`uptime`.text()).trim()}`)
for (let p = 0; p < passes; p++) {
  for (let i = 0; i < 3; i++) quiet.push(await window())
  const archive = join(dir, `backup-${p}.tar.zst`)
  t = performance.now()
  const backup = Bun.spawn([...cmd, 'backup', archive, ...config], { stdout: 'pipe', stderr: 'pipe' })
  let seconds = 0
  void backup.exited.then(() => {
    seconds = (performance.now() - t) / 1000
  })
  while (!seconds) during.push(await window())
  const out = await new Response(backup.stdout).text()
  if ((await backup.exited) !== 0) throw new Error(`backup failed: ${await new Response(backup.stderr).text()}`)
  console.log(`pass ${p + 1}: backup under redirect load in ${seconds.toFixed(0)} s (${out.trim().split('\n')[0]}); archive ${mb(Bun.file(archive).size)}`)
  const target = join(dir, `restored-${p}`)
  t = performance.now()
  const restored = await $`${cmd} restore ${archive} --data-dir ${target}`.quiet()
  console.log(
    `pass ${p + 1}: restore in ${((performance.now() - t) / 1000).toFixed(0)} s into ${mb(await du(target))}: ${restored.stdout.toString().trim().split('\n')[0]}`,
  )
  rmSync(target, { recursive: true, force: true })
  rmSync(archive, { force: true })
  rmSync(`${archive}.sha256`, { force: true })
}
console.log(
  `redirects, 10 s windows, no backup: req/s ${mmm(
    quiet.map((w) => w.rps),
    0,
  )}, p99 ms ${mmm(quiet.map((w) => w.p99))}`,
)
console.log(
  `redirects, 10 s windows, backup running: req/s ${mmm(
    during.map((w) => w.rps),
    0,
  )}, p99 ms ${mmm(during.map((w) => w.p99))}`,
)

const scrapes: number[] = []
for (let i = 0; i < 20; i++) {
  const s = performance.now()
  await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text()
  scrapes.push(performance.now() - s)
}
console.log(`scrape of /metrics on this node (ms, min/median/max of 20): ${mmm(scrapes, 2)}`)
server.kill('SIGTERM')
await server.exited
