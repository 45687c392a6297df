/**
 * Redirect latency while POST /qr/scan decodes a burst of 3000 px JPEG photos: the
 * decoding runs on a worker thread, so short links keep answering. Usage:
 *   bun scripts/bench/scan-burst.ts [--bin dist/shortlink] [--scans 8]
 */
import { join } from 'node:path'
import { jpegOf, plainQrSvg, serveFixtures } from '../../src/qr/qr.test-fixtures'
import { startServer } from '../../test/helpers/server'
import { arg } from './args'

if (arg('bin', '')) process.env.SHORTLINK_BIN = join(import.meta.dir, '../..', arg('bin', ''))
const scans = Number(arg('scans', '8'))

const photo = await jpegOf(plainQrSvg('https://localhost/photo?qr=1', 3000, { rotate: 8 }), 85)
const fixtures = serveFixtures({ '/photo.jpg': { body: photo, type: 'image/jpeg' } })
const s = await startServer({ toml: '[scan]\nallowPrivateNetworks = true\n[limits]\napiPerMinute = 100000\n' })
await s.api('/links/link', { method: 'POST', json: { data: { url: 'https://example.com/' }, linkOptions: { key: 'r' } } })
const redirect = `https://localhost:${s.httpsPort}/r`
const ua = { 'user-agent': 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0 Safari/537.36' }

const scanOnce = async () => {
  const t = performance.now()
  const r = await s.api('/qr/scan', { method: 'POST', json: { url: fixtures.url('/photo.jpg') } })
  const body = (await r.json()) as { data: string }
  if (!body.data) throw new Error('scan found no code')
  return performance.now() - t
}
await scanOnce() // warm-up: starts the worker and its wasm

const single: number[] = []
for (let i = 0; i < 5; i++) single.push(await scanOnce())
single.sort((a, b) => a - b)
console.log(`one scan of a 3000 px JPEG (${(photo.length / 1024).toFixed(0)} KiB), end to end: median ${single[2]!.toFixed(0)} ms`)

let burstDone = false
const burst = Promise.all(Array.from({ length: scans }, scanOnce)).then((t) => {
  burstDone = true
  return t
})
const latencies: number[] = []
while (!burstDone) {
  const t = performance.now()
  const r = await s.fetch(redirect, { headers: ua })
  if (r.status !== 302) throw new Error(`redirect answered ${r.status}`)
  latencies.push(performance.now() - t)
}
const scanTimes = await burst
latencies.sort((a, b) => a - b)
const pct = (p: number) => latencies[Math.min(latencies.length - 1, Math.floor(p * latencies.length))]!.toFixed(1)
console.log(`${scans} concurrent scans finished in ${Math.max(...scanTimes).toFixed(0)} ms`)
console.log(
  `redirects during the burst: ${latencies.length} answered, p50 ${pct(0.5)} ms, p99 ${pct(0.99)} ms, max ${latencies[latencies.length - 1]!.toFixed(1)} ms`,
)
await s.stop()
fixtures.stop()
