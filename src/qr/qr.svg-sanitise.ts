/**
 * User SVG (logos) made safe before any parser sees it. resvg's native build resolves
 * `<image href="/path">` by reading that file (`/dev/zero` grew memory without bound), and
 * a DOCTYPE can define entities that expand or smuggle such a path. So: no DOCTYPE, no
 * entity declarations, no processing instructions, every href that is not a same-document
 * `#id` removed (data: PNG/JPEG images excepted, after the pixel check), every `url(…)`
 * that is not `url(#id)` replaced by `none`, `@import` dropped; and caps on bytes and
 * elements. Decisions are made on the raw text with allow-lists, so an entity-encoded
 * value (`&#47;dev/zero`) is never allowed. The sanitised SVG is then drawn by resvg-wasm
 * in the image worker, which has no file or network access of its own.
 */
import { parameterError } from '../shared'
import { checkPixelBudget, MAX_IMAGE_PIXELS } from './qr.image-size'

/** Larger logo SVGs are exports with embedded photos or fonts, not logos. */
export const MAX_SVG_BYTES = 512 * 1024
/** Elements (start tags) an SVG logo may have; a detailed logo has a few hundred. */
export const MAX_SVG_ELEMENTS = 10_000

const FRAGMENT = /^\s*#[\w.:-]*\s*$/
const RASTER_DATA_URL = /^\s*data:image\/(png|jpeg);base64,([A-Za-z0-9+/=\s]*)$/

/** The SVG text with every outside reference removed; parameter_error when it is refused outright. */
export function sanitiseSvg(svg: string, field: string): string {
  if (Buffer.byteLength(svg) > MAX_SVG_BYTES) throw parameterError(`'${field}' the SVG image is larger than ${MAX_SVG_BYTES / 1024} KB`)
  if (/<!ENTITY/i.test(svg) || /<!DOCTYPE[^>]*\[/i.test(svg)) throw parameterError(`'${field}' SVG images with entity declarations are not accepted`)
  const elements = svg.match(/<[A-Za-z]/g)?.length ?? 0
  if (elements > MAX_SVG_ELEMENTS) throw parameterError(`'${field}' the SVG image has ${elements} elements; at most ${MAX_SVG_ELEMENTS} are accepted`)

  let embeddedPixels = 0
  const keepHref = (value: string): boolean => {
    if (FRAGMENT.test(value)) return true
    const data = RASTER_DATA_URL.exec(value)
    if (!data) return false
    // Embedded rasters are decoded too: the same pixel budget, for all of them together.
    const size = checkPixelBudget(Buffer.from(data[2]!, 'base64'), data[1] as 'png' | 'jpeg', field)
    embeddedPixels += size.width * size.height
    if (embeddedPixels > MAX_IMAGE_PIXELS) throw parameterError(`'${field}' the SVG image embeds more than ${MAX_IMAGE_PIXELS} pixels of images`)
    return true
  }

  return (
    svg
      .replace(/<!DOCTYPE[^>]*>/gi, '')
      .replace(/<!--[\s\S]*?-->/g, '')
      .replace(/<\?(?!xml\s)[\s\S]*?\?>/g, '')
      // Any namespace prefix: xmlns:x="http://www.w3.org/1999/xlink" makes x:href a link too.
      .replace(/\s(?:[\w.-]+:)?href\s*=\s*(?:"([^"]*)"|'([^']*)')/gi, (attr, dq?: string, sq?: string) => (keepHref(dq ?? sq ?? '') ? attr : ''))
      .replace(/\sxml:base\s*=\s*(?:"[^"]*"|'[^']*')/gi, '')
      .replace(/url\s*\(\s*(?:"([^"]*)"|'([^']*)'|([^)'"]*))\s*\)/gi, (ref, dq?: string, sq?: string, bare?: string) =>
        FRAGMENT.test(dq ?? sq ?? bare ?? '') ? ref : 'none',
      )
      .replace(/@import[^;]*;?/gi, '')
  )
}
