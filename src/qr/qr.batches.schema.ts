/** Print runs (`POST /qr/batches`): the request, the record and their limits, as TypeBox schemas that validate and document. */
import { type Static, Type as t } from '@sinclair/typebox'

import { MAX_BATCH_LINKS, SHEET_MM } from './qr.batches.values'

export { BATCH_FORMATS, CAPTIONS, MAX_BATCH_LINKS, PAPERS } from './qr.batches.values'
/** Results are kept this long after a batch finishes. */
export const BATCH_KEEP_MS = 24 * 3_600_000

const strict = { additionalProperties: false } as const
const Mm = (min: number, max: number, dflt: number, what: string) =>
  t.Number({ minimum: min, maximum: max, default: dflt, description: `${what} in mm, ${min}-${max}; default ${dflt}.` })

/** One TLiteral per value, as a tuple: Elysia infers `never` from a TLiteral array. */
const FormatLiteral = t.Union([t.Literal('zip-png'), t.Literal('zip-svg'), t.Literal('zip-pdf'), t.Literal('pdf-sheet')])

export const SheetOptions = t.Object(
  {
    paper: t.Optional(
      t.Union(
        [
          t.Literal('A4'),
          t.Literal('Letter'),
          t.Object({ widthMm: t.Number({ minimum: 50, maximum: 1500 }), heightMm: t.Number({ minimum: 50, maximum: 1500 }) }, strict),
        ],
        { default: 'A4', description: 'A4 (210×297 mm), Letter (215.9×279.4 mm) or { widthMm, heightMm } (50-1500 each); default A4.' },
      ),
    ),
    codeMm: t.Optional(Mm(SHEET_MM.codeMm.min, SHEET_MM.codeMm.max, SHEET_MM.codeMm.default, 'Width of each code (its frame included)')),
    marginMm: t.Optional(Mm(SHEET_MM.marginMm.min, SHEET_MM.marginMm.max, SHEET_MM.marginMm.default, 'Page margin')),
    gapMm: t.Optional(Mm(SHEET_MM.gapMm.min, SHEET_MM.gapMm.max, SHEET_MM.gapMm.default, 'Space between codes')),
    cropMarks: t.Optional(t.Boolean({ default: false, description: 'Cut marks at the corners of every code.' })),
    caption: t.Optional(
      t.Union([t.Literal('key'), t.Literal('shortLink'), t.Literal('none')], {
        default: 'key',
        description: 'Text under each code: its key, its short link, or none; default key.',
      }),
    ),
  },
  { ...strict, description: 'Layout of `pdf-sheet` runs: codes left to right, top to bottom, as many pages as needed.' },
)
export type SheetOptions = Static<typeof SheetOptions>

export const LinkFilter = t.Object(
  {
    domain: t.Optional(t.String({ minLength: 1, maxLength: 253 })),
    linkType: t.Optional(t.String({ minLength: 1, maxLength: 30 })),
    tagIds: t.Optional(t.Array(t.String({ minLength: 1 }), { minItems: 1, maxItems: 50 })),
    search: t.Optional(t.String({ minLength: 1, maxLength: 200 })),
    userIds: t.Optional(t.Array(t.String({ minLength: 1 }), { minItems: 1, maxItems: 100 })),
    includeArchived: t.Optional(t.Boolean()),
    ids: t.Optional(t.Array(t.String({ minLength: 1 }), { minItems: 1, maxItems: 100 })),
    shortLinks: t.Optional(t.Array(t.String({ minLength: 1, maxLength: 2500 }), { minItems: 1, maxItems: 100 })),
  },
  { ...strict, description: "The filter names of GET /links; the caller's links that match (at most 10,000)." },
)

export const CreateBatchBody = t.Object(
  {
    linkIds: t.Optional(
      t.Array(t.String({ minLength: 1, maxLength: 100 }), {
        minItems: 1,
        maxItems: MAX_BATCH_LINKS,
        uniqueItems: true,
        description: `Links to print, 1-${MAX_BATCH_LINKS}; one the caller may not see makes the whole request not_found.`,
      }),
    ),
    linkFilter: t.Optional(LinkFilter),
    format: t.Union(FormatLiteral.anyOf, {
      description:
        '`zip-png`, `zip-svg`, `zip-pdf`: a ZIP with one file per code, named `<domain>_<key>.<ext>`; `pdf-sheet`: one PDF with the codes laid out on pages (see `sheet`).',
    }),
    width: t.Optional(
      t.Integer({
        minimum: 100,
        maximum: 1000,
        default: 300,
        description: 'Width of each image in pixels (points for PDF files), 100-1000; the scan check renders at this width.',
      }),
    ),
    templateId: t.Optional(
      t.String({ minLength: 1, maxLength: 100, description: "A QR template whose design every code takes; absent: each link's own design." }),
    ),
    sheet: t.Optional(SheetOptions),
  },
  { ...strict, description: 'Exactly one of linkIds and linkFilter.' },
)
export type CreateBatchBody = Static<typeof CreateBatchBody>

export const BatchRecord = t.Object({
  id: t.String({ description: 'bat_…' }),
  status: t.Union([t.Literal('queued'), t.Literal('running'), t.Literal('done'), t.Literal('failed')], {
    description: '`failed`: the run stopped (its `error` says why, e.g. the server stopped while it ran); codes that did not scan do not fail a run.',
  }),
  total: t.Integer({ description: 'Codes to make.' }),
  done: t.Integer({ description: 'Codes made so far and in the result.' }),
  failed: t.Integer({ description: 'Codes left out because they did not scan (see failures).' }),
  format: FormatLiteral,
  createdAt: t.String({ format: 'date-time' }),
  finishedAt: t.Union([t.String({ format: 'date-time' }), t.Null()]),
  expiresAt: t.Union([t.String({ format: 'date-time' }), t.Null()], { description: 'When the result is deleted: 24 hours after the run finished.' }),
  size: t.Integer({ description: 'Bytes of the result so far.' }),
  error: t.Union([t.String(), t.Null()]),
  failures: t.Array(t.Object({ linkId: t.String(), shortLink: t.String(), message: t.String() }), { description: 'Codes left out, with the reason.' }),
})
export type BatchRecord = Static<typeof BatchRecord>

export const BatchIdParams = t.Object({ id: t.String({ minLength: 1, maxLength: 100 }) })
