/**
 * qrOptions → a fully defaulted design, with the rules no schema can say: gradients
 * need two colours, every colour must stand off the background in one direction (all
 * darker, or all lighter = an inverted code), and a logo forces error correction H
 * and version ≥ 5 (the measured budget for a centred logo).
 */
import { assertValid, FILE_ID_PATTERN, parameterError } from '../shared'
import {
  type BODY_STYLES,
  type DIRECTIONS,
  type EYE_BALL_STYLES,
  EYE_BALLS_FOR,
  type EYE_FRAME_STYLES,
  LOGO_MIN_VERSION,
  type LOGO_SHAPES,
  QrOptions,
} from './qr.schema'

export type BodyStyle = (typeof BODY_STYLES)[number]
export type EyeFrameStyle = (typeof EYE_FRAME_STYLES)[number]
export type EyeBallStyle = (typeof EYE_BALL_STYLES)[number]
export type Direction = (typeof DIRECTIONS)[number]

export type Fill = { kind: 'color'; color: string } | { kind: 'linear-gradient' | 'radial-gradient'; colors: [string, string]; direction: Direction }

export interface FrameText {
  pos: [number, number] | null
  color: string
  size: number
  prefix: string
  content: string
  bold: boolean
}

export interface Design {
  ecLevel: 0 | 1 | 2 | 3
  space: number
  minVersion: number
  background: { transparent: boolean; color: string }
  body: { style: BodyStyle; fill: Fill }
  eye: { frameStyle: EyeFrameStyle; ballStyle: EyeBallStyle; frameFill: Fill; ballFill: Fill }
  logo: null | { source: string; shape: (typeof LOGO_SHAPES)[number]; size: number; clear: boolean; shadow: boolean }
  /** null source = the built-in frame. */
  frame: null | { source: string | null; codeRect: [number, number, number, number] | null; texts: FrameText[] }
  /** Light modules on a dark background. */
  inverted: boolean
}

/** Minimum WCAG contrast ratio between every module colour and the background. */
export const MIN_CONTRAST = 3

/** Checks qrOptions and returns the design; throws parameter_error naming the field. */
export function designOf(qrOptions: unknown, opts: { allowFileIds?: boolean; field?: string } = {}): Design {
  const field = opts.field ?? 'qrOptions'
  assertValid(QrOptions, qrOptions, field)
  const o = qrOptions as QrOptions
  const bg = o.patterns?.background
  const background = { transparent: bg?.type === 'transparent', color: normalizeHex(bg?.value ?? '#ffffff') }

  const body = o.patterns?.body
  const bodyFill = fillOf(body?.type, body?.value ?? '#000000', body?.direction, `${field}.patterns.body.value`, 1)
  const eye = o.patterns?.eye
  let frameFill = bodyFill
  let ballFill = bodyFill
  if (eye?.value !== undefined || eye?.type !== undefined) {
    const value = eye?.value ?? colorsOf(bodyFill).join(',')
    if ((eye?.type ?? 'color') === 'color') {
      const [ring, ball] = value.split(',')
      frameFill = { kind: 'color', color: normalizeHex(ring!) }
      ballFill = { kind: 'color', color: normalizeHex(ball ?? ring!) }
    } else {
      frameFill = ballFill = fillOf(eye?.type, value, eye?.direction, `${field}.patterns.eye.value`, 2)
    }
  }
  const frameStyle = (eye?.style_id ?? 'square') as EyeFrameStyle
  const ballStyle = (eye?.ball_style_id ?? EYE_BALLS_FOR[frameStyle][0]) as EyeBallStyle
  if (!EYE_BALLS_FOR[frameStyle].includes(ballStyle))
    throw parameterError(
      `'${field}.patterns.eye.ball_style_id' must be one of ${EYE_BALLS_FOR[frameStyle].join(', ')} with style_id '${frameStyle}' (other pairs do not scan with common decoders)`,
    )

  const logo = o.logo
  if (logo) assertSource(logo.value, `${field}.logo.value`, opts.allowFileIds ?? false, true)
  const frame = o.frame
  if (frame?.value) assertSource(frame.value, `${field}.frame.value`, opts.allowFileIds ?? false, false)

  const design: Design = {
    ecLevel: logo ? 3 : ((o.correctLevel ?? 1) as Design['ecLevel']),
    space: o.space ?? 4,
    minVersion: Math.max(o.version ?? 1, logo ? LOGO_MIN_VERSION : 1),
    background,
    body: { style: (body?.style_id ?? 'square') as BodyStyle, fill: bodyFill },
    eye: { frameStyle, ballStyle, frameFill, ballFill },
    logo: logo
      ? {
          source: logo.value,
          shape: (logo.shape ?? 'square') as (typeof LOGO_SHAPES)[number],
          size: logo.size ?? 10,
          clear: logo.hasBackground ?? true,
          shadow: logo.shadow ?? false,
        }
      : null,
    frame: frame
      ? {
          source: frame.value ?? null,
          codeRect: (frame.options?.code_rect as [number, number, number, number] | undefined) ?? null,
          texts: (frame.add_texts ?? []).map((x) => ({
            pos: (x.pos as [number, number] | undefined) ?? null,
            color: normalizeHex(x.color ?? '#000000'),
            size: x.size ?? 60,
            prefix: x.prefix ?? '',
            content: x.content ?? '',
            bold: x.bold ?? false,
          })),
        }
      : null,
    inverted: false,
  }
  if (design.frame?.codeRect) {
    const [, , w, h] = design.frame.codeRect
    if (w < 21 || h < 21) throw parameterError(`'${field}.frame.options.code_rect' width and height must be at least 21 pixels`)
  }
  design.inverted = checkContrast(design, field)
  return design
}

/** The uploaded files (`fil_…`) a design draws, with the field naming each. */
export function fileIdsOf(d: Design, field = 'qrOptions'): { field: string; id: string }[] {
  const out: { field: string; id: string }[] = []
  if (d.logo?.source.startsWith('fil_')) out.push({ field: `${field}.logo.value`, id: d.logo.source })
  if (d.frame?.source?.startsWith('fil_')) out.push({ field: `${field}.frame.value`, id: d.frame.source })
  return out
}

/**
 * A light-on-dark design turned dark-on-light with the same two colours: the modules take
 * the background colour and the background takes the modules' main colour. ZBar and many
 * phone scanners read only dark modules on a light ground. Texts on the built-in frame that
 * were lighter than the old background follow the modules, so they stay readable.
 */
export function darkOnLight(d: Design): Design {
  if (!d.inverted) return d
  // A transparent background counts as black under light modules (see checkContrast).
  const dark = d.background.transparent ? '#000000' : d.background.color
  const ink: Fill = { kind: 'color', color: dark }
  const darkLum = luminance(dark)
  const frame =
    d.frame && !d.frame.source ? { ...d.frame, texts: d.frame.texts.map((t) => (luminance(t.color) > darkLum ? { ...t, color: dark } : t)) } : d.frame
  return {
    ...d,
    background: { transparent: false, color: colorsOf(d.body.fill)[0]! },
    body: { ...d.body, fill: ink },
    eye: { ...d.eye, frameFill: ink, ballFill: ink },
    frame,
    inverted: false,
  }
}

/** The contrast rule; returns true for a light-on-dark (inverted) design. */
function checkContrast(d: Design, field: string): boolean {
  const parts: [string, string[]][] = [
    [`${field}.patterns.body.value`, colorsOf(d.body.fill)],
    [`${field}.patterns.eye.value`, [...colorsOf(d.eye.frameFill), ...colorsOf(d.eye.ballFill)]],
  ]
  const all = parts.flatMap(([, c]) => c)
  // A transparent background takes the page's colour: assume white under dark modules, black under light ones.
  const bgLum = d.background.transparent ? (all.every((c) => luminance(c) < 0.18) ? 1 : 0) : luminance(d.background.color)
  const inverted = luminance(all[0]!) > bgLum
  for (const [name, colors] of parts)
    for (const c of colors) {
      const lum = luminance(c)
      if (lum > bgLum !== inverted)
        throw parameterError(
          `'${name}' ${c} is ${inverted ? 'darker' : 'lighter'} than the background while other module colours are ${inverted ? 'lighter' : 'darker'}: a code must be all dark-on-light or all light-on-dark`,
        )
      const ratio = (Math.max(lum, bgLum) + 0.05) / (Math.min(lum, bgLum) + 0.05)
      if (ratio < MIN_CONTRAST)
        throw parameterError(`'${name}' ${c} has contrast ${ratio.toFixed(2)}:1 against the background; at least ${MIN_CONTRAST}:1 is needed to scan`)
    }
  return inverted
}

function fillOf(type: string | undefined, value: string, direction: string | undefined, name: string, maxSolid: number): Fill {
  const colors = value.split(',').map(normalizeHex)
  if ((type ?? 'color') === 'color') {
    if (colors.length > maxSolid) throw parameterError(`'${name}' takes one colour with type 'color' (two colours make a gradient)`)
    return { kind: 'color', color: colors[0]! }
  }
  if (colors.length !== 2) throw parameterError(`'${name}' a ${type} takes two colours 'c1,c2'`)
  return { kind: type as 'linear-gradient' | 'radial-gradient', colors: [colors[0]!, colors[1]!], direction: (direction ?? 'to-right') as Direction }
}

export function colorsOf(f: Fill): string[] {
  return f.kind === 'color' ? [f.color] : f.colors
}

const FILE_ID = new RegExp(FILE_ID_PATTERN)

function assertSource(value: string, name: string, allowFileIds: boolean, svgAllowed: boolean) {
  if (FILE_ID.test(value)) {
    if (!allowFileIds) throw parameterError(`'${name}' file ids are not available on this server yet; give an http(s) URL`)
    return
  }
  let url: URL
  try {
    url = new URL(value)
  } catch {
    throw parameterError(`'${name}' must be an http(s) URL of a PNG${svgAllowed ? ', SVG' : ''} or JPEG image, or a file id fil_…`)
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw parameterError(`'${name}' must be an http(s) URL`)
}

export function normalizeHex(c: string): string {
  const h = c.trim().toLowerCase()
  return h.length === 4 ? `#${h[1]}${h[1]}${h[2]}${h[2]}${h[3]}${h[3]}` : h
}

/** WCAG relative luminance of #rrggbb. */
export function luminance(hex: string): number {
  const n = parseInt(normalizeHex(hex).slice(1), 16)
  const ch = [(n >> 16) & 255, (n >> 8) & 255, n & 255].map((v) => {
    const s = v / 255
    return s <= 0.03928 ? s / 12.92 : ((s + 0.055) / 1.055) ** 2.4
  })
  return 0.2126 * ch[0]! + 0.7152 * ch[1]! + 0.0722 * ch[2]!
}
