/**
 * Import schemas: the record POST /imports and GET /imports/{id} answer, the multipart fields,
 * and the sources with their labels. Plain data: the dashboard imports them too.
 */
import { type TLiteral, type TUnion, Type as t } from '@sinclair/typebox'
import { IMPORT_SOURCES, SOURCE_HELP } from './imports.sources'

export { IMPORT_SOURCES, type ImportSourceName, SOURCE_HELP } from './imports.sources'

/** Failed rows listed in a record; `failed` counts them all. */
export const MAX_LISTED_ERRORS = 1000

type LiteralsOf<V extends readonly string[]> = { -readonly [K in keyof V]: TLiteral<V[K]> }
export const ImportSource = t.Union(
  IMPORT_SOURCES.map((s) => t.Literal(s)),
  { description: `The service the file was exported from: ${IMPORT_SOURCES.map((s) => `\`${s}\` (${SOURCE_HELP[s].file})`).join('; ')}.` },
) as unknown as TUnion<LiteralsOf<typeof IMPORT_SOURCES>>

export const ImportError = t.Object({
  row: t.Integer({ minimum: 0, description: 'CSV: the line of the record (the header is line 1). JSON: the position of the link in the file (1 = first).' }),
  message: t.String(),
})

export const ImportRecord = t.Object({
  id: t.String({ description: 'imp_…' }),
  source: ImportSource,
  status: t.Union([t.Literal('running'), t.Literal('done'), t.Literal('failed')], {
    description:
      '`running` while rows are read (the counts move); `done` when every row was read; `failed` when the file could not be read on, ' +
      'or the server running it stopped (rows before that stay imported; import the same file again to finish: nothing is duplicated).',
  }),
  dryRun: t.Boolean({ description: 'Nothing was written: the counts say what the import would do.' }),
  total: t.Integer({ minimum: 0, description: 'Rows in the file (0 until it has been counted).' }),
  created: t.Integer({ minimum: 0, description: 'Links created.' }),
  updated: t.Integer({
    minimum: 0,
    description: 'Links of yours already there (same domain and key, same destination) that gained tags, a comment or a new imported click total.',
  }),
  skipped: t.Integer({ minimum: 0, description: 'Links of yours already there with nothing new: running the same file again skips every row it imported.' }),
  failed: t.Integer({ minimum: 0, description: 'Rows that could not be imported; `errors` says why.' }),
  errors: t.Array(ImportError, { description: `The first ${MAX_LISTED_ERRORS} failed rows, in file order.` }),
  userId: t.String({ description: 'The account the links went into.' }),
  fileName: t.Union([t.String(), t.Null()]),
  domain: t.String({ description: 'Where links land whose own domain is not served here.' }),
  createdAt: t.String({ format: 'date-time' }),
  updatedAt: t.String({ format: 'date-time', description: 'The last progress written; a running import writes it every second.' }),
  finishedAt: t.Union([t.String({ format: 'date-time' }), t.Null()]),
})

/** The multipart fields of POST /imports, as the OpenAPI document shows them. */
export const StartImportForm = t.Object(
  {
    source: ImportSource,
    file: t.String({ format: 'binary', description: 'The export file (UTF-8 CSV or JSON).' }),
    domain: t.Optional(
      t.String({
        description:
          "The short domain for links whose own domain is not served here (an export names the old service's domain); a default short domain when absent. " +
          'Links on a domain served here keep it. For `csv`, a row naming a domain not served here fails; rows naming none go here.',
      }),
    ),
    dryRun: t.Optional(t.Union([t.Literal('true'), t.Literal('false')], { description: 'true: write nothing, report what would happen.' })),
  },
  { additionalProperties: false },
)

export const ImportIdParams = t.Object({ id: t.String({ minLength: 1, maxLength: 100 }) })
