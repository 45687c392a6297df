/**
 * Print-run sheets: codes laid out left to right, top to bottom on pages of a paper size, each
 * with an optional caption and crop marks, streamed page by page (pdfkit writes a page out once
 * the next one starts).
 */
import { AppError, parameterError } from '../shared'
import type { SheetOptions } from './qr.batches.schema'
import { PAPERS, SHEET_MM } from './qr.batches.values'
import { aspectOf, drawCode, MM, openPdf, type PdfCode, textOutline } from './qr.pdf'

const CROP = { length: 3 * MM, offset: 1 * MM, width: 0.25 }
const CAPTION_MM = 2.4

export interface SheetLayout {
  page: [number, number]
  code: number
  margin: number
  gap: number
  cropMarks: boolean
  caption: 'key' | 'shortLink' | 'none'
}

/** The layout in points, or parameter_error when not even one code fits on a page. */
export function sheetLayout(o: SheetOptions = {}): SheetLayout {
  const paper = o.paper ?? 'A4'
  const [wMm, hMm] = typeof paper === 'string' ? PAPERS[paper] : [paper.widthMm, paper.heightMm]
  const codeMm = o.codeMm ?? SHEET_MM.codeMm.default
  const marginMm = o.marginMm ?? SHEET_MM.marginMm.default
  const caption = o.caption ?? 'key'
  const captionMm = caption === 'none' ? 0 : CAPTION_MM * 1.6
  if (2 * marginMm + codeMm > wMm || 2 * marginMm + codeMm + captionMm > hMm)
    throw parameterError(`'sheet.codeMm' a ${codeMm} mm code with ${marginMm} mm margins does not fit on ${wMm}×${hMm} mm paper`)
  return {
    page: [wMm * MM, hMm * MM],
    code: codeMm * MM,
    margin: marginMm * MM,
    gap: (o.gapMm ?? SHEET_MM.gapMm.default) * MM,
    cropMarks: o.cropMarks ?? false,
    caption,
  }
}

export async function openSheet(layout: SheetLayout, sink: (chunk: Uint8Array) => void) {
  const { doc, fonts, finished } = await openPdf({ size: layout.page, sink, title: 'QR codes' })
  const [W, H] = layout.page
  const { code: cw, margin: m, gap: g } = layout
  const captionH = layout.caption === 'none' ? 0 : CAPTION_MM * 1.6 * MM
  let x = m
  let y = m
  let rowH = 0
  let pages = 1

  function cropMarks(bx: number, by: number, bw: number, bh: number) {
    const { length: l, offset: o } = CROP
    doc.lineWidth(CROP.width).strokeColor('#000000')
    for (const cx of [bx, bx + bw])
      for (const cy of [by, by + bh]) {
        const sx = cx === bx ? -1 : 1
        const sy = cy === by ? -1 : 1
        doc
          .moveTo(cx + sx * o, cy)
          .lineTo(cx + sx * (o + l), cy)
          .stroke()
        doc
          .moveTo(cx, cy + sy * o)
          .lineTo(cx, cy + sy * (o + l))
          .stroke()
      }
  }

  return {
    /** Places the next code (and its caption); a new row or page when this one is full. */
    place(item: PdfCode, caption: string) {
      const h = cw * aspectOf(item)
      if (2 * m + h + captionH > H)
        throw new AppError('parameter_error', `'sheet.codeMm' this framed code is ${Math.round(h / MM)} mm tall: it does not fit on the page`)
      if (x + cw > W - m + 0.01) {
        x = m
        y += rowH + captionH + g
        rowH = 0
      }
      if (y + h + captionH > H - m + 0.01) {
        doc.addPage({ size: layout.page, margin: 0 })
        pages++
        x = m
        y = m
        rowH = 0
      }
      drawCode(doc, fonts, item, x, y, cw)
      if (layout.cropMarks) cropMarks(x, y, cw, h)
      if (captionH && caption) {
        const size0 = CAPTION_MM * MM
        const probe = textOutline(fonts.regular, caption, size0, 0, 0)
        const size = probe.width > cw ? (size0 * cw) / probe.width : size0
        const { d } = textOutline(fonts.regular, caption, size, x + cw / 2, y + h + captionH / 2)
        if (d) doc.path(d).fill('#000000')
      }
      rowH = Math.max(rowH, h)
      x += cw + g
    },
    pages: () => pages,
    finished,
  }
}
