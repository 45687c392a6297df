/**
 * QR designer in a real browser: design a link's code (colours, body and eye styles, an
 * uploaded logo, a frame text) with the server's live preview, save it to the link and as a
 * template, download PNG (read back by zbarimg) and SVG; a pale design is refused and a
 * light-on-dark one repaired, each said next to the preview.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { mkdtempSync, readFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Page } from 'playwright-core'
import { PNG } from 'pngjs'
import { type DashboardBrowser, type DashboardPage, dashboardBrowser } from '../helpers/dashboard'
import { startServer, type TestServer } from '../helpers/server'

let server: TestServer
let browser: DashboardBrowser
let desktop: DashboardPage
let phone: DashboardPage
let link: { id: string; shortLink: string; key: string }
const dir = mkdtempSync(join(tmpdir(), 'qr-designer-'))

beforeAll(async () => {
  if (!Bun.which('zbarimg')) throw new Error('zbarimg is missing: apt-get install -y zbar-tools')
  server = await startServer()
  const created = await server.api('/links/link', { method: 'POST', json: { data: { url: 'https://bistro-test.example/menu' } } })
  link = (await created.json()) as typeof link
  browser = await dashboardBrowser()
  ;[desktop, phone] = await Promise.all([browser.open(server), browser.open(server, { width: 'phone' })])
})

afterAll(async () => {
  await browser?.close()
  await server?.stop()
})

/** A 64×64 logo: a dark orange square with a white centre. */
function logoPng(): Buffer {
  const png = new PNG({ width: 64, height: 64 })
  for (let y = 0; y < 64; y++)
    for (let x = 0; x < 64; x++) {
      const i = (y * 64 + x) * 4
      const centre = x > 20 && x < 44 && y > 20 && y < 44
      png.data.set(centre ? [255, 255, 255, 255] : [200, 80, 20, 255], i)
    }
  return PNG.sync.write(png)
}

const renders = (page: Page) => page.waitForResponse((r) => r.url().endsWith('/qr/render') && r.request().method() === 'POST')
/** Waits until the preview shows the server's verdict on the latest design. */
const settled = (page: Page) => page.getByText('Checked: this code scans.').waitFor()

async function zbar(file: string): Promise<string> {
  const p = Bun.spawn(['zbarimg', '-q', '--raw', file], { stdout: 'pipe', stderr: 'ignore' })
  return (await new Response(p.stdout).text()).trim()
}

test("design a link's code, save it to the link and as a template, download PNG and SVG", async () => {
  const { page } = desktop
  const first = renders(page)
  await desktop.goto(`/links/${link.id}/qr`)
  expect((await first).status()).toBe(200)
  await page.getByRole('img', { name: 'QR code preview' }).waitFor()
  await settled(page)

  // Each change re-renders on the server.
  let next = renders(page)
  await page.getByLabel('Foreground colour').fill('#1d3557')
  expect((await next).status()).toBe(200)
  await page.getByLabel('Background colour').fill('#fffbea')
  await page.getByLabel('Body style').selectOption('dots')
  await page.getByLabel('Eye frame style').selectOption('rounded')
  await page.getByLabel('Eye centre style').selectOption('circle')
  const uploaded = page.waitForResponse((r) => r.url().endsWith('/files') && r.request().method() === 'POST')
  await page.getByLabel('Upload a logo').setInputFiles({ name: 'bistro-logo.png', mimeType: 'image/png', buffer: logoPng() })
  const file = (await (await uploaded).json()) as { id: string }
  await page.getByLabel('Put the code in a frame with text').check()
  next = renders(page)
  await page.getByLabel('Frame text 1', { exact: true }).fill('Scan for the menu')
  const lastRender = await next
  expect(lastRender.status()).toBe(200)
  await settled(page)
  expect(await page.getByLabel('Logo image').inputValue()).toBe(file.id)

  // Save to the link: the API holds the design.
  const saved = page.waitForResponse((r) => r.url().endsWith(`/links/${link.id}`) && r.request().method() === 'PATCH')
  await page.getByRole('button', { name: 'Save to link' }).click()
  expect((await saved).status()).toBe(200)
  await page.getByRole('button', { name: 'Saved' }).waitFor()
  const stored = (await (await server.api(`/links/${link.id}`)).json()) as { qrOptions: any }
  expect(stored.qrOptions).toMatchObject({
    patterns: {
      body: { style_id: 'dots', value: '#1d3557' },
      eye: { style_id: 'rounded', ball_style_id: 'circle' },
      background: { value: '#fffbea' },
    },
    logo: { value: file.id },
    frame: { add_texts: [{ content: 'Scan for the menu' }] },
  })

  // Save as a template: the API lists it with the same design.
  await page.getByRole('button', { name: 'Save as template' }).click()
  const dialog = page.getByRole('dialog', { name: 'Save as template' })
  await dialog.getByLabel('Template name').fill('Bistro menu')
  const created = page.waitForResponse((r) => r.url().endsWith('/qr/templates') && r.request().method() === 'POST')
  await dialog.getByRole('button', { name: 'Save template' }).click()
  expect((await created).status()).toBe(200)
  await dialog.waitFor({ state: 'detached' })
  const templates = (await (await server.api('/qr/templates')).json()) as { name: string; qrOptions: any }[]
  expect(templates.map((t) => t.name)).toEqual(['Bistro menu'])
  expect(templates[0]!.qrOptions).toEqual(stored.qrOptions)

  // Download a PNG 600 px wide: it decodes to the link's short link with the scan marker the API documents (?qr=1).
  await page.getByLabel('Download width (px)').fill('600')
  const pngDownload = page.waitForEvent('download')
  await page.getByRole('button', { name: 'Download PNG' }).click()
  const png = await pngDownload
  const pngPath = join(dir, png.suggestedFilename())
  await png.saveAs(pngPath)
  expect(png.suggestedFilename()).toBe(`qr-${link.key}-600.png`)
  expect(PNG.sync.read(readFileSync(pngPath)).width).toBe(600)
  expect(await zbar(pngPath)).toBe(`${link.shortLink}?qr=1`)

  const svgDownload = page.waitForEvent('download')
  await page.getByRole('button', { name: 'Download SVG' }).click()
  const svg = await svgDownload
  const svgPath = join(dir, svg.suggestedFilename())
  await svg.saveAs(svgPath)
  expect(readFileSync(svgPath, 'utf8')).toMatch(/^(<svg|<\?xml)/)

  await desktop.screenshot('qr-designer')
  expect(await desktop.seriousA11yViolations()).toEqual([])
})

test('the designer at phone width shows the preview first', async () => {
  const { page } = phone
  await phone.goto(`/links/${link.id}/qr`)
  await settled(page)
  const preview = await page.getByRole('img', { name: 'QR code preview' }).boundingBox()
  const firstControl = await page.getByLabel('Body style').boundingBox()
  expect(preview!.y).toBeLessThan(firstControl!.y)
  expect(await page.getByLabel('Body style').inputValue()).toBe('dots')
  await phone.screenshot('qr-designer')
  expect(await phone.seriousA11yViolations()).toEqual([])
})

test('a pale design is refused and a light-on-dark one repaired, each said next to the preview', async () => {
  const p = await browser.open(server)
  const { page } = p
  await p.goto('/qr')
  await settled(page)

  // Pale dots on white: the server refuses (422) and the reason is shown.
  let next = renders(page)
  await page.getByLabel('Foreground colour').fill('#f8fafc')
  expect((await next).status()).toBe(422)
  const refusal = page.getByRole('alert').filter({ hasText: 'This design would not scan' })
  await refusal.waitFor()
  expect(await refusal.textContent()).toContain('contrast')
  expect(await page.getByRole('button', { name: 'Save as template' }).isDisabled()).toBe(true)

  // The same dots on a dark background: served turned over, and the page says so.
  next = renders(page)
  await page.getByLabel('Background colour').fill('#0f172a')
  const repaired = await next
  expect(repaired.status()).toBe(200)
  expect(repaired.headers()['x-qr-repaired']).toBe('dark-on-light')
  await page.getByText('the colours were swapped').waitFor()
  expect(await refusal.count()).toBe(0)

  // Chromium reports the refused render as a failed load; nothing else went wrong.
  expect(p.errors.filter((e) => !/status of 422/.test(e))).toEqual([])
  expect(p.externalRequests).toEqual([])
  await p.close()
})

test('a read-only user gets no design controls', async () => {
  const readerKey = await server.keyFor('rita', 'readonly')
  const reader = await browser.open(server, { signIn: { apiKey: readerKey } })
  await reader.goto('/qr')
  await reader.page.getByText('Your account is read-only').waitFor()
  expect(await reader.page.getByRole('button', { name: 'Save to link' }).count()).toBe(0)
  expect(await reader.page.getByLabel('Body style').count()).toBe(0)
  expect(reader.errors).toEqual([])
  await reader.close()
})

test('no console errors and no requests leaving the origin', () => {
  for (const p of [desktop, phone]) {
    expect(p.errors).toEqual([])
    expect(p.externalRequests).toEqual([])
  }
})
