/**
 * A/B tests in the dashboard, in Chromium against the compiled binary: the editor's test fields
 * (two variants, shares that must add up to 100 %, the end, the goal), the link they make read
 * back through the API, then visits made to it and the results panel showing each variant's
 * visits as the API counts them, and the verdict once the test is ended early.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test'
import type { Page } from 'playwright-core'
import { type DashboardBrowser, type DashboardPage, dashboardBrowser } from '../helpers/dashboard'
import { until } from '../helpers/poll'
import { startServer, type TestServer } from '../helpers/server'

const BROWSER_UA = 'Mozilla/5.0 (X11; Linux x86_64; rv:125.0) Gecko/20100101 Firefox/125.0'

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

const linkOf = async (id: string): Promise<any> => (await server.api(`/links/${id}`)).json()

test('the editor makes an A/B test: variants, shares adding up to 100 %, the end and the goal', async () => {
  await dash.goto('/links/new?type=link')
  await page.getByLabel('Destination URL').fill('https://shop.example/a')
  await page.locator('details.le-options-area > summary').click()
  await page.getByLabel('Custom key').fill('ab-shop')
  await page.locator('details.le-section summary', { hasText: /^Conversions$/ }).click()
  await page.getByLabel('Split visitors between destinations (A/B test)').check()
  // Switching the test on turns conversion tracking on, and starts from the destination and an even split.
  expect(await page.getByLabel('Track conversions').isChecked()).toBe(true)
  expect(await page.getByLabel('Variant A URL').inputValue()).toBe('https://shop.example/a')
  await page.getByLabel('Variant B URL').fill('https://shop.example/b')
  const shares = page.getByLabel('Share (%)')
  await shares.nth(0).fill('60')
  expect(await page.getByTestId('ab-total').textContent()).toContain('Total: 110 %, the shares must add up to 100 %.')
  expect(await page.getByTestId('ab-total').getAttribute('role')).toBe('alert')
  await shares.nth(1).fill('40')
  expect(await page.getByTestId('ab-total').textContent()).toContain('Total: 100 %')
  const ends = new Date(Date.now() + 2 * 86_400_000)
  ends.setSeconds(0, 0)
  const pad = (n: number) => String(n).padStart(2, '0')
  await page
    .getByLabel('Test ends')
    .fill(`${ends.getFullYear()}-${pad(ends.getMonth() + 1)}-${pad(ends.getDate())}T${pad(ends.getHours())}:${pad(ends.getMinutes())}`)
  await page.getByLabel('Goal').selectOption({ label: 'Sales' })
  const answer = page.waitForResponse((r) => r.request().method() === 'POST' && /\/api\/links\/link$/.test(r.url()))
  await page.getByRole('button', { name: 'Create link' }).click()
  expect((await answer).status()).toBe(200)
  await page.waitForURL(/\/app\/links\/lnk_[^/]+$/)
  const id = decodeURIComponent(new URL(page.url()).pathname.split('/').pop()!)
  const link = await linkOf(id)
  expect(link).toMatchObject({
    trackConversion: true,
    testVariants: [
      { url: 'https://shop.example/a', percentage: 60 },
      { url: 'https://shop.example/b', percentage: 40 },
    ],
    testCompletedAt: ends.toISOString(),
    testGoal: 'sales',
  })
  await page.getByRole('region', { name: 'A/B test results' }).waitFor()
  expect(await dash.seriousA11yViolations()).toEqual([])
})

test('the results panel shows each variant’s visits as counted, then the verdict of a test ended early', async () => {
  const { links } = (await (await server.api('/links?search=ab-shop')).json()) as { links: { id: string; shortLink: string }[] }
  const { id, shortLink } = links[0]!
  for (let i = 0; i < 12; i++) expect((await server.fetch(shortLink, { headers: { 'user-agent': BROWSER_UA } })).status).toBe(302)
  await server.clicksFlushed()
  const counted = ((await (await server.api(`/links/${id}/test`)).json()) as { variants: { clicks: number }[] }).variants.map((v) => v.clicks)
  expect(counted[0]! + counted[1]!).toBe(12)

  await dash.goto(`/links/${id}`)
  const panel = page.getByRole('region', { name: 'A/B test results' })
  await panel.locator('tbody tr').first().waitFor()
  const visitsShown = await panel.locator('tbody tr td:nth-child(3)').allTextContents()
  expect(visitsShown.map(Number)).toEqual(counted)
  expect(await panel.locator('.badge').textContent()).toBe('Running')
  expect(await page.getByTestId('ab-verdict').textContent()).toContain('Goal: sales.')
  await dash.screenshot('ab-test-running')

  expect((await server.api(`/links/${id}`, { method: 'PATCH', json: { linkOptions: { testCompletedAt: new Date().toISOString() } } })).status).toBe(200)
  await until(
    'the verdict',
    async () => ((await (await server.api(`/links/${id}/test`)).json()) as { status: string }).status,
    (s) => s !== 'running',
  )
  await panel.getByRole('button', { name: 'Refresh' }).click()
  await panel.locator('.badge', { hasText: 'Inconclusive' }).waitFor()
  expect(await page.getByTestId('ab-verdict').textContent()).toContain('without a significant difference')
  expect(await dash.seriousA11yViolations()).toEqual([])
  expect(dash.errors).toEqual([])
})
