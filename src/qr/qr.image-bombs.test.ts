/**
 * User images (logos, frames, scan inputs) are checked from their headers before anything
 * decodes them, and user SVG never reaches the file system or the network. The bombs are
 * built here: a 600-byte JPEG and a PNG whose headers declare 30000×30000 px, a real
 * 5000×5000 PNG of zero rows, SVGs naming local files and a loopback server.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { PNG } from 'pngjs'
import { createHarness } from '../../test/helpers/in-process'
import { AppError } from '../shared/errors'
import { decodeImageFile } from './qr.decode'
import { checkPixelBudget, imageSize, MAX_IMAGE_PIXELS, svgSize } from './qr.image-size'
import { createJobWorker } from './qr.job-worker'
import { createQrRenderer } from './qr.render'
import { MAX_SVG_ELEMENTS, sanitiseSvg } from './qr.svg-sanitise'
import { jpegBomb, jpegOf, LOGO_SVG, pngBomb, pngOf, serveFixtures, sof } from './qr.test-fixtures'

const TEXT = 'https://localhost:8443/AbC12xY?qr=1'

describe('image sizes from headers', () => {
  test('PNG IHDR and JPEG SOF of real images', async () => {
    expect(imageSize(await pngOf(LOGO_SVG), 'png')).toEqual({ width: 200, height: 200 })
    expect(imageSize(await jpegOf('<svg xmlns="http://www.w3.org/2000/svg" width="64" height="48"/>'), 'jpeg')).toEqual({ width: 64, height: 48 })
    expect(imageSize(pngBomb(30000, 30000), 'png')).toEqual({ width: 30000, height: 30000 })
    expect(jpegBomb(30000, 30000).length).toBeLessThan(700)
    expect(imageSize(jpegBomb(30000, 30000), 'jpeg')).toEqual({ width: 30000, height: 30000 })
  })

  test('JPEG: the largest of every SOF counts, also one a lying segment length hides; truncated or DNL-less heights are unreadable', () => {
    // A small first frame, then a huge one: decoders that read further find it.
    expect(imageSize(jpegBomb(100, 100, sof(0xc2, 30000, 20000)), 'jpeg')).toEqual({ width: 30000, height: 20000 })
    // An APP1 whose length claims to run past the huge SOF: a segment walker would skip it.
    const hidden = Uint8Array.from([0xff, 0xd8, 0xff, 0xe1, 0x7f, 0xff, ...sof(0xc0, 30000, 30000), ...sof(0xc0, 16, 16), 0xff, 0xd9])
    expect(imageSize(hidden, 'jpeg')).toEqual({ width: 30000, height: 30000 })
    expect(imageSize(Uint8Array.from([0xff, 0xd8, 0xff, 0xc0, 0x00, 0x0b, 8, 0x75]), 'jpeg')).toBeNull()
    expect(imageSize(Uint8Array.from([0xff, 0xd8, ...sof(0xc0, 500, 0), 0xff, 0xd9]), 'jpeg')).toBeNull()
    expect(imageSize(Uint8Array.from([0xff, 0xd8, ...sof(0xc0, 500, 0), 0xff, 0xdc, 0, 4, 0x0f, 0xa0]), 'jpeg')).toEqual({ width: 500, height: 4000 })
    expect(imageSize(Uint8Array.from([0xff, 0xd8, 0xff, 0xd9]), 'jpeg')).toBeNull()
  })

  test('SVG: width/height with units, completed from the viewBox, else the viewBox, else 100 × 100', () => {
    const svg = (attrs: string) => svgSize(`<?xml version="1.0"?><svg xmlns="http://www.w3.org/2000/svg" ${attrs}><rect/></svg>`)
    expect(svg('width="200" height="50"')).toEqual({ width: 200, height: 50 })
    expect(svg('width="1in" height="2.54cm"')).toEqual({ width: 96, height: 96 })
    expect(svg('width="300" viewBox="0 0 40 20"')).toEqual({ width: 300, height: 150 })
    expect(svg('width="100%" height="100%" viewBox="0,0,64,32"')).toEqual({ width: 64, height: 32 })
    expect(svg("width='90000' height='90000'")).toEqual({ width: 90000, height: 90000 })
    expect(svg('')).toEqual({ width: 100, height: 100 })
    expect(svg('width="1e999" height="5"')).toBeNull()
    expect(svgSize('<html/>')).toBeNull()
  })

  test('the pixel budget refuses what a header declares over it, and unreadable headers', () => {
    expect(checkPixelBudget(pngBomb(4096, 4096), 'png', 'url')).toEqual({ width: 4096, height: 4096 })
    for (const [bytes, kind] of [
      [pngBomb(30000, 30000), 'png'],
      [jpegBomb(30000, 30000), 'jpeg'],
      [pngBomb(4097, 4096), 'png'],
      [Buffer.from('<svg width="5000" height="5000"/>'), 'svg'],
    ] as const) {
      const e = (() => {
        try {
          checkPixelBudget(bytes, kind, 'url')
        } catch (x) {
          return x
        }
      })() as AppError
      expect(e).toBeInstanceOf(AppError)
      expect({ code: e.code, says: e.message.includes(`at most ${MAX_IMAGE_PIXELS} pixels`) }).toEqual({ code: 'parameter_error', says: true })
    }
    expect(() => checkPixelBudget(Uint8Array.of(0x89, 0x50, 0x4e, 0x47), 'png', 'url')).toThrow('could not be read')
  })
})

describe('SVG sanitiser', () => {
  const clean = (body: string, head = '') =>
    sanitiseSvg(
      `${head}<svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink" xmlns:l="http://www.w3.org/1999/xlink" width="10" height="10">${body}</svg>`,
      'qrOptions.logo.value',
    )

  test('removes every reference that is not #id (any prefix, entity-encoded too), url(…) to elsewhere and @import', () => {
    const out = clean(
      `<image href="/dev/zero" width="5" height="5"/><image xlink:href='file:///etc/passwd'/><image l:href="/etc/hosts"/><image href="&#47;dev&#47;zero"/>` +
        `<feImage href="http://127.0.0.1:1/x.png"/><use href="other.svg#a"/><use xlink:href="#a"/><rect fill="url(#g)" filter="url( 'http://127.0.0.1:1/f.svg#f' )"/>` +
        `<style>@import url("http://127.0.0.1:1/a.css"); rect { fill: url(http://127.0.0.1:1/p.svg#p) }</style><g xml:base="file:///"/>` +
        `<image href="data:image/svg+xml;base64,PHN2Zy8+"/>`,
    )
    for (const gone of ['/dev/zero', 'passwd', '/etc/hosts', '&#47;', '127.0.0.1', 'other.svg', '@import', 'xml:base', 'image/svg+xml'])
      expect({ gone, found: out.includes(gone) }).toEqual({ gone, found: false })
    expect(out).toContain('xlink:href="#a"')
    expect(out).toContain('fill="url(#g)"')
  })

  test('keeps embedded PNG/JPEG within the pixel budget, refuses embedded bombs, entities, and SVGs over the caps', async () => {
    const small = Buffer.from(await pngOf(LOGO_SVG)).toString('base64')
    expect(clean(`<image href="data:image/png;base64,${small}"/>`)).toContain(small)
    expect(() => clean(`<image href="data:image/jpeg;base64,${Buffer.from(jpegBomb(30000, 30000)).toString('base64')}"/>`)).toThrow('30000×30000')
    expect(() => clean('<text>&x;</text>', '<!DOCTYPE svg [<!ENTITY x SYSTEM "file:///etc/passwd">]>')).toThrow('entity')
    expect(() => clean('<rect/>'.repeat(MAX_SVG_ELEMENTS + 1))).toThrow('elements')
    expect(() => clean(`<desc>${'x'.repeat(600 * 1024)}</desc>`)).toThrow('KB')
    expect(clean('<rect/>', '<!DOCTYPE svg PUBLIC "-//W3C//DTD SVG 1.1//EN" "http://www.w3.org/Graphics/SVG/1.1/DTD/svg11.dtd">')).not.toContain('DOCTYPE')
  })
})

describe('logos and frames', () => {
  let fixtures: ReturnType<typeof serveFixtures>
  let dir: string
  let spyRequests = 0
  let spy: ReturnType<typeof Bun.serve>
  const red = '<svg xmlns="http://www.w3.org/2000/svg" width="300" height="300"><rect width="300" height="300" fill="#ff0000"/></svg>'

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'qr-svg-'))
    writeFileSync(join(dir, 'red.png'), await pngOf(red))
    Bun.spawnSync(['mkfifo', join(dir, 'pipe.png')])
    spy = Bun.serve({
      port: 0,
      hostname: '127.0.0.1',
      fetch: async () => {
        spyRequests++
        return new Response((await pngOf(red)) as BodyInit, { headers: { 'content-type': 'image/png' } })
      },
    })
    const logo = (inner: string) => ({
      body: `<svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink" width="300" height="300"><rect width="300" height="300" fill="#ffffff"/>${inner}</svg>`,
      type: 'image/svg+xml',
    })
    const remote = `http://127.0.0.1:${spy.port}`
    fixtures = serveFixtures({
      '/local-file.svg': logo(
        `<image href="${join(dir, 'red.png')}" width="300" height="300"/><image xlink:href="file://${join(dir, 'red.png')}" width="300" height="300"/>`,
      ),
      '/fifo.svg': logo(`<image href="${join(dir, 'pipe.png')}" width="300" height="300"/>`),
      '/dev-zero.svg': logo('<image href="/dev/zero" width="300" height="300"/><image href="file:///etc/passwd" width="300" height="300"/>'),
      '/remote.svg': logo(
        `<style>@import url(${remote}/a.css);</style><image href="${remote}/i.png" width="300" height="300"/><rect width="300" height="300" fill="url(${remote}/p.svg#p)"/><feImage href="${remote}/f.png"/>`,
      ),
      '/bomb.jpg': { body: jpegBomb(30000, 30000), type: 'image/jpeg' },
      '/bomb.png': { body: pngBomb(30000, 30000), type: 'image/png' },
      '/tall.png': { body: await pngOf('<svg xmlns="http://www.w3.org/2000/svg" width="40" height="4000"/>'), type: 'image/png' },
      '/logo.png': { body: await pngOf(LOGO_SVG), type: 'image/png' },
    })
  })
  afterAll(() => {
    fixtures.stop()
    spy.stop(true)
    rmSync(dir, { recursive: true, force: true })
  })

  const r = createQrRenderer({ allowPrivateNetworks: true })
  /** Pixels of the rendered code that are clearly red (the referenced image's colour). */
  const redPixels = (png: Uint8Array) => {
    const { data } = PNG.sync.read(Buffer.from(png))
    let n = 0
    for (let i = 0; i < data.length; i += 4) if (data[i]! > 200 && data[i + 1]! < 80 && data[i + 2]! < 80) n++
    return n
  }

  test("an SVG logo naming a local file renders without that file's pixels", async () => {
    const out = await r.renderQr({ text: TEXT, qrOptions: { logo: { value: fixtures.url('/local-file.svg'), size: 10 } }, format: 'png', width: 300 })
    expect(out.repairs).toEqual([])
    expect(redPixels(out.body)).toBe(0)
    expect(await decodeImageFile(out.body)).toBe(TEXT)
  })

  test('an SVG logo naming a local file never opens it', async () => {
    // A writer into a named pipe finishes only once something opens the pipe to read it.
    const writer = Bun.spawn(['sh', '-c', `cat '${join(dir, 'red.png')}' > '${join(dir, 'pipe.png')}'`])
    try {
      const out = await r.renderQr({ text: TEXT, qrOptions: { logo: { value: fixtures.url('/fifo.svg'), size: 10 } }, format: 'png', width: 300 })
      expect(out.repairs).toEqual([])
      expect(redPixels(out.body)).toBe(0)
      expect(writer.exitCode).toBeNull()
    } finally {
      writer.kill()
    }
  })

  test('an SVG logo naming /dev/zero or /etc/passwd renders, without them', async () => {
    const out = await r.renderQr({ text: TEXT, qrOptions: { logo: { value: fixtures.url('/dev-zero.svg'), size: 10 } }, format: 'png', width: 300 })
    expect(out.repairs).toEqual([])
    expect(await decodeImageFile(out.body)).toBe(TEXT)
  })

  test('an SVG logo with references to a server makes no request to it', async () => {
    const out = await r.renderQr({ text: TEXT, qrOptions: { logo: { value: fixtures.url('/remote.svg'), size: 10 } }, format: 'png', width: 300 })
    expect(out.repairs).toEqual([])
    expect(redPixels(out.body)).toBe(0)
    expect(spyRequests).toBe(0)
  })

  test('logos and frames declaring 30000×30000 px are refused at save and left out at render', async () => {
    for (const qrOptions of [
      { logo: { value: fixtures.url('/bomb.jpg') } },
      { logo: { value: fixtures.url('/bomb.png') } },
      { frame: { value: fixtures.url('/bomb.jpg') } },
    ]) {
      const e = await r.assertScannable(qrOptions).catch((x: AppError) => x)
      expect({ qrOptions, code: (e as AppError).code, says: (e as AppError).message.includes('declares 30000×30000 px') }).toEqual({
        qrOptions,
        code: 'parameter_error',
        says: true,
      })
      const out = await r.renderQr({ text: TEXT, qrOptions, format: 'png', width: 300 })
      expect(out.repairs[0]).toMatch(/^(logo|frame)-unavailable$/)
      expect(await decodeImageFile(out.body)).toBe(TEXT)
    }
  })

  test('a frame far taller than wide is refused (it is drawn at the output width)', async () => {
    await expect(r.assertScannable({ frame: { value: fixtures.url('/tall.png') } })).rejects.toThrow("'qrOptions.frame.value' the image is 40×4000 px")
  })

  test('templates: a design naming a bomb is refused with 422; upload + link save + render of a bomb file', async () => {
    const h = createHarness({ scan: { allowPrivateNetworks: true } })
    const tpl = await h.call('POST', '/qr/templates', { json: { name: 'bomb', qrOptions: { logo: { value: fixtures.url('/bomb.jpg') } } } })
    expect(tpl.status).toBe(422)
    expect(tpl.body.code).toBe('parameter_error')
    expect(tpl.body.message).toContain('30000×30000')
    const ok = await h.call('POST', '/qr/templates', { json: { name: 'fine', qrOptions: { logo: { value: fixtures.url('/logo.png') } } } })
    expect(ok.status).toBe(200)
    const patched = await h.call('PATCH', `/qr/templates/${ok.body.id}`, { json: { qrOptions: { logo: { value: fixtures.url('/bomb.png') } } } })
    expect(patched.status).toBe(422)
    expect(patched.body.message).toContain('30000×30000')
  })
})

describe('links naming an uploaded bomb', () => {
  test('a 30000×30000 upload is refused at upload; one within the upload limit but over the design budget is 422 in designs, the link unchanged', async () => {
    const h = createHarness()
    const upload = async (bytes: Uint8Array) => {
      const form = new FormData()
      form.append('file', new Blob([bytes as BlobPart]), 'logo')
      const r = await h.call('POST', '/files', { key: h.keys.member, body: form })
      expect(r.status).toBe(201)
      return r.body.id as string
    }
    const refused = new FormData()
    refused.append('file', new Blob([jpegBomb(30000, 30000) as BlobPart]), 'logo')
    expect((await h.call('POST', '/files', { key: h.keys.member, body: refused })).status).toBe(422)
    // 10000×10000 (100 MP): a photo the upload limit (150 MP) takes, over the 16.8 MP design budget.
    const jpeg = await upload(jpegBomb(10000, 10000))
    const png = await upload(pngBomb(10000, 10000))
    const fine = await upload(await pngOf(LOGO_SVG))
    for (const qrOptions of [{ logo: { value: jpeg } }, { logo: { value: png } }, { frame: { value: jpeg } }]) {
      const r = await h.call('POST', '/links/link', { key: h.keys.member, json: { data: { url: 'https://example.org/' }, qrOptions } })
      expect({ qrOptions, status: r.status, code: r.body.code, says: String(r.body.message).includes('declares 10000×10000 px') }).toEqual({
        qrOptions,
        status: 422,
        code: 'parameter_error',
        says: true,
      })
    }
    const link = await h.call('POST', '/links/link', {
      key: h.keys.member,
      json: { data: { url: 'https://example.org/' }, qrOptions: { logo: { value: fine } } },
    })
    expect(link.status).toBe(200)
    const patched = await h.call('PATCH', `/links/${link.body.id}`, { key: h.keys.member, json: { qrOptions: { logo: { value: png } } } })
    expect(patched.status).toBe(422)
    expect(patched.body.message).toContain("'qrOptions.logo.value'")
    expect((await h.call('GET', `/links/${link.body.id}`, { key: h.keys.member })).body.qrOptions).toEqual({ logo: { value: fine } })
    const img = await h.call('GET', `/qr/${link.body.id}?format=base64`, { key: h.keys.member })
    expect(img.status).toBe(200)
    expect(img.headers.get('x-qr-repaired')).toBeNull()
  })
})

describe('scan', () => {
  let fixtures: ReturnType<typeof serveFixtures>
  beforeAll(() => {
    fixtures = serveFixtures({
      '/bomb.jpg': { body: jpegBomb(30000, 30000), type: 'image/jpeg' },
      '/bomb.png': { body: pngBomb(30000, 30000), type: 'image/png' },
      // Real zero rows, 25 MP: decodable, and over the budget.
      '/zeros.png': { body: pngBomb(5000, 5000, 5000), type: 'image/png' },
    })
  })
  afterAll(() => fixtures.stop())

  test('POST /qr/scan refuses images declaring more pixels than the budget with 422 parameter_error', async () => {
    const h = createHarness({ scan: { allowPrivateNetworks: true } })
    for (const path of ['/bomb.jpg', '/bomb.png', '/zeros.png']) {
      const res = await h.call('POST', '/qr/scan', { json: { url: fixtures.url(path) } })
      expect({ path, status: res.status, code: res.body.code, says: String(res.body.message).includes(`at most ${MAX_IMAGE_PIXELS} pixels`) }).toEqual({
        path,
        status: 422,
        code: 'parameter_error',
        says: true,
      })
    }
  })

  test('the decoder itself refuses them too (nothing reaches zxing unchecked)', async () => {
    await expect(decodeImageFile(pngBomb(30000, 30000))).rejects.toThrow('30000×30000')
    await expect(decodeImageFile(Buffer.from('GIF89a'))).rejects.toThrow('not a PNG or JPEG')
  })
})

describe('job worker', () => {
  const job = { bytes: new TextEncoder().encode(LOGO_SVG), mime: 'image/svg+xml', width: 50, height: 50, fit: 'meet' as const }
  type Job = typeof job

  test('a job over its deadline fails alone with a clean error (its worker is terminated)', async () => {
    // 1 ms: the first job, which also loads resvg-wasm, cannot finish in time.
    const worker = createJobWorker<Job, { png: Uint8Array }>({ entry: 'qr/qr.image.worker.ts', doing: 'drawing the image', timeoutMs: 1, recycleAtBytes: 1e12 })
    await expect(worker.run(job)).rejects.toThrow('drawing the image took longer than 0.001 s')
    worker.stop()
  })

  test('a job the worker fails answers an error; a worker over its heap limit is replaced and the next job still runs', async () => {
    const worker = createJobWorker<unknown, { png: Uint8Array }>({
      entry: 'qr/qr.image.worker.ts',
      doing: 'drawing the image',
      timeoutMs: 30_000,
      recycleAtBytes: 0,
    })
    await expect(worker.run({ ...job, bytes: null })).rejects.toBeInstanceOf(Error)
    for (const width of [50, 60]) expect(PNG.sync.read(Buffer.from((await worker.run({ ...job, width, height: width })).png)).width).toBe(width)
    worker.stop()
  })
})
