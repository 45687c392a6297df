/**
 * Serving stored bytes over HTTP: conditional requests (ETag) and single byte ranges
 * (RFC 9110 §14). Pure except for reading the bytes, so the redirect server can serve a
 * landing page's file with the same rules as the API. The bytes come from the bytes port:
 * a file on disk (answered at once) or the row on PostgreSQL (a promise).
 */
import { errorResponse } from '../shared'
import type { ByteRange } from './files.bytes'

export type RangeDecision = { kind: 'full' } | { kind: 'partial'; start: number; end: number } | { kind: 'unsatisfiable' }

/**
 * What a `Range` header asks of a representation of `size` bytes. Units other than
 * bytes, and several ranges at once, are ignored (RFC 9110 lets a server send the whole
 * representation instead); a bytes range that is malformed, reversed or starts past
 * the end is unsatisfiable (416).
 */
export function decideRange(header: string | null, size: number): RangeDecision {
  if (!header) return { kind: 'full' }
  const m = /^\s*([A-Za-z]+)\s*=\s*(.*)$/.exec(header)
  if (!m || m[1]!.toLowerCase() !== 'bytes') return { kind: 'full' }
  const specs = m[2]!
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)
  if (specs.length > 1) return { kind: 'full' }
  const spec = specs[0]
  if (!spec) return { kind: 'unsatisfiable' }
  const r = /^(\d*)-(\d*)$/.exec(spec)
  if (!r || (r[1] === '' && r[2] === '')) return { kind: 'unsatisfiable' }
  if (r[1] === '') {
    const suffix = Number(r[2])
    if (suffix === 0 || size === 0) return { kind: 'unsatisfiable' }
    return { kind: 'partial', start: Math.max(0, size - suffix), end: size - 1 }
  }
  const start = Number(r[1])
  const end = r[2] === '' ? size - 1 : Math.min(Number(r[2]), size - 1)
  if (!Number.isSafeInteger(start) || start >= size || (r[2] !== '' && Number(r[2]) < start)) return { kind: 'unsatisfiable' }
  return { kind: 'partial', start, end }
}

export interface StoredContent {
  /** The bytes to send, whole or a range; null when the file went meanwhile. */
  stream(range?: ByteRange): Blob | Uint8Array | null | Promise<Blob | Uint8Array | null>
  mimeType: string
  size: number
  /** Content hash, the strong validator. */
  sha256: string
  /** File name offered to the browser. */
  name: string
}

/** `filename` parameters for Content-Disposition: an ASCII fallback and the exact UTF-8 name. */
export function contentDisposition(kind: 'inline' | 'attachment', name: string): string {
  const fallback = name.replace(/[^\x20-\x7e]|["\\]/g, '_') || 'file'
  return `${kind}; filename="${fallback}"; filename*=UTF-8''${encodeURIComponent(name)}`
}

/**
 * The response for GET (or HEAD) of stored content: 304 when `If-None-Match` matches,
 * 206 with Content-Range for a satisfiable range (unless `If-Range` names another
 * version), 416 with `Content-Range: bytes *\/size` for a bad one, else 200. Bytes on disk
 * are streamed, never buffered whole; from PostgreSQL only the range asked for is read (at
 * most one file, bounded by the upload limit), and not at all for 304, 416 or HEAD. SVG may
 * carry scripts: the CSP sandbox keeps them from running when the content is opened directly.
 */
export function contentResponse(request: Request, c: StoredContent, opts: { download?: boolean; cacheControl?: string } = {}): Response | Promise<Response> {
  const etag = `"${c.sha256}"`
  const headers: Record<string, string> = {
    'content-type': c.mimeType,
    etag,
    'accept-ranges': 'bytes',
    'cache-control': opts.cacheControl ?? 'private, max-age=0, must-revalidate',
    'content-disposition': contentDisposition(opts.download ? 'attachment' : 'inline', c.name),
    'x-content-type-options': 'nosniff',
    'content-security-policy': "default-src 'none'; img-src data:; style-src 'unsafe-inline'; sandbox",
  }
  const ifNoneMatch = request.headers.get('if-none-match')
  if (ifNoneMatch && etagMatches(ifNoneMatch, etag)) return new Response(null, { status: 304, headers })

  const ifRange = request.headers.get('if-range')
  const rangeHeader = ifRange && ifRange.trim() !== etag ? null : request.headers.get('range')
  const range = decideRange(rangeHeader, c.size)
  const head = request.method === 'HEAD'
  if (range.kind === 'unsatisfiable') {
    headers['content-range'] = `bytes */${c.size}`
    headers['content-type'] = 'text/plain; charset=utf-8'
    return new Response(head ? null : `range not satisfiable: the file has ${c.size} bytes`, { status: 416, headers })
  }
  if (range.kind === 'partial') {
    headers['content-range'] = `bytes ${range.start}-${range.end}/${c.size}`
    headers['content-length'] = String(range.end - range.start + 1)
    return head ? new Response(null, { status: 206, headers }) : withBody(c.stream(range), 206, headers)
  }
  headers['content-length'] = String(c.size)
  return head ? new Response(null, { status: 200, headers }) : withBody(c.stream(), 200, headers)
}

type Body = Blob | Uint8Array | null
/** The response once the bytes are there: at once from disk, after the read from PostgreSQL. */
function withBody(body: Body | Promise<Body>, status: number, headers: Record<string, string>): Response | Promise<Response> {
  const respond = (b: Body) => (b ? new Response(b as Blob, { status, headers }) : errorResponse('record_gone', 'the file was deleted'))
  return body instanceof Promise ? body.then(respond) : respond(body)
}

function etagMatches(header: string, etag: string): boolean {
  if (header.trim() === '*') return true
  return header.split(',').some((t) => t.trim().replace(/^W\//, '') === etag)
}
