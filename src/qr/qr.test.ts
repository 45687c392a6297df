import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { Elysia } from 'elysia'
import { PNG } from 'pngjs'
import { createHarness } from '../../test/helpers/in-process'
import { setRequestContext } from '../auth/request-context'
import { AppError, errorResponse } from '../shared/errors'
import { checkCopy, decodeImageFile, flatten, scansWithBoth } from './qr.decode'
import { fetchImage, isPrivateAddress } from './qr.fetch'
import { encodePng } from './qr.png'
import { createQrRenderer } from './qr.render'
import { qrRoutes } from './qr.routes'
import { BODY_STYLES, EYE_BALLS_FOR } from './qr.schema'
import { createQrService, qrTextFor } from './qr.service'
import { FRAME_SVG, jpegOf, LOGO_SVG, plainQrSvg, pngOf, serveFixtures } from './qr.test-fixtures'

const TEXT = 'https://localhost:8443/AbC12xY?qr=1'
let fixtures: ReturnType<typeof serveFixtures>

beforeAll(async () => {
  fixtures = serveFixtures(
    {
      '/logo.png': { body: await pngOf(LOGO_SVG), type: 'image/png' },
      '/frame.png': { body: await pngOf(FRAME_SVG), type: 'image/png' },
      '/qr.png': { body: await pngOf(plainQrSvg('hello png', 400)), type: 'image/png' },
      '/qr-transparent.png': { body: await pngOf(plainQrSvg('see-through', 400, { transparent: true })), type: 'image/png' },
      '/qr.jpg': { body: await jpegOf(plainQrSvg('hello jpeg', 600, { rotate: 12 }), 60), type: 'image/jpeg' },
      '/blank.png': {
        body: await pngOf('<svg xmlns="http://www.w3.org/2000/svg" width="50" height="50"><rect width="50" height="50" fill="#fff"/></svg>'),
        type: 'image/png',
      },
      '/big.png': { body: new Uint8Array(2 * 1024 * 1024 + 10).fill(7), type: 'image/png' },
      '/page.html': { body: '<html><body>not an image</body></html>', type: 'text/html' },
    },
    { '/to-png': '/qr.png', '/to-private': 'http://10.1.2.3/qr.png', '/loop': '/loop' },
  )
})
afterAll(() => fixtures.stop())

/** Pixels of a PNG, for the in-process decoders (ZXing + ZBar + retries). */
const decodes = (png: Uint8Array) => decodeImageFile(png)

/** Whether ZXing (no inversion retry) and ZBar both read `text` from a PNG as served, placed on white. */
async function readsAsServed(png: Uint8Array, text = TEXT): Promise<boolean> {
  const img = PNG.sync.read(Buffer.from(png))
  return scansWithBoth(flatten({ data: img.data, width: img.width, height: img.height }, 'white', false), text, { half: false })
}
/** Pixel counts per rrggbb, in the rectangle [x0, x1) × [y0, y1) (default: the whole image). */
function colourCounts(png: Uint8Array, rect?: [number, number, number, number]): Map<string, number> {
  const img = PNG.sync.read(Buffer.from(png))
  const [x0, y0, x1, y1] = rect ?? [0, 0, img.width, img.height]
  const counts = new Map<string, number>()
  for (let y = y0; y < y1; y++)
    for (let x = x0, i = (y * img.width + x0) * 4; x < x1; x++, i += 4) {
      const hex = [0, 1, 2].map((c) => img.data[i + c]!.toString(16).padStart(2, '0')).join('')
      counts.set(hex, (counts.get(hex) ?? 0) + 1)
    }
  return counts
}
const pixelAt = (png: Uint8Array, x: number, y: number) => [...colourCounts(png, [x, y, x + 1, y + 1]).keys()][0]

describe('renderer', () => {
  const r = createQrRenderer({ allowPrivateNetworks: true })

  test('every body style renders, scans, and needs no repair', async () => {
    for (const style_id of BODY_STYLES) {
      const out = await r.renderQr({ text: TEXT, qrOptions: { patterns: { body: { style_id } } }, format: 'png', width: 300 })
      expect({ style_id, repairs: out.repairs }).toEqual({ style_id, repairs: [] })
      expect(await decodes(out.body)).toBe(TEXT)
    }
  })

  test('every allowed eye ring/ball pair scans', async () => {
    for (const [style_id, balls] of Object.entries(EYE_BALLS_FOR))
      for (const ball_style_id of balls) {
        const out = await r.renderQr({
          text: TEXT,
          qrOptions: { patterns: { eye: { style_id, ball_style_id, value: '#0f172a,#be123c' } } },
          format: 'png',
          width: 300,
        })
        expect({ style_id, ball_style_id, repairs: out.repairs }).toEqual({ style_id, ball_style_id, repairs: [] })
      }
  })

  test('PNG is the requested width; SVG is vector with texts as paths', async () => {
    for (const width of [100, 300, 1000]) {
      const out = await r.renderQr({ text: TEXT, qrOptions: {}, format: 'png', width })
      const png = PNG.sync.read(Buffer.from(out.body))
      expect([png.width, png.height]).toEqual([width, width])
      expect(out.contentType).toBe('image/png')
    }
    const svg = await r.renderQr({ text: TEXT, qrOptions: { frame: { add_texts: [{ content: 'Scan me' }] } }, format: 'svg', width: 300 })
    const s = new TextDecoder().decode(svg.body)
    expect(svg.contentType).toBe('image/svg+xml')
    expect(s).toStartWith('<svg')
    expect(s).not.toContain('<text')
    expect(s).toContain('<path')
  })

  test('gradients, logos at each size, and a frame image with texts scan', async () => {
    const designs = [
      { patterns: { body: { style_id: 'dots', type: 'linear-gradient', value: '#1e3a8a,#7c3aed', direction: 'to-bottom-right' } } },
      { patterns: { body: { style_id: 'rounded', type: 'radial-gradient', value: '#000000,#1e40af' } } },
      ...[1, 5, 10, 15].map((size) => ({ logo: { value: fixtures.url('/logo.png'), size, shape: 'circle', shadow: true } })),
      {
        frame: {
          value: fixtures.url('/frame.png'),
          options: { code_rect: [50, 50, 500, 500] },
          add_texts: [{ pos: [300, 660], color: '#ffffff', size: 70, content: 'SCAN ME', bold: true }],
        },
      },
    ]
    for (const qrOptions of designs) {
      const out = await r.renderQr({ text: TEXT, qrOptions, format: 'png', width: 300 })
      expect(await decodes(out.body)).toBe(TEXT)
    }
  })

  test('a logo that cannot be fetched is left out and reported, not an error', async () => {
    const out = await r.renderQr({ text: TEXT, qrOptions: { logo: { value: fixtures.url('/missing.png') } }, format: 'png', width: 300 })
    expect(out.repairs).toContain('logo-unavailable')
    expect(await decodes(out.body)).toBe(TEXT)
  })

  test('light-on-dark designs are served dark-on-light in the same two colours, reported as a repair', async () => {
    const inv = await r.renderQr({
      text: TEXT,
      qrOptions: { patterns: { background: { value: '#111827' }, body: { value: '#f8fafc' } } },
      format: 'png',
      width: 300,
    })
    expect(inv.repairs).toEqual(['dark-on-light'])
    expect(await readsAsServed(inv.body)).toBe(true)
    const colours = colourCounts(inv.body)
    expect(colours.get('f8fafc')! / 300 ** 2).toBeGreaterThan(0.4) // the background, corners included
    expect(colours.get('111827')! / 300 ** 2).toBeGreaterThan(0.2) // the modules
    expect(pixelAt(inv.body, 0, 0)).toBe('f8fafc')
    // A transparent background under light modules counts as black: black modules on the modules' colour.
    const clear = await r.renderQr({
      text: TEXT,
      qrOptions: { patterns: { background: { type: 'transparent' }, body: { value: '#fde68a' } } },
      format: 'png',
      width: 300,
    })
    expect(clear.repairs).toEqual(['dark-on-light'])
    expect(pixelAt(clear.body, 0, 0)).toBe('fde68a')
    expect(await readsAsServed(clear.body)).toBe(true)
    const normal = await r.renderQr({ text: TEXT, qrOptions: {}, format: 'png', width: 300 })
    expect(normal.repairs).toEqual([])
  })

  test('light texts on a dark built-in frame follow the modules when the design is turned over', async () => {
    const qrOptions = {
      patterns: { background: { value: '#0f172a' }, body: { value: '#ffffff' } },
      frame: { add_texts: [{ content: 'SCAN', color: '#ffffff', size: 120, bold: true }] },
    }
    const out = await r.renderQr({ text: TEXT, qrOptions, format: 'png', width: 300 })
    expect(out.repairs).toEqual(['dark-on-light'])
    expect(await readsAsServed(out.body)).toBe(true)
    const png = PNG.sync.read(Buffer.from(out.body))
    // The text under the code, inside the frame's border: dark ink on the now light frame, not white on white.
    const text = colourCounts(out.body, [90, png.height - 45, 210, png.height - 15])
    expect(text.get('0f172a') ?? 0).toBeGreaterThan(200)
  })

  test('transparent background: the PNG has alpha and scans once placed on white', async () => {
    const out = await r.renderQr({ text: TEXT, qrOptions: { patterns: { background: { type: 'transparent' } } }, format: 'png', width: 300 })
    const png = PNG.sync.read(Buffer.from(out.body))
    expect(png.data[3]).toBe(0)
    expect(await decodes(out.body)).toBe(TEXT)
  })

  test('cache: the same input returns the same bytes and ETag; another width differs', async () => {
    const a = await r.renderQr({ text: TEXT, qrOptions: { patterns: { body: { style_id: 'classy' } } }, format: 'png', width: 300 })
    const b = await r.renderQr({ text: TEXT, qrOptions: { patterns: { body: { style_id: 'classy' } } }, format: 'png', width: 300 })
    const c = await r.renderQr({ text: TEXT, qrOptions: { patterns: { body: { style_id: 'classy' } } }, format: 'png', width: 301 })
    expect(b).toBe(a)
    expect(c.etag).not.toBe(a.etag)
  })

  test('warmUp checks the built-in sample once per process', async () => {
    const first = r.warmUp()
    expect(r.warmUp()).toBe(first)
    await first
  })

  test('validateQrOptions refuses designs that cannot scan, naming the field', () => {
    const cases: [unknown, string][] = [
      [{ patterns: { body: { style_id: 'stars' } } }, 'qrOptions.patterns.body.style_id'],
      [{ patterns: { body: { value: '#eeeeee' } } }, 'qrOptions.patterns.body.value'],
      [{ patterns: { body: { value: '#f97316' } } }, 'contrast'],
      [{ patterns: { background: { value: '#000000' }, body: { value: '#ffffff' }, eye: { value: '#000000' } } }, 'qrOptions.patterns.eye.value'],
      [{ patterns: { body: { type: 'linear-gradient', value: '#000000' } } }, 'two colours'],
      [{ patterns: { body: { value: '#000000,#111111' } } }, 'one colour'],
      [{ patterns: { eye: { style_id: 'square', ball_style_id: 'circle' } } }, 'ball_style_id'],
      [{ logo: { value: 'https://example.com/l.png', size: 16 } }, 'qrOptions.logo.size'],
      [{ logo: { value: 'ftp://example.com/l.png' } }, 'qrOptions.logo.value'],
      [{ correctLevel: 4 }, 'qrOptions.correctLevel'],
      [{ version: 41 }, 'qrOptions.version'],
      [{ space: -1 }, 'qrOptions.space'],
      [{ colour: 'red' }, "unknown field 'qrOptions.colour'"],
      [{ frame: { add_texts: [{ content: 'x'.repeat(101) }] } }, 'qrOptions.frame.add_texts.0.content'],
    ]
    for (const [qrOptions, expected] of cases) {
      let error: unknown
      try {
        r.validateQrOptions(qrOptions)
      } catch (e) {
        error = e
      }
      expect(error).toBeInstanceOf(AppError)
      expect({ qrOptions, code: (error as AppError).code, hasField: (error as AppError).message.includes(expected) }).toEqual({
        qrOptions,
        code: 'parameter_error',
        hasField: true,
      })
    }
    expect(() => r.validateQrOptions({ correctLevel: 3, space: 0, version: 40, logo: { value: 'https://example.com/l.png', size: 15 } })).not.toThrow()
  })

  test('a logo raises error correction to H and the version to 5', async () => {
    const out = await r.renderQr({
      text: 'https://s.io/x?qr=1',
      qrOptions: { correctLevel: 0, logo: { value: fixtures.url('/logo.png'), size: 10 } },
      format: 'png',
      width: 370,
    })
    const png = PNG.sync.read(Buffer.from(out.body))
    // Version 5 = 37 modules + 8 quiet = 45 modules across 370 px: the finder pattern (7 modules) spans about 57 px.
    let dark = 0
    const row = Math.round((4 + 3.5) * (370 / 45))
    for (let x = 0; x < 370; x++) if (png.data[(row * 370 + x) * 4]! < 128) dark++
    expect(dark).toBeGreaterThan(57 * 2)
    expect(await decodes(out.body)).toBe('https://s.io/x?qr=1')
  })

  test('assertScannable refuses a logo that cannot be fetched and a code_rect outside the frame', async () => {
    await expect(r.assertScannable({ logo: { value: fixtures.url('/missing.png') } })).rejects.toThrow("'qrOptions.logo.value' could not be fetched")
    await expect(r.assertScannable({ frame: { value: fixtures.url('/frame.png'), options: { code_rect: [500, 500, 300, 300] } } })).rejects.toThrow('code_rect')
    await expect(r.assertScannable({ patterns: { body: { style_id: 'dots' } } })).resolves.toBeUndefined()
  })
})

describe('scan', () => {
  const open = createQrService({ allowPrivateNetworks: true })
  const closed = createQrService({ allowPrivateNetworks: false })

  test('decodes PNG, rotated JPEG, and transparent PNG; says so when no code is found', async () => {
    expect(await open.scan(fixtures.url('/qr.png'))).toEqual({ data: 'hello png', message: 'QR code decoded' })
    expect((await open.scan(fixtures.url('/qr.jpg'))).data).toBe('hello jpeg')
    expect((await open.scan(fixtures.url('/qr-transparent.png'))).data).toBe('see-through')
    expect((await open.scan(fixtures.url('/to-png'))).data).toBe('hello png')
    const none = await open.scan(fixtures.url('/blank.png'))
    expect(none.data).toBe('')
    expect(none.message).toContain('no QR code found')
  })

  test('oversized and non-image content is 422; fetch failures are 502', async () => {
    const code = async (url: string) =>
      open.scan(url).then(
        () => 'ok',
        (e: AppError) => `${e.code}: ${e.message}`,
      )
    expect(await code(fixtures.url('/big.png'))).toStartWith("parameter_error: 'url' the image is larger than 2 MB")
    expect(await code(fixtures.url('/page.html'))).toStartWith("parameter_error: 'url' is not a PNG or JPEG image")
    expect(await code(fixtures.url('/missing.png'))).toStartWith('bad_gateway')
    expect(await code(fixtures.url('/loop'))).toBe('bad_gateway: more than 3 redirects')
    expect(await code(`http://127.0.0.1:${await closedPort()}/x.png`)).toStartWith('bad_gateway')
    expect(await code('file:///etc/passwd')).toStartWith("parameter_error: 'url' must be an http(s) URL")
  })

  test('a slow server times out with 502 (how long it takes: scripts/bench/image-bomb.ts)', async () => {
    const e = await open.scan(fixtures.url('/slow')).catch((x: AppError) => x)
    expect((e as AppError).code).toBe('bad_gateway')
    expect((e as AppError).message).toContain('timed out after 5 s')
  })

  test('private, loopback and link-local addresses are refused unless allowed, also after a redirect', async () => {
    for (const url of [
      fixtures.url('/qr.png'),
      `http://localhost:${fixtures.port}/qr.png`,
      'http://169.254.169.254/latest',
      'http://[::1]/x.png',
      'http://10.0.0.1/x.png',
    ]) {
      const e = await closed.scan(url).catch((x: AppError) => x)
      expect({ url, code: (e as AppError).code }).toEqual({ url, code: 'parameter_error' })
      expect((e as AppError).message).toContain('private')
    }
    // Loopback allowed, 10/8 refused: the redirect target is checked before it is fetched.
    const limits = { maxBytes: 1e6, timeoutMs: 2000, maxRedirects: 3, kinds: ['png' as const], field: 'url', allowPrivateNetworks: false }
    const e = await fetchImage(fixtures.url('/to-private'), { ...limits, isRefusedAddress: (ip) => ip.startsWith('10.') }).catch((x: AppError) => x)
    expect((e as AppError).message).toContain('10.1.2.3')
    expect((await fetchImage(fixtures.url('/to-png'), { ...limits, isRefusedAddress: (ip) => ip.startsWith('10.') })).kind).toBe('png')
  })

  test('the connection goes to the address that was checked (no second DNS lookup to rebind), with the Host header kept', async () => {
    const hosts: string[] = []
    const png = await pngOf(plainQrSvg('pinned', 200))
    const origin = Bun.serve({
      port: 0,
      hostname: '127.0.0.1',
      fetch: (r) => {
        hosts.push(r.headers.get('host') ?? '')
        return new Response(png as BodyInit, { headers: { 'content-type': 'image/png' } })
      },
    })
    try {
      // The first answer is checked and used; a later one (rebinding to 10/8) would be refused.
      const answers = [['127.0.0.1'], ['10.9.9.9']]
      const limits = {
        maxBytes: 1e6,
        timeoutMs: 2000,
        maxRedirects: 3,
        kinds: ['png' as const],
        field: 'url',
        allowPrivateNetworks: false,
        isRefusedAddress: (ip: string) => ip.startsWith('10.'),
        resolveHost: async () => answers.shift() ?? [],
      }
      // images.rebind.test exists in no DNS: only a connection to the checked address can succeed.
      const got = await fetchImage(`http://images.rebind.test:${origin.port}/qr.png`, limits)
      expect(got.kind).toBe('png')
      expect(hosts).toEqual([`images.rebind.test:${origin.port}`])
      expect(answers).toEqual([['10.9.9.9']])
    } finally {
      origin.stop(true)
    }
  })

  test('address classification', () => {
    for (const ip of [
      '127.0.0.1',
      '10.2.3.4',
      '172.16.0.1',
      '192.168.1.1',
      '169.254.169.254',
      '100.64.0.1',
      '0.0.0.0',
      '::1',
      'fe80::1',
      'fd00::1',
      '::ffff:127.0.0.1',
      '224.0.0.1',
    ])
      expect({ ip, private: isPrivateAddress(ip) }).toEqual({ ip, private: true })
    for (const ip of ['93.184.216.34', '8.8.8.8', '2606:4700:4700::1111', '::ffff:8.8.8.8'])
      expect({ ip, private: isPrivateAddress(ip) }).toEqual({ ip, private: false })
  })
})

async function closedPort(): Promise<number> {
  const s = Bun.serve({ port: 0, hostname: '127.0.0.1', fetch: () => new Response('') })
  const port = s.port!
  s.stop(true)
  return port
}

describe('GET /qr/{linkId} against a stub link lookup', () => {
  const links = new Map([
    ['lnk_plain', { id: 'lnk_plain', shortLink: 'https://sho.rt/abc', qrOptions: null, userId: 'alice' }],
    [
      'lnk_dark',
      {
        id: 'lnk_dark',
        shortLink: 'https://sho.rt/dark',
        qrOptions: { patterns: { background: { value: '#000000' }, body: { value: '#ffffff' } } },
        userId: 'alice',
      },
    ],
  ])
  const app = new Elysia()
    .onError(({ error }) => (error instanceof AppError ? errorResponse(error.code, error.message) : undefined))
    .use(
      qrRoutes({
        qr: createQrService({ allowPrivateNetworks: true }),
        links: {
          get: (_caller, id) => {
            const l = links.get(id)
            if (!l) throw new AppError('not_found', `link ${id} not found`)
            return l
          },
        },
        templates: {
          qrDesignOf: (id) =>
            id === 'tpl_round'
              ? { qrOptions: { patterns: { body: { style_id: 'dots' } } }, ownerId: 'alice' }
              : (() => {
                  throw new AppError('not_found', `template ${id} not found`)
                })(),
        },
      }),
    )
  const get = (path: string, headers: Record<string, string> = {}) => {
    const req = new Request(`http://localhost${path}`, { headers })
    setRequestContext(req, { requestId: 'req_test', clientIp: '127.0.0.1', caller: { userId: 'alice', role: 'member', keyId: 'key_1' } })
    return app.handle(req)
  }

  test('image, svg and base64 formats; content is the short link with ?qr=1', async () => {
    const png = await get('/qr/lnk_plain')
    expect(png.status).toBe(200)
    expect(png.headers.get('content-type')).toBe('image/png')
    expect(png.headers.get('etag')).toMatch(/^"/) // no-store is the envelope's (src/shared/security-headers.ts)
    expect(await decodes(new Uint8Array(await png.arrayBuffer()))).toBe('https://sho.rt/abc?qr=1')
    const svg = await get('/qr/lnk_plain?format=svg')
    expect(svg.headers.get('content-type')).toBe('image/svg+xml')
    expect(await svg.text()).toStartWith('<svg')
    const b64 = await get('/qr/lnk_plain?format=base64&width=120')
    const { image } = (await b64.json()) as { image: string }
    expect(image).toStartWith('data:image/png;base64,')
    const bytes = Buffer.from(image.split(',')[1]!, 'base64')
    expect(PNG.sync.read(bytes).width).toBe(120)
    expect(qrTextFor('https://sho.rt/abc')).toBe('https://sho.rt/abc?qr=1')
  })

  test('ETag and 304', async () => {
    const first = await get('/qr/lnk_plain?width=200')
    const etag = first.headers.get('etag')!
    expect(etag).toMatch(/^".+"$/)
    const again = await get('/qr/lnk_plain?width=200', { 'if-none-match': etag })
    expect(again.status).toBe(304)
    expect((await get('/qr/lnk_plain?width=201', { 'if-none-match': etag })).status).toBe(200)
  })

  test('width and format bounds, unknown links and templates', async () => {
    for (const q of ['width=99', 'width=1001', 'width=abc', 'format=gif']) {
      const r = await get(`/qr/lnk_plain?${q}`)
      expect(r.status).toBe(422)
      expect(((await r.json()) as { message: string }).message).toContain(q.split('=')[0]!)
    }
    expect((await get('/qr/lnk_nope')).status).toBe(404)
    expect((await get('/qr/lnk_plain?templateId=tpl_nope')).status).toBe(404)
  })

  test('templateId replaces the design; light-on-dark designs are served turned over; texts add a frame', async () => {
    const plain = await get('/qr/lnk_plain')
    const templated = await get('/qr/lnk_plain?templateId=tpl_round')
    expect(templated.headers.get('etag')).not.toBe(plain.headers.get('etag'))
    const dark = await get('/qr/lnk_dark')
    expect(dark.headers.get('x-qr-contrast')).toBeNull()
    expect(dark.headers.get('x-qr-repaired')).toBe('dark-on-light')
    const darkPng = new Uint8Array(await dark.arrayBuffer())
    expect(pixelAt(darkPng, 0, 0)).toBe('ffffff')
    expect(await readsAsServed(darkPng, 'https://sho.rt/dark?qr=1')).toBe(true)
    const framed = await get('/qr/lnk_plain?texts=Scan%20me&texts=sho.rt')
    const png = PNG.sync.read(Buffer.from(await framed.arrayBuffer()))
    expect(png.height).toBeGreaterThan(png.width)
  })
})

describe('through the API (real links)', () => {
  test("a link's QR code decodes to its short link; bad designs are refused on create", async () => {
    const h = createHarness()
    const link = await h.call('POST', '/links/link', {
      key: h.keys.member,
      json: { data: { url: 'https://example.org/' }, qrOptions: { patterns: { body: { style_id: 'dots' } } } },
    })
    expect(link.status).toBe(200)
    const img = await h.call('GET', `/qr/${link.body.id}?format=base64`, { key: h.keys.member })
    expect(img.status).toBe(200)
    const bytes = Buffer.from(img.body.image.split(',')[1], 'base64')
    expect(await decodes(bytes)).toBe(`${link.body.shortLink}?qr=1`)
    expect((await h.call('GET', `/qr/${link.body.id}`, { key: null })).status).toBe(401)
    const bad = await h.call('POST', '/links/link', {
      json: { data: { url: 'https://example.org/2' }, qrOptions: { patterns: { body: { value: '#fafafa' } } } },
    })
    expect(bad.status).toBe(422)
    expect(bad.body.message).toContain('qrOptions.patterns.body.value')
  })

  test('POST /qr/scan: refused loopback by default, decoded when the config allows private networks', async () => {
    const closed = createHarness()
    const refused = await closed.call('POST', '/qr/scan', { json: { url: fixtures.url('/qr.png') } })
    expect(refused.status).toBe(422)
    expect(refused.body.message).toContain('private')
    const open = createHarness({ scan: { allowPrivateNetworks: true } })
    const ok = await open.call('POST', '/qr/scan', { json: { url: fixtures.url('/qr.png') } })
    expect(ok.body).toEqual({ data: 'hello png', message: 'QR code decoded' })
    const gone = await open.call('POST', '/qr/scan', { json: { url: fixtures.url('/missing.png') } })
    expect(gone.status).toBe(502)
    expect(gone.body.code).toBe('bad_gateway')
    for (const json of [{}, { url: '' }, { url: 'x'.repeat(2001) }, { url: 'https://a.b/c', extra: 1 }])
      expect((await open.call('POST', '/qr/scan', { json })).status).toBe(422)
  })
})

describe('pixel passes', () => {
  // Premultiplied RGBA, 2×2: opaque grey, opaque colour, half-transparent red, clear.
  const px = Uint8Array.of(10, 10, 10, 255, 200, 100, 50, 255, 128, 0, 0, 128, 0, 0, 0, 0)

  test('encodePng is lossless in each colour type it picks (grey, RGB, RGBA with straight alpha)', () => {
    const cases: [Uint8Array, number, number[]][] = [
      [
        Uint8Array.of(0, 0, 0, 255, 255, 255, 255, 255, 255, 255, 255, 255, 0, 0, 0, 255),
        0,
        [0, 0, 0, 255, 255, 255, 255, 255, 255, 255, 255, 255, 0, 0, 0, 255],
      ],
      [
        Uint8Array.of(10, 10, 10, 255, 200, 100, 50, 255, 200, 100, 50, 255, 1, 2, 3, 255),
        2,
        [10, 10, 10, 255, 200, 100, 50, 255, 200, 100, 50, 255, 1, 2, 3, 255],
      ],
      [px, 6, [10, 10, 10, 255, 200, 100, 50, 255, 255, 0, 0, 128, 0, 0, 0, 0]],
    ]
    for (const [input, colourType, expected] of cases) {
      const png = encodePng(input, 2, 2)
      expect(png[25]).toBe(colourType)
      expect([...PNG.sync.read(Buffer.from(png)).data]).toEqual(expected)
    }
  })

  test('encodePng keeps rows that repeat the row above (they are filtered without a pixel pass)', () => {
    // 3×4: rows 0 and 1 equal, row 2 differs in one pixel, row 3 repeats row 2; an unaligned view, as a Buffer may be.
    const rows = [
      [0, 0, 0, 255, 9, 9, 9, 255, 250, 250, 250, 255],
      [0, 0, 0, 255, 9, 9, 9, 255, 250, 250, 250, 255],
      [0, 0, 0, 255, 8, 8, 8, 255, 250, 250, 250, 255],
      [0, 0, 0, 255, 8, 8, 8, 255, 250, 250, 250, 255],
    ]
    const backing = new Uint8Array(1 + 48)
    backing.set(rows.flat(), 1)
    for (const input of [Uint8Array.from(rows.flat()), backing.subarray(1)]) {
      const png = encodePng(input, 3, 4)
      expect(png[25]).toBe(0)
      expect([...PNG.sync.read(Buffer.from(png)).data]).toEqual(rows.flat())
    }
    const colour = rows.flat().map((v, i) => (i % 4 === 1 && v === 8 ? 80 : v))
    expect([...PNG.sync.read(Buffer.from(encodePng(Uint8Array.from(colour), 3, 4))).data]).toEqual(colour)
  })

  test('checkCopy flattens onto the background and halves with a box filter', () => {
    const full = checkCopy({ data: px, width: 2, height: 2 }, { onto: 'white', half: false, invertGrey: false })
    expect([...full.rgba.data.slice(8, 16)]).toEqual([255, 127, 127, 255, 255, 255, 255, 255])
    const half = checkCopy({ data: px, width: 2, height: 2 }, { onto: 'white', half: true, invertGrey: false })
    expect([half.rgba.width, half.rgba.height]).toEqual([1, 1])
    expect([...half.rgba.data]).toEqual([
      Math.round((10 + 200 + 255 + 255) / 4),
      Math.round((10 + 100 + 127 + 255) / 4),
      Math.round((10 + 50 + 127 + 255) / 4),
      255,
    ])
    const dark = checkCopy({ data: px, width: 2, height: 2 }, { onto: 'black', half: false, invertGrey: true })
    expect([...dark.rgba.data.slice(12, 16)]).toEqual([0, 0, 0, 255])
    expect(dark.grey[3]).toBe(255)
  })
})
