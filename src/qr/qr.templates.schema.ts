import { Type as t } from '@sinclair/typebox'
import { PlainText, pagingQuery, sortOrderQuery } from '../shared'
import { QrOptions } from './qr.schema'

const Name = t.String({ minLength: 1, maxLength: 100, description: 'Template name, 1-100 characters.' })
const Comment = t.String({ maxLength: 500, description: 'Free text, 0-500 characters.' })

export const TemplateRecord = t.Object({
  id: t.String({ description: 'Template identifier (tpl_…).' }),
  name: t.String(),
  comment: t.String(),
  image: t.String({ description: 'Preview URL: the template rendered on a sample link (PNG, `{baseUrl}/qr/templates/{id}/preview`).' }),
  qrOptions: t.Unknown({ description: 'The stored design (see qrOptions).' }),
  archived: t.Boolean(),
  userId: t.String({ description: 'Creator; members may change only their own templates.' }),
  createdAt: t.String({ format: 'date-time' }),
  updatedAt: t.String({ format: 'date-time' }),
})

export const CreateTemplateBody = t.Object(
  { name: Name, comment: t.Optional(Comment), qrOptions: QrOptions },
  { additionalProperties: false, description: 'The design is rendered and decoded before it is saved; one that does not scan is refused (422).' },
)

export const UpdateTemplateBody = t.Object(
  { name: t.Optional(Name), comment: t.Optional(Comment), qrOptions: t.Optional(QrOptions), archived: t.Optional(t.Boolean()) },
  { additionalProperties: false },
)

export const ListTemplatesQuery = t.Object({
  ids: t.Optional(t.Array(t.String({ minLength: 1, maxLength: 100 }), { maxItems: 100, description: 'Template identifiers (repeated).' })),
  search: t.Optional(PlainText({ minLength: 1, maxLength: 100, description: 'Case-insensitive substring of the name or comment.' })),
  sortBy: t.Optional(t.Union([t.Literal('created_at'), t.Literal('name')], { default: 'created_at', description: 'Sort field.' })),
  sortOrder: sortOrderQuery(),
  ...pagingQuery(100, 10, 10),
  includeArchived: t.Optional(t.Boolean({ default: false, description: 'Include archived templates.' })),
})

export const TemplateIdParams = t.Object({ id: t.String({ minLength: 1, maxLength: 100 }) })

export const PreviewQuery = t.Object({
  width: t.Optional(t.Integer({ minimum: 100, maximum: 1000, default: 300, description: 'Image width in pixels, 100-1000.' })),
})
