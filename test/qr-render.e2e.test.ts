/**
 * POST /qr/render: a design rendered without being saved (the dashboard designer's live
 * preview), under the same scan guarantee as stored designs: decoded by zbarimg, repaired
 * (X-QR-Repaired) or refused (422 with the reason).
 */
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { startServer, type TestServer } from './helpers/server'

let s: TestServer
const dir = mkdtempSync(join(tmpdir(), 'qr-render-'))
beforeAll(async () => {
  s = await startServer()
})
afterAll(async () => {
  await s?.stop()
})

async function zbar(bytes: ArrayBuffer): Promise<string> {
  const file = join(dir, `${crypto.randomUUID()}.png`)
  await Bun.write(file, bytes)
  const p = Bun.spawn(['zbarimg', '-q', '--raw', file], { stdout: 'pipe', stderr: 'ignore' })
  return (await new Response(p.stdout).text()).trim()
}
const render = (json: unknown, key?: string) => s.api('/qr/render', { method: 'POST', json, key })

test("renders an unsaved design on the link's short link (?qr=1) and leaves the link's design alone", async () => {
  const link = (await (await s.api('/links/link', { method: 'POST', json: { data: { url: 'https://example.org/render' } } })).json()) as any
  const r = await render({
    linkId: link.id,
    width: 400,
    qrOptions: { patterns: { body: { style_id: 'dots', value: '#1d4ed8' }, eye: { style_id: 'circle' } } },
  })
  expect(r.status).toBe(200)
  expect(r.headers.get('content-type')).toBe('image/png')
  expect(r.headers.get('x-qr-repaired')).toBeNull()
  expect(await zbar(await r.arrayBuffer())).toBe(`${link.shortLink}?qr=1`)
  expect(((await (await s.api(`/links/${link.id}`)).json()) as any).qrOptions ?? null).toBeNull()
})

test('without a link: the sample link; svg format', async () => {
  const png = await render({})
  expect(await zbar(await png.arrayBuffer())).toBe('https://example.com/AbC12xY?qr=1')
  const svg = await render({ format: 'svg', qrOptions: { frame: { add_texts: [{ content: 'Scan me' }] } } })
  expect(svg.headers.get('content-type')).toBe('image/svg+xml')
  expect(await svg.text()).toStartWith('<svg')
})

test('light-on-dark is repaired and says so; low contrast and unknown fields are refused with a reason', async () => {
  const night = await render({ qrOptions: { patterns: { background: { value: '#0f172a' }, body: { value: '#f8fafc' } } } })
  expect(night.status).toBe(200)
  expect(night.headers.get('x-qr-repaired')).toBe('dark-on-light')
  const faint = await render({ qrOptions: { patterns: { body: { value: '#f5f5f5' } } } })
  expect(faint.status).toBe(422)
  expect(((await faint.json()) as any).code).toBe('parameter_error')
  const unknown = await render({ qrOptions: { sparkle: true } })
  expect(unknown.status).toBe(422)
})

test("another user's link is forbidden (as for GET /qr/{linkId}); read-only keys do not POST", async () => {
  const link = (await (await s.api('/links/link', { method: 'POST', json: { data: { url: 'https://example.org/mine' } } })).json()) as any
  const member = await s.keyFor('render-member', 'member')
  expect((await render({ linkId: link.id }, member)).status).toBe(403)
  const reader = await s.keyFor('render-reader', 'readonly')
  expect((await render({}, reader)).status).toBe(403)
})
