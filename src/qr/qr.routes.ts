import { Type as t } from '@sinclair/typebox'
import { Elysia } from 'elysia'
import { callerOf } from '../auth'
import { errorResponses } from '../docs'
import { parseQuery, queryParameters } from '../shared'
import { type ImageFormat, imageResponse, QR_HEADERS_DOC } from './qr.http'
import { SAMPLE_TEXT } from './qr.render'
import { Base64Image, LinkIdParams, QrImageQuery, RenderBody, ScanBody, ScanResult } from './qr.schema'
import { type LinkLookup, type OwnedDesign, type QrService, qrTextFor } from './qr.service'

export interface QrRouteDeps {
  qr: QrService
  links: LinkLookup
  templates: { qrDesignOf(id: string): OwnedDesign | Promise<OwnedDesign> }
}

export function qrRoutes({ qr, links, templates }: QrRouteDeps) {
  return new Elysia({ name: 'qr', normalize: false })
    .post('/qr/scan', ({ body }) => qr.scan(body.url), {
      body: ScanBody,
      response: { 200: ScanResult, ...errorResponses(400, 401, 403, 422, 429, 500, 502) },
      detail: {
        tags: ['QR'],
        summary: 'Decode a QR code from an image URL',
        description:
          'Fetches the image (http/https, PNG or JPEG, at most 2 MB, 5 s, at most 3 redirects) and decodes it. `data` is empty with a message when no code is found. ' +
          'The size the image declares in its header is checked before it is decoded: more than 16,777,216 pixels (e.g. 4096×4096) is 422 `parameter_error`, as is an image the decoder cannot finish within its limits. ' +
          'Addresses that resolve to private, loopback or link-local networks are refused (422) unless the server config sets `scan.allowPrivateNetworks`. ' +
          'A fetch that fails (DNS, refused, timeout, non-2xx) is 502 `bad_gateway`; content that is not a PNG/JPEG, or is too large, is 422.',
      },
    })
    .post(
      '/qr/render',
      async ({ body, request }) => {
        const caller = callerOf(request)
        const text = body.linkId ? qrTextFor((await links.get(caller, body.linkId)).shortLink) : SAMPLE_TEXT
        const format: ImageFormat = (body.format as ImageFormat | undefined) ?? 'image'
        // A design being edited draws the designer's own files, as it will once saved by them.
        const rendered = await qr.renderQr({
          text,
          qrOptions: body.qrOptions ?? {},
          ownerId: caller.userId,
          format: format === 'svg' || format === 'pdf' ? format : 'png',
          width: body.width ?? 300,
          texts: body.texts,
        })
        return imageResponse(request, rendered, format)
      },
      {
        body: RenderBody,
        response: { 200: t.Union([Base64Image, t.Any()]), ...errorResponses(400, 401, 403, 404, 410, 422, 429, 500) },
        detail: {
          tags: ['QR'],
          summary: 'Render a QR design without saving it (a preview)',
          description:
            "Renders `qrOptions` as given, for a design editor's live preview: on the link's short link with `?qr=1` when `linkId` names one the caller may read, else on the sample link " +
            `${SAMPLE_TEXT}. The same rules as GET /qr/{linkId}: the image is decoded before it is served; a design that cannot scan is refused (422, the message says why) or repaired. ` +
            "Uploaded files (`fil_…`) are drawn when they are the caller's (an admin's: any). " +
            QR_HEADERS_DOC,
          responses: {
            200: {
              description: 'The image',
              content: {
                'image/png': { schema: { type: 'string', format: 'binary' } },
                'image/svg+xml': { schema: { type: 'string' } },
                'application/json': { schema: Base64Image },
              },
            },
          },
        },
      },
    )
    .get(
      '/qr/:linkId',
      async ({ params, request }) => {
        const q = parseQuery(QrImageQuery, new URL(request.url).searchParams)
        const caller = callerOf(request)
        const link = await links.get(caller, params.linkId)
        // A template's design draws its owner's files; the link's own design, the link owner's.
        const design = q.templateId ? await templates.qrDesignOf(q.templateId) : { qrOptions: link.qrOptions ?? {}, ownerId: link.userId }
        const format = q.format ?? 'image'
        const rendered = await qr.renderQr({
          text: qrTextFor(link.shortLink),
          ...design,
          format: format === 'svg' || format === 'pdf' ? format : 'png',
          width: q.width ?? 300,
          texts: q.texts,
        })
        return imageResponse(request, rendered, format)
      },
      {
        params: LinkIdParams,
        response: { 200: t.Union([Base64Image, t.Any()]), ...errorResponses(400, 401, 403, 404, 410, 422, 429, 500) },
        detail: {
          tags: ['QR'],
          summary: 'Retrieve a QR code image',
          description:
            "The QR code of the link, encoding its short link with `?qr=1` (so visits count as scans), in the link's design or a template's. " +
            '`format=image` answers image/png, `svg` image/svg+xml, `base64` JSON `{ "image": "data:image/png;base64,…" }`, `pdf` application/pdf (one page, the code, frame and texts as vector paths and text, `width` in points). ' +
            'Every image is decoded in-process (ZXing and ZBar) before it is served. ' +
            "Uploaded files (`fil_…`) the design names are drawn only while they are live, not archived, and belong to the design's owner (the link's, or the template's with `templateId`; an admin's designs may draw any file); otherwise the code is served without them (`X-QR-Repaired: logo-unavailable` / `frame-unavailable`). " +
            QR_HEADERS_DOC,
          parameters: queryParameters(QrImageQuery),
          responses: {
            200: {
              description: 'The image',
              content: {
                'image/png': { schema: { type: 'string', format: 'binary' } },
                'image/svg+xml': { schema: { type: 'string' } },
                'application/pdf': { schema: { type: 'string', format: 'binary' } },
                'application/json': { schema: Base64Image },
              },
            },
            304: { description: 'Not modified (If-None-Match matched the ETag).' },
          },
        },
      },
    )
}
