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

const isHexDigit = (c: number) => (c >= 48 && c <= 57) || (c >= 65 && c <= 70) || (c >= 97 && c <= 102)
const isNameChar = (c: number) => (c >= 48 && c <= 57) || (c >= 65 && c <= 90) || (c >= 97 && c <= 122) || c === 45 || c === 95
const isDigit = (c: number) => c >= 48 && c <= 57

/**
 * Whether a Host header is one a URL can carry: host[:port], the host a DNS name or IPv4
 * address (letters, digits, `-`, `_`, dots) or an IPv6 address in brackets, the port at most
 * 65535. Bun hands over any value (and, with none on HTTP/1.0, a relative request URL), so
 * nothing may build a URL from it before this holds. One pass over the characters (a name is
 * checked in tens of nanoseconds on the redirect path); what a URL parser reads specially (an
 * IPv6 or IPv4 address in any of its forms, punycode `xn--`) is then checked by the parser itself.
 */
export function isValidHostHeader(value: string): boolean {
  const n = value.length
  if (n === 0 || n > 260) return false // a DNS name is at most 253 characters, then a port
  let i = 0
  let askParser = false
  if (value.charCodeAt(0) === 91 /* [ */) {
    const close = value.indexOf(']')
    if (close < 2) return false
    for (i = 1; i < close; i++) {
      const c = value.charCodeAt(i)
      if (!(isHexDigit(c) || c === 58 || c === 46)) return false
    }
    i = close + 1
    askParser = true
  } else {
    const first = value.charCodeAt(0)
    if (first === 45 || first === 46) return false
    let label = 0 // where the current label starts
    let lastLabel = 0 // where the last non-empty label starts (a trailing dot ends a name)
    for (; i < n; i++) {
      const c = value.charCodeAt(i)
      if (c === 58 /* : */) break
      if (c === 46 /* . */) {
        if (i > label) lastLabel = label
        label = i + 1
      } else if (!isNameChar(c)) return false
    }
    if (i > label) lastLabel = label
    // A last label starting with a digit makes the URL parser read the name as an IPv4 address; `--` may be punycode.
    askParser = isDigit(value.charCodeAt(lastLabel)) || value.indexOf('--') >= 0
  }
  if (i < n) {
    if (value.charCodeAt(i) !== 58 || n - i - 1 < 1 || n - i - 1 > 5) return false
    let port = 0
    for (let j = i + 1; j < n; j++) {
      const c = value.charCodeAt(j)
      if (!isDigit(c)) return false
      port = port * 10 + c - 48
    }
    if (port > 65535) return false
  }
  return !askParser || URL.canParse(`http://${value}/`)
}
