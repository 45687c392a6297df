/**
 * renderQr: text + qrOptions → PNG or SVG that is known to scan. Each image is decoded
 * in-process before it is returned, as served (light-on-dark designs are first turned
 * dark-on-light); when the design does not decode, it is repaired
 * step by step (smaller logo, no logo, square modules, no frame, plain black on white)
 * and the steps are reported. Results are cached per input (LRU); remote logo and
 * frame images are cached pre-scaled per output size.
 */
import QRCode from 'qrcode'
import { AppError, parameterError } from '../shared'
import { scansWithBoth } from './qr.decode'
import { type Design, darkOnLight, designOf } from './qr.design'
import { enginesReady } from './qr.engines'
import { type FetchedImage, fetchImage, type ImageKind } from './qr.fetch'
import { fileNotFoundMessage } from './qr.files'
import type { DrawImageJob, DrawnImage } from './qr.image.worker'
import { checkPixelBudget } from './qr.image-size'
import { createJobWorker } from './qr.job-worker'
import { LruCache } from './qr.lru'
import { codePdf, type PdfCode } from './qr.pdf'
import { compositeOver, encodePng } from './qr.png'
import { rasterise, rasteriserReady, rasteriseText, releaseNativeMemory, textsAsPaths } from './qr.raster'
import { buildSvg, type EmbeddedImage, frameLayout, type Matrix } from './qr.svg'
import { sanitiseSvg } from './qr.svg-sanitise'

/** `vector`: no bytes, the settled design for a PDF to draw (print-run sheets). */
export type QrFormat = 'png' | 'svg' | 'pdf' | 'vector'

export interface RenderInput {
  text: string
  qrOptions: unknown
  format: QrFormat
  width: number
  texts?: string[]
  /** The uploaded files (`fil_…`) this design may draw (see qr.files); any other is drawn as if missing. */
  usableFiles?: readonly string[]
  /** false: not kept in the render cache (a print run's thousands of one-off codes would evict the API's). */
  cache?: boolean
}

export interface RenderedQr {
  body: Uint8Array
  contentType: string
  etag: string
  /** Repairs applied so the image scans (empty when the design rendered as given). */
  repairs: string[]
  /** Format `vector`: the code as a PDF draws it. */
  vector?: PdfCode
}

export interface QrRendererOptions {
  allowPrivateNetworks: boolean
  /** Uploaded files (`fil_…`); RenderInput.usableFiles says which a design may draw. */
  readFile?: (id: string) => Promise<FetchedImage | null>
}

const CONTENT_TYPES: Record<QrFormat, string> = { png: 'image/png', svg: 'image/svg+xml', pdf: 'application/pdf', vector: 'application/pdf' }

/** The sample content designs are checked with when saved (a typical short link). */
export const SAMPLE_TEXT = 'https://example.com/AbC12xY?qr=1'

const EC = ['L', 'M', 'Q', 'H'] as const
const ASSET_TTL_MS = 10 * 60_000
const FAILED_ASSET_TTL_MS = 30_000
/** Largest logo or frame file, uploaded or fetched. */
export const MAX_ASSET_BYTES = 2 * 1024 * 1024
const ASSET_LIMITS = { maxBytes: MAX_ASSET_BYTES, timeoutMs: 5000, maxRedirects: 3 }
interface AssetRole {
  field: string
  kinds: ImageKind[]
  /** Largest ratio of the longer side to the shorter one. */
  maxAspect: number
}
// A logo is fitted into a square; a frame is drawn at the output width, so a 100×160000 one would be 1000×1.6M px.
const LOGO: AssetRole = { field: 'qrOptions.logo.value', kinds: ['png', 'jpeg', 'svg'], maxAspect: Infinity }
const FRAME: AssetRole = { field: 'qrOptions.frame.value', kinds: ['png', 'jpeg'], maxAspect: 4 }
/** Drawing a logo or frame within the pixel budget takes well under a second. */
const DRAW_TIMEOUT_MS = 10_000
/** resvg-wasm's memory after images near the pixel budget; a 1000 px frame keeps it near 30 MB. */
const DRAW_RECYCLE_AT_BYTES = 192 * 1024 * 1024

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
  const scaled = new LruCache<Promise<Scaled>>({ maxEntries: 64, ttlMs: ASSET_TTL_MS })
  // User images are decoded off the event loop (see qr.image.worker.ts).
  const drawer = createJobWorker<DrawImageJob, DrawnImage>({
    entry: 'qr/qr.image.worker.ts',
    doing: 'drawing the image',
    timeoutMs: DRAW_TIMEOUT_MS,
    recycleAtBytes: DRAW_RECYCLE_AT_BYTES,
  })
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

  function loadAsset(source: string, { field, kinds, maxAspect }: AssetRole, usableFiles: readonly string[]): Promise<Asset> {
    // Checked before the cache: a file's bytes never change, but who may draw it does.
    if (source.startsWith('fil_') && !usableFiles.includes(source)) return Promise.reject(parameterError(fileNotFoundMessage(field, source)))
    const key = `${kinds.join(',')} ${source}`
    const hit = assets.get(key)
    if (hit) return hit
    const p = (async () => {
      let img: FetchedImage | null
      if (source.startsWith('fil_')) {
        img = (await opts.readFile?.(source)) ?? null
        if (!img) throw parameterError(fileNotFoundMessage(field, source))
        if (!kinds.includes(img.kind)) throw parameterError(`'${field}' file ${source} is not a ${kinds.join('/')} image`)
      } else {
        img = await fetchImage(source, { ...ASSET_LIMITS, allowPrivateNetworks: opts.allowPrivateNetworks, kinds, field })
      }
      return checkedAsset(img, field, maxAspect)
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
  function prescale(source: string, asset: Asset, w: number, h: number, fit: 'meet' | 'none', field: string): Promise<Scaled> {
    const width = Math.max(1, Math.round(w))
    const height = Math.max(1, Math.round(h))
    const key = `${source} ${width}x${height} ${fit}`
    const hit = scaled.get(key)
    if (hit) return hit
    const p = drawer.run({ bytes: asset.bytes, mime: asset.kind === 'svg' ? 'image/svg+xml' : `image/${asset.kind}`, width, height, fit }).then(
      (drawn): Scaled => ({
        href: `data:image/png;base64,${Buffer.from(drawn.png).toString('base64')}`,
        width: asset.width,
        height: asset.height,
        pixels: drawn.pixels,
      }),
      (e: Error) => {
        throw e instanceof AppError ? e : parameterError(`'${field}' the image could not be drawn: ${e.message}`)
      },
    )
    scaled.set(key, p)
    p.catch(() => scaled.delete(key))
    return p
  }

  async function renderUncached(input: RenderInput, strict: boolean): Promise<RenderedQr> {
    const given = designOf(input.qrOptions, { allowFileIds: !!opts.readFile })
    withQueryTexts(given, input.texts)
    if (given.inverted && strict)
      throw parameterError(
        `'qrOptions' light-on-dark designs are not read by ZBar and many phone scanners: use dark modules on a light background (swap the module and background colours)`,
      )
    // Light-on-dark is served turned over, in the same colours (see darkOnLight).
    const design = darkOnLight(given)
    const matrix = matrixOf(input.text, design)
    await Promise.all([enginesReady(), rasteriserReady()])
    const repairs: string[] = given.inverted ? ['dark-on-light'] : []

    let logo: Asset | null = null
    if (design.logo) {
      try {
        logo = await loadAsset(design.logo.source, LOGO, input.usableFiles ?? [])
      } catch (e) {
        if (strict) throw asParameterError(e, 'qrOptions.logo.value')
        repairs.push('logo-unavailable')
      }
    }
    let frameAsset: Asset | null = null
    if (design.frame?.source) {
      try {
        frameAsset = await loadAsset(design.frame.source, FRAME, input.usableFiles ?? [])
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
      const frameImg = useFrame
        ? await prescale(d.frame!.source!, useFrame, input.width, (input.width * useFrame.height) / useFrame.width, 'none', 'qrOptions.frame.value')
        : null
      const geo = d.frame ? frameLayout(d, useFrame, d.frame.texts.length) : null
      const codePx = geo ? (input.width * geo.side) / geo.width : input.width
      const modulePx = codePx / (matrix.size + 2 * (geo ? geo.quiet : d.space))
      let logoImg: EmbeddedImage | null = null
      if (useLogo) {
        const logoPx = Math.sqrt(attempt.logoSize / 100) * matrix.size * modulePx
        logoImg = await prescale(d.logo!.source, useLogo, logoPx, logoPx, 'meet', 'qrOptions.logo.value')
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
        if (strict)
          throw parameterError(
            `'qrOptions' this design does not scan: the rendered code could not be decoded (try a larger contrast, a smaller logo or plainer styles)`,
          )
        continue
      }
      if (attempt.repair) repairs.push(attempt.repair)
      let body: Uint8Array
      if (input.format === 'svg') {
        const full = buildSvg({ ...svgInput, drawFrameImage: true }).svg
        // resvg's own SVG has the texts as paths: it looks the same without the font.
        body = new TextEncoder().encode(texts.length ? await textsAsPaths(full) : full)
      } else if (input.format === 'pdf' || input.format === 'vector') {
        const vector: PdfCode = { matrix, design: d, logo: logoImg, logoSize: attempt.logoSize, frameImage: frameImg, texts }
        if (input.format === 'vector') return { body: new Uint8Array(0), contentType: CONTENT_TYPES.vector, etag: '""', repairs, vector }
        body = await codePdf(vector, input.width)
      } else body = encodePng(pixels, w, h)
      return { body, contentType: CONTENT_TYPES[input.format], etag: etagOf(body), repairs }
    }
    throw parameterError(`'width' ${input.width} px is too small for this code (${matrix.size} modules); use a larger width or a shorter link`)
  }

  return {
    /** Renders (or returns from the cache) an image that decodes back to `text`. */
    renderQr(input: RenderInput): Promise<RenderedQr> {
      warmUpOnFirstUse()
      if (input.cache === false) return renderUncached(input, false)
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
    async assertScannable(qrOptions: unknown, usableFiles: readonly string[] = []): Promise<void> {
      warmUpOnFirstUse()
      for (const width of [300, 100]) await renderUncached({ text: SAMPLE_TEXT, qrOptions, format: 'png', width, usableFiles }, true)
    },
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

/**
 * The warm-up starts with the first render, in the background, not when the server starts: the
 * decoders' wasm instances and compiled code cost an idle server ~15 MB it may never need.
 */
function warmUpOnFirstUse() {
  if (!warmedUp) warmUpChecks().catch(() => {}) // a failure shows in the render itself
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

/**
 * The checks an image named at `field` (`qrOptions.logo.value` or `qrOptions.frame.value`)
 * passes before it is drawn (see checkedAsset): for designs being saved. Throws parameter_error.
 */
export function checkDesignImage(img: FetchedImage, field: string): void {
  const role = [LOGO, FRAME].find((r) => r.field === field) ?? LOGO
  if (!role.kinds.includes(img.kind)) throw parameterError(`'${field}' is not a ${role.kinds.map((k) => k.toUpperCase()).join('/')} image`)
  checkedAsset(img, field, role.maxAspect)
}

/**
 * A fetched or uploaded logo/frame made safe to draw, before anything parses or decodes it:
 * within the byte cap, SVG sanitised (no file or network references), the declared size
 * within the pixel budget, and a frame's sides within MAX_FRAME_ASPECT of each other.
 */
function checkedAsset(img: FetchedImage, field: string, maxAspect: number): Asset {
  if (img.bytes.length > ASSET_LIMITS.maxBytes) throw parameterError(`'${field}' the image is larger than ${ASSET_LIMITS.maxBytes / 1024 / 1024} MB`)
  const bytes = img.kind === 'svg' ? new TextEncoder().encode(sanitiseSvg(new TextDecoder().decode(img.bytes), field)) : img.bytes
  const { width, height } = checkPixelBudget(bytes, img.kind, field)
  if (Math.max(width / height, height / width) > maxAspect)
    throw parameterError(`'${field}' the image is ${width}×${height} px; its sides may differ at most ${maxAspect}×`)
  return { bytes, kind: img.kind, width, height }
}

function cacheKey(input: RenderInput): string {
  const h = new Bun.CryptoHasher('sha256')
  h.update(JSON.stringify([input.text, input.qrOptions ?? null, input.format, input.width, input.texts ?? [], input.usableFiles ?? []]))
  return h.digest('base64url')
}

function etagOf(body: Uint8Array): string {
  return `"${new Bun.CryptoHasher('sha1').update(body).digest('base64url')}"`
}
