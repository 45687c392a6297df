/**
 * The security headers of every answer, decided here and applied at the two doors: the API
 * envelope (src/app.ts) and the redirect server's entry (src/redirect/redirect.handler.ts).
 * No route sets them, so no route can forget them.
 *
 * - `X-Content-Type-Options: nosniff` everywhere: a browser must not read a JSON error, a
 *   linkset or an uploaded file as HTML or script.
 * - API answers, errors included, are `Cache-Control: no-store`: a session cookie opens them,
 *   so no cache may keep one user's answer for another (contract, General).
 * - Framing is forbidden by a CSP header's `frame-ancestors` (a `<meta>` CSP cannot set it),
 *   plus `X-Frame-Options` for browsers older than CSP 2. `'none'`, except what a page of ours
 *   frames: the files a hosted document or menu page shows in an iframe (`'self'`). The
 *   dashboard frames nothing.
 */

type Ancestors = "'none'" | "'self'"

/** Adds `frame-ancestors` to the answer's CSP (kept: an SVG file's sandbox, say), or makes it the CSP. */
function forbidFraming(headers: Headers, ancestors: Ancestors) {
  const csp = headers.get('content-security-policy')
  const rule = `frame-ancestors ${ancestors}`
  headers.set('content-security-policy', csp ? `${csp}; ${rule}` : rule)
  headers.set('x-frame-options', ancestors === "'self'" ? 'SAMEORIGIN' : 'DENY')
}

/** Every API answer: never sniffed, never stored, never framed (the Swagger page is one). */
export function withApiHeaders(res: Response): Response {
  const h = res.headers
  h.set('x-content-type-options', 'nosniff')
  h.set('cache-control', 'no-store')
  forbidFraming(h, "'none'")
  return res
}

/**
 * Every answer of the redirect server that has a page or a body: never sniffed, framed only
 * by our own pages when `framedBySelf`. Redirects (3xx) carry neither: they are the hot path
 * and have nothing to sniff or frame.
 */
export function withPageHeaders(res: Response, framedBySelf: boolean): Response {
  const status = res.status
  if (status >= 300 && status < 400) return res
  const h = res.headers
  h.set('x-content-type-options', 'nosniff')
  forbidFraming(h, framedBySelf ? "'self'" : "'none'")
  return res
}

/** host[:port]: a DNS name or IPv4 address, or an IPv6 address in brackets; a port of at most 65535. */
const HOST_HEADER = /^(?:\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9_](?:[A-Za-z0-9_.-]{0,252}[A-Za-z0-9_.])?)(?::(\d{1,5}))?$/
/** What a URL parser reads specially (an IPv6 address, IPv4 in any form, punycode): checked by the parser itself. */
const PARSER_SENSITIVE = /^\[|xn--|(?:^|\.)\d[^.]*\.?(?::\d+)?$/i

/**
 * Whether a Host header is one a URL can carry. Bun hands over any value (and, with none on
 * HTTP/1.0, a relative request URL), so nothing may build a URL from it before this holds.
 * A plain name costs one regular expression; only addresses and punycode go to the URL parser.
 */
export function isValidHostHeader(value: string): boolean {
  const m = HOST_HEADER.exec(value)
  if (!m) return false
  if (m[1] !== undefined && Number(m[1]) > 65535) return false
  return !PARSER_SENSITIVE.test(value) || URL.canParse(`http://${value}/`)
}
