/**
 * Our own SVG from the QR matrix and a design: module shapes, finder-pattern ("eye")
 * shapes, fills and gradients, logo, frame image and texts. Pure string building
 * (0.2-0.4 ms); resvg turns it into pixels.
 */
import type { BodyStyle, Design, Direction, EyeBallStyle, EyeFrameStyle, Fill, FrameText } from './qr.design'

/** The frame texts' font: embedded (Inter 400/700) and handed to resvg by qr.raster.ts. */
export const FONT_FAMILY = 'Inter'

export interface Matrix {
  size: number
  dark(row: number, col: number): boolean
}

/** An image ready to embed: a data URL and its natural size. */
export interface EmbeddedImage {
  href: string
  width: number
  height: number
}

export interface SvgInput {
  matrix: Matrix
  design: Design
  width: number
  logo?: EmbeddedImage | null
  /** logo size actually drawn (% of code area); may be below the design's after a repair. */
  logoSize?: number
  frameImage?: EmbeddedImage | null
  /** false: lay out for the frame but leave it out (it is composited under the pixels). */
  drawFrameImage?: boolean
  /** 'omit' / 'only': the frame texts left out, or alone (a layer rendered once and cached). Default: drawn. */
  textLayer?: 'draw' | 'omit' | 'only'
  texts: FrameText[]
}

/** The built-in frame: 1000 units wide, code square at (50, 50, 900), texts below. */
export const BUILTIN = { width: 1000, code: 900, margin: 50, line: 100 }

const n3 = (v: number) => String(Math.round(v * 1000) / 1000)

export function buildSvg(input: SvgInput): { svg: string; height: number } {
  const { matrix, design, width } = input
  const quiet = design.frame ? Math.max(1, design.space) : design.space
  const side = matrix.size + 2 * quiet
  const defs: string[] = []
  const code = codeGroup(input, quiet, defs)

  if (!design.frame) {
    const svg = root(side, side, width, width, defs, `${backgroundRect(design, 0, 0, side, side)}${code}`)
    return { svg, height: width }
  }

  // Framed: the frame's own pixel space, with the code in a nested viewport.
  const texts = input.texts
  const geo = frameLayout(design, input.frameImage ?? null, texts.length)
  const { width: fw, height: fh, rect } = geo
  let frameLayer: string
  if (input.frameImage) {
    frameLayer =
      input.drawFrameImage === false ? '' : `<image href="${input.frameImage.href}" x="0" y="0" width="${fw}" height="${fh}" preserveAspectRatio="none"/>`
  } else {
    const border = primaryColor(design)
    const inside = design.background.transparent ? 'none' : design.background.color
    frameLayer = `<rect x="12" y="12" width="${fw - 24}" height="${fh - 24}" rx="48" fill="${inside}" stroke="${border}" stroke-width="24"/>`
  }
  const [, ry, , rh] = rect
  const { x: cx, y: cy, side: s } = geo
  const textLayer = texts
    .map((t, i) => {
      const [x, y] = t.pos ?? [fw / 2, ry + rh + BUILTIN.margin / 2 + BUILTIN.line * (i + 0.5)]
      const weight = t.bold ? 700 : 400
      return `<text x="${n3(x)}" y="${n3(y)}" font-family="${FONT_FAMILY}" font-size="${t.size}" font-weight="${weight}" fill="${t.color}" text-anchor="middle" dominant-baseline="central">${escapeXml(t.prefix + t.content)}</text>`
    })
    .join('')
  // A scaled group, not a nested <svg>: resvg clips a nested viewport through a full-canvas
  // mask, which made framed renders 5× slower (60 → 10 ms at 1000 px). The code stays inside
  // its square, so nothing needs clipping.
  const placed = `<g transform="translate(${n3(cx)} ${n3(cy)}) scale(${s / side})">${backgroundRect(design, 0, 0, side, side)}${code}</g>`
  const height = Math.round((width * fh) / fw)
  if (input.textLayer === 'only') return { svg: root(fw, fh, width, height, [], textLayer), height }
  return { svg: root(fw, fh, width, height, defs, `${frameLayer}${placed}${input.textLayer === 'omit' ? '' : textLayer}`), height }
}

/** Frame canvas size, the code rectangle and the code square (centred in it), in frame units. */
export function frameLayout(design: Design, frameImage: { width: number; height: number } | null, textCount: number) {
  const quiet = Math.max(1, design.space)
  let width: number, height: number, rect: [number, number, number, number]
  if (frameImage) {
    width = frameImage.width
    height = frameImage.height
    const s = Math.round(Math.min(width, height) * 0.6)
    rect = design.frame?.codeRect ?? [Math.round((width - s) / 2), Math.round((height - s) / 2), s, s]
  } else {
    width = BUILTIN.width
    height = BUILTIN.margin * 2 + BUILTIN.code + (textCount ? textCount * BUILTIN.line + BUILTIN.margin / 2 : 0)
    rect = design.frame?.codeRect ?? [BUILTIN.margin, BUILTIN.margin, BUILTIN.code, BUILTIN.code]
  }
  const side = Math.min(rect[2], rect[3])
  return { width, height, rect, side, x: rect[0] + (rect[2] - side) / 2, y: rect[1] + (rect[3] - side) / 2, quiet }
}

function root(vw: number, vh: number, w: number, h: number, defs: string[], content: string): string {
  const d = defs.length ? `<defs>${defs.join('')}</defs>` : ''
  return `<svg xmlns="http://www.w3.org/2000/svg" width="${w}" height="${h}" viewBox="0 0 ${vw} ${vh}">${d}${content}</svg>`
}

function backgroundRect(d: Design, x: number, y: number, w: number, h: number): string {
  return d.background.transparent ? '' : `<rect x="${x}" y="${y}" width="${w}" height="${h}" fill="${d.background.color}"/>`
}

function primaryColor(d: Design): string {
  return d.body.fill.kind === 'color' ? d.body.fill.color : d.body.fill.colors[0]
}

/** The code's shapes in module units (origin at the symbol's corner, quiet zone outside): SVG and PDF draw the same paths. */
export interface CodeParts {
  n: number
  body: string
  rings: string
  balls: string
  crisp: boolean
  logoBox: Box | null
}

export function codeParts(input: Pick<SvgInput, 'matrix' | 'design' | 'logo' | 'logoSize'>): CodeParts {
  const { matrix, design } = input
  const n = matrix.size
  const logoBox = input.logo ? logoRect(n, input.logoSize ?? design.logo!.size) : null
  // Modules the logo covers are left out when the logo has a background, so no sliver peeks out.
  const clearBox = logoBox && design.logo!.clear ? pad(logoBox, 0.5) : null
  const isEye = (r: number, c: number) => (r < 7 && c < 7) || (r < 7 && c >= n - 7) || (r >= n - 7 && c < 7)
  const on = (r: number, c: number) => {
    if (r < 0 || c < 0 || r >= n || c >= n || isEye(r, c) || !matrix.dark(r, c)) return false
    if (clearBox && c + 1 > clearBox.x && c < clearBox.x + clearBox.w && r + 1 > clearBox.y && r < clearBox.y + clearBox.h) return false
    return true
  }
  let rings = ''
  let balls = ''
  for (const [x, y] of [
    [0, 0],
    [n - 7, 0],
    [0, n - 7],
  ] as const) {
    rings += eyeRing(design.eye.frameStyle, x, y)
    balls += eyeBall(design.eye.ballStyle, x + 2, y + 2)
  }
  return { n, body: bodyPath(design.body.style, n, on), rings, balls, crisp: design.body.style === 'square', logoBox }
}

/** Modules, eyes and logo in module units, offset by the quiet zone. */
function codeGroup(input: SvgInput, quiet: number, defs: string[]): string {
  const { design } = input
  const parts = codeParts(input)
  const n = parts.n
  const bodyFill = paint(design.body.fill, 'b', n, defs)
  const crisp = parts.crisp ? ' shape-rendering="crispEdges"' : ''
  let out = `<g transform="translate(${quiet} ${quiet})">`
  out += `<path fill="${bodyFill}"${crisp} d="${parts.body}"/>`
  const ringFill = paint(design.eye.frameFill, 'ef', n, defs)
  const ballFill = design.eye.ballFill === design.eye.frameFill ? ringFill : paint(design.eye.ballFill, 'eb', n, defs)
  out += `<path fill="${ringFill}" fill-rule="evenodd" d="${parts.rings}"/><path fill="${ballFill}" d="${parts.balls}"/>`
  if (parts.logoBox && input.logo) out += logoLayer(input, parts.logoBox, defs)
  return `${out}</g>`
}

export interface Box {
  x: number
  y: number
  w: number
  h: number
}

/** Centred square covering `size` % of the n×n symbol. */
function logoRect(n: number, size: number): Box {
  const s = Math.sqrt(size / 100) * n
  return { x: (n - s) / 2, y: (n - s) / 2, w: s, h: s }
}
export const pad = (b: Box, p: number): Box => ({ x: b.x - p, y: b.y - p, w: b.w + 2 * p, h: b.h + 2 * p })

function logoLayer(input: SvgInput, box: Box, defs: string[]): string {
  const logo = input.design.logo!
  const img = input.logo!
  const padded = pad(box, 0.5)
  const radius = logo.shape === 'circle' ? padded.w / 2 : logo.shape === 'rounded' ? padded.w * 0.2 : 0
  let out = ''
  if (logo.shadow)
    defs.push(
      `<filter id="ls" x="-30%" y="-30%" width="160%" height="160%"><feDropShadow dx="0" dy="${n3(box.w * 0.03)}" stdDeviation="${n3(box.w * 0.04)}" flood-color="#000" flood-opacity="0.35"/></filter>`,
    )
  const shadow = logo.shadow ? ' filter="url(#ls)"' : ''
  if (logo.clear) {
    const bg = input.design.background.transparent ? (input.design.inverted ? '#000000' : '#ffffff') : input.design.background.color
    out += `<rect x="${n3(padded.x)}" y="${n3(padded.y)}" width="${n3(padded.w)}" height="${n3(padded.h)}" rx="${n3(radius)}" fill="${bg}"${shadow}/>`
  }
  const clipR = logo.shape === 'circle' ? box.w / 2 : logo.shape === 'rounded' ? box.w * 0.2 : 0
  let clip = ''
  if (clipR > 0) {
    defs.push(`<clipPath id="lc"><rect x="${n3(box.x)}" y="${n3(box.y)}" width="${n3(box.w)}" height="${n3(box.h)}" rx="${n3(clipR)}"/></clipPath>`)
    clip = ' clip-path="url(#lc)"'
  }
  const imgShadow = !logo.clear && logo.shadow ? shadow : ''
  out += `<image href="${img.href}" x="${n3(box.x)}" y="${n3(box.y)}" width="${n3(box.w)}" height="${n3(box.h)}" preserveAspectRatio="xMidYMid meet"${clip}${imgShadow}/>`
  return out
}

/** A fill attribute value; gradients span the symbol (module units). */
function paint(fill: Fill, id: string, n: number, defs: string[]): string {
  if (fill.kind === 'color') return fill.color
  const [c1, c2] = fill.colors
  const stops = `<stop offset="0" stop-color="${c1}"/><stop offset="1" stop-color="${c2}"/>`
  if (fill.kind === 'radial-gradient') {
    defs.push(`<radialGradient id="${id}" gradientUnits="userSpaceOnUse" cx="${n / 2}" cy="${n / 2}" r="${n3((n / 2) * Math.SQRT2)}">${stops}</radialGradient>`)
  } else {
    const [x1, y1, x2, y2] = GRADIENT_AXES[fill.direction].map((v) => v * n)
    defs.push(`<linearGradient id="${id}" gradientUnits="userSpaceOnUse" x1="${x1}" y1="${y1}" x2="${x2}" y2="${y2}">${stops}</linearGradient>`)
  }
  return `url(#${id})`
}

export const GRADIENT_AXES: Record<Direction, [number, number, number, number]> = {
  'to-right': [0, 0, 1, 0],
  'to-left': [1, 0, 0, 0],
  'to-bottom': [0, 0, 0, 1],
  'to-top': [0, 1, 0, 0],
  'to-bottom-right': [0, 0, 1, 1],
  'to-bottom-left': [1, 0, 0, 1],
  'to-top-right': [0, 1, 1, 0],
  'to-top-left': [1, 1, 0, 0],
}

/** Rectangle with per-corner radii [tl, tr, br, bl]; radius 0 draws a sharp corner. */
function roundRect(x: number, y: number, w: number, h: number, [tl, tr, br, bl]: number[]): string {
  const arc = (r: number, ex: number, ey: number) => (r > 0 ? `A${n3(r)} ${n3(r)} 0 0 1 ${n3(ex)} ${n3(ey)}` : `L${n3(ex)} ${n3(ey)}`)
  return (
    `M${n3(x + tl!)} ${n3(y)}H${n3(x + w - tr!)}${arc(tr!, x + w, y + tr!)}V${n3(y + h - br!)}${arc(br!, x + w - br!, y + h)}` +
    `H${n3(x + bl!)}${arc(bl!, x, y + h - bl!)}V${n3(y + tl!)}${arc(tl!, x + tl!, y)}Z`
  )
}
const circle = (cx: number, cy: number, r: number) => `M${n3(cx - r)} ${n3(cy)}a${n3(r)} ${n3(r)} 0 1 0 ${n3(2 * r)} 0a${n3(r)} ${n3(r)} 0 1 0 ${n3(-2 * r)} 0Z`
const diamond = (cx: number, cy: number, r: number) => `M${n3(cx)} ${n3(cy - r)}l${n3(r)} ${n3(r)}l${n3(-r)} ${n3(r)}l${n3(-r)} ${n3(-r)}Z`

function bodyPath(style: BodyStyle, n: number, on: (r: number, c: number) => boolean): string {
  const parts: string[] = []
  if (style === 'square') {
    // Horizontal runs: one subpath per run keeps the path short.
    for (let r = 0; r < n; r++)
      for (let c = 0; c < n; c++) {
        if (!on(r, c)) continue
        let e = c
        while (on(r, e + 1)) e++
        parts.push(`M${c} ${r}h${e - c + 1}v1h${c - e - 1}z`)
        c = e
      }
    return parts.join('')
  }
  if (style === 'vertical-bars' || style === 'horizontal-bars') {
    const vertical = style === 'vertical-bars'
    const thick = 0.9
    const inset = (1 - thick) / 2
    for (let a = 0; a < n; a++)
      for (let b = 0; b < n; b++) {
        const at = (k: number) => (vertical ? on(k, a) : on(a, k))
        if (!at(b)) continue
        let e = b
        while (at(e + 1)) e++
        const len = e - b + 1
        const r = thick / 2
        parts.push(
          vertical
            ? roundRect(a + inset, b + inset, thick, len - 2 * inset, [r, r, r, r])
            : roundRect(b + inset, a + inset, len - 2 * inset, thick, [r, r, r, r]),
        )
        b = e
      }
    return parts.join('')
  }
  for (let r = 0; r < n; r++)
    for (let c = 0; c < n; c++) {
      if (!on(r, c)) continue
      const up = on(r - 1, c)
      const down = on(r + 1, c)
      const left = on(r, c - 1)
      const right = on(r, c + 1)
      switch (style) {
        case 'dots':
          parts.push(circle(c + 0.5, r + 0.5, 0.5))
          break
        case 'diamond':
          parts.push(diamond(c + 0.5, r + 0.5, 0.56))
          break
        case 'small-square':
          parts.push(`M${c + 0.1} ${r + 0.1}h0.8v0.8h-0.8z`)
          break
        case 'rounded':
        case 'extra-rounded': {
          const k = style === 'rounded' ? 0.3 : 0.5
          parts.push(roundRect(c, r, 1, 1, [!up && !left ? k : 0, !up && !right ? k : 0, !down && !right ? k : 0, !down && !left ? k : 0]))
          break
        }
        case 'classy':
        case 'classy-rounded': {
          const k = style === 'classy' ? 0.5 : 0.5
          const soft = style === 'classy' ? 0 : 0.2
          parts.push(roundRect(c, r, 1, 1, [!up && !left ? k : 0, !up && !right ? soft : 0, !down && !right ? k : 0, !down && !left ? soft : 0]))
          break
        }
      }
    }
  return parts.join('')
}

/** Outer 7×7 ring of a finder pattern at (x, y), as two subpaths for even-odd filling. */
function eyeRing(style: EyeFrameStyle, x: number, y: number): string {
  switch (style) {
    case 'square':
      return `M${x} ${y}h7v7h-7zM${x + 1} ${y + 1}v5h5v-5z`
    case 'rounded':
      return roundRect(x, y, 7, 7, [1.5, 1.5, 1.5, 1.5]) + roundRect(x + 1, y + 1, 5, 5, [0.8, 0.8, 0.8, 0.8])
    case 'extra-rounded':
      return roundRect(x, y, 7, 7, [2.6, 2.6, 2.6, 2.6]) + roundRect(x + 1, y + 1, 5, 5, [1.6, 1.6, 1.6, 1.6])
    case 'circle':
      // A near-circle: a true circle's ring is too thin off-centre for ZBar at large sizes.
      return roundRect(x, y, 7, 7, [3, 3, 3, 3]) + roundRect(x + 1, y + 1, 5, 5, [2, 2, 2, 2])
    case 'leaf':
      return roundRect(x, y, 7, 7, [2.4, 0, 2.4, 0]) + roundRect(x + 1, y + 1, 5, 5, [1.4, 0, 1.4, 0])
  }
}

/** Inner 3×3 square of a finder pattern with its top-left at (x, y). */
function eyeBall(style: EyeBallStyle, x: number, y: number): string {
  switch (style) {
    case 'square':
      return `M${x} ${y}h3v3h-3z`
    case 'rounded':
      return roundRect(x, y, 3, 3, [0.8, 0.8, 0.8, 0.8])
    case 'circle':
      return circle(x + 1.5, y + 1.5, 1.5)
    case 'leaf':
      return roundRect(x, y, 3, 3, [1.3, 0, 1.3, 0])
  }
}

export function escapeXml(s: string): string {
  // Characters XML 1.0 cannot carry at all (control characters, lone surrogates, U+FFFE/F) are
  // dropped: the schema refuses them, and a stored text must never make a code unrenderable.
  return (
    s
      // biome-ignore lint/suspicious/noControlCharactersInRegex: dropping the characters XML cannot carry is the point
      .replace(/[\u0000-\u0008\u000B\u000C\u000E-\u001F\uFFFE\uFFFF]|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g, '')
      .replace(/[<>&"']/g, (c) => ({ '<': '&lt;', '>': '&gt;', '&': '&amp;', '"': '&quot;', "'": '&apos;' })[c]!)
  )
}
