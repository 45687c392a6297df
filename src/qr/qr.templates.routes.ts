import { Type as t } from '@sinclair/typebox'
import { Elysia } from 'elysia'
import { callerOf } from '../auth'
import { errorResponses } from '../docs'
import { parseQuery, queryParameters } from '../shared'
import { imageResponse, QR_HEADERS_DOC } from './qr.http'
import { SAMPLE_TEXT } from './qr.render'
import type { QrService } from './qr.service'
import { CreateTemplateBody, ListTemplatesQuery, PreviewQuery, TemplateIdParams, TemplateRecord, UpdateTemplateBody } from './qr.templates.schema'
import type { TemplateService } from './qr.templates.service'

const errors = errorResponses(400, 401, 403, 404, 422, 429, 500)
const doc = (summary: string, description?: string, extra: object = {}) => ({ tags: ['QR templates'], summary, description, ...extra })

export function templateRoutes({ templates, qr }: { templates: TemplateService; qr: QrService }) {
  return new Elysia({ name: 'templates', normalize: false })
    .post('/qr/templates', ({ body, request }) => templates.create(callerOf(request), body), {
      body: CreateTemplateBody,
      response: { 200: TemplateRecord, ...errors },
      detail: doc(
        'Create a QR template',
        "Templates are shared: every user reads them; members change their own, admins all. The design must scan (it is rendered and decoded first), else 422. Uploaded files (`fil_…`) as logo or frame must be live, unarchived files of the template's owner (an admin's templates may name any file); another user's file is refused (422) like a missing one. The preview and renders with `templateId` draw the files only while that still holds.",
      ),
    })
    .get(
      '/qr/templates',
      async ({ request, set }) => {
        const { templates: list, total } = await templates.list(parseQuery(ListTemplatesQuery, new URL(request.url).searchParams))
        set.headers['x-total-count'] = String(total)
        return list
      },
      {
        response: { 200: t.Array(TemplateRecord), ...errors },
        detail: doc('List QR templates', '`X-Total-Count` holds the number of matches before paging.', { parameters: queryParameters(ListTemplatesQuery) }),
      },
    )
    .get('/qr/templates/:id', ({ params }) => templates.get(params.id), {
      params: TemplateIdParams,
      response: { 200: TemplateRecord, ...errors },
      detail: doc('Get a QR template'),
    })
    .get(
      '/qr/templates/:id/preview',
      async ({ params, request }) => {
        const q = parseQuery(PreviewQuery, new URL(request.url).searchParams)
        const rendered = await qr.renderQr({ text: SAMPLE_TEXT, ...(await templates.qrDesignOf(params.id)), format: 'png', width: q.width ?? 300 })
        return imageResponse(request, rendered, 'image')
      },
      {
        params: TemplateIdParams,
        detail: doc('Preview a QR template (PNG)', `The template rendered on the sample link ${SAMPLE_TEXT}. ${QR_HEADERS_DOC}`, {
          parameters: queryParameters(PreviewQuery),
          responses: { 200: { description: 'PNG image', content: { 'image/png': { schema: { type: 'string', format: 'binary' } } } } },
        }),
      },
    )
    .patch('/qr/templates/:id', ({ params, body, request }) => templates.update(callerOf(request), params.id, body), {
      params: TemplateIdParams,
      body: UpdateTemplateBody,
      response: { 200: TemplateRecord, ...errors },
      detail: doc('Update a QR template', 'name, comment, qrOptions (checked like on create), archived.'),
    })
    .delete('/qr/templates/:id', ({ params, request }) => templates.remove(callerOf(request), params.id), {
      params: TemplateIdParams,
      response: { 200: t.Object({ id: t.String() }), ...errors },
      detail: doc('Delete a QR template'),
    })
}
