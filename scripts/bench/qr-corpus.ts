/**
 * QR decoders compared on a generated corpus, to choose what POST /qr/scan decodes with:
 * success and time per image for jsQR, zxing-wasm (one plain read), our decodeImageFile
 * (zxing-wasm + retries + transparent-PNG flattening), ZBar (wasm), the production path
 * through the scan worker, decodeImageFile with its earlier retry list and, when
 * installed, Debian's zbarimg and ZXingReader (CLI).
 * Also counts the images each decoder reads that the primary (decodeImageFile) misses:
 * the only reason to keep a second decoder.
 *
 * The corpus is seeded and deterministic: plain, styled (our renderer: dots / rounded,
 * gradients, custom eyes, logos, inverted, transparent), low contrast, rotated,
 * perspective, blurred, JPEG q30/50/70/90, noise, tiny (~100 px), huge (3000 px JPEG)
 * and photo-like combinations. jsQR and ZBar get the raw RGBA of the decoded file (as a
 * canvas gives it); zxing-wasm decodes the file bytes itself.
 * Usage: bun scripts/bench/qr-corpus.ts [--quick] [--seed N] [--no-cli] [--keep DIR]
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Resvg } from '@resvg/resvg-js'
import jpeg from 'jpeg-js'
import jsQR from 'jsqr'
import { PNG } from 'pngjs'
import QRCode from 'qrcode'
import { decodeImageFile, isPng } from '../../src/qr/qr.decode'
import { enginesReady, type ReaderOptions, readBarcodes, zbarReadGrey } from '../../src/qr/qr.engines'
import { createQrRenderer } from '../../src/qr/qr.render'
import { createScanWorker } from '../../src/qr/qr.scan-worker'
import { DIRECTIONS, EYE_BALLS_FOR, EYE_FRAME_STYLES, LOGO_MAX_SIZE, LOGO_SHAPES } from '../../src/qr/qr.schema'
import { arg, seededRandom } from './args'

const QUICK = process.argv.includes('--quick')
const SEED = Number(arg('seed', '20260601'))
const KEEP = arg('keep', '') || undefined
const CLI = !process.argv.includes('--no-cli')

/** Seeded, so every run builds the same corpus. */
const rand = seededRandom(SEED)
const between = (a: number, b: number) => a + rand() * (b - a)
const int = (a: number, b: number) => Math.floor(between(a, b + 1))
const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rand() * xs.length)]!
const chance = (p: number) => rand() < p
const gauss = () => Math.sqrt(-2 * Math.log(1 - rand())) * Math.cos(2 * Math.PI * rand())

const ALNUM = 'ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz23456789'
const code = (n: number) => Array.from({ length: n }, () => pick(ALNUM.split(''))).join('')
/** Short-link contents, mostly short (versions 2-4), some long (versions 5-8). */
function contentText(): string {
  if (chance(0.2)) return `https://${pick(['example.com', 'shop.example.org'])}/landing/${code(int(10, 30))}?utm_source=poster&utm_campaign=${code(6)}&qr=1`
  return `https://${pick(['sho.rt', 'go.example.com', 'localhost:8443', 'l.example.org'])}/${code(int(5, 9))}?qr=1`
}

// ---------------------------------------------------------------- pixels

/** Straight (not premultiplied) RGBA. */
interface Img {
  data: Uint8Array
  width: number
  height: number
}

type Ec = 'L' | 'M' | 'Q' | 'H'

function modulesOf(text: string, ec: Ec): number {
  return QRCode.create(text, { errorCorrectionLevel: ec }).modules.size
}

/** A square-module code as SVG, quiet zone included, `px` wide. */
function codeSvg(text: string, o: { ec: Ec; dark: string; light: string; px: number; quiet?: number }): string {
  const m = QRCode.create(text, { errorCorrectionLevel: o.ec }).modules
  const q = o.quiet ?? 4
  let d = ''
  for (let r = 0; r < m.size; r++) for (let c = 0; c < m.size; c++) if (m.get(r, c)) d += `M${c + q} ${r + q}h1v1h-1z`
  const s = m.size + 2 * q
  return `<svg xmlns="http://www.w3.org/2000/svg" width="${o.px}" height="${o.px}" viewBox="0 0 ${s} ${s}"><rect width="${s}" height="${s}" fill="${o.light}"/><path d="${d}" fill="${o.dark}"/></svg>`
}

/** An SVG drawn opaque (resvg's premultiplied pixels equal straight ones when opaque). */
function raster(svg: string, background: string, crisp: boolean): Img {
  const r = new Resvg(svg, { background, shapeRendering: crisp ? 1 : 2, font: { loadSystemFonts: false } }).render()
  return { data: r.pixels, width: r.width, height: r.height }
}

function decodeFile(bytes: Uint8Array): Img {
  if (isPng(bytes)) {
    const p = PNG.sync.read(Buffer.from(bytes))
    return { data: p.data, width: p.width, height: p.height }
  }
  const j = jpeg.decode(bytes, { useTArray: true, formatAsRGBA: true, maxMemoryUsageInMB: 1024 })
  return { data: j.data, width: j.width, height: j.height }
}

/** Opaque images as RGB PNG (as most photos and screenshots are); the renderer's own PNGs are kept as served. */
function pngOf(img: Img): Uint8Array {
  const p = new PNG({ width: img.width, height: img.height })
  p.data = Buffer.from(img.data.buffer, img.data.byteOffset, img.data.byteLength)
  return new Uint8Array(PNG.sync.write(p, { colorType: 2, inputHasAlpha: true }))
}

function jpegOf(img: Img, quality: number): Uint8Array {
  return new Uint8Array(
    jpeg.encode({ data: Buffer.from(img.data.buffer, img.data.byteOffset, img.data.byteLength), width: img.width, height: img.height }, quality).data,
  )
}

/** 3×3 homography (8 unknowns) taking each `from` point to its `to` point. */
function homography(from: [number, number][], to: [number, number][]): number[] {
  const a: number[][] = []
  for (let i = 0; i < 4; i++) {
    const [x, y] = from[i]!
    const [u, v] = to[i]!
    a.push([x, y, 1, 0, 0, 0, -u * x, -u * y, u])
    a.push([0, 0, 0, x, y, 1, -v * x, -v * y, v])
  }
  for (let c = 0; c < 8; c++) {
    let p = c
    for (let r = c + 1; r < 8; r++) if (Math.abs(a[r]![c]!) > Math.abs(a[p]![c]!)) p = r
    ;[a[c], a[p]] = [a[p]!, a[c]!]
    for (let r = 0; r < 8; r++) {
      if (r === c) continue
      const f = a[r]![c]! / a[c]![c]!
      for (let k = c; k < 9; k++) a[r]![k]! -= f * a[c]![k]!
    }
  }
  return a.map((row, i) => row[8]! / row[i]!)
}

interface Shot {
  width: number
  height: number
  /** Side of the code (quiet zone included) on the canvas, px. */
  side: number
  angle: number
  /** Each corner moves by up to this fraction of the side: a camera not square to the code. */
  perspective: number
}

/**
 * The code photographed: placed on a photo-like surround (a gradient with a soft pattern),
 * rotated, perspective-warped, bilinear-resampled.
 */
function shoot(src: Img, s: Shot): Img {
  const cx = s.width / 2 + between(-0.1, 0.1) * (s.width - s.side)
  const cy = s.height / 2 + between(-0.1, 0.1) * (s.height - s.side)
  const rad = (s.angle * Math.PI) / 180
  const corners: [number, number][] = [
    [-1, -1],
    [1, -1],
    [1, 1],
    [-1, 1],
  ].map(([x, y]) => {
    const px = (x! * s.side) / 2 + between(-1, 1) * s.perspective * s.side
    const py = (y! * s.side) / 2 + between(-1, 1) * s.perspective * s.side
    return [cx + px * Math.cos(rad) - py * Math.sin(rad), cy + px * Math.sin(rad) + py * Math.cos(rad)]
  })
  const h = homography(corners, [
    [0, 0],
    [src.width, 0],
    [src.width, src.height],
    [0, src.height],
  ])
  const c1 = [int(60, 200), int(60, 200), int(60, 200)]
  const c2 = [int(30, 230), int(30, 230), int(30, 230)]
  const fx = between(0.005, 0.03)
  const fy = between(0.005, 0.03)
  const out = new Uint8Array(s.width * s.height * 4)
  const sd = src.data
  const sw = src.width
  for (let y = 0; y < s.height; y++) {
    for (let x = 0; x < s.width; x++) {
      const o = (y * s.width + x) * 4
      const w = h[6]! * (x + 0.5) + h[7]! * (y + 0.5) + 1
      const u = (h[0]! * (x + 0.5) + h[1]! * (y + 0.5) + h[2]!) / w - 0.5
      const v = (h[3]! * (x + 0.5) + h[4]! * (y + 0.5) + h[5]!) / w - 0.5
      if (u >= 0 && v >= 0 && u < sw - 1 && v < src.height - 1) {
        const x0 = u | 0
        const y0 = v | 0
        const ax = u - x0
        const ay = v - y0
        const i = (y0 * sw + x0) * 4
        const j = i + sw * 4
        for (let k = 0; k < 3; k++) {
          const top = sd[i + k]! + (sd[i + 4 + k]! - sd[i + k]!) * ax
          const bottom = sd[j + k]! + (sd[j + 4 + k]! - sd[j + k]!) * ax
          out[o + k] = top + (bottom - top) * ay
        }
      } else {
        const t = (x / s.width) * 0.6 + (y / s.height) * 0.4 + 0.08 * Math.sin(x * fx) * Math.cos(y * fy)
        for (let k = 0; k < 3; k++) out[o + k] = c1[k]! + (c2[k]! - c1[k]!) * t
      }
      out[o + 3] = 255
    }
  }
  return { data: out, width: s.width, height: s.height }
}

/** Gaussian blur of the RGB channels (separable). */
function blur(img: Img, sigma: number): Img {
  const r = Math.max(1, Math.ceil(sigma * 3))
  const kernel = Array.from({ length: 2 * r + 1 }, (_, i) => Math.exp(-((i - r) ** 2) / (2 * sigma * sigma)))
  const sum = kernel.reduce((a, b) => a + b, 0)
  const k = kernel.map((x) => x / sum)
  const { width: w, height: h } = img
  const pass = (src: Uint8Array, dx: number, dy: number): Uint8Array => {
    const out = new Uint8Array(src.length)
    for (let y = 0; y < h; y++)
      for (let x = 0; x < w; x++) {
        let a = 0
        let b = 0
        let c = 0
        for (let t = -r; t <= r; t++) {
          const xx = Math.min(w - 1, Math.max(0, x + t * dx))
          const yy = Math.min(h - 1, Math.max(0, y + t * dy))
          const i = (yy * w + xx) * 4
          const f = k[t + r]!
          a += src[i]! * f
          b += src[i + 1]! * f
          c += src[i + 2]! * f
        }
        const o = (y * w + x) * 4
        out[o] = a
        out[o + 1] = b
        out[o + 2] = c
        out[o + 3] = 255
      }
    return out
  }
  return { data: pass(pass(img.data, 1, 0), 0, 1), width: w, height: h }
}

/** Sensor-like noise: a luminance part and a smaller per-channel part. */
function noise(img: Img, sigma: number): Img {
  const out = new Uint8Array(img.data)
  for (let i = 0; i < out.length; i += 4) {
    const l = gauss() * sigma
    for (let k = 0; k < 3; k++) out[i + k] = Math.max(0, Math.min(255, out[i + k]! + l + gauss() * sigma * 0.3))
  }
  return { data: out, width: img.width, height: img.height }
}

// ---------------------------------------------------------------- code sources

const renderer = createQrRenderer({ allowPrivateNetworks: true })
const LOGO = new Resvg(
  `<svg xmlns="http://www.w3.org/2000/svg" width="200" height="200"><rect width="200" height="200" rx="30" fill="#e11d48"/><circle cx="100" cy="100" r="60" fill="#fff"/><circle cx="100" cy="100" r="30" fill="#111"/></svg>`,
)
  .render()
  .asPng()
const logoServer = Bun.serve({
  port: 0,
  hostname: '127.0.0.1',
  fetch: () => new Response(new Blob([new Uint8Array(LOGO)]), { headers: { 'content-type': 'image/png' } }),
})
const LOGO_URL = `http://127.0.0.1:${logoServer.port}/logo.png`

const DARK = ['#000000', '#111827', '#1e3a8a', '#7c3aed', '#0f766e', '#9f1239', '#14532d', '#7c2d12', '#312e81', '#b91c1c', '#334155']
const LIGHT_BG = ['#ffffff', '#ffffff', '#fefce8', '#f0f9ff', '#fdf2f8', '#f8fafc']
const DARK_BG = ['#000000', '#111827', '#1e3a8a', '#0f172a', '#14532d', '#3b0764']
const LIGHT = ['#ffffff', '#fde68a', '#a5f3fc', '#fbcfe8', '#e2e8f0', '#bbf7d0']
const DOT_STYLES = ['dots', 'classy', 'small-square', 'diamond', 'vertical-bars', 'horizontal-bars'] as const
const ROUND_STYLES = ['rounded', 'extra-rounded', 'classy-rounded'] as const

const fill = (colours: readonly string[], gradientShare: number) => {
  const kind = chance(gradientShare) ? pick(['linear-gradient', 'radial-gradient'] as const) : 'color'
  return kind === 'color' ? { type: 'color', value: pick(colours) } : { type: kind, value: `${pick(colours)},${pick(colours)}`, direction: pick(DIRECTIONS) }
}

function eyeOf(colours: readonly string[]) {
  const style = pick(EYE_FRAME_STYLES)
  return { style_id: style, ball_style_id: pick(EYE_BALLS_FOR[style]), type: 'color', value: `${pick(colours)},${pick(colours)}` }
}

type DesignKind = 'dots' | 'rounded' | 'eyes' | 'logo' | 'inverted' | 'transparent'

function designFor(kind: DesignKind): Record<string, unknown> {
  const inverted = kind === 'inverted'
  const fg = inverted ? LIGHT : DARK
  const background = kind === 'transparent' ? { type: 'transparent' } : { type: 'color', value: pick(inverted ? DARK_BG : LIGHT_BG) }
  const bodyStyle = kind === 'dots' ? pick(DOT_STYLES) : kind === 'rounded' ? pick(ROUND_STYLES) : pick(['square', ...DOT_STYLES, ...ROUND_STYLES])
  const o: Record<string, unknown> = {
    correctLevel: int(0, 3),
    patterns: {
      background,
      body: { style_id: bodyStyle, ...fill(fg, kind === 'eyes' ? 0.3 : 0.6) },
      ...(kind === 'eyes' || chance(0.4) ? { eye: eyeOf(fg) } : {}),
    },
  }
  if (kind === 'logo') o.logo = { value: LOGO_URL, size: int(6, LOGO_MAX_SIZE), shape: pick(LOGO_SHAPES) }
  return o
}

const repairs: Record<string, number> = {}

/** Our renderer's PNG (checked to decode with ZXing + ZBar before it is served; repaired when not). */
async function rendered(text: string, kind: DesignKind, width: number): Promise<Uint8Array> {
  // A random design the service refuses (e.g. too little contrast between two colours) is drawn again.
  for (let attempt = 0; ; attempt++) {
    try {
      const r = await renderer.renderQr({ text, qrOptions: designFor(kind), format: 'png', width: Math.max(100, Math.min(1000, Math.round(width))) })
      for (const step of r.repairs) repairs[step] = (repairs[step] ?? 0) + 1
      return r.body
    } catch (e) {
      if (attempt >= 10) throw e
      rejected++
    }
  }
}
let rejected = 0

/** A code drawn for a "photo": plain squares or one of our styled designs (sometimes inverted), opaque. */
async function baseCode(text: string, px: number, styledShare = 0.5): Promise<{ img: Img; modules: number; base: string }> {
  if (chance(styledShare)) {
    const kind = pick(['dots', 'rounded', 'eyes', 'dots', 'rounded', 'eyes', 'inverted'] as const)
    const png = await rendered(text, kind, px)
    return { img: decodeFile(png), modules: modulesOf(text, 'M') + 8, base: kind }
  }
  const ec = pick(['L', 'M', 'M', 'Q', 'H'] as const)
  return {
    img: raster(codeSvg(text, { ec, dark: '#000000', light: '#ffffff', px: Math.round(px) }), '#ffffff', true),
    modules: modulesOf(text, ec) + 8,
    base: 'plain',
  }
}

/** sRGB grey level with the given WCAG relative luminance. */
function greyOf(lum: number): string {
  const s = lum <= 0.0031308 ? lum * 12.92 : 1.055 * lum ** (1 / 2.4) - 0.055
  const v = Math.round(Math.max(0, Math.min(1, s)) * 255)
  return `#${v.toString(16).padStart(2, '0').repeat(3)}`
}

// ---------------------------------------------------------------- the corpus

interface Sample {
  category: string
  text: string
  bytes: Uint8Array
  kind: 'png' | 'jpeg'
  note: string
}

const corpus: Sample[] = []
const n = (full: number) => (QUICK ? Math.max(3, Math.round(full / 4)) : full)
const add = (category: string, text: string, bytes: Uint8Array, note: string) =>
  corpus.push({ category, text, bytes, kind: isPng(bytes) ? 'png' : 'jpeg', note })

/** A photo of a code: canvas a bit larger than the code, optional rotation / perspective. */
async function photo(text: string, o: { canvas: number; fill: [number, number]; angle: number; perspective: number; styledShare?: number }) {
  const side = o.canvas * between(...o.fill)
  const { img, modules, base } = await baseCode(text, side, o.styledShare)
  const shot = shoot(img, { width: o.canvas, height: o.canvas, side, angle: o.angle, perspective: o.perspective })
  return { img: shot, modulePx: side / modules, base: `${base}, ${(side / modules).toFixed(1)} px/module` }
}

const t0 = performance.now()
await enginesReady()

for (let i = 0; i < n(20); i++) {
  const text = contentText()
  const ec = pick(['L', 'M', 'Q', 'H'] as const)
  const px = int(200, 800)
  add('plain', text, pngOf(raster(codeSvg(text, { ec, dark: '#000000', light: '#ffffff', px }), '#ffffff', true)), `EC ${ec}, ${px} px`)
}
for (const [category, kind] of [
  ['styled dots', 'dots'],
  ['styled rounded', 'rounded'],
  ['custom eyes', 'eyes'],
  ['logo', 'logo'],
  ['inverted', 'inverted'],
  ['transparent PNG', 'transparent'],
] as const) {
  for (let i = 0; i < n(kind === 'transparent' ? 12 : 20); i++) {
    const text = contentText()
    const px = int(200, 1000)
    add(category, text, await rendered(text, kind, px), `${px} px`)
  }
}
for (let i = 0; i < n(20); i++) {
  const text = contentText()
  const ratio = between(1.2, 3)
  const light = between(0.35, 1)
  const dark = (light + 0.05) / ratio - 0.05
  const px = int(250, 700)
  add(
    'low contrast',
    text,
    pngOf(raster(codeSvg(text, { ec: 'M', dark: greyOf(dark), light: greyOf(light), px }), '#ffffff', true)),
    `contrast ${ratio.toFixed(2)}:1`,
  )
}
for (let i = 0; i < n(20); i++) {
  const text = contentText()
  const angle = between(5, 175) * (chance(0.5) ? 1 : -1)
  const { img, base } = await photo(text, { canvas: int(400, 900), fill: [0.45, 0.65], angle, perspective: 0 })
  add('rotated', text, pngOf(img), `${angle.toFixed(0)}°, ${base}`)
}
for (let i = 0; i < n(20); i++) {
  const text = contentText()
  const p = between(0.04, 0.25)
  const { img, base } = await photo(text, { canvas: int(400, 900), fill: [0.5, 0.7], angle: between(-20, 20), perspective: p })
  add('perspective', text, pngOf(img), `corners ±${(p * 100).toFixed(0)}%, ${base}`)
}
for (let i = 0; i < n(20); i++) {
  const text = contentText()
  const { img, modulePx, base } = await photo(text, { canvas: int(350, 800), fill: [0.6, 0.85], angle: between(-5, 5), perspective: 0 })
  const sigma = modulePx * between(0.1, 0.8)
  add('blurred', text, pngOf(blur(img, sigma)), `σ ${(sigma / modulePx).toFixed(2)} module, ${base}`)
}
for (const q of [30, 50, 70, 90]) {
  for (let i = 0; i < n(15); i++) {
    const text = contentText()
    const { img, base } = await photo(text, {
      canvas: int(200, 700),
      fill: [0.6, 0.9],
      angle: chance(0.5) ? between(-15, 15) : 0,
      perspective: chance(0.3) ? 0.05 : 0,
    })
    add(`JPEG q${q}`, text, jpegOf(img, q), base)
  }
}
for (let i = 0; i < n(20); i++) {
  const text = contentText()
  const { img, base } = await photo(text, { canvas: int(350, 800), fill: [0.6, 0.85], angle: between(-10, 10), perspective: 0 })
  const sigma = between(10, 90)
  add('noise', text, pngOf(noise(img, sigma)), `σ ${sigma.toFixed(0)}, ${base}`)
}
for (let i = 0; i < n(20); i++) {
  const text = `https://${pick(['sho.rt', 'l.example.org'])}/${code(int(4, 7))}?qr=1`
  const px = int(80, 120)
  let bytes: Uint8Array
  if (chance(0.5)) bytes = await rendered(text, pick(['dots', 'rounded', 'eyes'] as const), 100)
  else {
    const img = raster(codeSvg(text, { ec: pick(['L', 'M'] as const), dark: '#000000', light: '#ffffff', px }), '#ffffff', false)
    bytes = chance(0.5) ? jpegOf(img, 80) : pngOf(img)
  }
  add('tiny ~100 px', text, bytes, '')
}
for (let i = 0; i < n(12); i++) {
  const text = contentText()
  const canvas = 3000
  const side = canvas * between(0.2, 0.55)
  const { img, base } = await baseCode(text, Math.min(1000, side))
  const shot = shoot(img, { width: canvas, height: canvas * 0.75, side, angle: between(-15, 15), perspective: between(0, 0.06) })
  add('huge 3000 px JPEG', text, jpegOf(noise(shot, 3), int(70, 85)), `code ${Math.round(side)} px, ${base}`)
}
for (let i = 0; i < n(25); i++) {
  const text = contentText()
  const { img, modulePx, base } = await photo(text, {
    canvas: int(500, 1100),
    fill: [0.45, 0.75],
    angle: between(-40, 40),
    perspective: between(0, 0.12),
    styledShare: 0.8,
  })
  const q = int(40, 80)
  add('combination', text, jpegOf(noise(blur(img, modulePx * between(0.05, 0.3)), between(5, 25)), q), `q${q}, ${base}`)
}
const genSeconds = (performance.now() - t0) / 1000

// ---------------------------------------------------------------- decoders

type Read = (s: Sample) => Promise<string | null> | string | null

const firstValid = (r: { isValid: boolean; text: string }[]) => r.find((x) => x.isValid)?.text ?? null

function greyOfPixels(img: Img): Uint8Array {
  const g = new Uint8Array(img.width * img.height)
  const d = img.data
  for (let o = 0, i = 0; o < g.length; o++, i += 4) g[o] = (d[i]! * 19595 + d[i + 1]! * 38469 + d[i + 2]! * 7472) >> 16
  return g
}

/**
 * The retry list decodeImageFile had before this benchmark: its downscale retry
 * (threshold 500, factor 3) repeated zxing-wasm's defaults, so it never read anything the
 * plain read missed; production now halves down to 150 px (+1 % of the corpus).
 */
const EARLIER_RETRIES: ReaderOptions[] = [
  { tryDenoise: true },
  { tryDownscale: true, downscaleThreshold: 500, downscaleFactor: 3 },
  { binarizer: 'FixedThreshold' },
]
/** ZBar on the file's luminance, then on the luminance turned over (ZBar reads dark-on-light only). */
async function zbarWithInverted(s: Sample): Promise<string | null> {
  const img = decodeFile(s.bytes)
  const grey = greyOfPixels(img)
  const first = (await zbarReadGrey(grey, img.width, img.height))[0]
  if (first !== undefined) return first
  for (let i = 0; i < grey.length; i++) grey[i] = 255 - grey[i]!
  return (await zbarReadGrey(grey, img.width, img.height))[0] ?? null
}

const worker = createScanWorker()
const PRIMARY = 'decodeImageFile (zxing + retries)'
const EARLIER = 'earlier retries (downscale 500/3)'
const decoders: { name: string; short: string; read: Read }[] = [
  {
    name: 'jsQR 1.4 (attemptBoth)',
    short: 'jsQR',
    read: (s) => {
      const img = decodeFile(s.bytes)
      return jsQR(new Uint8ClampedArray(img.data.buffer, img.data.byteOffset, img.data.byteLength), img.width, img.height)?.data ?? null
    },
  },
  {
    name: 'zxing-wasm plain read',
    short: 'zxing plain',
    read: async (s) => firstValid(await readBarcodes(s.bytes, { formats: ['QRCode'], textMode: 'Plain', maxNumberOfSymbols: 1, tryInvert: true })),
  },
  { name: PRIMARY, short: 'PRIMARY', read: (s) => decodeImageFile(s.bytes) },
  {
    name: 'zbar-wasm',
    short: 'zbar',
    read: async (s) => {
      const img = decodeFile(s.bytes)
      return (await zbarReadGrey(greyOfPixels(img), img.width, img.height))[0] ?? null
    },
  },
  { name: 'zbar-wasm + inverted retry', short: 'zbar+inv', read: zbarWithInverted },
  { name: 'scan worker (production path)', short: 'worker', read: (s) => worker.decode(s.bytes) },
  { name: EARLIER, short: 'earlier', read: (s) => decodeImageFile(s.bytes, EARLIER_RETRIES) },
]

let dir = ''
const cliTools = CLI ? [Bun.which('zbarimg'), Bun.which('ZXingReader')] : []
if (KEEP || cliTools.some(Boolean)) {
  dir = KEEP ?? mkdtempSync(join(tmpdir(), 'qr-corpus-'))
  mkdirSync(dir, { recursive: true })
  for (const [i, s] of corpus.entries()) writeFileSync(join(dir, fileOf(s, i)), s.bytes)
}
function fileOf(s: Sample, i: number) {
  return `${String(i).padStart(3, '0')}-${s.category.replace(/[^a-z0-9]+/gi, '-')}.${s.kind === 'png' ? 'png' : 'jpg'}`
}
const stdoutOf = (cmd: string[]) => new TextDecoder().decode(Bun.spawnSync(cmd, { stderr: 'ignore' }).stdout)
if (cliTools[0])
  decoders.push({
    name: 'zbarimg 0.23 (CLI)',
    short: 'zbarimg*',
    read: (s) => stdoutOf(['zbarimg', '-q', '--raw', '-Sdisable', '-Sqrcode.enable', join(dir, fileOf(s, corpus.indexOf(s)))]).replace(/\n$/, '') || null,
  })
if (cliTools[1])
  decoders.push({
    name: 'ZXingReader 1.4 (CLI)',
    short: 'ZXingRdr*',
    read: (s) => {
      const out = stdoutOf(['ZXingReader', '-format', 'QRCode', '-bytes', join(dir, fileOf(s, corpus.indexOf(s)))])
      return out.length ? out : null
    },
  })

// Warm-up: JIT and wasm memory growth, not counted.
for (const d of decoders) for (const s of corpus.slice(0, 5)) await d.read(s)

const outcome = decoders.map(() => [] as ('ok' | 'miss' | 'wrong')[])
const times = decoders.map(() => [] as number[])
const t1 = performance.now()
for (const [i, s] of corpus.entries()) {
  for (const [k, d] of decoders.entries()) {
    const start = performance.now()
    let text: string | null = null
    try {
      text = await d.read(s)
    } catch {
      text = null
    }
    times[k]!.push(performance.now() - start)
    outcome[k]!.push(text === null ? 'miss' : text === s.text ? 'ok' : 'wrong')
  }
  if (i % 50 === 49) process.stderr.write(`  ${i + 1}/${corpus.length} decoded\n`)
}
const decodeSeconds = (performance.now() - t1) / 1000
worker.stop()
logoServer.stop(true)
if (dir && !KEEP) rmSync(dir, { recursive: true, force: true })

// ---------------------------------------------------------------- report

const quantile = (xs: number[], q: number) => {
  const s = xs.slice().sort((a, b) => a - b)
  return s[Math.min(s.length - 1, Math.floor(s.length * q))] ?? 0
}
const ms = (x: number) => (x >= 100 ? x.toFixed(0) : x.toFixed(1))
const pct = (a: number, b: number) => `${((100 * a) / b).toFixed(0)}%`
const cats = [...new Set(corpus.map((s) => s.category))]
const p = decoders.findIndex((d) => d.name === PRIMARY)
const okOf = (k: number, i: number) => outcome[k]![i] === 'ok'
const total = corpus.length
const isCli = (name: string) => name.includes('(CLI)')

const sizes = corpus.map((s) => s.bytes.length)
const huge = corpus.filter((s) => s.category.startsWith('huge')).map((s) => s.bytes.length)
console.log(
  `QR decoding corpus: ${total} images, seed ${SEED}${QUICK ? ' (--quick)' : ''}, ${cats.length} categories; generated in ${genSeconds.toFixed(0)} s, decoded in ${decodeSeconds.toFixed(0)} s`,
)
console.log(
  `  ${corpus.filter((s) => s.kind === 'png').length} PNG / ${corpus.filter((s) => s.kind === 'jpeg').length} JPEG; median ${(quantile(sizes, 0.5) / 1024).toFixed(0)} KiB; 3000 px JPEGs ${(Math.min(...huge) / 1048576).toFixed(2)}-${(Math.max(...huge) / 1048576).toFixed(2)} MiB`,
)
console.log(
  `  renderer repairs while building styled codes: ${
    Object.entries(repairs)
      .map(([k, v]) => `${k} ×${v}`)
      .join(', ') || 'none'
  }; random designs refused and redrawn: ${rejected}`,
)
console.log(`  ms per image include decoding the file (jsQR, ZBar: pngjs / jpeg-js in JS); CLI times include process start\n`)

const W = Math.max(...decoders.map((d) => d.name.length)) + 2
console.log(
  `${'decoder'.padEnd(W)}${'read'.padStart(9)}${'%'.padStart(6)}${'wrong'.padStart(7)}${'median ms'.padStart(11)}${'p95 ms'.padStart(9)}${'+ vs primary'.padStart(14)}`,
)
for (const [k, d] of decoders.entries()) {
  const ok = outcome[k]!.filter((x) => x === 'ok').length
  const wrong = outcome[k]!.filter((x) => x === 'wrong').length
  const extra = corpus.filter((_, i) => okOf(k, i) && !okOf(p, i)).length
  console.log(
    `${d.name.padEnd(W)}${`${ok}/${total}`.padStart(9)}${pct(ok, total).padStart(6)}${String(wrong).padStart(7)}${ms(quantile(times[k]!, 0.5)).padStart(11)}${ms(quantile(times[k]!, 0.95)).padStart(9)}${(k === p ? '-' : `+${extra}`).padStart(14)}`,
  )
}

// What a fallback would cost and add: it runs only when the primary fails.
for (const base of [p]) {
  console.log(`\n${decoders[base]!.name} + a fallback that runs only when it misses:`)
  for (const [k, d] of decoders.entries()) {
    // Only other decoders are candidates: not the zxing variants, the worker (a wrapper) or the CLIs.
    if (isCli(d.name) || d.name.startsWith('scan worker') || d.name.startsWith('zxing') || d.name === PRIMARY || d.name === EARLIER) continue
    const union = corpus.filter((_, i) => okOf(base, i) || okOf(k, i)).length
    const cost = corpus.map((_, i) => times[base]![i]! + (okOf(base, i) ? 0 : times[k]![i]!))
    const missCost = corpus.flatMap((_, i) => (okOf(base, i) ? [] : [times[k]![i]!]))
    console.log(
      `  ${`+ ${d.name}`.padEnd(W)}${`${union}/${total}`.padStart(9)}${pct(union, total).padStart(6)}   median ${ms(quantile(cost, 0.5))} ms, p95 ${ms(quantile(cost, 0.95))} ms; on the ${missCost.length} misses it adds median ${ms(quantile(missCost, 0.5))} ms`,
    )
    const gained = corpus.flatMap((s, i) => (okOf(k, i) && !okOf(base, i) ? [`${s.category} (${s.note})`] : []))
    if (gained.length) console.log(`    reads what it misses: ${gained.join('; ')}`)
  }
}

const CW = Math.max(...cats.map((c) => c.length)) + 6
const heads = decoders.map((d) => d.short)
console.log(`\nper category, images read (columns in the order above; * = CLI):`)
console.log(`${'category (n)'.padEnd(CW)}${heads.map((h) => h.padStart(12)).join('')}`)
for (const c of cats) {
  const idx = corpus.flatMap((s, i) => (s.category === c ? [i] : []))
  console.log(`${`${c} (${idx.length})`.padEnd(CW)}${decoders.map((_, k) => String(idx.filter((i) => okOf(k, i)).length).padStart(12)).join('')}`)
}
console.log(`\nper category, median ms per image:`)
console.log(`${'category'.padEnd(CW)}${heads.map((h) => h.padStart(12)).join('')}`)
for (const c of cats) {
  const idx = corpus.flatMap((s, i) => (s.category === c ? [i] : []))
  console.log(
    `${c.padEnd(CW)}${decoders
      .map((_, k) =>
        ms(
          quantile(
            idx.map((i) => times[k]![i]!),
            0.5,
          ),
        ).padStart(12),
      )
      .join('')}`,
  )
}
const misses = corpus.flatMap((s, i) => (okOf(p, i) ? [] : [`${s.category} (${s.note})`]))
console.log(`\nprimary misses (${misses.length}): ${misses.join('; ')}`)
if (KEEP) console.log(`images kept in ${KEEP}`)
