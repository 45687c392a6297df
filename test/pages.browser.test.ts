/**
 * Every landing-page type rendered in real headless Chromium on a phone-sized screen,
 * served from a local Bun.serve (pages + uploaded files with Range support, through
 * the same code the service uses). Checks what a visitor sees, the watermark, the
 * screenshot deterrents, no console errors (CSP violations included) and no request
 * leaving the local origin. Screenshots: test-artifacts/pages/<name>.png.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { createHash } from 'node:crypto'
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import type { Browser, BrowserContext, Page } from 'playwright-core'
import { prepareZXingModule, readBarcodes } from 'zxing-wasm/reader'
import { contentResponse, type StoredContent } from '../src/files/files.content'
import * as S from '../src/files/files.samples'
import { sniffType } from '../src/files/files.sniff'
import { type FileInfo, type LandingLink, type PageContext, renderLandingPage, type VisitorOs } from '../src/pages'
import { wifiPayload } from '../src/pages/qr-svg'
import { hasChromium, launchBrowser, phoneContext, type WatchedPage, watchedPage } from './helpers/browser'

const ARTIFACTS = resolve(import.meta.dir, '../test-artifacts/pages')
const dir = mkdtempSync(join(tmpdir(), 'shortlink-pages-'))
const files = new Map<string, StoredContent>()
let server: ReturnType<typeof Bun.serve>
let origin = ''
let browser: Browser
let context: BrowserContext

function addFile(id: string, name: string, bytes: Uint8Array) {
  const type = sniffType(bytes)
  if (!type) throw new Error(`sample ${name} is not an allowed type`)
  const sha256 = createHash('sha256').update(bytes).digest('hex')
  const path = join(dir, sha256)
  writeFileSync(path, bytes)
  files.set(id, {
    stream: (range) => (range ? Bun.file(path).slice(range.start, range.end + 1) : Bun.file(path)),
    mimeType: type.mimeType,
    size: bytes.byteLength,
    sha256,
    name,
  })
}

const ctxFor = (os?: VisitorOs): PageContext => ({
  fileUrl: (id) => `/_files/${id}`,
  file: (id): FileInfo | null => {
    const f = files.get(id)
    return f ? { name: f.name, size: f.size, mimeType: f.mimeType } : null
  },
  os,
})

const link = (linkType: string, data: Record<string, any>, extra: Partial<LandingLink> = {}): LandingLink => ({
  linkType,
  data,
  shortLink: 'https://go.example/k3y',
  domain: 'go.example',
  destination: 'https://go.example/k3y',
  ...extra,
})

const WIFI = { ssid: 'Café Guest', password: 'p@ss;word,42', encryption: 'WPA' }
const pages: Record<string, { link: LandingLink; os?: VisitorOs }> = {
  text: {
    link: link(
      'text',
      { title: 'Opening hours', text: 'Mon-Fri 9:00-18:00\nSat 10:00-14:00\n\nBook at https://book.example/table <b>not bold</b>' },
      { option: { isWaterMark: true } },
    ),
  },
  'wi-fi': { link: link('wi-fi', WIFI, { previewData: { title: 'Our Wi-Fi' }, option: { isWaterMark: true, watermarkText: 'Café only' } }) },
  menu: {
    link: link(
      'menu',
      {
        title: 'Trattoria Roma',
        sections: [
          {
            name: 'Starters',
            items: [
              { name: 'Bruschetta', price: '€6.50', description: 'Tomato, basil, garlic & olive oil' },
              { name: 'Olives', price: '€3.00' },
            ],
          },
          {
            name: 'Pizza',
            items: [
              { name: 'Margherita', price: '€9.00', description: 'San Marzano tomato, fior di latte' },
              { name: 'Diavola', price: '€11.50' },
            ],
          },
          { name: 'Drinks', items: [{ name: 'Espresso', price: '€2.00' }] },
        ],
      },
      { option: { isWaterMark: true, watermarkText: 'Trattoria Roma' } },
    ),
  },
  'menu-pdf': { link: link('menu', { fileId: 'fil_menupdf', title: 'Lunch menu' }) },
  document: { link: link('document', { fileId: 'fil_pdf', title: 'Terms of service' }, { option: { isWaterMark: true } }) },
  image: { link: link('image', { fileId: 'fil_png', title: 'Gradient' }, { option: { isWaterMark: true, watermarkText: 'ACME confidential' } }) },
  svg: { link: link('svg', { fileId: 'fil_svg' }, { option: { isWaterMark: true } }) },
  audio: { link: link('audio', { fileId: 'fil_wav', title: 'Welcome message' }) },
  video: { link: link('video', { fileId: 'fil_webm', title: 'Product tour' }, { option: { isWaterMark: true } }) },
  file: { link: link('file', { fileId: 'fil_pdf' }) },
  'app-stores': {
    link: link('app-stores', {
      ios: 'https://apps.apple.com/app/id123',
      android: 'https://play.google.com/store/apps/details?id=x.y',
      fallbackUrl: 'https://app.example',
    }),
    os: 'android',
  },
  protected: { link: link('image', { fileId: 'fil_png', title: 'Protected image' }, { option: { isWaterMark: true, isScreenshotProtected: true } }) },
}

beforeAll(async () => {
  if (!hasChromium()) throw new Error('Chromium is required: apt-get install -y chromium (see .ci/run)')
  mkdirSync(ARTIFACTS, { recursive: true })
  addFile('fil_png', 'gradient.png', S.samplePng(640, 360))
  addFile('fil_pdf', 'Terms of service.pdf', S.samplePdf('Terms of service'))
  addFile('fil_menupdf', 'lunch.pdf', S.samplePdf('Lunch: soup of the day 7.50'))
  addFile('fil_svg', 'logo.svg', S.sampleSvg('Company logo'))
  addFile('fil_wav', 'welcome.wav', S.sampleWav(1))
  server = Bun.serve({
    port: 0,
    hostname: '127.0.0.1',
    fetch(req) {
      const url = new URL(req.url)
      if (url.pathname === '/favicon.ico') return new Response(null, { status: 204 })
      if (url.pathname === '/blank') return new Response('<!doctype html><title>blank</title>', { headers: { 'content-type': 'text/html' } })
      const file = /^\/_files\/([\w-]+)$/.exec(url.pathname)
      if (file) {
        const f = files.get(file[1]!)
        return f ? contentResponse(req, f) : new Response('no such file', { status: 404 })
      }
      const p = /^\/p\/([\w-]+)$/.exec(url.pathname)
      const spec = p && pages[p[1]!]
      if (!spec) return new Response('not found', { status: 404 })
      return new Response(renderLandingPage(spec.link, ctxFor(spec.os)), { headers: { 'content-type': 'text/html; charset=utf-8' } })
    },
  })
  origin = `http://127.0.0.1:${server.port}`
  browser = await launchBrowser()
  context = await phoneContext(browser)
  // Chromium's PDF viewer (an extension frame) now and then sends playwright-core events for objects it never bound,
  // which broke every later page of the run. Frames get a stand-in page for PDFs; the PDF bytes and headers are
  // checked over HTTP by the document test instead.
  await context.route(/\/_files\/fil_(pdf|menupdf)$/, (route) =>
    route.fulfill({ status: 200, contentType: 'text/html', body: '<!doctype html><p style="font:16px sans-serif">PDF (stand-in for the test)</p>' }),
  )
  await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin })
  addFile('fil_webm', 'tour.webm', await recordWebm(context))
})

afterAll(async () => {
  await browser?.close()
  server?.stop(true)
  rmSync(dir, { recursive: true, force: true })
})

/** A real 2-second VP8 WebM, recorded from a canvas by Chromium's MediaRecorder. */
async function recordWebm(ctx: BrowserContext): Promise<Uint8Array> {
  const page = await ctx.newPage()
  await page.goto(`${origin}/blank`)
  const bytes = await page.evaluate(async () => {
    const canvas = document.createElement('canvas')
    canvas.width = 320
    canvas.height = 180
    document.body.append(canvas)
    const g = canvas.getContext('2d')!
    const rec = new MediaRecorder(canvas.captureStream(25), { mimeType: 'video/webm;codecs=vp8' })
    const chunks: Blob[] = []
    rec.ondataavailable = (e) => chunks.push(e.data)
    const stopped = new Promise((r) => (rec.onstop = r))
    rec.start(100)
    const t0 = performance.now()
    await new Promise<void>((done) => {
      const frame = () => {
        const t = (performance.now() - t0) / 2000
        g.fillStyle = `hsl(${Math.round(t * 360)},70%,45%)`
        g.fillRect(0, 0, 320, 180)
        g.fillStyle = '#fff'
        g.font = 'bold 28px sans-serif'
        g.fillText(`Product tour ${Math.round(t * 100)}%`, 20, 100)
        if (t < 1) requestAnimationFrame(frame)
        else done()
      }
      frame()
    })
    rec.stop()
    await stopped
    return Array.from(new Uint8Array(await new Blob(chunks).arrayBuffer()))
  })
  await page.close()
  return Uint8Array.from(bytes)
}

async function open(name: string): Promise<WatchedPage> {
  const w = await watchedPage(context, [origin])
  const res = await w.page.goto(`${origin}/p/${name}`, { waitUntil: 'load' })
  expect(res?.status()).toBe(200)
  return w
}

async function finish(name: string, w: WatchedPage) {
  await w.page.screenshot({ path: join(ARTIFACTS, `${name}.png`), fullPage: true })
  expect(w.errors).toEqual([])
  expect(w.externalRequests).toEqual([])
  await w.page.close()
}

/** The watermark overlay is rendered, shows `text`, and lies over `contentSelector`. */
async function expectWatermark(page: Page, contentSelector: string, text: string) {
  const wm = page.locator('.wm').first()
  await expect(wm.isVisible()).resolves.toBe(true)
  expect(await wm.getAttribute('data-watermark')).toBe(text)
  expect((await wm.locator('span').first().textContent())?.trim()).toBe(text)
  const [box, content] = [await wm.boundingBox(), await page.locator(contentSelector).first().boundingBox()]
  expect(box && content).toBeTruthy()
  expect(box!.x).toBeLessThanOrEqual(content!.x + 1)
  expect(box!.y).toBeLessThanOrEqual(content!.y + 1)
  expect(box!.x + box!.width).toBeGreaterThanOrEqual(content!.x + content!.width - 1)
  expect(box!.y + box!.height).toBeGreaterThanOrEqual(content!.y + content!.height - 1)
  // The overlay sits on top: the element at the content's centre is inside the watermark box's parent.
  const onTop = await page.evaluate((sel) => {
    const el = document.querySelector(sel)!
    const r = el.getBoundingClientRect()
    const wmEl = el.closest('.protected')!.querySelector('.wm')!
    return Number(getComputedStyle(wmEl).zIndex) > 0 && getComputedStyle(wmEl).pointerEvents === 'none' && r.width > 0
  }, contentSelector)
  expect(onTop).toBe(true)
}

describe('landing pages in Chromium (phone viewport)', () => {
  test('text: title, the text with line breaks, a clickable address, escaped markup, copy button', async () => {
    const w = await open('text')
    const { page } = w
    expect(await page.locator('h1').textContent()).toBe('Opening hours')
    const text = page.locator('#text')
    expect(await text.innerText()).toContain('Mon-Fri 9:00-18:00\nSat 10:00-14:00')
    expect(await text.innerText()).toContain('<b>not bold</b>')
    expect(await page.locator('#text b').count()).toBe(0)
    expect(await page.locator('#text a').getAttribute('href')).toBe('https://book.example/table')
    await page.getByRole('button', { name: 'Copy text' }).click()
    await page.waitForFunction(() => document.getElementById('copy-status')!.textContent === 'Copied')
    expect(await page.evaluate(() => navigator.clipboard.readText())).toContain('Book at https://book.example/table')
    expect(await page.title()).toBe('Opening hours')
    await expectWatermark(page, '#text', 'go.example')
    await finish('text', w)
  })

  test('wi-fi: network, password copy, security, and a QR that decodes to the WIFI: string', async () => {
    const w = await open('wi-fi')
    const { page } = w
    expect(await page.locator('h1').innerText()).toContain('Wi-Fi: Café Guest')
    expect(await page.getByLabel('Network name (SSID)').inputValue()).toBe('Café Guest')
    expect(await page.getByLabel('Password').inputValue()).toBe('p@ss;word,42')
    expect(await page.locator('#security').textContent()).toBe('WPA/WPA2/WPA3')
    await page.getByRole('button', { name: 'Copy' }).click()
    await page.waitForFunction(() => document.getElementById('copy-status')!.textContent === 'Copied')
    expect(await page.evaluate(() => navigator.clipboard.readText())).toBe('p@ss;word,42')
    const qr = page.getByRole('img', { name: 'QR code to join the Wi-Fi network Café Guest' })
    const png = await qr.screenshot()
    await prepareZXingModule({
      overrides: { wasmBinary: await Bun.file(Bun.resolveSync('zxing-wasm/reader/zxing_reader.wasm', import.meta.dir)).arrayBuffer() },
      fireImmediately: true,
    })
    const [decoded] = await readBarcodes(new Blob([png as BlobPart], { type: 'image/png' }), { formats: ['QRCode'] })
    expect(decoded?.text).toBe(wifiPayload(WIFI))
    expect(decoded?.text).toBe('WIFI:T:WPA;S:Café Guest;P:p@ss\\;word\\,42;;')
    expect(await page.locator('meta[property="og:title"]').getAttribute('content')).toBe('Our Wi-Fi')
    await expectWatermark(page, '.fields', 'Café only')
    await finish('wi-fi', w)
  })

  test('menu: sections with headings, items, prices and descriptions; section links jump', async () => {
    const w = await open('menu')
    const { page } = w
    expect(await page.locator('h1').textContent()).toBe('Trattoria Roma')
    expect(await page.locator('h2').allTextContents()).toEqual(['Starters', 'Pizza', 'Drinks'])
    const margherita = page.locator('.items li', { hasText: 'Margherita' })
    expect(await margherita.locator('.price').textContent()).toBe('€9.00')
    expect(await margherita.locator('.desc').textContent()).toBe('San Marzano tomato, fior di latte')
    expect(await page.locator('.items li').count()).toBe(5)
    await page.getByRole('link', { name: 'Drinks' }).click()
    expect(page.url()).toEndWith('#section-3')
    await expectWatermark(page, '.items', 'Trattoria Roma')
    await finish('menu', w)
  })

  test('menu as an uploaded PDF: shown in a frame, with a full-screen link', async () => {
    const w = await open('menu-pdf')
    const { page } = w
    expect(await page.locator('h1').textContent()).toBe('Lunch menu')
    const frame = page.locator('iframe[title="Lunch menu"]')
    expect(await frame.getAttribute('src')).toBe('/_files/fil_menupdf')
    expect(await page.getByRole('link', { name: 'Open in full screen' }).getAttribute('href')).toBe('/_files/fil_menupdf')
    await finish('menu-pdf', w)
  })

  test('document: the PDF in a frame (served 200 as application/pdf) under the default watermark', async () => {
    const served = await fetch(`${origin}/_files/fil_pdf`)
    expect(served.status).toBe(200)
    expect(served.headers.get('content-type')).toBe('application/pdf')
    expect(new TextDecoder().decode((await served.arrayBuffer()).slice(0, 5))).toBe('%PDF-')
    const w = await open('document')
    expect(await w.page.locator('iframe.frame').first().getAttribute('src')).toBe('/_files/fil_pdf')
    expect(await w.page.locator('h1').textContent()).toBe('Terms of service')
    await expectWatermark(w.page, 'iframe.frame', 'go.example')
    expect(await w.page.getByRole('link', { name: /Download/ }).getAttribute('download')).toBe('Terms of service.pdf')
    await finish('document', w)
  })

  test('image: decoded at its real size, custom watermark over it', async () => {
    const w = await open('image')
    const { page } = w
    const img = page.getByRole('img', { name: 'Gradient' })
    await img.waitFor()
    expect(await img.evaluate((el: HTMLImageElement) => el.complete && el.naturalWidth)).toBe(640)
    await expectWatermark(page, 'img.media', 'ACME confidential')
    expect(await page.locator('meta[property="og:image"]').getAttribute('content')).toBe('https://go.example/_files/fil_png')
    await finish('image', w)
  })

  test('svg: shown as an image (its scripts cannot run), watermarked', async () => {
    const w = await open('svg')
    const { page } = w
    const img = page.locator('img.media')
    expect(await img.evaluate((el: HTMLImageElement) => el.complete && el.naturalWidth)).toBe(200)
    expect(await page.locator('h1').textContent()).toBe('logo.svg')
    await expectWatermark(page, 'img.media', 'go.example')
    await finish('svg', w)
  })

  test('audio: a player whose media loads (1 s WAV via Range requests)', async () => {
    const w = await open('audio')
    const { page } = w
    const duration = await page.locator('audio').evaluate(
      (a: HTMLAudioElement) =>
        new Promise<number>((res, rej) => {
          if (a.readyState >= 1) return res(a.duration)
          a.addEventListener('loadedmetadata', () => res(a.duration))
          a.addEventListener('error', () => rej(new Error(`media error ${a.error?.code}`)))
        }),
    )
    expect(duration).toBeCloseTo(1, 1)
    expect(await page.locator('h1').textContent()).toBe('Welcome message')
    await finish('audio', w)
  })

  test('video: a WebM that plays inline, watermark over the video', async () => {
    const w = await open('video')
    const { page } = w
    const width = await page.locator('video').evaluate(
      (v: HTMLVideoElement) =>
        new Promise<number>((res, rej) => {
          const done = () => res(v.videoWidth)
          if (v.readyState >= 1) return done()
          v.addEventListener('loadedmetadata', done)
          v.addEventListener('error', () => rej(new Error(`media error ${v.error?.code}`)))
        }),
    )
    expect(width).toBe(320)
    expect(await page.locator('video').getAttribute('playsinline')).not.toBeNull()
    await expectWatermark(page, 'video', 'go.example')
    await finish('video', w)
  })

  test('file: name, type and size, and a download that saves under the file name', async () => {
    const w = await open('file')
    const { page } = w
    expect(await page.locator('.filecard .name').textContent()).toBe('Terms of service.pdf')
    expect(await page.locator('.filecard .muted').textContent()).toMatch(/^PDF document · \d+ bytes$/)
    const [download] = await Promise.all([page.waitForEvent('download'), page.getByRole('link', { name: /Download/ }).click()])
    expect(download.suggestedFilename()).toBe('Terms of service.pdf')
    expect(Bun.file((await download.path())!).size).toBe(files.get('fil_pdf')!.size)
    await finish('file', w)
  })

  test('app-stores: the Android visitor sees Google Play first and highlighted, App Store too, and the website', async () => {
    const w = await open('app-stores')
    const { page } = w
    const stores = page.locator('a.store')
    expect(await stores.evaluateAll((els) => els.map((e) => [e.getAttribute('data-store'), e.classList.contains('secondary')]))).toEqual([
      ['android', false],
      ['ios', true],
    ])
    expect(await page.getByRole('link', { name: /Google Play/ }).getAttribute('href')).toBe('https://play.google.com/store/apps/details?id=x.y')
    expect(await page.getByRole('link', { name: /App Store/ }).getAttribute('href')).toBe('https://apps.apple.com/app/id123')
    expect(await page.getByRole('link', { name: 'Continue on the website' }).getAttribute('href')).toBe('https://app.example/')
    expect(await page.locator('#device-hint').textContent()).toBe('Your device: Android.')
    await finish('app-stores', w)
  })

  test('screenshot protection: no context menu or download link; hidden on blur, when hidden and in print', async () => {
    const w = await open('protected')
    const { page } = w
    expect(await page.locator('a[download]').count()).toBe(0)
    expect(await page.locator('.actions').count()).toBe(0)
    const prevented = await page.evaluate(() => {
      const img = document.querySelector('img')!
      const e = new MouseEvent('contextmenu', { bubbles: true, cancelable: true })
      img.dispatchEvent(e)
      const d = new DragEvent('dragstart', { bubbles: true, cancelable: true })
      img.dispatchEvent(d)
      return [e.defaultPrevented, d.defaultPrevented, getComputedStyle(document.body).userSelect]
    })
    expect(prevented).toEqual([true, true, 'none'])
    const mainVisible = () => page.evaluate(() => getComputedStyle(document.querySelector('main')!).visibility === 'visible')
    expect(await mainVisible()).toBe(true)
    await page.evaluate(() => window.dispatchEvent(new Event('blur')))
    expect(await mainVisible()).toBe(false)
    expect(await page.locator('.shield').isVisible()).toBe(true)
    await page.evaluate(() => window.dispatchEvent(new Event('focus')))
    expect(await mainVisible()).toBe(true)
    await page.keyboard.press('PrintScreen')
    expect(await mainVisible()).toBe(false)
    await page.waitForFunction(() => getComputedStyle(document.querySelector('main')!).visibility === 'visible')
    await page.emulateMedia({ media: 'print' })
    expect(await page.evaluate(() => getComputedStyle(document.querySelector('main')!).display)).toBe('none')
    await page.emulateMedia({ media: 'screen' })
    await expectWatermark(page, 'img.media', 'go.example')
    await finish('protected', w)
  })
})
