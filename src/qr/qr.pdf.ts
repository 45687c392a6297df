/**
 * QR codes as vector PDF, for print shops: the same shapes the SVG renderer builds (qr.svg.ts
 * codeParts), drawn as PDF paths and fills, with the built-in frame and the frame texts as
 * outlines of the embedded Inter font (as print shops want text: no font to substitute; and
 * fontkit cannot subset our woff2's composite glyphs for embedding). Only images the design
 * names (a logo, a frame picture) are embedded as the pictures they are.
 *
 * pdfkit, not pdf-lib: pdfkit writes each page out as it is finished (a stream), so a print
 * run's sheet of 10,000 codes never sits in memory whole, and it draws SVG path data (arcs
 * included), linear and radial gradients and embedded fonts (fontkit reads our woff2) directly;
 * pdf-lib builds the whole document in memory before saving and has no gradients.
 * Its default Helvetica is loaded from the package's files at run time, which a compiled binary
 * lacks: documents here start with no font (they hold no text object).
 */
// pdfkit and fontkit are loaded on the first PDF, not at start: evaluating them took ~45 of the
// ~115 ms of CPU the compiled binary spent before it could serve (src/stats/STORAGE.md, start time).
import inter400Path from '../../web/fonts/inter-latin-400-normal.woff2' with { type: 'file' }
import inter700Path from '../../web/fonts/inter-latin-700-normal.woff2' with { type: 'file' }
import type { Fill, FrameText } from './qr.design'
import { BUILTIN, codeParts, type EmbeddedImage, frameLayout, GRADIENT_AXES, pad, type SvgInput } from './qr.svg'

export const MM = 72 / 25.4

/** A code as the renderer settled it (after repairs): what buildSvg draws. */
export type PdfCode = Pick<SvgInput, 'matrix' | 'design' | 'logo' | 'logoSize' | 'frameImage'> & { texts: FrameText[] }

/** What we use of a fontkit font (the package ships no types). */
interface OutlinePath {
  scale(x: number, y: number): OutlinePath
  translate(x: number, y: number): OutlinePath
  toSVG(): string
}
interface Font {
  unitsPerEm: number
  ascent: number
  descent: number
  layout(text: string): { glyphs: { path: OutlinePath }[]; positions: { xAdvance: number; xOffset: number; yOffset: number }[] }
}

let fonts: Promise<{ regular: Font; bold: Font }> | null = null
/** The frame texts' fonts (Inter 400 and 700, embedded in the binary), parsed once. */
export function textFonts() {
  fonts ??= (async () => {
    const [regular, bold] = await Promise.all(
      [inter400Path, inter700Path].map(async (p) => {
        const { create: createFont } = await import('fontkit')
        return createFont(Buffer.from(await Bun.file(p).arrayBuffer())) as unknown as Font
      }),
    )
    return { regular: regular!, bold: bold! }
  })()
  fonts.catch(() => (fonts = null))
  return fonts
}
type Fonts = Awaited<ReturnType<typeof textFonts>>

/**
 * `text` as one SVG path in points, `size` high, centred on (cx, cy) as SVG's text-anchor
 * middle and dominant-baseline central place it; also its width.
 */
export function textOutline(font: Font, text: string, size: number, cx: number, cy: number): { d: string; width: number } {
  const k = size / font.unitsPerEm
  const run = font.layout(text)
  const width = run.positions.reduce((w, p) => w + p.xAdvance, 0) * k
  const baseline = cy + ((font.ascent + font.descent) / 2) * k
  let pen = cx - width / 2
  let d = ''
  run.glyphs.forEach((g, i) => {
    const p = run.positions[i]!
    d += g.path
      .scale(k, -k)
      .translate(pen + p.xOffset * k, baseline - p.yOffset * k)
      .toSVG()
    pen += p.xAdvance * k
  })
  return { d, width }
}

/** A pdfkit document that streams its bytes to `sink`. */
export async function openPdf(opts: { size: [number, number]; sink: (chunk: Uint8Array) => void; title?: string }) {
  const f = await textFonts()
  const { default: PDFDocument } = await import('pdfkit')
  const doc = new PDFDocument({
    size: opts.size,
    margin: 0,
    font: null as unknown as string,
    autoFirstPage: true,
    info: { Title: opts.title ?? 'QR code', Producer: 'shortlink' },
  })
  const done = new Promise<void>((resolve, reject) => {
    doc.on('data', (c: Buffer) => opts.sink(new Uint8Array(c.buffer, c.byteOffset, c.byteLength)))
    doc.on('end', resolve)
    doc.on('error', reject)
  })
  const finished = () => {
    doc.end()
    return done
  }
  return { doc, fonts: f, finished }
}

const imageBytes = (img: EmbeddedImage) => Buffer.from(img.href.slice(img.href.indexOf(',') + 1), 'base64')

function paintOf(doc: PDFKit.PDFDocument, fill: Fill, n: number): string | PDFKit.PDFGradient {
  if (fill.kind === 'color') return fill.color
  const [c1, c2] = fill.colors
  const g =
    fill.kind === 'radial-gradient'
      ? doc.radialGradient(n / 2, n / 2, 0, n / 2, n / 2, (n / 2) * Math.SQRT2)
      : (() => {
          const [x1, y1, x2, y2] = GRADIENT_AXES[fill.direction].map((v) => v * n) as [number, number, number, number]
          return doc.linearGradient(x1, y1, x2, y2)
        })()
  g.stop(0, c1).stop(1, c2)
  return g
}

/** The code's aspect: height ÷ width (framed codes are taller). */
export function aspectOf(code: PdfCode): number {
  if (!code.design.frame) return 1
  const geo = frameLayout(code.design, code.frameImage ?? null, code.texts.length)
  return geo.height / geo.width
}

/** Draws the code with its top-left corner at (x, y), `width` points wide; returns its height. */
export function drawCode(doc: PDFKit.PDFDocument, fonts: Fonts, code: PdfCode, x: number, y: number, width: number): number {
  const { design } = code
  const parts = codeParts(code)
  const n = parts.n
  const drawSymbol = (quiet: number) => {
    const side = n + 2 * quiet
    if (!design.background.transparent) doc.rect(0, 0, side, side).fill(design.background.color)
    doc.save().translate(quiet, quiet)
    if (parts.body) doc.path(parts.body).fill(paintOf(doc, design.body.fill, n))
    doc.path(parts.rings).fill(paintOf(doc, design.eye.frameFill, n), 'even-odd')
    doc.path(parts.balls).fill(paintOf(doc, design.eye.ballFill, n))
    if (parts.logoBox && code.logo) {
      const box = parts.logoBox
      if (design.logo!.clear) {
        const padded = pad(box, 0.5)
        const radius = design.logo!.shape === 'circle' ? padded.w / 2 : design.logo!.shape === 'rounded' ? padded.w * 0.2 : 0
        const bg = design.background.transparent ? '#ffffff' : design.background.color
        doc.roundedRect(padded.x, padded.y, padded.w, padded.h, radius).fill(bg)
      }
      doc.image(imageBytes(code.logo), box.x, box.y, { fit: [box.w, box.h], align: 'center', valign: 'center' })
    }
    doc.restore()
  }
  doc.save().translate(x, y)
  if (!design.frame) {
    const side = n + 2 * design.space
    doc.scale(width / side)
    drawSymbol(design.space)
    doc.restore()
    return width
  }
  const geo = frameLayout(design, code.frameImage ?? null, code.texts.length)
  const k = width / geo.width
  doc.scale(k)
  if (code.frameImage) doc.image(imageBytes(code.frameImage), 0, 0, { width: geo.width, height: geo.height })
  else {
    const border = design.body.fill.kind === 'color' ? design.body.fill.color : design.body.fill.colors[0]
    doc.lineWidth(24).roundedRect(12, 12, geo.width - 24, geo.height - 24, 48)
    if (design.background.transparent) doc.stroke(border)
    else doc.fillAndStroke(design.background.color, border)
  }
  const side = n + 2 * geo.quiet
  doc
    .save()
    .translate(geo.x, geo.y)
    .scale(geo.side / side)
  drawSymbol(geo.quiet)
  doc.restore()
  const [, ry, , rh] = geo.rect
  code.texts.forEach((t, i) => {
    const [tx, ty] = t.pos ?? [geo.width / 2, ry + rh + BUILTIN.margin / 2 + BUILTIN.line * (i + 0.5)]
    const text = t.prefix + t.content
    if (!text.trim()) return
    const { d } = textOutline(t.bold ? fonts.bold : fonts.regular, text, t.size, tx, ty)
    if (d) doc.path(d).fill(t.color)
  })
  doc.restore()
  return width * (geo.height / geo.width)
}

/** One page exactly the code's size: `width` points wide (1 pt = 1/72 in). */
export async function codePdf(code: PdfCode, width: number): Promise<Uint8Array> {
  const chunks: Uint8Array[] = []
  const height = width * aspectOf(code)
  const { doc, fonts, finished } = await openPdf({ size: [width, height], sink: (c) => chunks.push(c) })
  drawCode(doc, fonts, code, 0, 0, width)
  await finished()
  return Buffer.concat(chunks)
}
