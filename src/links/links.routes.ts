import { type Static, type TSchema, Type as t } from '@sinclair/typebox'
import { Elysia } from 'elysia'
import { callerOf } from '../auth'
import { errorResponses } from '../docs'
import { assertValid, parseQuery, queryParameters } from '../shared'
import {
  BulkDeleteQuery,
  BulkUpdateBody,
  BulkUpdateInput,
  CountLinksQuery,
  CreateLinkBody,
  CreateLinkInput,
  LinkRecord,
  LinkTypeParam,
  ListLinksQuery,
  UpdateLinkBody,
  UpdateLinkInput,
} from './links.schema'
import type { LinkService } from './links.service'

const errorsA = errorResponses(400, 401, 403, 422, 429, 500)
const errorsB = errorResponses(400, 401, 403, 404, 410, 422, 429, 500)
const TypeParams = t.Object({
  type: t.String({ description: `One of the ${LinkTypeParam.anyOf.length} create types: ${LinkTypeParam.anyOf.map((x) => x.const).join(', ')}` }),
})
const IdParams = t.Object({ id: t.String({ minLength: 1, maxLength: 100 }) })
const doc = (summary: string, description?: string, extra: object = {}) => ({ tags: ['Links'], summary, description, ...extra })
const query = (request: Request) => new URL(request.url).searchParams
/** Documents the variant union while the handler validates with the type-specific rules. */
const requestBody = (schema: TSchema) => ({ required: true, content: { 'application/json': { schema } } })
/** The body as its schema's type, once it passed the schema (422 otherwise). */
function input<S extends TSchema>(schema: S, body: unknown): Static<S> {
  assertValid(schema, body)
  return body
}

export function linkRoutes({ links }: { links: LinkService }) {
  return new Elysia({ name: 'links', normalize: false })
    .post('/links/:type', ({ params, body, request }) => links.create(callerOf(request), params.type, input(CreateLinkInput, body)), {
      params: TypeParams,
      response: { 200: LinkRecord, ...errorsA },
      detail: doc('Create a link', 'Responds 200 with the link record. `data` must be the variant of `{type}`; an unknown type is 422.', {
        requestBody: requestBody(CreateLinkBody),
      }),
    })
    .put(
      '/links/upsert/:type',
      async ({ params, body, request, set }) => {
        const { record, created } = await links.upsert(callerOf(request), params.type, input(CreateLinkInput, body))
        set.status = created ? 201 : 200
        return record
      },
      {
        params: TypeParams,
        response: { 200: LinkRecord, 201: LinkRecord, ...errorsA },
        detail: doc(
          'Upsert a link',
          "Matches the caller's live link of the same type and destination (for hosted types: the same content). " +
            'None: creates it (201). Found: applies linkOptions/qrOptions when given and returns it (200).',
          { requestBody: requestBody(CreateLinkBody) },
        ),
      },
    )
    .patch(
      '/links/bulk',
      ({ body, request }) => {
        const b = input(BulkUpdateInput, body)
        return links.bulkUpdate(callerOf(request), b.linkIds, b.updateData)
      },
      {
        response: { 200: t.Object({ updatedCount: t.Integer(), links: t.Array(LinkRecord) }), ...errorsB },
        detail: doc('Bulk update links', 'Up to 100 links in one transaction: all are updated or none.', { requestBody: requestBody(BulkUpdateBody) }),
      },
    )
    .get('/links/count', ({ request }) => links.count(callerOf(request), parseQuery(CountLinksQuery, query(request))), {
      response: { 200: t.Object({ count: t.Integer() }), ...errorsA },
      detail: doc('Count links', 'Same filters as the list.', { parameters: queryParameters(CountLinksQuery) }),
    })
    .get('/links', ({ request }) => links.list(callerOf(request), parseQuery(ListLinksQuery, query(request))), {
      response: {
        200: t.Object({ links: t.Array(LinkRecord), page: t.Integer(), pageSize: t.Integer(), total: t.Integer({ description: 'Matches before paging.' }) }),
        ...errorsB,
      },
      detail: doc('List links', "Members see their own links; admins everyone's (filter with userIds). Archived links only with includeArchived.", {
        parameters: queryParameters(ListLinksQuery),
      }),
    })
    .delete('/links/bulk', ({ request }) => links.bulkRemove(callerOf(request), parseQuery(BulkDeleteQuery, query(request)).linkIds), {
      response: { 200: t.Object({ deletedCount: t.Integer() }), ...errorsB },
      detail: doc('Bulk delete links', 'Unknown and already deleted ids are ignored.', { parameters: queryParameters(BulkDeleteQuery) }),
    })
    .get('/links/:id', ({ params, request }) => links.get(callerOf(request), params.id), {
      params: IdParams,
      response: { 200: LinkRecord, ...errorsB },
      detail: doc('Get a link', 'A deleted link answers 410 record_gone; an id that never existed 404.'),
    })
    .patch('/links/:id', ({ params, body, request }) => links.update(callerOf(request), params.id, input(UpdateLinkInput, body)), {
      params: IdParams,
      response: { 200: LinkRecord, ...errorsB },
      detail: doc(
        'Update a link',
        "Returns the updated record. In linkOptions an absent field is unchanged and null clears it; `data` must be the variant of the link's type.",
        {
          requestBody: requestBody(UpdateLinkBody),
        },
      ),
    })
    .delete('/links/:id', ({ params, request }) => links.remove(callerOf(request), params.id), {
      params: IdParams,
      response: { 200: t.Object({ id: t.String() }), ...errorsB },
      detail: doc(
        'Delete a link',
        'Leaves a tombstone: later reads and writes of the id answer 410 record_gone; its key becomes free; short links stop resolving.',
      ),
    })
}
