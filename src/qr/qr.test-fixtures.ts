/** Images and an image server for the QR tests (real HTTP on loopback, real encoders). */

import { deflateSync } from 'node:zlib'
import jpeg from 'jpeg-js'
import QRCode from 'qrcode'
import { rasterise, rasteriserReady, svgToPng } from './qr.raster'

export async function pngOf(svg: string): Promise<Uint8Array> {
  return svgToPng(svg)
}

/** A plain QR code of `text` as an SVG string, `px` wide, optionally rotated and on a grey photo-like surround. */
export function plainQrSvg(text: string, px: number, opts: { rotate?: number; transparent?: boolean } = {}): string {
  const q = QRCode.create(text, { errorCorrectionLevel: 'M' })
  const n = q.modules.size
  let d = ''
  for (let r = 0; r < n; r++) for (let c = 0; c < n; c++) if (q.modules.get(r, c)) d += `M${c + 4} ${r + 4}h1v1h-1z`
  const s = n + 8
  const bg = opts.transparent ? '' : `<rect x="-50%" y="-50%" width="200%" height="200%" fill="#8a8a80"/><rect width="${s}" height="${s}" fill="#fff"/>`
  const rot = opts.rotate ? ` transform="rotate(${opts.rotate} ${s / 2} ${s / 2})"` : ''
  return `<svg xmlns="http://www.w3.org/2000/svg" width="${px}" height="${px}" viewBox="${opts.rotate ? -s * 0.2 : 0} ${opts.rotate ? -s * 0.2 : 0} ${opts.rotate ? s * 1.4 : s} ${opts.rotate ? s * 1.4 : s}"><g${rot}>${bg}<path d="${d}" fill="#000"/></g></svg>`
}

/** JPEG bytes of an SVG (quality 0-100). */
export async function jpegOf(svg: string, quality = 80): Promise<Uint8Array> {
  await rasteriserReady()
  const img = rasterise(svg, { background: '#ffffff' })
  return jpeg.encode({ data: Buffer.from(img.pixels), width: img.width, height: img.height }, quality).data
}

export const LOGO_SVG = `<svg xmlns="http://www.w3.org/2000/svg" width="200" height="200"><rect width="200" height="200" rx="30" fill="#e11d48"/><circle cx="100" cy="100" r="60" fill="#fff"/><circle cx="100" cy="100" r="30" fill="#111"/></svg>`
export const FRAME_SVG = `<svg xmlns="http://www.w3.org/2000/svg" width="600" height="800"><rect width="600" height="800" rx="40" fill="#1e3a8a"/><rect x="50" y="50" width="500" height="500" fill="#fff"/></svg>`

/** Serves fixed bodies by path on 127.0.0.1; `redirects` maps a path to a Location. */
export function serveFixtures(files: Record<string, { body: Uint8Array | string; type: string }>, redirects: Record<string, string> = {}) {
  const server = Bun.serve({
    port: 0,
    hostname: '127.0.0.1',
    fetch(req) {
      const path = new URL(req.url).pathname
      if (redirects[path]) return new Response(null, { status: 302, headers: { location: redirects[path]! } })
      if (path === '/slow') return Bun.sleep(8000).then(() => new Response('late'))
      const f = files[path]
      return f ? new Response(f.body as BodyInit, { headers: { 'content-type': f.type } }) : new Response('not here', { status: 404 })
    },
  })
  return { url: (path: string) => `http://127.0.0.1:${server.port}${path}`, port: server.port!, stop: () => server.stop(true) }
}

/** Image bombs: tiny files whose headers declare huge canvases (tests and scripts/bench/image-bomb.ts). */
function pngChunk(type: string, data: Uint8Array): Uint8Array {
  const out = new Uint8Array(12 + data.length)
  const v = new DataView(out.buffer)
  v.setUint32(0, data.length)
  out.set(Buffer.from(type, 'latin1'), 4)
  out.set(data, 8)
  v.setUint32(8 + data.length, Bun.hash.crc32(out.subarray(4, 8 + data.length)))
  return out
}

/** A PNG declaring width × height (colour type 4: grey + alpha); `rows` zero rows are really compressed into it. */
export function pngBomb(width: number, height: number, rows = 1): Uint8Array {
  const ihdr = new Uint8Array(13)
  const v = new DataView(ihdr.buffer)
  v.setUint32(0, width)
  v.setUint32(4, height)
  ihdr.set([8, 4, 0, 0, 0], 8)
  const idat = deflateSync(new Uint8Array(rows * (1 + width * 2)), { level: 9 })
  return Buffer.concat([
    Uint8Array.of(0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a),
    pngChunk('IHDR', ihdr),
    pngChunk('IDAT', idat),
    pngChunk('IEND', new Uint8Array()),
  ])
}

export const segment = (marker: number, body: number[]) => [0xff, marker, (body.length + 2) >> 8, (body.length + 2) & 255, ...body]
export const sof = (marker: number, width: number, height: number) => segment(marker, [8, height >> 8, height & 255, width >> 8, width & 255, 1, 1, 0x11, 0])

/** A valid baseline greyscale JPEG declaring width × height: one quantisation table, one-code Huffman tables, an all-zero scan. */
export function jpegBomb(width: number, height: number, extra: number[] = []): Uint8Array {
  return Uint8Array.from([
    0xff,
    0xd8,
    ...segment(0xdb, [0, ...new Array(64).fill(1)]),
    ...extra,
    ...sof(0xc0, width, height),
    ...segment(0xc4, [0x00, 1, ...new Array(15).fill(0), 0]),
    ...segment(0xc4, [0x10, 1, ...new Array(15).fill(0), 0]),
    ...segment(0xda, [1, 1, 0x00, 0, 63, 0]),
    ...new Array(400).fill(0),
    0xff,
    0xd9,
  ])
}
