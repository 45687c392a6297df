/**
 * Statistics screen in a real browser over real visits (phone and desktop User-Agents,
 * ?qr=1 scans, client IPs through trustProxy and the city database): totals, the chart,
 * a range change, a device bar that filters, the world map, one link's view and CSV
 * export, every number checked against the API called with the same query.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { readFileSync } from 'node:fs'
import type { Page, Request } from 'playwright-core'
import { CITY_DB, UA } from '../helpers/agents'
import { type DashboardBrowser, type DashboardPage, dashboardBrowser } from '../helpers/dashboard'
import { startServer, type TestServer } from '../helpers/server'

let server: TestServer
let browser: DashboardBrowser
let desktop: DashboardPage
let phone: DashboardPage
let a: any, b: any, quiet: any

const stats = async (query: string) => {
  const r = await server.api(`/statistics?${query}`)
  if (r.status !== 200) throw new Error(`statistics ${query}: ${r.status} ${await r.text()}`)
  return (await r.json()) as any
}
const make = async (url: string, key: string) => {
  const r = await server.api('/links/link', { method: 'POST', json: { data: { url }, linkOptions: { key } } })
  if (r.status !== 200) throw new Error(`create: ${r.status} ${await r.text()}`)
  return (await r.json()) as any
}
const visit = (path: string, ua: string, ip: string) =>
  server.fetch(`https://localhost:${server.httpsPort}${path}`, { headers: { 'user-agent': ua, 'x-forwarded-for': ip } }).then((r) => r.status)

/** The next statistics request of `groupBy`, as the page sends it. */
const statsRequest = (page: Page, groupBy: string) =>
  page.waitForRequest((r) => r.url().includes('/api/statistics?') && new URL(r.url()).searchParams.get('groupBy') === groupBy)
const params = (r: Request) => new URL(r.url()).searchParams

const totals = async (page: Page) => ({
  clicks: Number((await page.locator('.stats-total-clicks .stats-total-value').textContent())!.replace(/\D/g, '')),
  scans: Number((await page.locator('.stats-total-scans .stats-total-value').textContent())!.replace(/\D/g, '')),
})
const csvRows = (path: string) =>
  readFileSync(path, 'utf8')
    .trim()
    .split('\r\n')
    .map((line) => line.split(','))

beforeAll(async () => {
  server = await startServer({ toml: `trustProxy = ["127.0.0.1", "::1"]\n[geoip]\ndatabase = "${CITY_DB}"\n` })
  a = await make('https://shop.example/menu', 'stats-a')
  b = await make('https://shop.example/offer', 'stats-b')
  quiet = await make('https://shop.example/quiet', 'stats-quiet')
  const statuses = [
    await visit('/stats-a', UA.iphone, '8.8.8.8'), // US, Mobile
    await visit('/stats-a', UA.iphone, '8.8.8.8'),
    await visit('/stats-a?qr=1', UA.pixel, '8.8.8.8'), // a scan on a phone
    await visit('/stats-a', UA.windows, '5.9.0.1'), // DE, Desktop
    await visit('/stats-b?qr=1', UA.windows, '5.9.0.1'),
    await visit('/stats-b', UA.mac, '5.9.0.1'),
  ]
  expect(statuses).toEqual([302, 302, 302, 302, 302, 302])
  await server.clicksFlushed()
  browser = await dashboardBrowser()
  ;[desktop, phone] = await Promise.all([browser.open(server), browser.open(server, { width: 'phone' })])
})

afterAll(async () => {
  await browser?.close()
  await server?.stop()
})

test('across links: totals, chart, a range change, a device bar that filters, the map, CSV export', async () => {
  const { page } = desktop
  await desktop.goto('/stats')
  await page.locator('.stats-total-clicks .stats-total-value').waitFor()
  expect(await totals(page)).toEqual(await stats('interval=30d'))
  expect(await page.locator('.stats-chart .uplot canvas').count()).toBeGreaterThan(0)
  // The default list is the links, each with its numbers.
  const byLink = (await stats('interval=30d&groupBy=link')) as any[]
  const linkB = page
    .getByRole('list', { name: 'Links' })
    .getByRole('button')
    .filter({ hasText: b.shortLink.replace(/^https:\/\//, '') })
  expect(await linkB.textContent()).toContain(`${byLink.find((r) => r.linkId === b.id).clicks} clicks · 1 scan`)

  // The map: every country drawn, the visited ones coloured and named with their count.
  expect(await page.locator('.stats-map path[data-country]').count()).toBeGreaterThan(150)
  const us = page.locator('.stats-map path[data-country="US"]')
  expect(await us.getAttribute('class')).toMatch(/stats-map-l[1-5]/)
  expect(await page.locator('.stats-map path[data-country="FR"]').getAttribute('class')).toContain('stats-map-l0')
  const byCountry = (await stats('interval=30d&groupBy=country')) as any[]
  expect(await us.locator('title').textContent()).toBe(`United States: ${byCountry.find((r) => r.country === 'US').clicks} clicks, 1 scan`)
  expect(await page.locator('.stats-map path[data-country="US"]').evaluate((el) => getComputedStyle(el).fill)).not.toBe(
    await page.locator('.stats-map path[data-country="FR"]').evaluate((el) => getComputedStyle(el).fill),
  )

  // A shorter range: the page asks for it and keeps it in the URL.
  const ranged = statsRequest(page, 'count')
  await page.getByLabel('Date range').selectOption('7d')
  expect(params(await ranged).get('interval')).toBe('7d')
  expect(new URL(page.url()).searchParams.get('interval')).toBe('7d')
  await page.locator('.stats-body:not([aria-busy])').waitFor()
  expect(await totals(page)).toEqual(await stats('interval=7d'))

  // The device list; clicking its Mobile bar filters everything by it.
  const devices = statsRequest(page, 'device')
  await page.getByRole('button', { name: 'Devices', exact: true }).click()
  await devices
  const filtered = statsRequest(page, 'count')
  await page
    .getByRole('list', { name: 'Devices' })
    .getByRole('button', { name: /^Mobile/ })
    .click()
  const sent = params(await filtered)
  expect(sent.get('device')).toBe('Mobile')
  expect(sent.get('interval')).toBe('7d')
  await page.getByRole('button', { name: 'Remove filter Device: Mobile' }).waitFor()
  await page.locator('.stats-body:not([aria-busy])').waitFor()
  const mobile = await stats('interval=7d&device=Mobile')
  expect(mobile).toEqual({ clicks: 3, scans: 1 })
  expect(await totals(page)).toEqual(mobile)

  // CSV of the time series and of the device list: the API's rows.
  const timezone = await page.getByLabel('Time zone').inputValue()
  const granularity = await page.getByLabel('Chart by').inputValue()
  const [timeFile] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: 'Export time series (CSV)' }).click()])
  const series = (await stats(`interval=7d&device=Mobile&groupBy=time&granularity=${granularity}&timezone=${encodeURIComponent(timezone)}`)) as any[]
  expect(csvRows((await timeFile.path())!)).toEqual([['start', 'clicks', 'scans'], ...series.map((r) => [r.start, String(r.clicks), String(r.scans)])])
  const [topFile] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: 'Export devices (CSV)' }).click()])
  const byDevice = (await stats('interval=7d&device=Mobile&groupBy=device')) as any[]
  expect(csvRows((await topFile.path())!)).toEqual([
    ['device', 'clicks', 'scans', 'leads', 'sales', 'revenue'],
    ...byDevice.map((r) => [r.device, String(r.clicks), String(r.scans), '0', '0', '']),
  ])

  // A time zone and a custom range (days in that zone) travel with every request.
  const zoned = statsRequest(page, 'time')
  await page.getByLabel('Time zone').selectOption('Asia/Tokyo')
  expect(params(await zoned).get('timezone')).toBe('Asia/Tokyo')
  const custom = statsRequest(page, 'count')
  await page.getByLabel('Date range').selectOption('custom')
  const range = params(await custom)
  expect(range.get('interval')).toBeNull()
  expect(range.get('start')).toMatch(/T15:00:00\.000Z$/) // midnight in Tokyo
  expect(range.get('device')).toBe('Mobile')
  await page.getByLabel('From').waitFor()
  await page.locator('.stats-body:not([aria-busy])').waitFor()
  const inRange = `start=${range.get('start')}&end=${range.get('end')}`
  expect(await totals(page)).toEqual(await stats(`${inRange}&device=Mobile`))

  // The filter form: a browser from its list, applied with the device filter.
  await page.locator('.stats-filters summary').click()
  await page.getByLabel('Browser', { exact: true }).selectOption('Safari')
  const formFiltered = statsRequest(page, 'count')
  await page.getByRole('button', { name: 'Apply filters' }).click()
  expect(params(await formFiltered).get('browser')).toBe('Safari')
  await page.getByRole('button', { name: 'Remove filter Browser: Safari' }).waitFor()
  await page.locator('.stats-body:not([aria-busy])').waitFor()
  expect(await totals(page)).toEqual(await stats(`${inRange}&device=Mobile&browser=Safari`))
  expect(await totals(page)).toEqual({ clicks: 2, scans: 0 })

  // Back undoes one choice at a time: the browser filter, the range, the zone, then the device filter.
  for (const [name, value] of [
    ['browser', 'Safari'],
    ['start', range.get('start')],
    ['timezone', 'Asia/Tokyo'],
    ['device', 'Mobile'],
  ]) {
    const before = statsRequest(page, 'count')
    await page.goBack()
    expect(params(await before).get(name!)).not.toBe(value!)
  }
  await page.getByRole('button', { name: 'Remove filter Device: Mobile' }).waitFor({ state: 'detached' })

  await desktop.goto('/stats')
  await page.locator('.stats-chart .uplot canvas').first().waitFor()
  await page.locator('.stats-map path[data-country]').first().waitFor()
  await desktop.screenshot('stats')
  expect(await desktop.seriousA11yViolations()).toEqual([])
})

test("one link's statistics show only that link", async () => {
  const { page } = desktop
  const asked = statsRequest(page, 'count')
  await desktop.goto(`/links/${a.id}/stats`)
  expect(params(await asked).get('linkId')).toBe(a.id)
  await page.locator('.stats-total-clicks .stats-total-value').waitFor()
  expect(await totals(page)).toEqual(await stats(`interval=30d&linkId=${a.id}`))
  expect(await totals(page)).toEqual({ clicks: 4, scans: 1 })
  await page.getByText(a.shortLink).waitFor()
  // No list of links for one link; its countries instead.
  expect(await page.getByRole('button', { name: 'Links', exact: true }).count()).toBe(0)
  const countries = (await stats(`interval=30d&linkId=${a.id}&groupBy=country`)) as any[]
  const list = page.getByRole('list', { name: 'Countries' })
  expect(await list.getByRole('listitem').count()).toBe(countries.length)
  expect(await list.getByRole('button', { name: /^United States/ }).textContent()).toContain(`${countries.find((r) => r.country === 'US').clicks} clicks`)
})

test('phone width, and the empty state of a link nobody visited', async () => {
  // The map's shapes are a chunk of their own, fetched only by this screen.
  const chunks: string[] = []
  phone.page.on('request', (r) => chunks.push(new URL(r.url()).pathname))
  await phone.goto('/links')
  expect(chunks.filter((c) => c.includes('world-map-data'))).toEqual([])
  await phone.goto('/stats')
  await phone.page.locator('.stats-chart .uplot canvas').first().waitFor()
  await phone.page.locator('.stats-map path[data-country]').first().waitFor()
  expect(chunks.filter((c) => /^\/app\/world-map-data-\w+\.js$/.test(c))).toHaveLength(1)
  await phone.screenshot('stats')
  expect(await phone.seriousA11yViolations()).toEqual([])

  for (const p of [desktop, phone]) {
    await p.goto(`/links/${quiet.id}/stats`)
    await p.page.getByText('No clicks in this range').waitFor()
    expect(await stats(`interval=30d&linkId=${quiet.id}`)).toEqual({ clicks: 0, scans: 0 })
    await p.screenshot('stats-empty')
    expect(await p.seriousA11yViolations()).toEqual([])
  }

  for (const p of [desktop, phone]) {
    expect(p.errors).toEqual([])
    expect(p.externalRequests).toEqual([])
  }
})
