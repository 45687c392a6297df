/**
 * The QR design (`qrOptions`) with its allowed values and bounds, published in the
 * OpenAPI document from these same schemas. Field names follow the seed (snake_case
 * inside `patterns`/`frame`, as the seed shows them).
 */
import { type Static, Type as t } from '@sinclair/typebox'
import { PlainText } from '../shared'
import { QR_FORMATS } from './qr.http'

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
export const EYE_BALL_STYLES = ['square', 'rounded', 'circle', 'leaf'] as const
/**
 * Ball styles each ring style may carry. Mixed shapes (a circle in a square ring, say)
 * break the finder-pattern check of ZXing 1.x, still common in scanner apps (measured).
 * The first is the default.
 */
export const EYE_BALLS_FOR: Record<(typeof EYE_FRAME_STYLES)[number], readonly (typeof EYE_BALL_STYLES)[number][]> = {
  square: ['square', 'rounded'],
  rounded: ['rounded', 'square', 'circle', 'leaf'],
  'extra-rounded': ['rounded', 'circle'],
  circle: ['circle', 'rounded'],
  leaf: ['leaf', 'rounded'],
}
export const FILL_TYPES = ['color', 'linear-gradient', 'radial-gradient'] as const
export const DIRECTIONS = ['to-right', 'to-left', 'to-bottom', 'to-top', 'to-bottom-right', 'to-bottom-left', 'to-top-right', 'to-top-left'] as const
export const LOGO_SHAPES = ['square', 'rounded', 'circle'] as const
/** Largest logo, % of the code's area: the error-correction budget at level H from version 5 (measured, see notes). */
export const LOGO_MAX_SIZE = 15
export const LOGO_MIN_SIZE = 1
/** A logo raises the version to at least this, so the logo covers fewer codewords per block. */
export const LOGO_MIN_VERSION = 5

const HEX = '#(?:[0-9a-fA-F]{3}|[0-9a-fA-F]{6})'
const Hex = (description: string) => t.String({ pattern: `^${HEX}$`, description })
const Colors = (description: string) => t.String({ pattern: `^${HEX}(?:,${HEX})?$`, description })
const oneOf = <T extends readonly string[]>(values: T, description: string) =>
  t.Union(
    values.map((v) => t.Literal(v)),
    { description: `${description} One of: ${values.join(', ')}.` },
  )
const strict = { additionalProperties: false } as const

const Fill = {
  type: t.Optional(oneOf(FILL_TYPES, 'How the colours in `value` fill the shapes; default `color`.')),
  direction: t.Optional(oneOf(DIRECTIONS, 'Direction of a linear gradient; default `to-right`. Ignored otherwise.')),
}

export const QrOptions = t.Object(
  {
    correctLevel: t.Optional(
      t.Integer({
        minimum: 0,
        maximum: 3,
        description: 'Error correction: 0 = L (7%), 1 = M (15%, default), 2 = Q (25%), 3 = H (30%). A logo raises it to 3.',
      }),
    ),
    space: t.Optional(
      t.Integer({ minimum: 0, maximum: 20, description: 'Quiet zone around the code, in modules; default 4. Inside a frame at least 1 is used.' }),
    ),
    version: t.Optional(
      t.Integer({
        minimum: 1,
        maximum: 40,
        description: 'Minimum QR version (size); a larger one is used when the content needs it. A logo raises it to 5.',
      }),
    ),
    patterns: t.Optional(
      t.Object(
        {
          background: t.Optional(
            t.Object(
              {
                type: t.Optional(oneOf(['color', 'transparent'] as const, 'Default `color`.')),
                value: t.Optional(Hex('Background colour (#rgb or #rrggbb); default #ffffff.')),
              },
              strict,
            ),
          ),
          body: t.Optional(
            t.Object(
              {
                style_id: t.Optional(oneOf(BODY_STYLES, 'Shape of the data modules; default `square`.')),
                value: t.Optional(Colors('Module colour (#rrggbb), or two colours `c1,c2` for a gradient; default #000000.')),
                ...Fill,
              },
              strict,
            ),
          ),
          eye: t.Optional(
            t.Object(
              {
                style_id: t.Optional(oneOf(EYE_FRAME_STYLES, 'Shape of the outer ring of the three finder patterns; default `square`.')),
                ball_style_id: t.Optional(
                  oneOf(
                    EYE_BALL_STYLES,
                    `Shape of the inner square of the finder patterns. Allowed per ring style (first = default): ${Object.entries(EYE_BALLS_FOR)
                      .map(([k, v]) => `${k}: ${v.join('/')}`)
                      .join('; ')}.`,
                  ),
                ),
                value: t.Optional(Colors('With type `color`: one colour for both parts, or `ring,ball`. With a gradient: `c1,c2`. Default: the body colour.')),
                ...Fill,
              },
              strict,
            ),
          ),
        },
        strict,
      ),
    ),
    logo: t.Optional(
      t.Object(
        {
          value: t.String({
            minLength: 1,
            maxLength: 2000,
            description:
              "Logo image: an http(s) URL of a PNG, JPEG or SVG (fetched with the scan rules: 2 MB, 5 s, public addresses), or an uploaded file id `fil_…` of the design's owner (live and not archived; an admin's designs may name any file; another user's is refused like a missing one).",
          }),
          location: t.Optional(oneOf(['center'] as const, 'Where the logo sits; only `center` keeps the finder patterns free.')),
          shape: t.Optional(oneOf(LOGO_SHAPES, 'Clip shape of the logo; default `square`.')),
          size: t.Optional(
            t.Integer({
              minimum: LOGO_MIN_SIZE,
              maximum: LOGO_MAX_SIZE,
              description: `Logo area in % of the code area, ${LOGO_MIN_SIZE}-${LOGO_MAX_SIZE}; default 10. Shrunk further at render time if the code would not scan.`,
            }),
          ),
          hasBackground: t.Optional(t.Boolean({ description: 'Clear the modules behind the logo (default true).' })),
          shadow: t.Optional(t.Boolean({ description: 'Soft drop shadow under the logo (default false).' })),
        },
        strict,
      ),
    ),
    frame: t.Optional(
      t.Object(
        {
          value: t.Optional(
            t.String({
              minLength: 1,
              maxLength: 2000,
              description:
                'Frame image (http(s) URL of a PNG or JPEG, or `fil_…` under the same rule as the logo). Absent: a built-in frame, 1000 units wide, with the code at [50,50,900,900] and the texts below it.',
            }),
          ),
          options: t.Optional(
            t.Object(
              {
                code_rect: t.Optional(
                  t.Array(t.Integer({ minimum: 0, maximum: 10000 }), {
                    minItems: 4,
                    maxItems: 4,
                    description:
                      '[x, y, width, height] of the code (quiet zone included) in frame image pixels; the code is a square of the smaller side, centred. Default: a centred square of 60% of the frame.',
                  }),
                ),
              },
              strict,
            ),
          ),
          add_texts: t.Optional(
            t.Array(
              t.Object(
                {
                  pos: t.Optional(
                    t.Array(t.Integer({ minimum: 0, maximum: 10000 }), {
                      minItems: 2,
                      maxItems: 2,
                      description: '[x, y] of the centre of the text in frame pixels. Default: stacked under the code.',
                    }),
                  ),
                  color: t.Optional(Hex('Text colour; default #000000.')),
                  size: t.Optional(t.Integer({ minimum: 4, maximum: 400, description: 'Font size in frame pixels; default 60 (built-in frame).' })),
                  content: t.Optional(PlainText({ maxLength: 100, description: 'Text; the `texts` query of GET /qr/{linkId} replaces it, in order.' })),
                  prefix: t.Optional(PlainText({ maxLength: 50, description: 'Written before the content.' })),
                  bold: t.Optional(t.Boolean({ description: 'Bold weight (default false).' })),
                },
                strict,
              ),
              { maxItems: 5, description: 'Up to 5 text lines drawn on the frame (Inter font; text becomes paths in SVG output).' },
            ),
          ),
        },
        strict,
      ),
    ),
  },
  {
    additionalProperties: false,
    description:
      'QR design. Every image is decoded in-process before it is served; designs that cannot scan are refused (422) or repaired (header `X-QR-Repaired`). Light-on-dark designs, which ZBar and many phone scanners do not read, are served with the module and background colours exchanged (`X-QR-Repaired: dark-on-light`); saving one as a template, which must scan as given, is refused (422).',
  },
)
export type QrOptions = Static<typeof QrOptions>

export const QrImageQuery = t.Object({
  texts: t.Optional(t.Array(PlainText({ maxLength: 100 }), { maxItems: 5, description: 'Frame texts, in order (repeated).' })),
  templateId: t.Optional(t.String({ minLength: 1, maxLength: 100, description: "A QR template (tpl_…) whose qrOptions replace the link's." })),
  format: t.Optional(
    t.Union(
      QR_FORMATS.map((f) => t.Literal(f)),
      {
        default: 'image',
        description:
          '`image`: image/png bytes; `svg`: image/svg+xml (text as paths); `base64`: JSON `{ "image": "data:image/png;base64,…" }`; `pdf`: application/pdf, one page the size of the code (`width` in points, 1/72 inch), the code, frame and texts as vector paths and text (an image the design names, a logo or frame picture, is embedded as that picture), for print shops.',
      },
    ),
  ),
  width: t.Optional(t.Integer({ minimum: 100, maximum: 1000, default: 300, description: 'Image width in pixels, 100-1000 (in points for pdf).' })),
})

export const RenderBody = t.Object(
  {
    qrOptions: t.Optional(QrOptions),
    linkId: t.Optional(t.String({ minLength: 1, maxLength: 100, description: 'A link (lnk_…) whose short link the code encodes; absent: the sample link.' })),
    texts: QrImageQuery.properties.texts,
    format: QrImageQuery.properties.format,
    width: QrImageQuery.properties.width,
  },
  { additionalProperties: false },
)

export const LinkIdParams = t.Object({ linkId: t.String({ minLength: 1, maxLength: 100 }) })

export const ScanBody = t.Object(
  { url: t.String({ minLength: 1, maxLength: 2000, description: 'http(s) URL of a PNG or JPEG image, at most 2 MB.' }) },
  { additionalProperties: false },
)
export const ScanResult = t.Object({
  data: t.String({ description: 'The decoded text; empty when no QR code was found.' }),
  message: t.String(),
})
export const Base64Image = t.Object({ image: t.String({ description: 'data:image/png;base64,…' }) })
