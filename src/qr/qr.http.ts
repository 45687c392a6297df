/** Image responses with ETag and 304, shared by the QR and template routes. */
import type { RenderedQr } from './qr.render'

/** The `format` of a QR image: PNG bytes, a JSON data URL, SVG, or a one-page vector PDF. */
export const QR_FORMATS = ['image', 'base64', 'svg', 'pdf'] as const
export type ImageFormat = (typeof QR_FORMATS)[number]

export const QR_HEADERS_DOC =
  '`ETag` is set and `If-None-Match` with the current ETag answers 304 (like every API answer the image is `Cache-Control: no-store`). ' +
  '`X-QR-Repaired` lists the changes made so the image scans (e.g. `dark-on-light`, `logo-shrunk-to-7`, `logo-unavailable`, `frame-unavailable`, `square-modules`, `frame-removed`, `plain`). ' +
  "`dark-on-light`: a light-on-dark design (which ZBar and many phone scanners do not read) is served with its colours exchanged: the modules take the background colour and the background the modules' main colour."

export function imageResponse(request: Request, r: RenderedQr, format: ImageFormat): Response {
  const headers: Record<string, string> = { etag: format === 'base64' ? `"b${r.etag.slice(1)}` : r.etag }
  if (r.repairs.length) headers['x-qr-repaired'] = r.repairs.join(', ')
  const match = request.headers.get('if-none-match')
  if (match?.split(',').some((t) => t.trim().replace(/^W\//, '') === headers.etag)) return new Response(null, { status: 304, headers })
  if (format === 'base64') {
    const image = `data:image/png;base64,${Buffer.from(r.body).toString('base64')}`
    return Response.json({ image }, { headers })
  }
  return new Response(r.body as Uint8Array<ArrayBuffer>, { headers: { ...headers, 'content-type': r.contentType } })
}
