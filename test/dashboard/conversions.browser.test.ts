/**
 * Conversions in the dashboard, in Chromium over the compiled binary: the link editor's "Track
 * conversions" switch (stored, and off for types without an http(s) destination), and the
 * statistics screen's leads, sales, revenue per currency and clicks → leads → sales funnel, every
 * number checked against the API asked with the same query.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { UA } from '../helpers/agents'
import { type DashboardBrowser, type DashboardPage, dashboardBrowser } from '../helpers/dashboard'
import { until } from '../helpers/poll'
import { startServer, type TestServer } from '../helpers/server'

let server: TestServer
let browser: DashboardBrowser
let desktop: DashboardPage
let link: { id: string; shortLink: string }

const api = async (path: string, init: { method?: string; json?: unknown } = {}) => {
  const r = await server.api(path, init)
  if (r.status !== 200) throw new Error(`${path}: ${r.status} ${await r.text()}`)
  return (await r.json()) as any
}
const clickId = async () => {
  const r = await server.fetch(link.shortLink, { headers: { 'user-agent': UA.iphone } })
  return new URL(r.headers.get('location')!).searchParams.get('sl_id')!
}

beforeAll(async () => {
  server = await startServer()
  link = await api('/links/link', { method: 'POST', json: { data: { url: 'https://shop.example/pricing' }, linkOptions: { key: 'pricing' } } })
  browser = await dashboardBrowser()
  desktop = await browser.open(server)
}, 60_000)

afterAll(async () => {
  await browser?.close()
  await server?.stop()
}, 60_000)

test('the link editor turns conversion tracking on; visits then carry sl_id', async () => {
  const { page } = desktop
  await desktop.goto(`/links/${link.id}`)
  await page.getByText('Conversions', { exact: true }).click()
  const box = page.getByLabel('Track conversions')
  expect(await box.isChecked()).toBe(false)
  await box.check()
  await page.getByRole('button', { name: 'Save changes' }).click()
  await page.getByRole('button', { name: 'Save changes' }).waitFor()
  await until('the saved record', async () => (await api(`/links/${link.id}`)).trackConversion === true)
  expect(await clickId()).toMatch(/^[A-Za-z0-9_-]{22}$/)
  // A hosted type has no such switch.
  await desktop.goto('/links/new')
  await page.getByRole('link', { name: /^\S* ?Text / }).click()
  await page.getByRole('heading', { level: 1, name: /^New text link$/ }).waitFor()
  await page.getByText('Options', { exact: true }).click()
  await page.getByText('Campaign tracking (UTM)').waitFor()
  expect(await page.getByLabel('Track conversions').count()).toBe(0)
})

test('statistics: leads, sales and revenue per currency beside the clicks, and the funnel, as the API counts them', async () => {
  const { page } = desktop
  const first = await clickId()
  const second = await clickId()
  await clickId()
  await api('/track/lead', { method: 'POST', json: { clickId: first, eventName: 'Sign up', customerExternalId: 'c1' } })
  await api('/track/lead', { method: 'POST', json: { clickId: second, eventName: 'Sign up', customerExternalId: 'c2' } })
  await api('/track/sale', { method: 'POST', json: { customerExternalId: 'c1', amount: 4900, currency: 'eur' } })
  await api('/track/sale', { method: 'POST', json: { customerExternalId: 'c2', amount: 1500, currency: 'usd' } })
  await server.clicksFlushed()
  const count = await api(`/statistics?conversions=true&linkId=${link.id}&interval=30d`)
  expect(count).toMatchObject({ leads: 2, sales: 2, saleAmount: { eur: 4900, usd: 1500 } })

  await desktop.goto(`/links/${link.id}/stats`)
  const panel = page.getByRole('region', { name: 'Conversions' })
  await panel.waitFor()
  expect(await panel.locator('.stats-conversion-leads .stats-total-value').textContent()).toBe(String(count.leads))
  expect(await panel.locator('.stats-conversion-sales .stats-total-value').textContent()).toBe(String(count.sales))
  const revenue = (await panel.locator('.stats-conversion-revenue .stats-total-value').textContent())!
  expect(revenue).toContain('49.00')
  expect(revenue).toContain('15.00')
  const funnel = panel.getByRole('list', { name: 'Funnel: clicks, leads, sales' }).getByRole('listitem')
  expect(await funnel.count()).toBe(3)
  expect(await funnel.nth(0).textContent()).toContain(`Clicks${count.clicks}`)
  expect(await funnel.nth(1).textContent()).toContain(`${Math.round((count.leads / count.clicks) * 100)}% of clicks`)
  expect(await funnel.nth(2).textContent()).toContain('100% of leads')
  // The device list carries the conversions of its rows.
  await page.getByRole('button', { name: 'Devices', exact: true }).click()
  const mobile = page.getByRole('list', { name: 'Devices' }).getByRole('button').filter({ hasText: 'Mobile' })
  await mobile.waitFor()
  expect(await mobile.textContent()).toContain('2 leads · 2 sales')
  expect(desktop.errors).toEqual([])
})
