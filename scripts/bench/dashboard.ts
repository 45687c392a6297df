/**
 * The dashboard in Chromium against the compiled binary, on loopback:
 *  - first load (signed out): requests, bytes on the wire (compressed) and JavaScript bytes,
 *    time until the sign-in form is usable;
 *  - signed in: time until the links table shows its first page, a search, sort by clicks;
 *  - statistics: time until the chart and the top lists are drawn.
 * Run it on a store seeded by scripts/bench/stats.ts (20,000 links, 10M clicks):
 *   bun scripts/bench/stats.ts --db /tmp/statsbench/shortlink.db --runs 1
 *   bun scripts/bench/dashboard.ts --data /tmp/statsbench [--runs 5] [--bin dist/shortlink]
 * Prints min / median / max over the runs (a fresh browser context each run: cold cache).
 */
import { writeFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { launchBrowser } from '../../test/helpers/browser'
import { minMedianMax } from './ab'
import { arg } from './args'
import { freePort } from './redirect-server'

const ROOT = resolve(import.meta.dir, '../..')
const runs = Number(arg('runs', '5'))
const dataDir = resolve(arg('data', '/tmp/statsbench'))
const bin = resolve(ROOT, arg('bin', 'dist/shortlink'))
const adminKey = `sk_bench_${crypto.randomUUID().replaceAll('-', '')}`

const httpsPort = await freePort()
const config = join(dataDir, 'dashboard-bench.toml')
writeFileSync(
  config,
  `[server]\nbaseUrl = "https://localhost:${httpsPort}/api"\nhttpsPort = ${httpsPort}\nhttpPort = ${await freePort()}\nhostname = "127.0.0.1"\ndataDir = "${dataDir}"\n[limits]\napiPerMinute = 100000\n`,
)
const proc = Bun.spawn([bin, 'serve', '--config', config], {
  cwd: dataDir,
  env: { ...process.env, SHORTLINK_ADMIN_KEY: adminKey },
  stdout: 'ignore',
  stderr: 'pipe',
})
let log = ''
const reader = (proc.stderr as ReadableStream<Uint8Array>).getReader()
while (!log.includes('"msg":"started"')) {
  const chunk = await reader.read()
  if (chunk.done) throw new Error(`server exited: ${log}`)
  log += new TextDecoder().decode(chunk.value)
}
reader.releaseLock()
void proc.stderr.pipeTo(new WritableStream())
const origin = `https://localhost:${httpsPort}`
const browser = await launchBrowser()

const counted = await fetch(`${origin}/api/links/count`, {
  headers: { authorization: `Bearer ${adminKey}` },
  tls: { rejectUnauthorized: false },
} as RequestInit)
const linkCount = ((await counted.json()) as { count: number }).count
console.log(`store: ${dataDir} (${linkCount.toLocaleString()} links)`)

const samples: Record<string, number[]> = {}
const add = (name: string, v: number) => {
  samples[name] ??= []
  samples[name]!.push(v)
}

/**
 * Opens a statistics view and returns the ms until its last GET /statistics answer arrived
 * (chart, totals, map and top list), once the chart is drawn and nothing is in flight.
 */
async function statisticsView(page: import('playwright-core').Page, url: string): Promise<number> {
  let inFlight = 0
  let answered = 0
  let lastAnswer = 0
  const isStats = (u: string) => u.includes('/api/statistics')
  const onRequest = (r: import('playwright-core').Request) => {
    if (isStats(r.url())) inFlight++
  }
  const onDone = (r: import('playwright-core').Request) => {
    if (!isStats(r.url())) return
    inFlight--
    answered++
    lastAnswer = performance.now()
  }
  page.on('request', onRequest)
  page.on('requestfinished', onDone)
  page.on('requestfailed', onDone)
  const t0 = performance.now()
  await page.goto(url)
  await page.locator('canvas').first().waitFor()
  while (inFlight > 0 || answered < 4) await page.waitForEvent('requestfinished')
  page.off('request', onRequest)
  page.off('requestfinished', onDone)
  page.off('requestfailed', onDone)
  return lastAnswer - t0
}

async function timed(action: () => Promise<unknown>, done: () => Promise<unknown>): Promise<number> {
  const t0 = performance.now()
  await action()
  await done()
  return performance.now() - t0
}

for (let run = 0; run < runs; run++) {
  const context = await browser.newContext({ ignoreHTTPSErrors: true, viewport: { width: 1280, height: 900 } })
  const page = await context.newPage()
  let requests = 0
  let wire = 0
  let js = 0
  const sizes: Promise<void>[] = []
  page.on('requestfinished', (r) => {
    requests++
    sizes.push(
      r.sizes().then((s) => {
        wire += s.responseBodySize + s.responseHeadersSize
        if (r.resourceType() === 'script') js += s.responseBodySize
      }),
    )
  })
  // First load, signed out: until the sign-in form can be used.
  add(
    'first load → sign-in form usable (ms)',
    await timed(
      () => page.goto(`${origin}/app/`),
      () => page.getByRole('button', { name: 'Sign in' }).waitFor(),
    ),
  )
  await page.waitForLoadState('networkidle')
  await Promise.all(sizes)
  add('first load: requests', requests)
  add('first load: bytes on the wire (KB)', wire / 1024)
  add('first load: JavaScript, compressed (KB)', js / 1024)

  await page.getByRole('radio', { name: 'API key' }).check()
  await page.locator('input[name="apiKey"]').fill(adminKey)
  add(
    `sign in → links table, first page of ${linkCount.toLocaleString()} (ms)`,
    await timed(
      () => page.getByRole('button', { name: 'Sign in' }).click(),
      () => page.locator('table tbody tr').first().waitFor(),
    ),
  )
  add(
    'links: reload → first page (ms)',
    await timed(
      () => page.goto(`${origin}/app/links`),
      () => page.locator('table tbody tr').first().waitFor(),
    ),
  )
  add(
    'links: sorted by clicks (ms)',
    await timed(
      () => page.goto(`${origin}/app/links?sortBy=clicks`),
      () => page.locator('table tbody tr').first().waitFor(),
    ),
  )
  add(
    'links: search "shop" (ms)',
    await timed(
      () => page.goto(`${origin}/app/links?search=shop`),
      () => page.locator('table tbody tr, .state-empty').first().waitFor(),
    ),
  )
  for (const [label, query] of [
    ['default range (30 days)', ''],
    ['last 12 months', '?interval=1y'],
    ['all time, top browsers, phones only', '?interval=all&top=browser&device=Mobile'],
  ] as const)
    add(`statistics of all links, ${label}: every answer in (ms)`, await statisticsView(page, `${origin}/app/stats${query}`))
  await context.close()
}

console.log('| measure | min | median | max |\n|---|---|---|---|')
for (const [name, values] of Object.entries(samples)) console.log(`| ${name} | ${minMedianMax(values)} |`)
await browser.close()
proc.kill('SIGTERM')
await proc.exited
