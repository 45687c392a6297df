/**
 * QR rendering and scanning speed, ms per image (median of N after W warm-up runs, which
 * let the JIT compile the per-pixel passes as a busy server would have):
 * plain 300 px PNG, styled 1000 px (dots + gradient + round eyes), framed 1000 px
 * (frame image + 2 texts), and a scan of a 3000 px JPEG. Every rendered image is also
 * decoded in-process (ZXing + ZBar) as part of rendering; that time is included.
 * Caches are bypassed by varying the content. Usage: bun scripts/bench/qr.ts [N] [W=3]
 */
import { createQrRenderer } from '../../src/qr/qr.render'
import { decodeImageFile } from '../../src/qr/qr.decode'
import { FRAME_SVG, jpegOf, plainQrSvg, pngOf, serveFixtures } from '../../src/qr/qr.test-fixtures'

const N = Number(process.argv[2] ?? 20)
const W = Number(process.argv[3] ?? 3)
const fixtures = serveFixtures({ '/frame.png': { body: await pngOf(FRAME_SVG), type: 'image/png' } })
const renderer = createQrRenderer({ allowPrivateNetworks: true })

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
  console.log(`${name.padEnd(34)} median ${median.toFixed(1).padStart(6)} ms   p95 ${p95.toFixed(1).padStart(6)} ms   (target about ${target} ms)${bytes ? `   ${(bytes / 1024).toFixed(1)} KiB` : ''}`)
}

const text = (i: number) => `https://localhost:8443/bench${i}?qr=1`
await bench('plain 300 px PNG', 4, (i) => renderer.renderQr({ text: text(i), qrOptions: {}, format: 'png', width: 300 }))
const styled = { patterns: { body: { style_id: 'dots', type: 'linear-gradient', value: '#1e3a8a,#7c3aed' }, eye: { style_id: 'rounded' } } }
await bench('styled 1000 px PNG', 50, (i) => renderer.renderQr({ text: text(i), qrOptions: styled, format: 'png', width: 1000 }))
const framed = {
  frame: {
    value: fixtures.url('/frame.png'),
    options: { code_rect: [50, 50, 500, 500] },
    add_texts: [{ pos: [300, 640], color: '#ffffff', size: 60, content: 'SCAN ME', bold: true }, { pos: [300, 730], color: '#93c5fd', size: 36, content: 'example.org' }],
  },
}
await bench('framed 1000 px PNG (2 texts)', 110, (i) => renderer.renderQr({ text: text(i), qrOptions: framed, format: 'png', width: 1000 }))
const photo = await jpegOf(plainQrSvg('https://localhost:8443/photo?qr=1', 3000, { rotate: 8 }), 85)
console.log(`(3000 px JPEG: ${(photo.length / 1024).toFixed(0)} KiB)`)
await bench('scan of a 3000 px JPEG', 200, () => decodeImageFile(photo))
fixtures.stop()
