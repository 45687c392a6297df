/**
 * QR images as a user gets them from the real server (the compiled binary in CI),
 * decoded by two independent command-line decoders: ZBar (`zbarimg`) and ZXing
 * (`ZXingReader`, the older zxing-cpp many scanner apps still embed). Every body
 * style, every allowed eye pair, gradients, logos at each size, frames with texts,
 * at 100, 300 and 1000 px.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { PNG } from 'pngjs'
import { BODY_STYLES, EYE_BALLS_FOR } from '../src/qr/qr.schema'
import { FRAME_SVG, LOGO_SVG, plainQrSvg, pngOf, serveFixtures } from '../src/qr/qr.test-fixtures'
import { startServer, type TestServer } from './helpers/server'

let s: TestServer
let fixtures: ReturnType<typeof serveFixtures>
const dir = mkdtempSync(join(tmpdir(), 'qr-e2e-'))

beforeAll(async () => {
  for (const tool of ['zbarimg', 'ZXingReader'])
    if (!Bun.which(tool)) throw new Error(`${tool} is missing: apt-get install -y zbar-tools zxing-cpp-tools (see .ci/run)`)
  fixtures = serveFixtures({
    '/logo.png': { body: await pngOf(LOGO_SVG), type: 'image/png' },
    '/frame.png': { body: await pngOf(FRAME_SVG), type: 'image/png' },
    '/qr.png': { body: await pngOf(plainQrSvg('scanned through the binary', 400)), type: 'image/png' },
  })
  s = await startServer({ toml: '[limits]\napiPerMinute = 100000\n[scan]\nallowPrivateNetworks = true\n' })
})
afterAll(async () => {
  await s?.stop()
  fixtures?.stop()
})

async function zbar(file: string): Promise<string> {
  const p = Bun.spawn(['zbarimg', '-q', '--raw', file], { stdout: 'pipe', stderr: 'ignore' })
  return (await new Response(p.stdout).text()).trim()
}
async function zxing(file: string): Promise<string> {
  const p = Bun.spawn(['ZXingReader', file], { stdout: 'pipe', stderr: 'ignore' })
  return /Text:\s+"(.*)"/.exec(await new Response(p.stdout).text())?.[1] ?? ''
}

/** PNG bytes with transparency flattened onto white. */
function flattenOntoWhite(png: Uint8Array): Uint8Array {
  const img = PNG.sync.read(Buffer.from(png))
  for (let i = 0; i < img.data.length; i += 4) {
    const a = img.data[i + 3]! / 255
    for (let c = 0; c < 3; c++) {
      const v = img.data[i + c]!
      img.data[i + c] = Math.round(v * a + 255 * (1 - a))
    }
    img.data[i + 3] = 255
  }
  return PNG.sync.write(img)
}

let n = 0
async function makeLink(qrOptions: unknown): Promise<{ id: string; shortLink: string }> {
  const r = await s.api('/links/link', { method: 'POST', json: { data: { url: `https://example.org/qr-${n++}` }, qrOptions } })
  const body = (await r.json()) as any
  if (r.status !== 200) throw new Error(`create failed ${r.status}: ${JSON.stringify(body)}`)
  return body
}

/** Fetches the QR at each width and decodes it with both CLIs; returns the failures. */
async function check(name: string, qrOptions: unknown, opts: { widths?: number[]; query?: string; rewrite?: 'flatten' } = {}) {
  const link = await makeLink(qrOptions)
  const expected = `${link.shortLink}?qr=1`
  const failures: string[] = []
  for (const width of opts.widths ?? [100, 300, 1000]) {
    const r = await s.api(`/qr/${link.id}?width=${width}${opts.query ?? ''}`)
    expect(r.status).toBe(200)
    let png: Uint8Array = new Uint8Array(await r.arrayBuffer())
    if (opts.rewrite === 'flatten') png = flattenOntoWhite(png)
    const file = join(dir, `${name}-${width}.png`)
    await Bun.write(file, png)
    const [z, x] = await Promise.all([zbar(file), zxing(file)])
    if (z !== expected) failures.push(`${name}@${width} zbar: ${JSON.stringify(z)}`)
    if (x !== expected) failures.push(`${name}@${width} zxing: ${JSON.stringify(x)}`)
    if (r.headers.get('x-qr-repaired')) failures.push(`${name}@${width} repaired: ${r.headers.get('x-qr-repaired')}`)
  }
  return failures
}

describe('every style decodes with zbarimg and ZXingReader at 100/300/1000 px', () => {
  test('body styles', async () => {
    const failures: string[] = []
    for (const style_id of BODY_STYLES) failures.push(...(await check(`body-${style_id}`, { patterns: { body: { style_id } } })))
    expect(failures).toEqual([])
  })

  test('eye ring and ball pairs', async () => {
    const failures: string[] = []
    for (const [style_id, balls] of Object.entries(EYE_BALLS_FOR))
      for (const ball_style_id of balls)
        failures.push(
          ...(await check(`eye-${style_id}-${ball_style_id}`, {
            patterns: { body: { style_id: 'rounded' }, eye: { style_id, ball_style_id, value: '#0f172a,#9f1239' } },
          })),
        )
    expect(failures).toEqual([])
  })

  test('gradients and colours', async () => {
    const failures = [
      ...(await check('linear', {
        patterns: {
          body: { style_id: 'dots', type: 'linear-gradient', value: '#1e3a8a,#7c3aed', direction: 'to-bottom-right' },
          eye: { style_id: 'circle', type: 'linear-gradient', value: '#000000,#1e3a8a' },
        },
      })),
      ...(await check('radial', {
        patterns: { body: { style_id: 'classy', type: 'radial-gradient', value: '#000000,#2563eb' }, background: { value: '#fef9c3' } },
      })),
      ...(await check('low-contrast-ok', { patterns: { body: { value: '#6b7280' } } })),
    ]
    expect(failures).toEqual([])
  })

  test('logos at each allowed size (1, 5, 10, 15 %), shapes and shadow', async () => {
    const failures: string[] = []
    for (const size of [1, 5, 10, 15])
      for (const shape of ['square', 'circle'])
        failures.push(...(await check(`logo-${size}-${shape}`, { logo: { value: fixtures.url('/logo.png'), size, shape, shadow: size === 10 } })))
    failures.push(
      ...(await check('logo-dots', { patterns: { body: { style_id: 'dots' } }, logo: { value: fixtures.url('/logo.png'), size: 12, shape: 'rounded' } })),
    )
    // Repairs (a shrunk logo) are allowed here: the contract is that what is served scans.
    expect(failures.filter((f) => !f.includes('repaired: logo-shrunk'))).toEqual([])
  })

  test('frames with texts: an image frame, the built-in frame, and texts from the query', async () => {
    const failures = [
      ...(await check(
        'frame-image',
        {
          frame: {
            value: fixtures.url('/frame.png'),
            options: { code_rect: [50, 50, 500, 500] },
            add_texts: [
              { pos: [300, 640], color: '#ffffff', size: 60, content: 'SCAN ME', bold: true },
              { pos: [300, 730], color: '#93c5fd', size: 36, prefix: 'at ', content: 'example.org' },
            ],
          },
        },
        { widths: [300, 1000] },
      )),
      ...(await check('frame-builtin', {
        patterns: { body: { style_id: 'rounded', value: '#14532d' } },
        frame: { add_texts: [{ content: 'Menu', bold: true }] },
      })),
      ...(await check('frame-query-texts', {}, { query: '&texts=Scan%20me&texts=example.org' })),
    ]
    expect(failures).toEqual([])
  })

  test('light-on-dark: served turned over (dark-on-light, same two colours), read as served by zbarimg and ZXingReader', async () => {
    const qrOptions = { patterns: { background: { value: '#0f172a' }, body: { value: '#f8fafc', style_id: 'rounded' } } }
    const link = await makeLink(qrOptions)
    const expected = `${link.shortLink}?qr=1`
    const seen: unknown[] = []
    for (const width of [100, 300, 1000]) {
      const r = await s.api(`/qr/${link.id}?width=${width}`)
      const png = new Uint8Array(await r.arrayBuffer())
      const file = join(dir, `light-on-dark-${width}.png`)
      await Bun.write(file, png)
      const img = PNG.sync.read(Buffer.from(png))
      const corner = [0, 1, 2].map((c) => img.data[c]!.toString(16).padStart(2, '0')).join('')
      seen.push({
        width,
        status: r.status,
        repaired: r.headers.get('x-qr-repaired'),
        contrast: r.headers.get('x-qr-contrast'),
        corner,
        zbar: await zbar(file),
        zxing: await zxing(file),
      })
    }
    expect(seen).toEqual(
      [100, 300, 1000].map((width) => ({ width, status: 200, repaired: 'dark-on-light', contrast: null, corner: 'f8fafc', zbar: expected, zxing: expected })),
    )
    // A template must scan as given: a light-on-dark one is refused, saying why.
    const tpl = await s.api('/qr/templates', { method: 'POST', json: { name: 'night', qrOptions } })
    expect(tpl.status).toBe(422)
    expect(((await tpl.json()) as { message: string }).message).toContain('light-on-dark')
  })

  test('transparent background reads once placed on white', async () => {
    expect(await check('transparent', { patterns: { background: { type: 'transparent' }, body: { style_id: 'dots' } } }, { rewrite: 'flatten' })).toEqual([])
  })
})

describe('the binary serves the other QR endpoints', () => {
  test('svg and base64 formats, 304, and an unscannable design refused', async () => {
    const link = await makeLink(null)
    const svg = await s.api(`/qr/${link.id}?format=svg`)
    expect(svg.headers.get('content-type')).toBe('image/svg+xml')
    expect(await svg.text()).toStartWith('<svg')
    const b64 = (await (await s.api(`/qr/${link.id}?format=base64`)).json()) as { image: string }
    expect(b64.image).toStartWith('data:image/png;base64,')
    const first = await s.api(`/qr/${link.id}`)
    expect((await s.api(`/qr/${link.id}`, { headers: { 'if-none-match': first.headers.get('etag')! } })).status).toBe(304)
    const bad = await s.api('/links/link', {
      method: 'POST',
      json: { data: { url: 'https://example.org/bad' }, qrOptions: { patterns: { body: { value: '#f5f5f5' } } } },
    })
    expect(bad.status).toBe(422)
  })

  test('POST /qr/scan decodes an image served on loopback (allowed in this config)', async () => {
    const r = await s.api('/qr/scan', { method: 'POST', json: { url: fixtures.url('/qr.png') } })
    expect(await r.json()).toEqual({ data: 'scanned through the binary', message: 'QR code decoded' })
  })

  test('templates: create, preview PNG decodes', async () => {
    const r = await s.api('/qr/templates', { method: 'POST', json: { name: 'Leaf', qrOptions: { patterns: { eye: { style_id: 'leaf' } } } } })
    const tpl = (await r.json()) as { id: string; image: string }
    expect(r.status).toBe(200)
    const preview = await s.fetch(tpl.image, { headers: { authorization: `Bearer ${s.adminKey}` } })
    expect(preview.headers.get('content-type')).toBe('image/png')
    const file = join(dir, 'preview.png')
    await Bun.write(file, new Uint8Array(await preview.arrayBuffer()))
    expect(await zbar(file)).toBe('https://example.com/AbC12xY?qr=1')
  })
})
