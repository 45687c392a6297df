/**
 * Link health in the dashboard, in Chromium against the compiled binary with scheduled checks
 * every second and a destination server on loopback: the broken badge in the list, the
 * "Health" filter (kept in the address bar), the editor's panel with the last check of each
 * URL and "Check now", and the fallback URL field, each result checked through the API or a
 * visit.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { type DashboardBrowser, type DashboardPage, dashboardBrowser } from '../helpers/dashboard'
import { type Destination, startDestination } from '../helpers/destination'
import { until } from '../helpers/poll'
import { startServer, type TestServer } from '../helpers/server'

const BROWSER_UA = 'Mozilla/5.0 (X11; Linux x86_64; rv:125.0) Gecko/20100101 Firefox/125.0'

let server: TestServer
let d: Destination
let browser: DashboardBrowser
let desktop: DashboardPage
let memberKey: string
const made: Record<string, { id: string; shortLink: string }> = {}

const api = (path: string, init: Parameters<TestServer['api']>[1] = {}) => server.api(path, { key: memberKey, ...init })
const healthOf = async (id: string) => ((await (await api(`/links/${id}`)).json()) as { health: { status: string } }).health.status

beforeAll(async () => {
  d = startDestination()
  d.set('/closed', 'down')
  // A check of a loopback destination may take seconds on a loaded machine: a 1 s deadline failed the recovery check in CI.
  server = await startServer({ toml: '[health]\nevery = "1s"\ntimeout = "10s"\nallowPrivateNetworks = true\n' })
  memberKey = await server.keyFor('shopkeeper', 'member')
  for (const [key, path] of [
    ['open-shop', '/open'],
    ['closed-shop', '/closed'],
  ] as const) {
    const r = await api('/links/link', { method: 'POST', json: { data: { url: `${d.origin}${path}` }, linkOptions: { key } } })
    expect(r.status).toBe(200)
    made[key] = (await r.json()) as { id: string; shortLink: string }
  }
  expect((await api('/links/text', { method: 'POST', json: { data: { text: 'Opening hours' }, linkOptions: { key: 'hours' } } })).status).toBe(200)
  await until(
    'the open shop checked',
    () => healthOf(made['open-shop']!.id),
    (s) => s === 'ok',
  )
  await until(
    'the closed shop broken',
    () => healthOf(made['closed-shop']!.id),
    (s) => s === 'broken',
  )
  browser = await dashboardBrowser()
  desktop = await browser.open(server, { signIn: { apiKey: memberKey } })
}, 90_000)

afterAll(async () => {
  await browser?.close()
  await server?.stop()
  d?.stop()
}, 60_000)

const rowOf = (p: DashboardPage, key: string) => p.page.locator('tbody tr', { has: p.page.locator('.links-short a.mono', { hasText: `/${key}` }) })

test('the list marks the broken link; the Health filter shows only broken links and stays in the address bar', async () => {
  const { page } = desktop
  await desktop.goto('/links')
  await rowOf(desktop, 'closed-shop').waitFor()
  expect(await rowOf(desktop, 'closed-shop').locator('.badge', { hasText: 'broken' }).count()).toBe(1)
  expect(await rowOf(desktop, 'closed-shop').locator('.badge', { hasText: 'broken' }).getAttribute('title')).toContain(`${d.origin}/closed: HTTP 503`)
  for (const key of ['open-shop', 'hours']) expect(await rowOf(desktop, key).locator('.badge', { hasText: 'broken' }).count()).toBe(0)

  await page.getByLabel('Health').selectOption({ label: 'Broken' })
  await page.waitForFunction(() => document.querySelectorAll('tbody tr').length === 1 && !document.querySelector('.links-table[aria-busy="true"]'))
  expect(await page.locator('.links-short a.mono').allTextContents()).toEqual([made['closed-shop']!.shortLink.replace('https://', '')])
  expect(new URL(page.url()).searchParams.get('health')).toBe('broken')
  await page.reload({ waitUntil: 'networkidle' })
  expect(await page.getByLabel('Health').inputValue()).toBe('broken')
  expect(await page.locator('tbody tr').count()).toBe(1)
  await desktop.screenshot('links-broken')
  expect(await desktop.seriousA11yViolations()).toEqual([])
  await page.getByLabel('Health').selectOption({ label: 'Working' })
  await page.waitForFunction(() => document.querySelectorAll('tbody tr').length === 1 && document.body.textContent!.includes('/open-shop'))
})

test('the editor shows the last check of each URL; a fallback URL set there takes the visits; "Check now" sees the recovery', async () => {
  const { page } = desktop
  const link = made['closed-shop']!
  await desktop.goto(`/links/${link.id}`)
  const panel = page.getByRole('region', { name: 'Destination health' })
  await panel.waitFor()
  expect(await panel.locator('h2 .badge').textContent()).toBe('Broken')
  const answer = panel.locator('tbody tr', { hasText: `${d.origin}/closed` })
  expect(await answer.locator('td').allTextContents()).toEqual([`${d.origin}/closed`, 'Broken', 'HTTP 503'])

  const section = page.locator('details.le-section', { has: page.locator('summary', { hasText: 'If the destination breaks' }) })
  await section.locator('summary').click()
  await page.getByLabel('Fallback URL').fill('https://shop.example/back-soon')
  const saved = page.waitForResponse((r) => r.url().endsWith(`/api/links/${link.id}`) && r.request().method() === 'PATCH')
  await page.getByRole('button', { name: 'Save changes' }).click()
  expect((await saved).status()).toBe(200)
  expect(((await (await api(`/links/${link.id}`)).json()) as { healthFallbackUrl: string }).healthFallbackUrl).toBe('https://shop.example/back-soon')
  const visit = async () => (await server.fetch(link.shortLink, { headers: { 'user-agent': BROWSER_UA } })).headers.get('location')
  expect(await visit()).toBe('https://shop.example/back-soon')
  await desktop.screenshot('link-health')
  expect(await desktop.seriousA11yViolations()).toEqual([])

  d.set('/closed', 'up')
  const checked = page.waitForResponse((r) => r.url().endsWith(`/api/links/${link.id}/health`) && r.request().method() === 'POST')
  await panel.getByRole('button', { name: 'Check now' }).click()
  expect((await checked).status()).toBe(200)
  await panel.locator('h2 .badge', { hasText: 'Working' }).waitFor()
  expect(await answer.locator('td').allTextContents()).toEqual([`${d.origin}/closed`, 'Working', 'HTTP 200'])
  expect(await healthOf(link.id)).toBe('ok')
  expect(await visit()).toBe(`${d.origin}/closed`)
  expect(desktop.errors).toEqual([])
  expect(desktop.externalRequests).toEqual([])
})

test('a link without a URL destination has no health panel and no fallback field; a readonly user cannot check', async () => {
  const { page } = desktop
  const hours = ((await (await api('/links?search=hours')).json()) as { links: { id: string }[] }).links[0]!
  await desktop.goto(`/links/${hours.id}`)
  await page.getByRole('button', { name: 'Save changes' }).waitFor()
  expect(await page.getByRole('region', { name: 'Destination health' }).count()).toBe(0)
  expect(await page.locator('summary', { hasText: 'If the destination breaks' }).count()).toBe(0)

  // The shopkeeper's own readonly key sees the panel, without the button.
  const reader = await browser.open(server, { signIn: { apiKey: await server.keyFor('shopkeeper', 'readonly') } })
  await reader.goto(`/links/${made['open-shop']!.id}`)
  const panel = reader.page.getByRole('region', { name: 'Destination health' })
  await panel.waitFor()
  expect(await panel.locator('h2 .badge').textContent()).toBe('Working')
  expect(await panel.getByRole('button', { name: 'Check now' }).count()).toBe(0)
  expect(reader.errors).toEqual([])
  await reader.close()
})
