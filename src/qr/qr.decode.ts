/**
 * In-process QR decoding with zxing-cpp (wasm): the check every rendered image passes,
 * and the reader behind POST /qr/scan (with the retries measured to lift success from
 * 94% to 97%, and the transparent-PNG flattening).
 */
import { PNG } from 'pngjs'
import { parameterError } from '../shared'
import { enginesReady, type ReaderOptions, readBarcodes, zbarReadGrey } from './qr.engines'
import { checkPixelBudget } from './qr.image-size'

/** Pixels as zxing-wasm's reader takes them (its ImageData, a DOM type the server does not load). */
type BarcodeImage = Exclude<Parameters<typeof readBarcodes>[0], Blob | ArrayBuffer | Uint8Array>

export interface Pixels {
  data: Uint8Array | Uint8ClampedArray
  width: number
  height: number
}

const BASE: ReaderOptions = { formats: ['QRCode'], textMode: 'Plain', maxNumberOfSymbols: 1 }

/** Texts of the QR codes in RGBA pixels. `invert: false` ignores light-on-dark codes, as ZBar and older ZXing do. */
export async function decodePixels(px: Pixels, opts: { invert: boolean }): Promise<string[]> {
  await enginesReady()
  const results = await readBarcodes({ data: px.data, width: px.width, height: px.height } as unknown as BarcodeImage, { ...BASE, tryInvert: opts.invert })
  return results.filter((r) => r.isValid).map((r) => r.text)
}

/** The pixels the scannability check reads: opaque RGBA for ZXing and the same as luminance for ZBar. */
export interface CheckCopy {
  rgba: Pixels
  /** Luminance as ZBar computes it, turned over for light-on-dark designs (ZBar reads dark-on-light only). */
  grey: Uint8Array
}

/**
 * The copy of a rendered image (premultiplied RGBA) that the scannability check decodes,
 * in one pass: flattened onto the background a scanner sees (white, or black for
 * light-on-dark designs; opaque pixels are unchanged) and, with `half`, box-filtered to
 * half size. Callers halve only while modules stay at least 3 px wide: the half-size copy
 * has fewer pixels per module and softer edges than the image we serve, so it is harder
 * to decode, and when it decodes the image does too. At 1000 px it makes the check 3-4×
 * cheaper (ZXing 10 → 3 ms, ZBar 20 → 5 ms). `into` reuses buffers of the right sizes.
 */
export function checkCopy(premultiplied: Pixels, opts: { onto: 'white' | 'black'; half: boolean; invertGrey: boolean }, into?: Buffers): CheckCopy {
  const src = premultiplied.data
  const sw = premultiplied.width
  const w = opts.half ? sw >> 1 : sw
  const h = opts.half ? premultiplied.height >> 1 : premultiplied.height
  const rgba = into?.rgba.length === w * h * 4 ? into.rgba : new Uint8Array(w * h * 4)
  const grey = into?.grey.length === w * h ? into.grey : new Uint8Array(w * h)
  // Premultiplied over white: c + 255 - a; over black: c.
  const white = opts.onto === 'white'
  const invertGrey = opts.invertGrey
  const put = (o: number, r: number, g: number, b: number) => {
    rgba[o * 4] = r
    rgba[o * 4 + 1] = g
    rgba[o * 4 + 2] = b
    rgba[o * 4 + 3] = 255
    const lum = (r * 19595 + g * 38469 + b * 7472) >> 16
    grey[o] = invertGrey ? 255 - lum : lum
  }
  if (!opts.half) {
    for (let o = 0, i = 0; o < w * h; o++, i += 4) {
      const clear = white ? 255 - src[i + 3]! : 0
      put(o, src[i]! + clear, src[i + 1]! + clear, src[i + 2]! + clear)
    }
  } else {
    const row = sw * 4
    for (let y = 0; y < h; y++)
      for (let x = 0, i = y * 2 * row, o = y * w; x < w; x++, i += 8, o++) {
        const j = i + row
        const clear = white ? 1020 - src[i + 3]! - src[i + 7]! - src[j + 3]! - src[j + 7]! : 0
        put(
          o,
          (src[i]! + src[i + 4]! + src[j]! + src[j + 4]! + clear + 2) >> 2,
          (src[i + 1]! + src[i + 5]! + src[j + 1]! + src[j + 5]! + clear + 2) >> 2,
          (src[i + 2]! + src[i + 6]! + src[j + 2]! + src[j + 6]! + clear + 2) >> 2,
        )
      }
  }
  return { rgba: { data: rgba, width: w, height: h }, grey }
}

interface Buffers {
  rgba: Uint8Array
  grey: Uint8Array
}

/**
 * Check copies are made in reused buffers: on this kind of VM a fresh megabyte costs more
 * in page faults than the pass that fills it. A small pool, since renders interleave at awaits.
 */
const spare: Buffers[] = []

/**
 * Whether both common decoder families read `text` from a rendered image (premultiplied
 * RGBA) as it is served: zxing-cpp without its inversion retry, and ZBar, on the check copy
 * (see checkCopy; transparent pixels read as white, as on a page). Light-on-dark codes
 * fail here, as they do with ZBar and many phone scanners.
 */
export async function scansWithBoth(premultiplied: Pixels, text: string, opts: { half: boolean }): Promise<boolean> {
  const copy = checkCopy(premultiplied, { onto: 'white', half: opts.half, invertGrey: false }, spare.pop())
  try {
    const zx = await decodePixels(copy.rgba, { invert: false })
    if (!zx.includes(text)) return false
    const zb = await zbarReadGrey(copy.grey, copy.rgba.width, copy.rgba.height)
    return zb.includes(text)
  } finally {
    if (spare.length < 4) spare.push({ rgba: copy.rgba.data as Uint8Array, grey: copy.grey })
  }
}

/** RGBA pixels flattened onto an opaque colour (a copy); resvg's pixels are premultiplied, decoded PNGs are not. */
export function flatten(px: Pixels, onto: 'white' | 'black', premultiplied: boolean): Pixels {
  const v = onto === 'white' ? 255 : 0
  const src = px.data
  const out = new Uint8ClampedArray(src.length)
  for (let i = 0; i < src.length; i += 4) {
    const a = src[i + 3]! / 255
    const k = premultiplied ? 1 : a
    out[i] = src[i]! * k + v * (1 - a)
    out[i + 1] = src[i + 1]! * k + v * (1 - a)
    out[i + 2] = src[i + 2]! * k + v * (1 - a)
    out[i + 3] = 255
  }
  return { data: out, width: px.width, height: px.height }
}

/**
 * Retries after a plain read fails, cheapest first (measured with scripts/bench/qr-corpus.ts).
 * The downscale retry starts at 150 px and halves: zxing's defaults (500 px, /3) are what the
 * plain read already does, so that retry read nothing new; this one adds ~1 % of the corpus
 * (noisy, blurred and low-quality JPEG photos) and loses none.
 */
const RETRIES: ReaderOptions[] = [{ tryDenoise: true }, { tryDownscale: true, downscaleThreshold: 150, downscaleFactor: 2 }, { binarizer: 'FixedThreshold' }]

/**
 * Decodes an uploaded PNG/JPEG (refused over the pixel budget): plain read, then the retries, then (PNG with alpha)
 * the image flattened onto white and onto black. Returns the text or null. `retries`:
 * the benchmark compares other lists (scripts/bench/qr-corpus.ts).
 */
export async function decodeImageFile(bytes: Uint8Array, retries: ReaderOptions[] = RETRIES): Promise<string | null> {
  // zxing decodes what the header declares: only PNG/JPEG within the pixel budget get to it.
  const kind = isPng(bytes) ? 'png' : isJpeg(bytes) ? 'jpeg' : null
  if (!kind) throw parameterError("'url' is not a PNG or JPEG image")
  checkPixelBudget(bytes, kind, 'url')
  await enginesReady()
  const attempt = async (input: Uint8Array | Pixels, extra: ReaderOptions) => {
    const input2 = input instanceof Uint8Array ? input : ({ data: input.data, width: input.width, height: input.height } as unknown as BarcodeImage)
    const r = await readBarcodes(input2, { ...BASE, tryInvert: true, ...extra })
    return r.find((x) => x.isValid)?.text ?? null
  }
  for (const extra of [{}, ...retries]) {
    const text = await attempt(bytes, extra)
    if (text !== null) return text
  }
  if (isPng(bytes) && pngHasAlpha(bytes)) {
    const png = PNG.sync.read(Buffer.from(bytes))
    const px = { data: png.data, width: png.width, height: png.height }
    for (const onto of ['white', 'black'] as const) {
      const text = await attempt(flatten(px, onto, false), {})
      if (text !== null) return text
    }
  }
  return null
}

export const isPng = (b: Uint8Array) => b.length > 8 && b[0] === 0x89 && b[1] === 0x50 && b[2] === 0x4e && b[3] === 0x47
export const isJpeg = (b: Uint8Array) => b.length > 3 && b[0] === 0xff && b[1] === 0xd8 && b[2] === 0xff

/** Colour type 4 or 6 in IHDR, or a tRNS chunk: the PNG can be transparent. */
function pngHasAlpha(b: Uint8Array): boolean {
  const colorType = b[25]
  if (colorType === 4 || colorType === 6) return true
  const text = Buffer.from(b.subarray(0, Math.min(b.length, 4096))).toString('latin1')
  return text.includes('tRNS')
}
