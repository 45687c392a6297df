import { Type as t } from '@sinclair/typebox'
import { PlainText, pagingQuery, sortOrderQuery } from '../shared'
import { ALLOWED_TYPES } from './files.sniff'

const EXTENSIONS = Object.keys(ALLOWED_TYPES).join(', ')
const FileName = t.String({ minLength: 1, maxLength: 255, description: 'Display name, 1-255 characters (no path, no control characters).' })

export const FileRecordSchema = t.Object({
  id: t.String({ description: 'File identifier (fil_…).' }),
  name: t.String({ description: 'Display name: the uploaded file name unless changed.' }),
  size: t.Integer({ description: 'Size in bytes.' }),
  createdAt: t.String({ format: 'date-time' }),
  mimeType: t.String({ description: 'Detected from the content (magic bytes), not from the name.' }),
  extension: t.String({ description: `Canonical extension of the detected type: ${EXTENSIONS}.` }),
  archived: t.Boolean(),
  userId: t.String({ description: 'Owner.' }),
  updatedAt: t.String({ format: 'date-time' }),
})

export const UploadFileBody = t.Object(
  {
    file: t.String({ format: 'binary', description: `The file. Allowed types (detected from the content): ${EXTENSIONS}.` }),
    name: t.Optional(t.String({ minLength: 1, maxLength: 255, description: 'Display name; defaults to the uploaded file name.' })),
  },
  { description: 'multipart/form-data' },
)

export const UpdateFileBody = t.Object({ name: t.Optional(FileName), archived: t.Optional(t.Boolean()) }, { additionalProperties: false })

export const ListFilesQuery = t.Object({
  ids: t.Optional(t.Array(t.String({ minLength: 1 }), { maxItems: 100, description: 'File identifiers (repeated).' })),
  search: t.Optional(PlainText({ minLength: 1, maxLength: 200, description: 'Case-insensitive substring of the name.' })),
  extension: t.Optional(
    t.String({ minLength: 1, maxLength: 20, description: `File type by extension, case-insensitive, leading dot optional (jpeg = jpg): ${EXTENSIONS}.` }),
  ),
  sortBy: t.Optional(t.Union([t.Literal('name'), t.Literal('created_at')], { default: 'created_at' })),
  sortOrder: sortOrderQuery(),
  ...pagingQuery(100),
  includeArchived: t.Optional(t.Boolean({ default: false, description: 'Include archived files.' })),
})

export const ContentQuery = t.Object({
  download: t.Optional(t.Boolean({ default: false, description: 'Content-Disposition attachment instead of inline.' })),
})

export const FileIdParams = t.Object({ id: t.String({ minLength: 1, maxLength: 100 }) })
