/**
 * Image bombs against a running server: a 600-byte JPEG and a PNG declaring 30000×30000 px,
 * and a real 5000×5000 PNG of zero rows, sent as an uploaded logo (upload + link save +
 * render), as a template's logo URL (save) and to POST /qr/scan, while short links are
 * fetched in a loop. Reports per case over a few runs: answer time, the server's peak RSS
 * growth (VmHWM is reset before each case), the slowest redirect meanwhile; then the RSS
 * growth over 60 renders of 1000 px codes (the native images are released). Usage:
 *   bun scripts/bench/image-bomb.ts [--bin dist/shortlink] [--runs 3]
 */
import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { jpegBomb, pngBomb, serveFixtures } from '../../src/qr/qr.test-fixtures'
import { startServer } from '../../test/helpers/server'
import { arg } from './args'

if (arg('bin', '')) process.env.SHORTLINK_BIN = join(import.meta.dir, '../..', arg('bin', ''))
const runs = Number(arg('runs', '3'))

const bombs = { 'jpeg 30000²': jpegBomb(30000, 30000), 'png 30000² (header)': pngBomb(30000, 30000, 1), 'png 5000² zero rows': pngBomb(5000, 5000, 5000) }
const fixtures = serveFixtures(
  Object.fromEntries(Object.entries(bombs).map(([name, body], i) => [`/${i}`, { body, type: name.startsWith('jpeg') ? 'image/jpeg' : 'image/png' }])),
)
const s = await startServer({ toml: '[scan]\nallowPrivateNetworks = true\n[limits]\napiPerMinute = 1000000\n' })
await s.api('/links/link', { method: 'POST', json: { data: { url: 'https://example.com/' }, linkOptions: { key: 'r' } } })
const redirect = `https://localhost:${s.httpsPort}/r`
const ua = { 'user-agent': 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0 Safari/537.36' }
const pid = s.proc.pid
const kib = (field: string) => Number(new RegExp(`${field}:\\s+(\\d+)`).exec(readFileSync(`/proc/${pid}/status`, 'utf8'))![1]) * 1024
/** Resets the peak (VmHWM) to the current RSS: writing 5 to clear_refs. */
const resetPeak = () => writeFileSync(`/proc/${pid}/clear_refs`, '5')

async function upload(bytes: Uint8Array): Promise<{ status: number; id?: string }> {
  const form = new FormData()
  form.append('file', new Blob([bytes as BlobPart]), 'bomb')
  const r = await s.api('/files', { method: 'POST', body: form })
  return { status: r.status, id: ((await r.json()) as { id?: string }).id }
}

/** Runs `work` while fetching the short link in a loop; returns time, peak RSS growth, slowest redirect and the statuses. */
async function measure(work: () => Promise<number[]>) {
  resetPeak()
  const base = kib('VmRSS')
  let done = false
  const started = performance.now()
  const job = work().finally(() => (done = true))
  let slowest = 0
  while (!done) {
    const t = performance.now()
    const r = await s.fetch(redirect, { headers: ua, redirect: 'manual' })
    await r.arrayBuffer()
    slowest = Math.max(slowest, performance.now() - t)
  }
  const statuses = await job
  return { ms: performance.now() - started, peakMb: (kib('VmHWM') - base) / 2 ** 20, slowest, statuses }
}

const stats = (xs: number[]) => {
  const v = [...xs].sort((a, b) => a - b)
  return `${v[0]!.toFixed(0)}/${v[v.length >> 1]!.toFixed(0)}/${v[v.length - 1]!.toFixed(0)}`
}

console.log(`case | answers | time ms min/med/max | peak RSS growth MB min/med/max | slowest redirect ms min/med/max  (${runs} runs)`)
let n = 0
for (const [i, [name, bytes]] of Object.entries(bombs).entries()) {
  const cases: [string, () => Promise<number[]>][] = [
    [
      `${name}: upload + link save + render (logo fil_)`,
      async () => {
        // Refused at upload since the upload limit; otherwise at link save.
        const up = await upload(bytes)
        if (!up.id) return [up.status]
        const link = await s.api('/links/link', {
          method: 'POST',
          json: { data: { url: `https://example.com/${n++}` }, qrOptions: { logo: { value: up.id } } },
        })
        const body = (await link.json()) as { id?: string }
        const render = body.id ? await s.api(`/qr/${body.id}`) : null
        await render?.arrayBuffer()
        return [up.status, link.status, render?.status ?? 0]
      },
    ],
    [
      `${name}: template save (logo URL)`,
      async () => [
        (await s.api('/qr/templates', { method: 'POST', json: { name: `b${n++}`, qrOptions: { logo: { value: `${fixtures.url(`/${i}`)}?${n}` } } } })).status,
      ],
    ],
    [`${name}: POST /qr/scan`, async () => [(await s.api('/qr/scan', { method: 'POST', json: { url: `${fixtures.url(`/${i}`)}?${n++}` } })).status]],
  ]
  for (const [label, work] of cases) {
    const results = []
    for (let r = 0; r < runs; r++) results.push(await measure(work))
    console.log(
      `${label} | ${[...new Set(results.map((r) => r.statuses.join('+')))].join(',')} | ${stats(results.map((r) => r.ms))} | ${stats(results.map((r) => r.peakMb))} | ${stats(results.map((r) => r.slowest))}`,
    )
  }
}

// Formerly asserted in src/qr/qr.test.ts: 1000 px renders do not pile up native memory.
const link = (await (await s.api('/links/link', { method: 'POST', json: { data: { url: 'https://example.com/renders' } } })).json()) as { id: string }
const before = kib('VmRSS')
for (let i = 0; i < 60; i++) await (await s.api(`/qr/${link.id}?width=1000&texts=n${i}`)).arrayBuffer()
console.log(`60 renders at 1000 px: RSS ${((kib('VmRSS') - before) / 2 ** 20).toFixed(0)} MB more`)

// Formerly asserted in src/qr/qr.test.ts: a scan of a server that never answers ends at the 5 s fetch deadline.
const slow = serveFixtures({})
const t = performance.now()
const slowStatus = (await s.api('/qr/scan', { method: 'POST', json: { url: slow.url('/slow') } })).status
console.log(`scan of a server that never answers: ${slowStatus} after ${(performance.now() - t).toFixed(0)} ms`)
slow.stop()
await s.stop()
fixtures.stop()
