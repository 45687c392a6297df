/**
 * A click's referer (redirect.handler.ts `refererOf`): what the URL parser gives (host, href cut
 * at 2000 characters), also when the common form is read without building a URL.
 */
import { expect, test } from 'bun:test'
import { refererOf } from './redirect.handler'

/** The reference: the URL parser on every referer. */
function parsed(referer: string | null): { host: string | null; url: string | null } {
  if (!referer) return { host: null, url: null }
  try {
    const r = new URL(referer)
    return { host: r.hostname.toLowerCase(), url: r.href.slice(0, 2000) }
  } catch {
    return { host: null, url: null }
  }
}

const CASES = [
  null,
  '',
  'https://www.google.com/',
  'https://www.google.com',
  'http://example.com/path/to/page?q=1&r=two#frag',
  'https://t.co/AbC123',
  'https://EXAMPLE.com/Upper',
  'https://example.com:443/default-port',
  'https://example.com:8443/port',
  'http://example.com:80/',
  'https://user:pw@example.com/',
  'https://example.com/a/../b',
  'https://example.com/a/./b',
  'https://example.com/a/%2e%2E/b',
  'https://example.com/a/.hidden',
  'https://example.com/a b',
  'https://example.com/a"b<c>d`e{f}g|h^i',
  "https://example.com/?q='quoted'",
  'https://example.com/ünïcode?ß=1',
  'https://bücher.example/',
  'https://xn--bcher-kva.example/',
  'https://xn--a.example/',
  'https://192.168.0.1/',
  'https://0x7f.1/',
  'https://1.2.3.010/',
  'https://example.123/',
  'https://[::1]/',
  'https://example..com/',
  'https://.example.com/',
  'https://example.com./',
  'https:///example.com/',
  'https:example.com/',
  'HTTPS://example.com/',
  'ftp://example.com/',
  'android-app://com.google.android.gm/',
  'https://example.com\\path',
  'https://example.com/\\path',
  'https://example.com?x=1',
  'https://example.com/%zz/%41',
  'https://example.com/p?x=%2e./../',
  'not a url',
  `https://long.example/${'x'.repeat(2500)}`,
  `https://long.example/${'x'.repeat(1979)}`,
  'https://a-b.example/c-d_e~f!g$h&i(j)k*l+m,n;o=p:q@r/s?t/u',
]

test('every referer reads as the URL parser reads it', () => {
  for (const referer of CASES) expect([referer, refererOf(referer)]).toEqual([referer, parsed(referer)])
})

test('random referers over the characters that matter read as the URL parser reads them', () => {
  const alphabet = ['a', 'Z', '0', '9', '-', '.', '/', '?', '#', '%', '2', 'e', ':', '@', '\\', ' ', "'", '"', '^', '|', '~', 'x', 'n', 'ü', '\t']
  let x = 12345
  const rnd = (n: number) => {
    x = (Math.imul(x, 1103515245) + 12345) >>> 0
    return (x >>> 8) % n
  }
  for (let i = 0; i < 20_000; i++) {
    let tail = ''
    for (let k = rnd(24); k > 0; k--) tail += alphabet[rnd(alphabet.length)]
    const referer = `${['https://', 'http://', 'https://ex.', 'https://ex.com/'][rnd(4)]}${tail}`
    expect([referer, refererOf(referer)]).toEqual([referer, parsed(referer)])
  }
})
