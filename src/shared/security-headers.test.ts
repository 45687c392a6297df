import { describe, expect, test } from 'bun:test'
import { isValidHostHeader, withApiHeaders, withPageHeaders } from './security-headers'

describe('Host headers', () => {
  test('host[:port] names, IPv4 and bracketed IPv6 pass; anything a URL cannot carry fails', () => {
    const good = [
      'localhost',
      'localhost:8443',
      'LINKS.example.com',
      'a-b.example',
      'example.com.',
      '127.0.0.1',
      '127.0.0.1:65535',
      '[::1]',
      '[::1]:8443',
      'xn--bcher-kva.example',
      'under_score.example',
      '0x7f.1',
    ]
    const bad = [
      '',
      ' ',
      '127.0.0.1:1/',
      'a b',
      '[::1',
      'x@y',
      'local%host',
      'localhost:abc',
      'localhost:',
      'localhost:65536',
      'localhost:99999',
      'localhost#f',
      'localhost?q',
      '\\\\evil',
      'a, b',
      '999.999.999.999',
      'xn--',
      '[zz::1]',
      '1.2.3.4.5',
      '-x',
      'http://evil/',
      'ÿþ',
      'a\u0000b',
      'a'.repeat(300),
    ]
    expect(good.filter((h) => !isValidHostHeader(h))).toEqual([])
    expect(bad.filter((h) => isValidHostHeader(h))).toEqual([])
    // Whatever passes builds a URL.
    for (const h of good) expect(URL.canParse(`https://${h}/x`)).toBe(true)
  })
})

describe('security headers', () => {
  test('API answers: nosniff, no-store (replacing what a route set), no framing; a CSP a route set is kept', () => {
    const r = withApiHeaders(new Response('x', { headers: { 'cache-control': 'private, max-age=300', 'content-security-policy': 'sandbox' } }))
    expect(Object.fromEntries(r.headers)).toMatchObject({
      'x-content-type-options': 'nosniff',
      'cache-control': 'no-store',
      'content-security-policy': "sandbox; frame-ancestors 'none'",
      'x-frame-options': 'DENY',
    })
  })

  test("pages: nosniff and frame-ancestors 'none', or 'self' for what our pages frame; redirects untouched", () => {
    expect(withPageHeaders(new Response('<p>', { headers: { 'content-type': 'text/html' } }), false).headers.get('content-security-policy')).toBe(
      "frame-ancestors 'none'",
    )
    const file = withPageHeaders(new Response('%PDF'), true)
    expect([file.headers.get('content-security-policy'), file.headers.get('x-frame-options'), file.headers.get('x-content-type-options')]).toEqual([
      "frame-ancestors 'self'",
      'SAMEORIGIN',
      'nosniff',
    ])
    const redirect = withPageHeaders(Response.redirect('https://example.com/', 302), false)
    expect([...redirect.headers.keys()]).toEqual(['location'])
  })
})
