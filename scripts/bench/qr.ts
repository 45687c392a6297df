/**
 * QR rendering and scanning speed, ms per image (median of N after the renderer's start-up
 * warm-up of the decoders and W warm-up runs, which let the JIT compile the per-pixel
 * passes as a busy server would have):
 * plain 300 px PNG, styled 1000 px (dots + gradient + round eyes), framed 1000 px
 * (frame image + 2 texts), and a scan of a 3000 px JPEG. Every rendered image is also
 * decoded in-process (ZXing + ZBar) as part of rendering; that time is included.
 * Caches are bypassed by varying the content.
 * Then renders per second, one at a time on one thread, for PNG and SVG at 300 and
 * 1000 px, plain and heavy (dots + gradient + rounded eyes + a logo), over S seconds each
 * after 20 warm-up renders (the steady state of a busy server); S=0 leaves them out.
 * Usage: bun scripts/bench/qr.ts [N=20] [W=3] [S=2]
 */

import { decodeImageFile } from '../../src/qr/qr.decode'
import { createQrRenderer, type RenderInput } from '../../src/qr/qr.render'
import { FRAME_SVG, jpegOf, LOGO_SVG, plainQrSvg, pngOf, serveFixtures } from '../../src/qr/qr.test-fixtures'

const N = Number(process.argv[2] ?? 20)
const W = Number(process.argv[3] ?? 3)
const S = Number(process.argv[4] ?? 2)
const fixtures = serveFixtures({
  '/frame.png': { body: await pngOf(FRAME_SVG), type: 'image/png' },
  '/logo.png': { body: await pngOf(LOGO_SVG), type: 'image/png' },
})
const renderer = createQrRenderer({ allowPrivateNetworks: true })
// As a server does at start-up: the wasm decoders reach full speed only after ~40 decodes.
const warming = performance.now()
await renderer.warmUp()
console.log(`(decoders warmed up in ${(performance.now() - warming).toFixed(0)} ms)`)

async function bench(name: string, target: number, run: (i: number) => Promise<unknown>) {
  let bytes = 0
  for (let i = 1; i <= W; i++) {
    const out = await run(-i)
    if (out && typeof out === 'object' && 'body' in out) bytes = (out as { body: Uint8Array }).body.length
  }
  const times: number[] = []
  for (let i = 0; i < N; i++) {
    const t = performance.now()
    await run(i)
    times.push(performance.now() - t)
  }
  times.sort((a, b) => a - b)
  const median = times[Math.floor(times.length / 2)]!
  const p95 = times[Math.min(times.length - 1, Math.floor(times.length * 0.95))]!
  console.log(
    `${name.padEnd(34)} median ${median.toFixed(1).padStart(6)} ms   p95 ${p95.toFixed(1).padStart(6)} ms   (target about ${target} ms)${bytes ? `   ${(bytes / 1024).toFixed(1)} KiB` : ''}`,
  )
}

const text = (i: number) => `https://localhost:8443/bench${i}?qr=1`
await bench('plain 300 px PNG', 4, (i) => renderer.renderQr({ text: text(i), qrOptions: {}, format: 'png', width: 300 }))
const styled = { patterns: { body: { style_id: 'dots', type: 'linear-gradient', value: '#1e3a8a,#7c3aed' }, eye: { style_id: 'rounded' } } }
await bench('styled 1000 px PNG', 50, (i) => renderer.renderQr({ text: text(i), qrOptions: styled, format: 'png', width: 1000 }))
const framed = {
  frame: {
    value: fixtures.url('/frame.png'),
    options: { code_rect: [50, 50, 500, 500] },
    add_texts: [
      { pos: [300, 640], color: '#ffffff', size: 60, content: 'SCAN ME', bold: true },
      { pos: [300, 730], color: '#93c5fd', size: 36, content: 'example.org' },
    ],
  },
}
await bench('framed 1000 px PNG (2 texts)', 110, (i) => renderer.renderQr({ text: text(i), qrOptions: framed, format: 'png', width: 1000 }))
const photo = await jpegOf(plainQrSvg('https://localhost:8443/photo?qr=1', 3000, { rotate: 8 }), 85)
console.log(`(3000 px JPEG: ${(photo.length / 1024).toFixed(0)} KiB)`)
await bench('scan of a 3000 px JPEG', 200, () => decodeImageFile(photo))

/** Sequential renders of ever new contents for S seconds. */
async function throughput(name: string, input: Omit<RenderInput, 'text'>) {
  let n = 0
  const render = () => renderer.renderQr({ ...input, text: text(1_000_000 + seq++) })
  for (let i = 0; i < 20; i++) await render()
  const repairs = (await render()).repairs
  const started = performance.now()
  while (performance.now() - started < S * 1000) {
    await render()
    n++
  }
  const seconds = (performance.now() - started) / 1000
  console.log(
    `${name.padEnd(34)} ${(n / seconds).toFixed(0).padStart(5)} renders/s   (${((seconds * 1000) / n).toFixed(1)} ms each${repairs.length ? `; repaired: ${repairs.join(', ')}` : ''})`,
  )
}
let seq = 0
const heavy = { ...styled, logo: { value: fixtures.url('/logo.png'), size: 10, shape: 'circle' } }
if (S > 0) {
  console.log(`\nrenders per second, one thread, one at a time (${S} s each):`)
  for (const format of ['png', 'svg'] as const)
    for (const width of [300, 1000])
      for (const [style, qrOptions] of [
        ['plain', {}],
        ['heavy', heavy],
      ] as const)
        await throughput(`${format.toUpperCase()} ${width} px ${style}`, { qrOptions, format, width })
}
fixtures.stop()
