import { Type as t } from '@sinclair/typebox'
import { Elysia } from 'elysia'
import { callerOf } from '../auth'
import { errorResponses } from '../docs'
import { parseQuery, queryParameters } from '../shared'
import { CreateTagBody, ListTagsQuery, TagIdParams, TagRecord, UpdateTagBody } from './tags.schema'
import type { TagService } from './tags.service'

const errors = errorResponses(400, 401, 403, 404, 422, 429)

export function tagRoutes({ tags }: { tags: TagService }) {
  return new Elysia({ name: 'tags', normalize: false })
    .post('/tags', ({ body, request }) => tags.create(callerOf(request), body), {
      body: CreateTagBody,
      response: { 200: TagRecord, ...errors },
      detail: { tags: ['Tags'], summary: 'Create a tag', description: 'Responds 200 with the tag record.' },
    })
    .get(
      '/tags',
      async ({ request, set }) => {
        const q = parseQuery(ListTagsQuery, new URL(request.url).searchParams)
        const { tags: list, total } = await tags.list(callerOf(request), q)
        set.headers['x-total-count'] = String(total)
        return list
      },
      {
        response: { 200: t.Array(TagRecord), ...errors },
        detail: {
          tags: ['Tags'],
          summary: 'List tags',
          description: "Members see their own tags, admins everyone's. `X-Total-Count` holds the number of matches before paging.",
          parameters: queryParameters(ListTagsQuery),
        },
      },
    )
    .get('/tags/:id', ({ params, request }) => tags.getOwned(callerOf(request), params.id), {
      params: TagIdParams,
      response: { 200: TagRecord, ...errors },
      detail: { tags: ['Tags'], summary: 'Get a tag' },
    })
    .patch('/tags/:id', ({ params, body, request }) => tags.update(callerOf(request), params.id, body), {
      params: TagIdParams,
      body: UpdateTagBody,
      response: { 200: TagRecord, ...errors },
      detail: { tags: ['Tags'], summary: 'Update a tag (name and/or color)' },
    })
    .delete('/tags/:id', ({ params, request }) => tags.remove(callerOf(request), params.id), {
      params: TagIdParams,
      response: { 200: t.Object({ id: t.String() }), ...errors },
      detail: { tags: ['Tags'], summary: 'Delete a tag', description: 'The tag is removed from every link that carried it.' },
    })
}
