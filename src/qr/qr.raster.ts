/**
 * SVG → pixels, for the renderer only. Two builds of the same resvg (2.6.2, identical
 * pixels):
 * - resvg-js (native, napi) draws everything without text: 1.4-2× faster than the wasm
 *   build (a styled 1000 px code 36 → 24 ms). A compiled binary embeds its `.node` and
 *   loads it from a file it writes to the temp folder at start-up.
 * - resvg-wasm draws frame texts and turns texts into paths for SVG output: resvg-js takes
 *   fonts only as files and cannot read woff2, while resvg-wasm takes the embedded Inter
 *   woff2 as buffers. Text layers are cached, so it is loaded on first use. It also draws
 *   everything when the native module cannot be loaded (no usable temp folder, noexec).
 * Only qr.render.ts (and test fixtures) import this module: the scan worker, which reads
 * qr.decode.ts / qr.engines.ts, never loads either. It draws only SVG the service built:
 * user images (logos, frames) are drawn by resvg-wasm in qr.image.worker.ts, after
 * qr.svg-sanitise.ts and the pixel budget.
 * All pixels are premultiplied RGBA.
 */
import type * as ResvgJs from '@resvg/resvg-js'
import { initWasm, Resvg as WasmResvg } from '@resvg/resvg-wasm'
import resvgWasmPath from '@resvg/resvg-wasm/index_bg.wasm' with { type: 'file' }
import inter400Path from '../../web/fonts/inter-latin-400-normal.woff2' with { type: 'file' }
import inter700Path from '../../web/fonts/inter-latin-700-normal.woff2' with { type: 'file' }
import { createLogger } from '../shared'
import { FONT_FAMILY } from './qr.svg'

export interface Raster {
  pixels: Uint8Array
  width: number
  height: number
}

export interface RasterOptions {
  /** Output width in px; the SVG's own size when omitted. */
  width?: number
  /** Snap edges to pixels (square modules). */
  crisp?: boolean
  background?: string
}

let nativeModule: typeof ResvgJs | null | undefined

/**
 * resvg-js, loaded on first use (an idle server does not hold it); null when the native module
 * cannot be loaded: resvg-wasm then draws everything.
 */
function native(): typeof ResvgJs | null {
  if (nativeModule !== undefined) return nativeModule
  try {
    nativeModule = require('@resvg/resvg-js') as typeof ResvgJs
  } catch (e) {
    createLogger().warn('QR rendering falls back to resvg-wasm (about 1.5× slower): the native resvg module could not be loaded', { error: String(e) })
    nativeModule = null
  }
  return nativeModule
}

/**
 * resvg-js otherwise scans the system's font folders on every construction (+5 ms per
 * 300 px render); nothing drawn by it has text.
 */
const NO_FONTS = { loadSystemFonts: false }

function nativeOptions(opts: RasterOptions): ResvgJs.ResvgRenderOptions {
  return {
    fitTo: opts.width ? { mode: 'width', value: opts.width } : { mode: 'original' },
    shapeRendering: opts.crisp ? 1 : 2,
    font: NO_FONTS,
    ...(opts.background ? { background: opts.background } : {}),
  }
}

let wasm: Promise<void> | null = null

function wasmReady(): Promise<void> {
  wasm ??= (async () => {
    await initWasm(await Bun.file(resvgWasmPath).arrayBuffer())
  })()
  wasm.catch(() => (wasm = null))
  return wasm
}

/** Resolves once `rasterise` can run (at once, unless it falls back to resvg-wasm). */
export function rasteriserReady(): Promise<void> {
  return native() ? Promise.resolve() : wasmReady()
}

/** resvg-wasm with its memory freed after `use`. */
function withWasm<T>(svg: string, options: ConstructorParameters<typeof WasmResvg>[1], use: (r: InstanceType<typeof WasmResvg>) => T): T {
  const r = new WasmResvg(svg, options)
  try {
    return use(r)
  } finally {
    r.free()
  }
}

/** An SVG without text drawn (after `rasteriserReady`). */
export function rasterise(svg: string, opts: RasterOptions = {}): Raster {
  const resvg = native()
  if (!resvg)
    return withWasm(svg, nativeOptions(opts) as ConstructorParameters<typeof WasmResvg>[1], (r) => {
      const image = r.render()
      return { pixels: image.pixels, width: image.width, height: image.height }
    })
  const image = new resvg.Resvg(svg, nativeOptions(opts)).render()
  // `pixels` is a getter that copies out of the native image: read it once.
  const pixels = image.pixels
  unreleased += 2 * pixels.length
  return { pixels, width: image.width, height: image.height }
}

/** Bytes of native renders (image and its copy) the GC may not have collected yet. */
let unreleased = 0
const RELEASE_EVERY = 32 * 1024 * 1024

/**
 * Lets the native memory of earlier renders go. resvg-js frees an image only when the GC
 * collects its objects AND a later turn of the event loop runs their finalisers; the GC
 * does not count that memory, so a busy renderer grew by ~8 MB per 1000 px render
 * (1.4 GB after 150). Collecting every 32 MB keeps it flat, and renders get faster too:
 * freed memory is reused instead of faulting in fresh pages (a 1000 px circle 17 → 3.5 ms).
 */
export async function releaseNativeMemory(): Promise<void> {
  if (unreleased < RELEASE_EVERY) return
  unreleased = 0
  Bun.gc(false)
  await new Promise((resolve) => setImmediate(resolve))
}

/** PNG bytes straight from resvg (unoptimised): test fixtures only. */
export async function svgToPng(svg: string, opts: { background?: string } = {}): Promise<Uint8Array> {
  await rasteriserReady()
  const resvg = native()
  if (!resvg) return withWasm(svg, opts.background ? { background: opts.background } : {}, (r) => r.render().asPng())
  return new resvg.Resvg(svg, nativeOptions(opts)).render().asPng()
}

let fonts: Promise<Uint8Array[]> | null = null

/** resvg-wasm and the embedded fonts, loaded once, on the first design with texts. */
function textFonts(): Promise<Uint8Array[]> {
  fonts ??= (async () => {
    const [, f400, f700] = await Promise.all([wasmReady(), Bun.file(inter400Path).arrayBuffer(), Bun.file(inter700Path).arrayBuffer()])
    return [new Uint8Array(f400), new Uint8Array(f700)]
  })()
  fonts.catch(() => (fonts = null))
  return fonts
}

const fontOptions = (buffers: Uint8Array[]) => ({ fontBuffers: buffers, defaultFontFamily: FONT_FAMILY, sansSerifFamily: FONT_FAMILY })

/** An SVG with text drawn at `width` px with the embedded fonts (premultiplied RGBA). */
export async function rasteriseText(svg: string, width: number): Promise<Uint8Array> {
  const font = fontOptions(await textFonts())
  return withWasm(svg, { fitTo: { mode: 'width', value: width }, font }, (r) => r.render().pixels)
}

/** The SVG with its texts turned into paths, so it looks the same where the font is missing. */
export async function textsAsPaths(svg: string): Promise<string> {
  const font = fontOptions(await textFonts())
  return withWasm(svg, { font }, (r) => r.toString())
}
