/**
 * The GS1 product form and the print-run screen in Chromium against the compiled binary, as a
 * brand's packaging team uses them: a GTIN typed with a wrong check digit and corrected (live
 * feedback), a typed link and a lot, the resolver preview, the product saved and the real
 * resolver answering as the preview said; then a print run of selected links and one of every
 * link a filter matches, each downloaded and opened.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { readFileSync } from 'node:fs'
import { unzipSync } from 'fflate'
import type { Page } from 'playwright-core'
import { type DashboardBrowser, type DashboardPage, dashboardBrowser } from '../helpers/dashboard'
import { startServer, type TestServer } from '../helpers/server'

let server: TestServer
let browser: DashboardBrowser
let dash: DashboardPage
let page: Page

beforeAll(async () => {
  server = await startServer()
  browser = await dashboardBrowser()
  dash = await browser.open(server, { width: 'desktop' })
  page = dash.page
}, 60_000)
afterAll(async () => {
  await browser?.close()
  await server?.stop()
}, 60_000)

test('a GS1 product: live check-digit feedback, typed links, a lot, the resolver preview, saved and resolved as previewed', async () => {
  await dash.goto('/links/new')
  await page.getByRole('link', { name: /GS1 product/ }).click()
  await page.getByRole('heading', { level: 1, name: 'New gs1 product link' }).waitFor()
  const gtin = page.getByLabel('GTIN', { exact: true })
  await gtin.fill('9506000134353')
  await page.getByTestId('gtin-feedback').getByText('wrong check digit (expected 2 as the last digit)').waitFor()
  await gtin.fill('9506000134352')
  await page.getByTestId('gtin-feedback').getByText('Valid GTIN-13, stored as 09506000134352.').waitFor()
  await page.getByLabel('Product page (default link)').fill('https://brand.example/oil')
  await page.getByRole('button', { name: 'Add a link' }).first().click()
  await page.getByLabel('Link type').first().selectOption('gs1:recipeInfo')
  await page.getByLabel('URL', { exact: true }).first().fill('https://brand.example/recipes')
  await page.getByRole('button', { name: 'Add a lot' }).click()
  await page.getByLabel('Lot', { exact: true }).fill('L42')
  await page.getByLabel('Lot page').fill('https://brand.example/recall/L42')
  const preview = page.getByRole('region', { name: 'Resolver preview' })
  const origin = `https://localhost:${server.httpsPort}`
  await preview.getByRole('row', { name: `${origin}/01/09506000134352/10/L42 307 → https://brand.example/recall/L42` }).waitFor()
  await preview.getByRole('row', { name: `${origin}/01/09506000134352?linkType=gs1:recipeInfo 307 → https://brand.example/recipes` }).waitFor()
  expect(await dash.seriousA11yViolations()).toEqual([])
  await dash.screenshot('gs1-product')

  const answer = page.waitForResponse((r) => r.request().method() === 'POST' && r.url().endsWith('/api/links/gs1'))
  await page.getByRole('button', { name: 'Create link' }).click()
  expect((await answer).status()).toBe(200)
  await page.waitForURL(/\/app\/links\/lnk_[^/]+$/)
  const id = decodeURIComponent(new URL(page.url()).pathname.split('/').pop()!)
  const link = (await (await server.api(`/links/${id}`)).json()) as any
  expect(link).toMatchObject({
    linkType: 'gs1',
    key: '09506000134352',
    shortLink: `${origin}/01/09506000134352`,
    data: {
      gtin: '09506000134352',
      url: 'https://brand.example/oil',
      links: [{ linkType: 'gs1:recipeInfo', url: 'https://brand.example/recipes' }],
      lots: [{ lot: 'L42', url: 'https://brand.example/recall/L42' }],
    },
  })
  // The resolver answers what the preview showed.
  const ua = { 'user-agent': 'Mozilla/5.0 (X11; Linux x86_64) Firefox/130.0' }
  for (const [path, location] of [
    ['/01/09506000134352/10/L42', 'https://brand.example/recall/L42'],
    ['/01/09506000134352?linkType=gs1:recipeInfo', 'https://brand.example/recipes'],
  ] as const) {
    const r = await server.fetch(`${origin}${path}`, { redirect: 'manual', headers: ua })
    expect(r.status).toBe(307)
    expect(r.headers.get('location')).toBe(location)
  }
  // Saved: the form reads the product back, and saving again changes nothing.
  expect(await page.getByLabel('GTIN', { exact: true }).inputValue()).toBe('09506000134352')
  const again = page.waitForResponse((r) => r.request().method() === 'PATCH')
  await page.getByRole('button', { name: 'Save changes' }).click()
  expect((await again).status()).toBe(200)
  expect(dash.externalRequests).toEqual([])
}, 90_000)

test('print runs: selected links as a ZIP, every link a filter matches as PDF sheets; progress, then download', async () => {
  for (const n of [1, 2, 3])
    await server.api('/links/link', { method: 'POST', json: { data: { url: `https://example.org/print/${n}` }, linkOptions: { key: `print${n}` } } })
  await dash.goto('/links')
  await page.getByRole('checkbox', { name: /Select localhost:\d+\/print1$/ }).check()
  await page.getByRole('checkbox', { name: /Select localhost:\d+\/print2$/ }).check()
  await page.getByRole('region', { name: 'Bulk actions' }).getByRole('link', { name: 'Print run' }).click()
  await page.getByRole('heading', { level: 1, name: 'Print run' }).waitFor()
  await page.getByText('2 selected links').waitFor()
  await page.getByLabel('Format').selectOption('zip-png')
  await page.getByRole('button', { name: 'Start print run' }).click()
  await page.getByRole('status').getByText('Done: 2 codes.').waitFor({ timeout: 60_000 })
  expect(await dash.seriousA11yViolations()).toEqual([])
  await dash.screenshot('print-run-done')
  const [zipDownload] = await Promise.all([page.waitForEvent('download'), page.getByRole('link', { name: /^Download ZIP/ }).click()])
  const zip = unzipSync(new Uint8Array(readFileSync((await zipDownload.path())!)))
  expect(Object.keys(zip).sort()).toEqual(['localhost_print1.png', 'localhost_print2.png'])

  // Every link the filter (search "print") matches, as sheets.
  await dash.goto('/links?q=print')
  await page.getByRole('link', { name: 'Print run' }).first().click()
  await page.getByText('3 links matching your filters').waitFor()
  await page.getByLabel('Format').selectOption('pdf-sheet')
  await page.getByLabel('Paper').selectOption('Letter')
  await page.getByLabel('Code size (mm)').fill('50')
  await page.getByRole('button', { name: 'Start print run' }).click()
  await page.getByRole('status').getByText('Done: 3 codes.').waitFor({ timeout: 60_000 })
  const [pdfDownload] = await Promise.all([page.waitForEvent('download'), page.getByRole('link', { name: /^Download PDF/ }).click()])
  const pdf = readFileSync((await pdfDownload.path())!)
  expect(pdf.subarray(0, 5).toString()).toBe('%PDF-')
  expect(dash.errors).toEqual([])
  expect(dash.externalRequests).toEqual([])
}, 120_000)
