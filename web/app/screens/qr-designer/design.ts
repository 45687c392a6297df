/**
 * The QR design (`qrOptions`) as the designer edits it. The allowed values mirror
 * src/qr/qr.schema.ts (published in the OpenAPI document); they are restated here so the
 * browser bundle does not carry the server's schema library. The server remains the judge:
 * every preview is rendered and checked there.
 */

export const BODY_STYLES = [
  'square',
  'dots',
  'rounded',
  'extra-rounded',
  'classy',
  'classy-rounded',
  'vertical-bars',
  'horizontal-bars',
  'diamond',
  'small-square',
] as const
export const EYE_FRAME_STYLES = ['square', 'rounded', 'extra-rounded', 'circle', 'leaf'] as const
export type EyeFrameStyle = (typeof EYE_FRAME_STYLES)[number]
/** Ball styles each ring style may carry (the first is the default), as the server allows them. */
export const EYE_BALLS_FOR: Record<EyeFrameStyle, readonly string[]> = {
  square: ['square', 'rounded'],
  rounded: ['rounded', 'square', 'circle', 'leaf'],
  'extra-rounded': ['rounded', 'circle'],
  circle: ['circle', 'rounded'],
  leaf: ['leaf', 'rounded'],
}
export const FILL_TYPES = ['color', 'linear-gradient', 'radial-gradient'] as const
export type FillType = (typeof FILL_TYPES)[number]
export const DIRECTIONS = ['to-right', 'to-left', 'to-bottom', 'to-top', 'to-bottom-right', 'to-bottom-left', 'to-top-right', 'to-top-left'] as const
export const LOGO_SHAPES = ['square', 'rounded', 'circle'] as const
export const LOGO_MAX_SIZE = 15
export const CORRECT_LEVELS = [
  { value: 0, label: 'Low (7 %)' },
  { value: 1, label: 'Medium (15 %, default)' },
  { value: 2, label: 'Quartile (25 %)' },
  { value: 3, label: 'High (30 %)' },
]
export const MAX_FRAME_TEXTS = 5

export interface Fill {
  type?: FillType
  value?: string
  direction?: string
  style_id?: string
  ball_style_id?: string
}
export interface FrameText {
  pos?: number[]
  color?: string
  size?: number
  content?: string
  prefix?: string
  bold?: boolean
}
export interface QrOptions {
  correctLevel?: number
  space?: number
  version?: number
  patterns?: { background?: { type?: 'color' | 'transparent'; value?: string }; body?: Fill; eye?: Fill }
  logo?: { value: string; location?: 'center'; shape?: string; size?: number; hasBackground?: boolean; shadow?: boolean }
  frame?: { value?: string; options?: { code_rect?: number[] }; add_texts?: FrameText[] }
}

export const DEFAULT_BODY = '#000000'
export const DEFAULT_BACKGROUND = '#ffffff'

/** `#abc` → `#aabbcc` (colour inputs take only the long form). */
export function longHex(c: string | undefined, fallback: string): string {
  if (!c) return fallback
  if (/^#[0-9a-f]{3}$/i.test(c)) return `#${[...c.slice(1)].map((x) => x + x).join('')}`.toLowerCase()
  return /^#[0-9a-f]{6}$/i.test(c) ? c.toLowerCase() : fallback
}

/** The one or two colours of a `value` (`c1` or `c1,c2`). */
export function colours(value: string | undefined, fallback: string): [string, string] {
  const [a, b] = (value ?? '').split(',')
  const first = longHex(a, fallback)
  return [first, longHex(b, first)]
}

/** A copy without empty parts, so the stored design holds only what the user chose. */
export function cleaned(o: QrOptions): QrOptions {
  const out: QrOptions = JSON.parse(JSON.stringify(o))
  const p = out.patterns
  if (p) {
    for (const k of ['background', 'body', 'eye'] as const) if (p[k] && Object.keys(p[k]!).length === 0) delete p[k]
    if (Object.keys(p).length === 0) delete out.patterns
  }
  if (out.logo && !out.logo.value) delete out.logo
  if (out.frame?.add_texts) {
    out.frame.add_texts = out.frame.add_texts.filter((t) => t.content || t.prefix)
    if (out.frame.add_texts.length === 0) delete out.frame.add_texts
  }
  return out
}

/** Plain words for the repairs the server names in `X-QR-Repaired`. */
export function repairText(code: string): string {
  const shrunk = /^logo-shrunk-to-(\d+)$/.exec(code)
  if (shrunk) return `The logo was made smaller (${shrunk[1]} % of the code) so the code still scans.`
  switch (code) {
    case 'dark-on-light':
      return 'Light dots on a dark background do not scan on many phones, so the colours were swapped: dark dots on a light background.'
    case 'logo-unavailable':
      return 'The logo file cannot be used (deleted, archived or not yours), so the code is shown without it.'
    case 'frame-unavailable':
      return 'The frame image cannot be used (deleted, archived or not yours), so the code is shown without it.'
    case 'square-modules':
      return 'This body style did not scan at this size, so plain square dots are used.'
    case 'frame-removed':
      return 'The frame was left out so the code scans.'
    case 'plain':
      return 'The design did not scan, so a plain black-and-white code is shown.'
    default:
      return `Changed so it scans: ${code}.`
  }
}

/** `X-QR-Repaired: a, b` → the repairs, in plain words. */
export function repairsOf(header: string | null): string[] {
  return (header ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)
    .map(repairText)
}

export const styleLabel = (s: string) => (s.charAt(0).toUpperCase() + s.slice(1)).replace(/-/g, ' ')
