import { Type as t } from '@sinclair/typebox'
import { PlainText, pagingQuery, sortOrderQuery } from '../shared'

export const TAG_COLORS = ['red', 'orange', 'yellow', 'green', 'teal', 'blue', 'purple', 'pink', 'brown', 'gray'] as const
export type TagColor = (typeof TAG_COLORS)[number]

const TagColorSchema = t.Union(
  TAG_COLORS.map((c) => t.Literal(c)),
  { description: `One of ${TAG_COLORS.join(', ')}.` },
)
const TagName = t.String({ minLength: 1, maxLength: 50, description: 'Tag name, 1-50 characters, unique per user (case-insensitive).' })

export const TagRecord = t.Object({
  id: t.String({ description: 'Tag identifier (tag_…).' }),
  name: t.String(),
  color: t.String({ description: `One of ${TAG_COLORS.join(', ')}.` }),
  userId: t.String({ description: 'Owner.' }),
  createdAt: t.String({ format: 'date-time' }),
  updatedAt: t.String({ format: 'date-time' }),
})

export const CreateTagBody = t.Object(
  { name: TagName, color: t.Optional(TagColorSchema) },
  { additionalProperties: false, description: 'When color is absent, one is picked from the name.' },
)

export const UpdateTagBody = t.Object({ name: t.Optional(TagName), color: t.Optional(TagColorSchema) }, { additionalProperties: false })

export const ListTagsQuery = t.Object({
  ids: t.Optional(t.Array(t.String({ minLength: 1 }), { maxItems: 100, description: 'Tag identifiers (repeated).' })),
  search: t.Optional(PlainText({ minLength: 1, maxLength: 200, description: 'Case-insensitive substring of the name.' })),
  sortBy: t.Optional(t.Union([t.Literal('name'), t.Literal('created_at')], { default: 'created_at' })),
  sortOrder: sortOrderQuery(),
  ...pagingQuery(100),
})

export const TagIdParams = t.Object({ id: t.String({ minLength: 1, maxLength: 100 }) })
