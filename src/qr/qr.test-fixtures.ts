/** Images and an image server for the QR tests (real HTTP on loopback, real encoders). */
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
