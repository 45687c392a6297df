import { Elysia } from 'elysia'
import { callerOf } from '../auth'
import { errorResponses } from '../docs'
import { BatchIdParams, BatchRecord, CreateBatchBody } from './qr.batches.schema'
import type { BatchService } from './qr.batches.service'

const doc = (summary: string, description: string, extra: object = {}) => ({ tags: ['QR print runs'], summary, description, ...extra })

export function batchRoutes({ batches }: { batches: BatchService }) {
  return new Elysia({ name: 'qr-batches', normalize: false })
    .post(
      '/qr/batches',
      async ({ body, request, set }) => {
        const record = await batches.create(callerOf(request), body)
        set.status = 202
        return record
      },
      {
        body: CreateBatchBody,
        response: { 202: BatchRecord, ...errorResponses(400, 401, 403, 404, 422, 429, 500) },
        detail: doc(
          'Start a print run',
          "Up to 10,000 of the caller's links (`linkIds`, or the links a `linkFilter` matches) as a ZIP of PNG, SVG or PDF files (one per code, `<domain>_<key>.<ext>`) or as PDF sheets. " +
            'Answers 202 at once; the run is made in the background (follow `done` with GET /qr/batches/{id}). Every code is rendered and decoded (ZXing and ZBar) before it goes in; one that does not scan is left out and listed in `failures`. ' +
            'The result is written in chunks as the codes are made (memory stays bounded) and kept 24 hours after the run finished. ' +
            'A run is made by the server that took it: if that server stops (restart, crash), the run is marked `failed` within a minute, with an `error` saying to start it again.',
        ),
      },
    )
    .get('/qr/batches/:id', ({ params, request }) => batches.get(callerOf(request), params.id), {
      params: BatchIdParams,
      response: { 200: BatchRecord, ...errorResponses(400, 401, 404, 429, 500) },
      detail: doc('Get a print run', "Its status and progress. Another user's run (unless the caller is an admin) answers 404."),
    })
    .get('/qr/batches/:id/file', ({ params, request }) => batches.file(callerOf(request), params.id), {
      params: BatchIdParams,
      detail: doc(
        'Download a print run',
        'Streams the ZIP (application/zip) or the PDF sheets (application/pdf) of a run that is `done`; 409 `conflict` before that.',
        {
          responses: {
            200: {
              description: 'The result',
              content: {
                'application/zip': { schema: { type: 'string', format: 'binary' } },
                'application/pdf': { schema: { type: 'string', format: 'binary' } },
              },
            },
            ...Object.fromEntries(
              Object.entries(errorResponses(400, 401, 404, 409, 429, 500)).map(([s, schema]) => [
                s,
                { description: schema.description, content: { 'application/json': { schema } } },
              ]),
            ),
          },
        },
      ),
    })
}
