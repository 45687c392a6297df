/**
 * Malformed requests on raw sockets against the compiled binary: TLS to the HTTPS port (the
 * API, short links, pages) and plain TCP to the HTTP port (301 to https), with the bytes as
 * written, since fetch would clean them. Hand-picked cases (malformed and duplicate Hosts,
 * absolute-form and authority-form targets, bad percent-escapes, NULs, huge and repeated
 * headers, lying lengths) and seeded random ones. Asserted: a malformed Host is 400
 * `bad_request` in the contract's body; nothing is a 5xx of ours; the process stays up and
 * still serves; nothing is logged at error level, no stack trace.
 *
 * Bun's HTTP parser answers some requests itself before any of our code runs: 400, 431 (too
 * large) or, for a request line it cannot split into method, target and version or whose
 * version is not HTTP/1.0 or 1.1, a bare 505 HTTP Version Not Supported. That 505 is the
 * parser's, not ours; it is allowed only for such a request line, with an empty body, and counted.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { seededRandom } from './helpers/random'
import { type RawAnswer, type RawTarget, rawExchange } from './helpers/raw-http'
import { startServer, type TestServer } from './helpers/server'

let s: TestServer
let https: RawTarget
let http: RawTarget

beforeAll(async () => {
  s = await startServer()
  https = { port: s.httpsPort, ca: s.ca }
  http = { port: s.httpPort }
}, 60_000)
afterAll(async () => {
  await s?.stop()
}, 60_000)

/** RFC 9112 request-line (token SP request-target SP HTTP-version CRLF; targets have no spaces or controls) of HTTP/1.0 or 1.1. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: the grammar excludes control characters by name
const REQUEST_LINE = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+ [^\x00-\x20\x7f]+ HTTP\/1\.[01]\r\n/

interface Outcome {
  name: string
  request: string
  answer: RawAnswer | null
}

/** What is wrong with an answer, by the rules above; null when it is fine. */
function fault(o: Outcome): string | null {
  const a = o.answer
  if (!a) return null // a server may wait for the rest of a request (lengths that lie); its idle timeout ends it
  if (a.status < 500) return null
  const parsersOwn = a.status === 505 && a.body === '' && !REQUEST_LINE.test(o.request)
  return parsersOwn ? null : `${a.status} ${a.body.slice(0, 200)}`
}

const isBadRequestBody = (a: RawAnswer | null) => {
  try {
    return a !== null && a.status === 400 && JSON.parse(a.body).code === 'bad_request' && a.headers['x-content-type-options'] === 'nosniff'
  } catch {
    return false
  }
}

const MALFORMED_HOSTS = [
  '127.0.0.1:1/',
  '127.0.0.1:1/x?y#z',
  'a b',
  '[::1',
  '::1',
  'x@y',
  '',
  'local%host',
  'localhost:abc',
  'localhost:',
  'localhost:65536',
  'localhost:99999',
  'localhost#frag',
  'localhost?q',
  '\\\\evil',
  '999.999.999.999',
  '1.2.3.4.5',
  'xn--',
  '[zz::1]',
  '-x',
  'http://evil.example/',
  '\xff\xfe',
  'ex ample.com',
  'localhost, evil.example',
]

const sent: Outcome[] = []
async function send(name: string, target: RawTarget, request: string): Promise<Outcome> {
  const o = { name: `${target === http ? 'http' : 'https'} ${name}`, request, answer: await rawExchange(target, request) }
  sent.push(o)
  return o
}

describe('a malformed Host is 400 bad_request, never a 500', () => {
  test('on the HTTPS port, for the API, a short link and the dashboard; and on the HTTP port', async () => {
    const answers: Record<string, string> = {}
    for (const host of MALFORMED_HOSTS)
      for (const [target, path] of [
        [https, '/api/tags'],
        [https, '/some-key'],
        [https, '/app/'],
        [http, '/some-key'],
      ] as const) {
        const o = await send(`Host ${JSON.stringify(host)} ${path}`, target, `GET ${path} HTTP/1.1\r\nHost: ${host}\r\nConnection: close\r\n\r\n`)
        answers[o.name] = isBadRequestBody(o.answer) ? 'bad_request' : `${o.answer?.status} ${o.answer?.body.slice(0, 80)}`
      }
    // Two Host lines (Bun joins them) and none at all (HTTP/1.0) are malformed too.
    for (const [target, path] of [
      [https, '/api/tags'],
      [http, '/x'],
    ] as const) {
      for (const [name, head] of [
        ['two Host lines', `GET ${path} HTTP/1.1\r\nHost: localhost\r\nHost: evil.example\r\nConnection: close\r\n\r\n`],
        ['no Host (HTTP/1.0)', `GET ${path} HTTP/1.0\r\n\r\n`],
        ['authority form (CONNECT)', 'CONNECT localhost:443 HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n'],
      ]) {
        const o = await send(`${name} ${path}`, target, head!)
        answers[o.name] = isBadRequestBody(o.answer) ? 'bad_request' : `${o.answer?.status} ${o.answer?.body.slice(0, 80)}`
      }
    }
    expect(Object.entries(answers).filter(([, v]) => v !== 'bad_request')).toEqual([])
    expect(Object.keys(answers).length).toBe(MALFORMED_HOSTS.length * 4 + 6)
  })

  test('well-formed hosts still work: the API, a short link, a plain-HTTP redirect; absolute-form targets take the Host', async () => {
    const key = `Bearer ${s.adminKey}`
    const api = await send('API', https, `GET /api/tags HTTP/1.1\r\nHost: localhost:${s.httpsPort}\r\nAuthorization: ${key}\r\nConnection: close\r\n\r\n`)
    expect(api.answer?.status).toBe(200)
    const absolute = await send(
      'absolute-form target',
      https,
      `GET https://evil.example/api/tags HTTP/1.1\r\nHost: localhost:${s.httpsPort}\r\nAuthorization: ${key}\r\nConnection: close\r\n\r\n`,
    )
    expect(absolute.answer?.status).toBe(200)
    const moved = await send('plain HTTP', http, `GET /abc?x=1 HTTP/1.1\r\nHost: localhost:${s.httpPort}\r\nConnection: close\r\n\r\n`)
    expect([moved.answer?.status, moved.answer?.headers.location]).toEqual([301, `https://localhost:${s.httpsPort}/abc?x=1`])
    const ipv6 = await send('bracketed IPv6 host', https, 'GET /nope HTTP/1.1\r\nHost: [::1]:8443\r\nConnection: close\r\n\r\n')
    expect(ipv6.answer?.status).toBe(404) // no such domain: the not-found page
  })
})

describe('NUL characters, which PostgreSQL refuses in any query', () => {
  test('in every path of the OpenAPI document, every query parameter and in JSON strings: 400 or 422, never a 500', async () => {
    const doc = (await (await s.api('/openapi.json', { key: null })).json()) as {
      paths: Record<string, Record<string, { parameters?: { name: string; in: string }[] }>>
    }
    const answers: Record<string, string> = {}
    const said = async (r: Response) => {
      const body = (await r.json()) as { code: string; message: string }
      return `${r.status} ${body.code} ${body.message}`
    }
    for (const [path, methods] of Object.entries(doc.paths))
      for (const [method, op] of Object.entries(methods)) {
        const M = method.toUpperCase()
        const json = ['POST', 'PUT', 'PATCH'].includes(M) ? {} : undefined
        if (path.includes('{')) {
          const url = path.replace(/\{[^}]+\}/g, 'x%00y')
          const r = await s.api(url, { method: M, json })
          answers[`${M} ${url}`] = await said(r)
        }
        for (const q of (op.parameters ?? []).filter((p) => p.in === 'query')) {
          const url = `${path.replace(/\{type\}/, 'link').replace(/\{[^}]+\}/g, 'nope')}?${q.name}=a%00b`
          const r = await s.api(url, { method: M, json })
          answers[`${M} ${url}`] = await said(r)
        }
      }
    const bodies: [string, string, unknown][] = [
      ['POST', '/tags', { name: 'a\u0000b' }],
      ['POST', '/links/text', { data: { text: 'opening\u0000hours' } }],
      ['POST', '/links/link', { data: { url: 'https://nul.example/' }, linkOptions: { comments: 'a\u0000b' } }],
      ['POST', '/keys', { userId: 'nul', role: 'member', name: 'ci\u0000' }],
      ['POST', '/qr/templates', { name: 'plain\u0000', qrOptions: {} }],
      ['POST', '/users', { id: 'nul', password: 'long enough\u0000 password' }],
      ['POST', '/session', { userId: 'nul', password: 'long enough\u0000 password' }],
    ]
    for (const [method, url, json] of bodies) {
      const r = await s.api(url, { method, json, key: url === '/session' ? null : undefined })
      answers[`${method} ${url} ${JSON.stringify(json)}`] = await said(r)
    }
    const failures = Object.entries(answers).filter(([, a]) => !/^(400 bad_request|404 not_found|422 parameter_error|401 unauthorized)/.test(a))
    expect(failures).toEqual([])
    // The field at fault is named, as its own rule would name it.
    expect(answers['POST /links/text {"data":{"text":"opening\\u0000hours"}}']).toBe("422 parameter_error 'data.text' must not contain control characters")
    expect(answers['GET /links?ids=a%00b']).toBe("422 parameter_error 'ids' must not contain control characters")
    expect(answers['GET /links/x%00y']).toStartWith('400 bad_request')
    // A backslash followed by "u0000" is text, not a NUL.
    const literal = await s.api('/tags', { method: 'POST', json: { name: 'back\\u0000slash' } })
    expect(literal.status).toBe(200)
    // Short links and their files: the not-found page, without asking the store.
    for (const path of ['/%00', '/a%00b', '/x/file/fil_%00']) expect((await s.fetch(`https://localhost:${s.httpsPort}${path}`)).status).toBe(404)
    expect(s.output()).not.toMatch(/"level":"error"/)
  })
})

describe('fuzzing the request line and headers', () => {
  test('hand-picked: targets, escapes, NULs, huge and repeated headers, lying lengths, odd methods and versions', async () => {
    const host = `localhost:${s.httpsPort}`
    const auth = `Authorization: Bearer ${s.adminKey}\r\n`
    const big = (n: number) => 'a'.repeat(n)
    const cases: [string, string][] = [
      ['absolute-form to another host', `GET http://evil.example/x HTTP/1.1\r\nHost: ${host}\r\n\r\n`],
      ['absolute-form with a bad port', `GET http://evil.example:99999/api/tags HTTP/1.1\r\nHost: ${host}\r\n${auth}\r\n`],
      ['double slash', `GET //evil.example/x HTTP/1.1\r\nHost: ${host}\r\n\r\n`],
      ['asterisk', `OPTIONS * HTTP/1.1\r\nHost: ${host}\r\n\r\n`],
      ['bare word target', `GET x HTTP/1.1\r\nHost: ${host}\r\n\r\n`],
      ['query only', `GET ?x HTTP/1.1\r\nHost: ${host}\r\n\r\n`],
      ['bad escape, short link', `GET /%zz HTTP/1.1\r\nHost: ${host}\r\n\r\n`],
      ['bad escape, file route', `GET /x/file/%E0 HTTP/1.1\r\nHost: ${host}\r\n\r\n`],
      ['bad escape, API path', `GET /api/links/%E0%A4%A HTTP/1.1\r\nHost: ${host}\r\n${auth}\r\n`],
      ['bad escape, API query', `GET /api/tags?search=%&page=%zz HTTP/1.1\r\nHost: ${host}\r\n${auth}\r\n`],
      ['escaped NUL', `GET /%00 HTTP/1.1\r\nHost: ${host}\r\n\r\n`],
      ['NUL in the target', `GET /a\x00b HTTP/1.1\r\nHost: ${host}\r\n\r\n`],
      ['NUL in the method', `G\x00T / HTTP/1.1\r\nHost: ${host}\r\n\r\n`],
      ['NUL in the Host', `GET / HTTP/1.1\r\nHost: local\x00host\r\n\r\n`],
      ['NUL in a header value', `GET /api/tags HTTP/1.1\r\nHost: ${host}\r\nX-A: a\x00b\r\n${auth}\r\n`],
      ['NUL in a header name', `GET / HTTP/1.1\r\nHost: ${host}\r\nX\x00A: b\r\n\r\n`],
      ['space in the target', `GET /a b HTTP/1.1\r\nHost: ${host}\r\n\r\n`],
      ['tab in the target', `GET /a\tb HTTP/1.1\r\nHost: ${host}\r\n\r\n`],
      ['high bytes in the target', `GET /\xff\xfe HTTP/1.1\r\nHost: ${host}\r\n\r\n`],
      ['high bytes in the API target', `GET /api/links/\xff HTTP/1.1\r\nHost: ${host}\r\n${auth}\r\n`],
      ['bare LF', `GET / HTTP/1.1\nHost: ${host}\n\n`],
      ['folded header', `GET / HTTP/1.1\r\nHost: ${host}\r\n folded\r\n\r\n`],
      ['empty header name', `GET / HTTP/1.1\r\nHost: ${host}\r\n: x\r\n\r\n`],
      ['space before colon', `GET / HTTP/1.1\r\nHost: ${host}\r\nX-A : x\r\n\r\n`],
      ['20 KB header', `GET / HTTP/1.1\r\nHost: ${host}\r\nX-Big: ${big(20_000)}\r\n\r\n`],
      ['70 KB Host', `GET / HTTP/1.1\r\nHost: ${big(70_000)}\r\n\r\n`],
      ['100 KB target', `GET /${big(100_000)} HTTP/1.1\r\nHost: ${host}\r\n\r\n`],
      ['8 KB key on the API', `GET /api/${big(8000)} HTTP/1.1\r\nHost: ${host}\r\n${auth}\r\n`],
      ['200 headers', `GET / HTTP/1.1\r\nHost: ${host}\r\n${Array.from({ length: 200 }, (_, i) => `X-${i}: a\r\n`).join('')}\r\n`],
      ['90 headers on the API', `GET /api/tags HTTP/1.1\r\nHost: ${host}\r\n${auth}${Array.from({ length: 90 }, (_, i) => `X-${i}: a\r\n`).join('')}\r\n`],
      [
        'two Content-Lengths',
        `POST /api/tags HTTP/1.1\r\nHost: ${host}\r\n${auth}Content-Type: application/json\r\nContent-Length: 2\r\nContent-Length: 3\r\n\r\n{}`,
      ],
      ['Content-Length not a number', `POST /api/tags HTTP/1.1\r\nHost: ${host}\r\n${auth}Content-Length: abc\r\n\r\n`],
      ['negative Content-Length', `POST /api/tags HTTP/1.1\r\nHost: ${host}\r\n${auth}Content-Length: -1\r\n\r\n`],
      ['chunked and a length', `POST /api/tags HTTP/1.1\r\nHost: ${host}\r\n${auth}Transfer-Encoding: chunked\r\nContent-Length: 3\r\n\r\n0\r\n\r\n`],
      ['chunked garbage', `POST /api/tags HTTP/1.1\r\nHost: ${host}\r\n${auth}Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n\r\n`],
      [
        'two Content-Types',
        `POST /api/tags HTTP/1.1\r\nHost: ${host}\r\n${auth}Content-Type: application/json\r\nContent-Type: text/plain\r\nContent-Length: 2\r\n\r\n{}`,
      ],
      ['two Authorizations', `GET /api/tags HTTP/1.1\r\nHost: ${host}\r\n${auth}${auth}\r\n`],
      ['Authorization without a key', `GET /api/tags HTTP/1.1\r\nHost: ${host}\r\nAuthorization: Bearer\r\n\r\n`],
      ['a 50 KB bearer', `GET /api/tags HTTP/1.1\r\nHost: ${host}\r\nAuthorization: Bearer ${big(50_000)}\r\n\r\n`],
      ['garbage session cookie', `GET /api/tags HTTP/1.1\r\nHost: ${host}\r\nCookie: __Host-shortlink_session=%%%; __Host-shortlink_session=x\r\n\r\n`],
      ['garbage X-Forwarded-For', `GET /x HTTP/1.1\r\nHost: ${host}\r\nX-Forwarded-For: ::::, 999.1.1.1, \xff\r\n\r\n`],
      ['garbage Accept-Language', `GET /x HTTP/1.1\r\nHost: ${host}\r\nAccept-Language: ;;;q=x,*-*\r\n\r\n`],
      ['garbage Range on a file', `GET /x/file/fil_x HTTP/1.1\r\nHost: ${host}\r\nRange: bytes=9-1,-,x\r\n\r\n`],
      ['lower-case method', `get / HTTP/1.1\r\nHost: ${host}\r\n\r\n`],
      ['unknown method', `BREW /api/tags HTTP/1.1\r\nHost: ${host}\r\n${auth}\r\n`],
      ['unknown method on a short link', `BREW /x HTTP/1.1\r\nHost: ${host}\r\n\r\n`],
      ['TRACE', `TRACE / HTTP/1.1\r\nHost: ${host}\r\n\r\n`],
      ['HTTP/0.9', 'GET /\r\n\r\n'],
      ['HTTP/2.0 in a 1.1 line', `GET / HTTP/2.0\r\nHost: ${host}\r\n\r\n`],
      ['HTTP/2 preface', 'PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n'],
      ['extra token after the version', `GET / HTTP/1.1 x\r\nHost: ${host}\r\n\r\n`],
      ['only CRLFs', '\r\n\r\n\r\n'],
      ['NULs only', '\x00\x00\x00\r\n\r\n'],
      ['a TLS record in the clear', '\x16\x03\x01\x00\x05hello'],
    ]
    const statuses: Record<string, number | null> = {}
    for (const [name, request] of cases)
      for (const target of [https, http]) statuses[(await send(name, target, request)).name] = sent.at(-1)!.answer?.status ?? null
    const faults = sent.filter((o) => cases.some(([n]) => o.name.endsWith(` ${n}`))).flatMap((o) => (fault(o) ? [`${o.name}: ${fault(o)}`] : []))
    expect(faults).toEqual([])
    // The API's own answers to broken escapes are the contract's 400.
    expect(isBadRequestBody(sent.find((o) => o.name === 'https bad escape, API path')!.answer)).toBe(true)
    expect(Object.keys(statuses).length).toBe(cases.length * 2)
  })

  test('seeded random request lines, Hosts and headers: no 5xx of ours', async () => {
    const rnd = seededRandom(24)
    const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rnd() * xs.length)]!
    const ALPHABET = 'abcXYZ019-._~:/?#[]@!$&\'()*+,;=%" <>\\^`{|}\x00\x01\x09\x0b\x7f\x80\xc3\xa9\xff'
    const junk = (max: number) => Array.from({ length: Math.floor(rnd() * max) }, () => pick(ALPHABET.split(''))).join('')
    const host = () =>
      pick([
        `localhost:${s.httpsPort}`,
        'localhost',
        `127.0.0.1:${s.httpsPort}`,
        `[::1]:${s.httpsPort}`,
        junk(20),
        `localhost${junk(4)}`,
        `${junk(3)}.example`,
        `localhost:${Math.floor(rnd() * 200_000)}`,
        pick(MALFORMED_HOSTS),
      ])
    const target = () =>
      pick([
        '/',
        '/api/tags',
        '/api/links',
        `/api/links/${junk(12)}`,
        `/api/qr/${junk(8)}?format=${junk(4)}`,
        `/${junk(16)}`,
        `/x/file/${junk(8)}`,
        `/app/${junk(8)}`,
        `/.well-known/${junk(8)}`,
        `http://${junk(10)}/${junk(6)}`,
        `https://localhost:${s.httpsPort}/api/${junk(10)}`,
        `/${'%'.repeat(1 + Math.floor(rnd() * 4))}${junk(4)}`,
        `/api/tags?${junk(30)}`,
        junk(10),
      ])
    const method = () => pick(['GET', 'GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'HEAD', 'OPTIONS', 'get', 'X', junk(6)])
    // Mostly versions Bun passes on, so most requests reach our code.
    const version = () => pick(['HTTP/1.1', 'HTTP/1.1', 'HTTP/1.1', 'HTTP/1.1', 'HTTP/1.1', 'HTTP/1.0', 'HTTP/1.2', 'HTTP/9.9', junk(8)])
    const header = () =>
      pick([
        `Host: ${host()}`,
        `Authorization: Bearer ${pick([s.adminKey, junk(40)])}`,
        `Authorization: ${junk(30)}`,
        `Cookie: __Host-shortlink_session=${junk(43)}`,
        `Content-Type: ${pick(['application/json', 'multipart/form-data; boundary=x', junk(20)])}`,
        `Content-Length: ${pick(['0', '2', String(Math.floor(rnd() * 1e12)), junk(5)])}`,
        `X-Forwarded-For: ${junk(20)}`,
        `User-Agent: ${junk(40)}`,
        `Range: bytes=${junk(10)}`,
        `If-None-Match: ${junk(20)}`,
        `Origin: ${junk(20)}`,
        `Accept-Language: ${junk(20)}`,
        `${junk(10)}: ${junk(20)}`,
      ])
    const start = sent.length
    for (let i = 0; i < 600; i++) {
      const headers = Array.from({ length: Math.floor(rnd() * 6) }, header)
      if (rnd() < 0.85) headers.unshift(`Host: ${host()}`)
      const body = rnd() < 0.3 ? pick(['{}', '{"name":"x"}', junk(50), '[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]']) : ''
      const request = `${method()} ${target()} ${version()}\r\n${headers.map((h) => `${h}\r\n`).join('')}Connection: close\r\n\r\n${body}`
      await send(`random #${i}`, rnd() < 0.8 ? https : http, request)
    }
    const random = sent.slice(start)
    const faults = random.flatMap((o) => (fault(o) ? [`${o.name} ${JSON.stringify(o.request.slice(0, 200))}: ${fault(o)}`] : []))
    expect(faults).toEqual([])
    // The run reached our code, not only Bun's parser: our 400s, 401s, 404s and successes are among the answers.
    const statuses = new Set(random.map((o) => o.answer?.status))
    for (const status of [200, 301, 400, 401, 404]) expect(statuses).toContain(status)
  })

  test('after all of it: the process is up and serves, and nothing was logged at error level', async () => {
    expect(sent.length).toBeGreaterThan(500)
    expect(s.proc.exitCode).toBeNull()
    expect((await s.api('/tags')).status).toBe(200)
    const counts: Record<string, number> = {}
    for (const o of sent) {
      const k = o.answer ? String(o.answer.status) : 'no answer'
      counts[k] = (counts[k] ?? 0) + 1
    }
    console.log('answers by status:', counts)
    expect(s.output()).not.toMatch(/"level":"error"/)
    expect(s.output()).not.toMatch(/TypeError|RangeError|URIError|\n\s+at .+:\d+:\d+/)
  })
})
