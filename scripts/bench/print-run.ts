/**
 * The 10,000-code print run: time and peak RSS of one zip-png run and one pdf-sheet run over the
 * same links (in process, on a SQLite file, through the API), then every code in the ZIP decoded
 * back to its link (zxing-wasm, as the scan check reads) and the sheet's size per code.
 *   bun scripts/bench/print-run.ts [--links 10000] [--width 300]
 */
import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Unzip, UnzipInflate } from 'fflate'
import { createApiApp } from '../../src/app'
import { buildConfig } from '../../src/config/config.load'
import { createDeps } from '../../src/deps'
import { checkDigitOf } from '../../src/gs1'
import { decodeImageFile } from '../../src/qr/qr.decode'
import { createLogger } from '../../src/shared/log'
import { arg } from './args'

const n = Number(arg('links', '10000'))
const width = Number(arg('width', '300'))
const dir = mkdtempSync(join(tmpdir(), 'print-run-'))
const deps = createDeps(buildConfig({ server: { dataDir: dir }, limits: { apiPerMinute: 1_000_000 } }, {}), join(dir, 'store.db'), createLogger(true))
const app = createApiApp(deps)
const key = deps.auth.createKey('usr_admin', 'admin').key
const api = (path: string, init: { method?: string; json?: unknown } = {}) =>
  app.handle(
    new Request(`https://localhost/api${path}`, {
      method: init.method ?? 'GET',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: init.json === undefined ? undefined : JSON.stringify(init.json),
    }),
    '127.0.0.1',
  )

const ids: string[] = []
const expected = new Map<string, string>()
for (let i = 0; i < n; i++) {
  const body = (
    i % 2
      ? await api('/links/gs1', {
          method: 'POST',
          json: { data: { gtin: `${950600100000 + i}${checkDigitOf(String(950600100000 + i))}`, url: `https://brand.example/p/${i}` } },
        })
      : await api('/links/link', { method: 'POST', json: { data: { url: `https://example.com/item/${i}` } } })
  ).json() as Promise<{ id: string; domain: string; key: string; shortLink: string }>
  const l = await body
  ids.push(l.id)
  expected.set(`${l.domain}_${l.key}`, `${l.shortLink}?qr=1`)
}
console.log(`${n} links made; load: ${(await Bun.file('/proc/loadavg').text()).trim()}`)

async function measure(json: object): Promise<{ seconds: number; peakMb: number; bytes: Uint8Array }> {
  Bun.gc(true)
  const before = process.memoryUsage().rss
  let peak = before
  const sampler = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), 50)
  const t0 = performance.now()
  const started = (await (await api('/qr/batches', { method: 'POST', json })).json()) as { id: string }
  await deps.batches.idle()
  const seconds = (performance.now() - t0) / 1000
  clearInterval(sampler)
  const record = (await (await api(`/qr/batches/${started.id}`)).json()) as { status: string; done: number; failed: number }
  if (record.status !== 'done' || record.done !== n) throw new Error(`run ended ${JSON.stringify(record)}`)
  const bytes = new Uint8Array(await (await api(`/qr/batches/${started.id}/file`)).arrayBuffer())
  return { seconds, peakMb: peak / 2 ** 20, bytes }
}

const zip = await measure({ linkIds: ids, format: 'zip-png', width })
console.log(`zip-png:   ${zip.seconds.toFixed(1)} s, peak RSS ${zip.peakMb.toFixed(0)} MB, ${(zip.bytes.length / 2 ** 20).toFixed(1)} MB`)
const sheet = await measure({ linkIds: ids, format: 'pdf-sheet', width, sheet: { paper: 'A4', codeMm: 30, cropMarks: true } })
console.log(
  `pdf-sheet: ${sheet.seconds.toFixed(1)} s, peak RSS ${sheet.peakMb.toFixed(0)} MB, ${(sheet.bytes.length / 2 ** 20).toFixed(1)} MB (${(sheet.bytes.length / n / 1024).toFixed(2)} KB per code)`,
)

// Every code in the ZIP decodes to its link (streamed out of the archive one file at a time).
let decoded = 0
const pending: Promise<void>[] = []
const unzip = new Unzip((file) => {
  const parts: Uint8Array[] = []
  file.ondata = (err, data, final) => {
    if (err) throw err
    parts.push(data)
    if (final)
      pending.push(
        decodeImageFile(Buffer.concat(parts)).then((text) => {
          if (text !== expected.get(file.name.replace(/\.png$/, ''))) throw new Error(`${file.name} decodes to ${text}`)
          decoded++
        }),
      )
  }
  file.start()
})
unzip.register(UnzipInflate)
unzip.push(zip.bytes, true)
await Promise.all(pending)
console.log(`every code in the ZIP decodes to its link: ${decoded}/${n}`)
process.exit(decoded === n ? 0 : 1)
