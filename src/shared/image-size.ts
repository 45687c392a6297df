/**
 * Image dimensions read from the headers, before anything decodes the image: a 618-byte
 * JPEG may declare 30000×30000 px, and a decoder allocates what the header says (6 GB
 * there). Uploads (src/files) and QR images (src/qr) check these before any decode.
 */
export type SizedKind = 'png' | 'jpeg' | 'svg'

export interface ImageSize {
  width: number
  height: number
}

/** Width and height as the image declares them, or null when the header cannot be read. */
export function imageSize(bytes: Uint8Array, kind: SizedKind): ImageSize | null {
  if (kind === 'png') return pngSize(bytes)
  if (kind === 'jpeg') return jpegSize(bytes)
  return svgSize(Buffer.from(bytes).toString('utf8'))
}

/** IHDR must be the first chunk (decoders refuse a PNG where it is not). */
function pngSize(b: Uint8Array): ImageSize | null {
  if (b.length < 24 || b[12] !== 0x49 || b[13] !== 0x48 || b[14] !== 0x44 || b[15] !== 0x52) return null
  const v = new DataView(b.buffer, b.byteOffset, b.byteLength)
  return { width: v.getUint32(16), height: v.getUint32(20) }
}

/** SOF0-15 except DHT (C4), JPG (C8) and DAC (CC), plus DHP (DE, a hierarchical JPEG's full size). */
const isFrameMarker = (m: number) => (m >= 0xc0 && m <= 0xcf && m !== 0xc4 && m !== 0xc8 && m !== 0xcc) || m === 0xde

/**
 * The largest width and height over EVERY frame header in the file. Rather than walking
 * segment lengths (a lying length would skip a second SOF that a decoder resyncing on
 * markers still finds), every byte position is tried: a frame header is FF, a SOF marker,
 * a length of 8 + 3 × components (1-4) and precision 8, 12 or 16. Entropy-coded data
 * never holds FF followed by a SOF byte (FF is stuffed as FF 00). Height 0 means "given
 * later by a DNL marker": the largest DNL height counts then; none → unreadable.
 */
function jpegSize(b: Uint8Array): ImageSize | null {
  if (b.length < 4 || b[0] !== 0xff || b[1] !== 0xd8) return null
  let width = 0
  let height = 0
  let deferredHeight = false
  let dnlHeight = 0
  for (let i = 2; i + 3 < b.length; i++) {
    if (b[i] !== 0xff) continue
    const marker = b[i + 1]!
    const length = (b[i + 2]! << 8) | b[i + 3]!
    if (marker === 0xdc && length === 4 && i + 5 < b.length) dnlHeight = Math.max(dnlHeight, (b[i + 4]! << 8) | b[i + 5]!)
    if (!isFrameMarker(marker) || i + 9 >= b.length) continue
    const components = b[i + 9]!
    const precision = b[i + 4]!
    if (components < 1 || components > 4 || length !== 8 + 3 * components || (precision !== 8 && precision !== 12 && precision !== 16)) continue
    const h = (b[i + 5]! << 8) | b[i + 6]!
    const w = (b[i + 7]! << 8) | b[i + 8]!
    width = Math.max(width, w)
    if (h === 0) deferredHeight = true
    height = Math.max(height, h)
  }
  if (deferredHeight) {
    if (dnlHeight === 0) return null
    height = Math.max(height, dnlHeight)
  }
  return width > 0 && height > 0 ? { width, height } : null
}

/** CSS px per unit (resvg's conversions). */
const UNIT_PX: Record<string, number> = { '': 1, px: 1, pt: 4 / 3, pc: 16, mm: 96 / 25.4, cm: 96 / 2.54, in: 96, em: 16, ex: 8 }

function length(value: string | undefined): number | null {
  const m = value && /^\s*([+-]?(?:\d+\.?\d*|\.\d+)(?:e[+-]?\d+)?)\s*([a-z]*)\s*$/i.exec(value)
  if (!m) return null
  const unit = UNIT_PX[m[2]!.toLowerCase()]
  return unit === undefined ? null : Number(m[1]) * unit
}

/**
 * The canvas an SVG declares on its root element: width/height (with units), filled in
 * from the viewBox's proportions when one is missing or a percentage, else the viewBox,
 * else resvg's 100 × 100 default.
 */
export function svgSize(svg: string): ImageSize | null {
  const root = /<svg\b([^>]*)>/i.exec(svg)
  if (!root) return null
  const attrs: Record<string, string> = {}
  for (const m of root[1]!.matchAll(/([\w:.-]+)\s*=\s*(?:"([^"]*)"|'([^']*)')/g)) attrs[m[1]!] = m[2] ?? m[3] ?? ''
  const box = attrs.viewBox
    ?.trim()
    .split(/[\s,]+/)
    .map(Number)
  const vb = box && box.length === 4 && box.every(Number.isFinite) && box[2]! > 0 && box[3]! > 0 ? { width: box[2]!, height: box[3]! } : null
  let width = length(attrs.width)
  let height = length(attrs.height)
  if (width === null && height === null) return vb ?? { width: 100, height: 100 }
  if (width === null) width = vb ? (height! * vb.width) / vb.height : 100
  if (height === null) height = vb ? (width * vb.height) / vb.width : 100
  if (!Number.isFinite(width) || !Number.isFinite(height) || width <= 0 || height <= 0) return null
  return { width: Math.ceil(width), height: Math.ceil(height) }
}
