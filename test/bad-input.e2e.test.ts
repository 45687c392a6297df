/**
 * Input that reaches the listener before any route: malformed escapes in short-link
 * paths and bodies over every cap, however they are framed. Each answer is the contract's
 * (a 404 page for visitors, a JSON `bad_request` for the API), never a bare 413 or a 500.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { connect } from 'node:tls'
import { startServer, type TestServer } from './helpers/server'

let s: TestServer
beforeAll(async () => {
  s = await startServer()
})
afterAll(() => s?.stop())

/** One raw HTTP/1.1 exchange over TLS: the head as written, then `body` (the rest is never sent). */
function rawRequest(head: string, body: Uint8Array): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host: '127.0.0.1', port: s.httpsPort, servername: 'localhost', ca: s.ca }, () => {
      socket.write(head)
      socket.write(body)
    })
    let out = ''
    socket.on('data', (d) => {
      out += d.toString('latin1')
      // One response is enough: the status line, headers and a JSON body end with "}".
      if (/\r\n\r\n[\s\S]*\}$/.test(out)) socket.destroy()
    })
    socket.on('close', () => resolve(out))
    socket.on('error', reject)
  })
}

describe('short-link paths', () => {
  test('a malformed percent-escape in /<key>/file/<id> answers the 404 page', async () => {
    for (const path of ['/x/file/%E0', '/%E0/file/fil_x', '/%E0%A4%A']) {
      const r = await s.fetch(`https://localhost:${s.httpsPort}${path}`)
      expect(r.status).toBe(404)
      expect(r.headers.get('content-type')).toContain('text/html')
    }
  })
})

describe('bodies over the cap', () => {
  test('a 32 MB JSON body gets 400 bad_request in the error shape', async () => {
    const body = `{"name":"${'x'.repeat(32 * 1024 * 1024)}"}`
    const r = await s.api('/tags', { method: 'POST', body, headers: { 'content-type': 'application/json' } })
    expect(r.status).toBe(400)
    expect(await r.json()).toMatchObject({ code: 'bad_request', message: expect.stringContaining('request body too large') })
  })

  test('a chunked 32 MB body (no length) gets the same answer', async () => {
    const chunk = new Uint8Array(1024 * 1024).fill(0x20)
    let sent = 0
    const stream = new ReadableStream<Uint8Array>({
      pull(c) {
        if (sent++ === 32) c.close()
        else c.enqueue(chunk)
      },
    })
    const r = await s.api('/tags', { method: 'POST', body: stream, headers: { 'content-type': 'application/json' } })
    expect(r.status).toBe(400)
    expect(await r.json()).toMatchObject({ code: 'bad_request', message: expect.stringContaining('request body too large') })
  })

  test('a Content-Length far over every cap is refused from the header, in the error shape', async () => {
    const head =
      'POST /api/tags HTTP/1.1\r\nHost: localhost\r\n' +
      `Authorization: Bearer ${s.adminKey}\r\nContent-Type: application/json\r\nContent-Length: 3000000000\r\n\r\n`
    const answer = await rawRequest(head, new TextEncoder().encode('{"name":"'))
    expect(answer).toStartWith('HTTP/1.1 400')
    expect(answer).toContain('"code":"bad_request"')
  })

  test('a password form with a 40 MB body (over the old listener cap) is read only as far as a form needs', async () => {
    const link = await (
      await s.api('/links/link', { method: 'POST', json: { data: { url: 'https://example.com/secret' }, linkOptions: { password: 'open sesame' } } })
    ).json()
    const r = await s.fetch(link.shortLink, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: `password=${'a'.repeat(40 * 1024 * 1024)}`,
    })
    expect(r.status).not.toBe(413)
    expect(r.status).toBeLessThan(500)
    expect(r.headers.get('location')).toBeNull()
    const right = await s.fetch(link.shortLink, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: 'password=open+sesame',
    })
    expect(right.status).toBe(303)
  })
})
