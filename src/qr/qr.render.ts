/**
 * renderQr: text + qrOptions → PNG or SVG that is known to scan. Each image is decoded
 * in-process before it is returned, as served (light-on-dark designs are first turned
 * dark-on-light); when the design does not decode, it is repaired
 * step by step (smaller logo, no logo, square modules, no frame, plain black on white)
 * and the steps are reported. Results are cached per input (LRU); remote logo and
 * frame images are cached pre-scaled per output size.
 */
import QRCode from 'qrcode'
import { AppError, parameterError } from '../shared/errors'
import { darkOnLight, designOf, type Design } from './qr.design'
import { scansWithBoth } from './qr.decode'
import { enginesReady } from './qr.engines'
import { fetchImage, type FetchedImage, type ImageKind } from './qr.fetch'
import { buildSvg, frameLayout, type EmbeddedImage, type Matrix } from './qr.svg'
import { LruCache } from './qr.lru'
import { compositeOver, encodePng } from './qr.png'
import { rasterise, rasteriserReady, rasteriseText, releaseNativeMemory, svgSize, textsAsPaths } from './qr.raster'

export type QrFormat = 'png' | 'svg'

export interface RenderInput {
  text: string
  qrOptions: unknown
  format: QrFormat
  width: number
  texts?: string[]
}

export interface RenderedQr {
  body: Uint8Array
  contentType: string
  etag: string
  /** Repairs applied so the image scans (empty when the design rendered as given). */
  repairs: string[]
}

export interface QrRendererOptions {
  allowPrivateNetworks: boolean
  /** Uploaded files (`fil_…`), once the files module exists. */
  readFile?: (id: string) => Promise<FetchedImage | null>
}

/** The sample content designs are checked with when saved (a typical short link). */
export const SAMPLE_TEXT = 'https://example.com/AbC12xY?qr=1'

const EC = ['L', 'M', 'Q', 'H'] as const
const ASSET_TTL_MS = 10 * 60_000
const FAILED_ASSET_TTL_MS = 30_000
const ASSET_LIMITS = { maxBytes: 2 * 1024 * 1024, timeoutMs: 5000, maxRedirects: 3 }

interface Asset extends FetchedImage {
  width: number
  height: number
}

interface Scaled extends EmbeddedImage {
  /** Premultiplied RGBA at the output size. */
  pixels: Uint8Array
}

interface Attempt {
  design: Design
  logoSize: number
  repair: string | null
}

export function createQrRenderer(opts: QrRendererOptions) {
  const renders = new LruCache<Promise<RenderedQr>>({ maxEntries: 500, ttlMs: ASSET_TTL_MS })
  const assets = new LruCache<Promise<Asset>>({ maxEntries: 64, ttlMs: ASSET_TTL_MS })
  const scaled = new LruCache<Scaled>({ maxEntries: 64, ttlMs: ASSET_TTL_MS })
  // Up to 5 MB each at 1000 px: fewer entries than the other caches.
  const textLayers = new LruCache<Uint8Array>({ maxEntries: 16, ttlMs: ASSET_TTL_MS })

  /** Frame texts alone, drawn once per texts + layout + width (premultiplied RGBA), composited over the code. */
  async function textLayer(svg: string, width: number): Promise<Uint8Array> {
    const hit = textLayers.get(svg)
    if (hit) return hit
    const pixels = await rasteriseText(svg, width)
    textLayers.set(svg, pixels)
    return pixels
  }

  function loadAsset(source: string, field: string, kinds: ImageKind[]): Promise<Asset> {
    const key = `${kinds.join(',')} ${source}`
    const hit = assets.get(key)
    if (hit) return hit
    const p = (async () => {
      let img: FetchedImage | null
      if (source.startsWith('fil_')) {
        img = (await opts.readFile?.(source)) ?? null
        if (!img) throw parameterError(`'${field}' file ${source} not found`)
        if (!kinds.includes(img.kind)) throw parameterError(`'${field}' file ${source} is not a ${kinds.join('/')} image`)
      } else {
        img = await fetchImage(source, { ...ASSET_LIMITS, allowPrivateNetworks: opts.allowPrivateNetworks, kinds, field })
      }
      await rasteriserReady()
      return { ...img, ...imageSize(img, field) }
    })()
    assets.set(key, p)
    p.catch(() => assets.set(key, p, FAILED_ASSET_TTL_MS))
    return p
  }

  /**
   * The asset drawn once at its output pixel size and cached: resvg redraws big
   * embedded rasters slowly (0.5 s for a 1000 px frame), so logos are embedded at their
   * final size and frames are composited in JS under the rendered code.
   */
  function prescale(source: string, asset: Asset, w: number, h: number, fit: 'meet' | 'none'): Scaled {
    const pw = Math.max(1, Math.round(w))
    const ph = Math.max(1, Math.round(h))
    const key = `${source} ${pw}x${ph} ${fit}`
    const hit = scaled.get(key)
    if (hit) return hit
    const svg = `<svg xmlns="http://www.w3.org/2000/svg" width="${pw}" height="${ph}" viewBox="0 0 ${pw} ${ph}"><image href="${dataUrl(asset)}" width="${pw}" height="${ph}" preserveAspectRatio="${fit === 'meet' ? 'xMidYMid meet' : 'none'}"/></svg>`
    const image = rasterise(svg)
    const png = encodePng(image.pixels, image.width, image.height)
    const img: Scaled = { href: `data:image/png;base64,${Buffer.from(png).toString('base64')}`, width: asset.width, height: asset.height, pixels: image.pixels }
    scaled.set(key, img)
    return img
  }

  async function renderUncached(input: RenderInput, strict: boolean): Promise<RenderedQr> {
    const given = designOf(input.qrOptions, { allowFileIds: !!opts.readFile })
    withQueryTexts(given, input.texts)
    if (given.inverted && strict)
      throw parameterError(`'qrOptions' light-on-dark designs are not read by ZBar and many phone scanners: use dark modules on a light background (swap the module and background colours)`)
    // Light-on-dark is served turned over, in the same colours (see darkOnLight).
    const design = darkOnLight(given)
    const matrix = matrixOf(input.text, design)
    await Promise.all([enginesReady(), rasteriserReady()])
    const repairs: string[] = given.inverted ? ['dark-on-light'] : []

    let logo: Asset | null = null
    if (design.logo) {
      try {
        logo = await loadAsset(design.logo.source, 'qrOptions.logo.value', ['png', 'jpeg', 'svg'])
      } catch (e) {
        if (strict) throw asParameterError(e, 'qrOptions.logo.value')
        repairs.push('logo-unavailable')
      }
    }
    let frameAsset: Asset | null = null
    if (design.frame?.source) {
      try {
        frameAsset = await loadAsset(design.frame.source, 'qrOptions.frame.value', ['png', 'jpeg'])
      } catch (e) {
        if (strict) throw asParameterError(e, 'qrOptions.frame.value')
        repairs.push('frame-unavailable')
        design.frame = design.frame!.texts.length ? { ...design.frame!, source: null, codeRect: null } : null
      }
    }
    if (design.frame?.codeRect && frameAsset) {
      const [x, y, w, h] = design.frame.codeRect
      if (x + w > frameAsset.width || y + h > frameAsset.height) {
        const msg = `'qrOptions.frame.options.code_rect' [${design.frame.codeRect.join(', ')}] lies outside the ${frameAsset.width}×${frameAsset.height} frame image`
        if (strict) throw parameterError(msg)
        design.frame.codeRect = null
        repairs.push('code-rect-reset')
      }
    }

    for (const attempt of attemptsFor(design, logo !== null, strict)) {
      const d = attempt.design
      const useLogo = logo && d.logo ? logo : null
      const useFrame = d.frame && frameAsset && d.frame.source ? frameAsset : null
      const frameImg = useFrame ? prescale(d.frame!.source!, useFrame, input.width, (input.width * useFrame.height) / useFrame.width, 'none') : null
      const geo = d.frame ? frameLayout(d, useFrame, d.frame.texts.length) : null
      const codePx = geo ? (input.width * geo.side) / geo.width : input.width
      const modulePx = codePx / (matrix.size + 2 * (geo ? geo.quiet : d.space))
      let logoImg: EmbeddedImage | null = null
      if (useLogo) {
        const logoPx = Math.sqrt(attempt.logoSize / 100) * matrix.size * modulePx
        logoImg = prescale(d.logo!.source, useLogo, logoPx, logoPx, 'meet')
      }
      const texts = d.frame?.texts ?? []
      const svgInput = { matrix, design: d, width: input.width, logo: logoImg, logoSize: attempt.logoSize, texts, frameImage: frameImg }
      // Texts are a cached layer of their own: loading the fonts alone costs 3-8 ms a render.
      const { svg } = buildSvg({ ...svgInput, drawFrameImage: false, textLayer: 'omit' })
      const { pixels, width: w, height: h } = rasterise(svg, { width: input.width, crisp: d.body.style === 'square' })
      await releaseNativeMemory()
      if (frameImg && frameImg.pixels.length === pixels.length) compositeOver(pixels, frameImg.pixels, pixels)
      if (texts.length) {
        const layer = await textLayer(buildSvg({ ...svgInput, textLayer: 'only' }).svg, input.width)
        if (layer.length === pixels.length) compositeOver(layer, pixels, pixels)
      }
      // Checked at half size while a module keeps at least 3 px there (see checkCopy).
      const scans = await scansWithBoth({ data: pixels, width: w, height: h }, input.text, { half: modulePx >= 6 })
      if (!scans) {
        if (strict) throw parameterError(`'qrOptions' this design does not scan: the rendered code could not be decoded (try a larger contrast, a smaller logo or plainer styles)`)
        continue
      }
      if (attempt.repair) repairs.push(attempt.repair)
      let body: Uint8Array
      if (input.format === 'svg') {
        const full = buildSvg({ ...svgInput, drawFrameImage: true }).svg
        // resvg's own SVG has the texts as paths: it looks the same without the font.
        body = new TextEncoder().encode(texts.length ? await textsAsPaths(full) : full)
      } else body = encodePng(pixels, w, h)
      return { body, contentType: input.format === 'svg' ? 'image/svg+xml' : 'image/png', etag: etagOf(body), repairs }
    }
    throw parameterError(`'width' ${input.width} px is too small for this code (${matrix.size} modules); use a larger width or a shorter link`)
  }

  return {
    /** Renders (or returns from the cache) an image that decodes back to `text`. */
    renderQr(input: RenderInput): Promise<RenderedQr> {
      const key = cacheKey(input)
      const hit = renders.get(key)
      if (hit) return hit
      const p = renderUncached(input, false)
      renders.set(key, p)
      p.catch(() => renders.delete(key))
      return p
    },
    /** Cheap rules only (schema, colours, contrast): for link create/update. Throws parameter_error. */
    validateQrOptions(qrOptions: unknown): void {
      designOf(qrOptions, { allowFileIds: !!opts.readFile })
    },
    /** The full check for saved designs: fetch the assets, render the sample at 300 and 100 px, decode; any repair needed → 422. */
    async assertScannable(qrOptions: unknown): Promise<void> {
      for (const width of [300, 100]) await renderUncached({ text: SAMPLE_TEXT, qrOptions, format: 'png', width }, true)
    },
    cacheSize: () => renders.size,
    warmUp: warmUpChecks,
  }
}
export type QrRenderer = ReturnType<typeof createQrRenderer>

const WARM_UP_CHECKS = 50
let warmedUp: Promise<void> | null = null

/**
 * Runs the scannability check on a plain sample until the wasm decoders are at full
 * speed, yielding to the event loop between runs; once per process. The engine compiles
 * ZXing's hot paths only after ~40 decodes: until then the check of a 300 px code costs
 * 5-10 ms instead of ~1 ms. For a server to start in the background at start-up (about
 * 150 ms of work), so its first renders are as quick as later ones.
 */
export function warmUpChecks(): Promise<void> {
  warmedUp ??= (async () => {
    await Promise.all([enginesReady(), rasteriserReady()])
    const design = designOf({})
    const matrix = matrixOf(SAMPLE_TEXT, design)
    const { pixels, width, height } = rasterise(buildSvg({ matrix, design, width: 300, texts: [] }).svg, { width: 300, crisp: true })
    for (let i = 0; i < WARM_UP_CHECKS; i++) {
      if (!(await scansWithBoth({ data: pixels, width, height }, SAMPLE_TEXT, { half: true }))) throw new Error('the warm-up sample did not decode')
      await new Promise((resolve) => setImmediate(resolve))
    }
  })()
  return warmedUp
}

/** Frame texts from the `texts` query: they replace the contents in order; a design without a frame gets the built-in one. */
function withQueryTexts(design: Design, texts: string[] | undefined) {
  if (!texts?.length) return
  if (!design.frame) design.frame = { source: null, codeRect: null, texts: [] }
  const lines = design.frame.texts
  const count = design.frame.source ? lines.length : Math.max(lines.length, texts.length)
  for (let i = 0; i < count; i++) {
    const base = lines[i] ?? { pos: null, color: '#000000', size: 60, prefix: '', content: '', bold: false }
    lines[i] = { ...base, content: texts[i] ?? base.content }
  }
}

function matrixOf(text: string, d: Design): Matrix {
  const errorCorrectionLevel = EC[d.ecLevel]
  let q: QRCode.QRCode
  try {
    q = QRCode.create(text, { errorCorrectionLevel })
    if (q.version < d.minVersion) q = QRCode.create(text, { errorCorrectionLevel, version: d.minVersion })
  } catch (e) {
    throw parameterError(`'qrOptions' the content (${text.length} characters) does not fit a QR code at this error correction level: ${(e as Error).message}`)
  }
  const m = q.modules
  return { size: m.size, dark: (r, c) => !!m.get(r, c) }
}

/** Ever plainer designs to fall back to when one does not decode. */
function* attemptsFor(design: Design, hasLogo: boolean, strict: boolean): Generator<Attempt> {
  const size = design.logo?.size ?? 0
  const noLogo = { ...design, logo: null }
  if (hasLogo) {
    yield { design, logoSize: size, repair: null }
    if (strict) return
    for (const f of [0.7, 0.45]) yield { design, logoSize: Math.max(1, Math.floor(size * f)), repair: `logo-shrunk-to-${Math.max(1, Math.floor(size * f))}` }
    yield { design: noLogo, logoSize: 0, repair: 'logo-removed' }
  } else {
    yield { design: noLogo, logoSize: 0, repair: null }
    if (strict) return
  }
  const squares: Design = { ...noLogo, body: { ...design.body, style: 'square' }, eye: { ...design.eye, frameStyle: 'square', ballStyle: 'square' } }
  yield { design: squares, logoSize: 0, repair: 'square-modules' }
  if (design.frame) yield { design: { ...squares, frame: null }, logoSize: 0, repair: 'frame-removed' }
  yield {
    design: {
      ...squares,
      frame: null,
      space: Math.max(design.space, 2),
      background: { transparent: false, color: '#ffffff' },
      body: { style: 'square', fill: { kind: 'color', color: '#000000' } },
      eye: { frameStyle: 'square', ballStyle: 'square', frameFill: { kind: 'color', color: '#000000' }, ballFill: { kind: 'color', color: '#000000' } },
      inverted: false,
    },
    logoSize: 0,
    repair: 'plain',
  }
}

function asParameterError(e: unknown, field: string): AppError {
  if (e instanceof AppError && e.code === 'parameter_error') return e
  return parameterError(`'${field}' could not be fetched: ${(e as Error).message}`)
}

function dataUrl(a: FetchedImage): string {
  const mime = a.kind === 'svg' ? 'image/svg+xml' : `image/${a.kind}`
  return `data:${mime};base64,${Buffer.from(a.bytes).toString('base64')}`
}

/** Natural size from the PNG/JPEG header, or from resvg for SVG. */
export function imageSize(img: FetchedImage, field: string): { width: number; height: number } {
  const b = img.bytes
  if (img.kind === 'png' && b.length >= 24) {
    const v = new DataView(b.buffer, b.byteOffset, b.byteLength)
    return { width: v.getUint32(16), height: v.getUint32(20) }
  }
  if (img.kind === 'jpeg') {
    let i = 2
    while (i + 9 < b.length) {
      if (b[i] !== 0xff) break
      const marker = b[i + 1]!
      const len = (b[i + 2]! << 8) | b[i + 3]!
      if (marker >= 0xc0 && marker <= 0xcf && marker !== 0xc4 && marker !== 0xc8 && marker !== 0xcc)
        return { width: (b[i + 7]! << 8) | b[i + 8]!, height: (b[i + 5]! << 8) | b[i + 6]! }
      i += 2 + len
    }
  }
  if (img.kind === 'svg') {
    try {
      const size = svgSize(Buffer.from(b).toString('utf8'))
      return { width: Math.max(1, Math.round(size.width)), height: Math.max(1, Math.round(size.height)) }
    } catch {}
  }
  throw parameterError(`'${field}' the image could not be read`)
}

function cacheKey(input: RenderInput): string {
  const h = new Bun.CryptoHasher('sha256')
  h.update(JSON.stringify([input.text, input.qrOptions ?? null, input.format, input.width, input.texts ?? []]))
  return h.digest('base64url')
}

function etagOf(body: Uint8Array): string {
  return `"${new Bun.CryptoHasher('sha1').update(body).digest('base64url')}"`
}
