/**
 * The compiled binary end to end: a GS1 product answered by the resolver over HTTPS (307 + Link,
 * linkset, 400, well-known description, clicks and scans counted), its QR code as PNG, SVG and
 * PDF decoded by Debian's zbarimg and ZXingReader (SVG rasterised by resvg, PDF rendered by
 * poppler's pdftoppm), the PDF holding no raster image (pdfimages -list), and a print run whose
 * ZIP and sheets decode code by code. The 10,000-code run is scripts/bench/print-run.ts.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Resvg } from '@resvg/resvg-js'
import { unzipSync } from 'fflate'
import { startServer, type TestServer } from './helpers/server'

let s: TestServer
const dir = mkdtempSync(join(tmpdir(), 'gs1-print-'))
let product: any
const plain: any[] = []

beforeAll(async () => {
  s = await startServer()
  const r = await s.api('/links/gs1', {
    method: 'POST',
    json: {
      data: {
        gtin: '9506000134352',
        url: 'https://brand.example/oil',
        links: [{ linkType: 'gs1:recipeInfo', url: 'https://brand.example/recipes', lang: 'en' }],
        lots: [{ lot: 'L42', url: 'https://brand.example/recall/L42' }],
      },
      qrOptions: { patterns: { body: { style_id: 'rounded', value: '#14532d' } }, frame: { add_texts: [{ content: 'Scan for recipes' }] } },
    },
  })
  expect(r.status).toBe(200)
  product = await r.json()
  for (let i = 0; i < 5; i++) plain.push(await (await s.api('/links/link', { method: 'POST', json: { data: { url: `https://example.org/run/${i}` } } })).json())
}, 90_000)
afterAll(async () => {
  await s?.stop()
}, 60_000)

async function run(cmd: string[]): Promise<string> {
  const p = Bun.spawn(cmd, { stdout: 'pipe', stderr: 'pipe' })
  const [out] = await Promise.all([new Response(p.stdout).text(), p.exited])
  return out.trim()
}
async function decoders(png: string): Promise<{ zbar: string; zxing: string }> {
  const zbar = await run(['zbarimg', '-q', '--raw', png])
  const zxing = (await run(['ZXingReader', png])).match(/^Text:\s+"(.*)"$/m)?.[1] ?? ''
  return { zbar, zxing }
}
async function file(name: string, bytes: Uint8Array | ArrayBuffer): Promise<string> {
  const path = join(dir, name)
  await Bun.write(path, bytes)
  return path
}
/** Page 1 of a PDF as a PNG (300 dpi), as a print shop's RIP would draw it. */
async function pdfToPng(pdf: string, page = 1): Promise<string> {
  const out = pdf.replace(/\.pdf$/, `-p${page}`)
  await run(['pdftoppm', '-r', '300', '-f', String(page), '-l', String(page), '-png', '-singlefile', pdf, out])
  return `${out}.png`
}
/** Raster images in a PDF (the table pdfimages -list prints, header lines dropped). */
async function rasterImages(pdf: string): Promise<string[]> {
  return (await run(['pdfimages', '-list', pdf])).split('\n').slice(2).filter(Boolean)
}

describe('the GS1 resolver over HTTPS', () => {
  const origin = () => `https://localhost:${s.httpsPort}`
  test('307 to the product, the lot, the link type; Link header; query passed on; 400 for a bad check digit', async () => {
    const go = (path: string, headers: Record<string, string> = {}) =>
      s.fetch(`${origin()}${path}`, { redirect: 'manual', headers: { 'user-agent': 'Mozilla/5.0 (X11; Linux x86_64) Firefox/130.0', ...headers } })
    const base = await go('/01/09506000134352?17=271231')
    expect(base.status).toBe(307)
    expect(base.headers.get('location')).toBe('https://brand.example/oil?17=271231')
    expect(base.headers.get('link')).toContain('/01/09506000134352?linkType=linkset>; rel="linkset"')
    expect((await go('/01/9506000134352/10/L42')).headers.get('location')).toBe('https://brand.example/recall/L42')
    expect((await go('/01/09506000134352?linkType=gs1:recipeInfo')).headers.get('location')).toBe('https://brand.example/recipes')
    expect((await go('/01/09506000134353')).status).toBe(400)
    const linkset = await go('/01/09506000134352', { accept: 'application/linkset+json' })
    expect(linkset.status).toBe(200)
    expect(linkset.headers.get('content-type')).toBe('application/linkset+json')
    expect(((await linkset.json()) as any).linkset.map((c: any) => c.anchor)).toEqual([`${product.shortLink}/10/L42`, product.shortLink])
    expect(((await (await go('/.well-known/gs1resolver')).json()) as any).supportedPrimaryKeys).toEqual(['01'])
    // Visits count as clicks of the product, ?qr=1 as scans.
    await go('/01/09506000134352?qr=1')
    await s.clicksFlushed()
    const stats = (await (await s.api(`/statistics?linkId=${product.id}`)).json()) as any
    expect(stats).toEqual({ clicks: 4, scans: 1 })
    // Statistics name the product by its Digital Link URI, and take it as a url filter.
    const byLink = (await (await s.api('/statistics?groupBy=link')).json()) as any[]
    expect(byLink.find((r) => r.linkId === product.id)).toMatchObject({ shortLink: product.shortLink, clicks: 4, scans: 1 })
    expect(await (await s.api(`/statistics?url=${encodeURIComponent(product.shortLink)}`)).json()).toEqual({ clicks: 4, scans: 1 })
  })
})

describe('vector PDF and the decoders', () => {
  test('the product code as PNG, SVG (rasterised) and PDF (pdftoppm) decodes with zbarimg and ZXingReader; the PDF has no raster image', async () => {
    const text = `${product.shortLink}?qr=1`
    const png = await file('p.png', await (await s.api(`/qr/${product.id}?format=image&width=500`)).arrayBuffer())
    const svg = await (await s.api(`/qr/${product.id}?format=svg&width=500`)).text()
    const svgPng = await file('s.png', new Resvg(svg, { background: '#ffffff' }).render().asPng())
    const pdfRes = await s.api(`/qr/${product.id}?format=pdf&width=300`)
    expect(pdfRes.status).toBe(200)
    expect(pdfRes.headers.get('content-type')).toBe('application/pdf')
    const pdf = await file('p.pdf', await pdfRes.arrayBuffer())
    expect(await rasterImages(pdf)).toEqual([])
    expect(await run(['pdfinfo', pdf])).toMatch(/Pages:\s+1\b/)
    for (const image of [png, svgPng, await pdfToPng(pdf)]) expect(await decoders(image)).toEqual({ zbar: text, zxing: text })
  })
})

describe('print runs', () => {
  test('zip-pdf and pdf-sheet runs of the same links: every code decodes to its link; the sheet has no raster image', async () => {
    const links = [product, ...plain]
    const start = async (json: unknown) => {
      const r = await s.api('/qr/batches', { method: 'POST', json })
      expect(r.status).toBe(202)
      const { id } = (await r.json()) as any
      for (;;) {
        const b = (await (await s.api(`/qr/batches/${id}`)).json()) as any
        if (b.status === 'done' || b.status === 'failed') {
          expect(b).toMatchObject({ status: 'done', done: links.length, failed: 0 })
          break
        }
        await Bun.sleep(100) // polling a background run, as a client does
      }
      return new Uint8Array(await (await s.api(`/qr/batches/${id}/file`)).arrayBuffer())
    }
    const zip = unzipSync(await start({ linkIds: links.map((l) => l.id), format: 'zip-pdf' }))
    for (const l of links) {
      const pdf = await file(`${l.key}.pdf`, zip[`${l.domain}_${l.key}.pdf`]!)
      expect(await rasterImages(pdf)).toEqual([])
      expect((await decoders(await pdfToPng(pdf))).zbar).toBe(`${l.shortLink}?qr=1`)
    }
    const sheet = await file('sheet.pdf', await start({ linkIds: links.map((l) => l.id), format: 'pdf-sheet', sheet: { codeMm: 40, cropMarks: true } }))
    expect(await rasterImages(sheet)).toEqual([])
    const page = await pdfToPng(sheet)
    const found = (await run(['zbarimg', '-q', '--raw', page])).split('\n').sort()
    expect(found).toEqual(links.map((l) => `${l.shortLink}?qr=1`).sort())
  })
})
