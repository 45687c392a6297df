/**
 * The public origin: a server behind a port mapping (`-p 443:8443`) listens on one port
 * while the world uses baseUrl's. Every URL it hands out (shortLink, qrCode, the text in
 * the QR image, the plain-HTTP 301) must carry baseUrl's port, here none. Requests go
 * to the real listeners through curl with --resolve, as a client behind that mapping would.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { join } from 'node:path'
import { startServer, type TestServer } from './helpers/server'

let s: TestServer
let caFile: string

beforeAll(async () => {
  s = await startServer({
    env: { SHORTLINK_SERVER_BASEURL: 'https://api.example.test/api', SHORTLINK_DOMAINS_DEFAULTS: 's.test' },
  })
  caFile = join(s.dir, 'data/tls/ca.pem')
})
afterAll(() => s?.stop())

/** curl to a public name, connected to the local listener: status, Location, body. */
async function curl(url: string, args: string[] = []): Promise<{ status: number; location: string; body: string }> {
  const u = new URL(url)
  const listening = u.protocol === 'https:' ? s.httpsPort : s.httpPort
  const target = `${u.protocol}//${u.hostname}:${listening}${u.pathname}${u.search}`
  const p = Bun.spawn(
    ['curl', '-sS', '--cacert', caFile, '--resolve', `${u.hostname}:${listening}:127.0.0.1`, '-w', '\n%{http_code} %{redirect_url}', ...args, target],
    { stdout: 'pipe', stderr: 'pipe' },
  )
  const [out, err] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text()])
  if ((await p.exited) !== 0) throw new Error(`curl ${target} failed: ${err}`)
  const nl = out.lastIndexOf('\n')
  const [status, location = ''] = out.slice(nl + 1).split(' ')
  return { status: Number(status), location, body: out.slice(0, nl) }
}

const auth = () => ['-H', `authorization: Bearer ${s.adminKey}`]

describe('public origin: baseUrl https://api.example.test/api, listening on a random port', () => {
  let link: { id: string; key: string; shortLink: string; qrCode: string }

  test('shortLink and qrCode carry no port', async () => {
    const r = await curl('https://api.example.test/api/links/link', [
      ...auth(),
      '-H',
      'content-type: application/json',
      '-d',
      JSON.stringify({ data: { url: 'https://example.com/menu' } }),
    ])
    expect(r.status).toBe(200)
    link = JSON.parse(r.body)
    expect(link.shortLink).toBe(`https://s.test/${link.key}`)
    expect(link.qrCode).toBe(`https://api.example.test/api/qr/${link.id}`)
  })

  test('the QR image decodes to the short link without a port', async () => {
    const file = join(s.dir, 'code.png')
    const r = await curl(link.qrCode, [...auth(), '-o', file])
    expect(r.status).toBe(200)
    const zbar = Bun.spawn(['zbarimg', '-q', '--raw', file], { stdout: 'pipe', stderr: 'pipe' })
    expect((await new Response(zbar.stdout).text()).trim()).toBe(`https://s.test/${link.key}?qr=1`)
  })

  test('the short link answers on the listener, and plain HTTP answers 301 to the public origin', async () => {
    const visit = await curl(link.shortLink, ['-A', 'Mozilla/5.0 (X11; Linux x86_64) Firefox/125.0'])
    expect(visit.status).toBe(302)
    expect(visit.location).toBe('https://example.com/menu')
    const plain = await curl(`http://s.test/${link.key}`)
    expect(plain.status).toBe(301)
    expect(plain.location).toBe(`https://s.test/${link.key}`)
  })
})
