/**
 * Draws a user image (logo or frame: PNG, JPEG or sanitised SVG, within the pixel budget)
 * at the size it is shown, on its own thread: decoding a large image is hundreds of ms of
 * synchronous work, and its memory is given back when the worker is recycled. resvg-wasm,
 * not the native build: it has no file system or network to resolve an image reference
 * with, whatever an SVG says. Each image is drawn once per size and cached by the renderer.
 */
import { initWasm, Resvg } from '@resvg/resvg-wasm'
import resvgWasmPath from '@resvg/resvg-wasm/index_bg.wasm' with { type: 'file' }
import { answerJobs } from './qr.job-worker'
import { encodePng } from './qr.png'

export interface DrawImageJob {
  bytes: Uint8Array
  mime: string
  /** Output size in px. */
  width: number
  height: number
  /** `meet` keeps the aspect ratio (logos); `none` stretches (frames). */
  fit: 'meet' | 'none'
}

export interface DrawnImage {
  /** Premultiplied RGBA, width × height. */
  pixels: Uint8Array
  png: Uint8Array
}

let ready: Promise<void> | null = null

answerJobs(async (job: DrawImageJob): Promise<DrawnImage> => {
  ready ??= (async () => initWasm(await Bun.file(resvgWasmPath).arrayBuffer()))()
  await ready
  const { width: w, height: h } = job
  const href = `data:${job.mime};base64,${Buffer.from(job.bytes).toString('base64')}`
  const svg = `<svg xmlns="http://www.w3.org/2000/svg" width="${w}" height="${h}" viewBox="0 0 ${w} ${h}"><image href="${href}" width="${w}" height="${h}" preserveAspectRatio="${job.fit === 'meet' ? 'xMidYMid meet' : 'none'}"/></svg>`
  const r = new Resvg(svg)
  try {
    const pixels = r.render().pixels
    return { pixels, png: encodePng(pixels, w, h) }
  } finally {
    r.free()
  }
})
