/**
 * Links screen in a real browser, signed in as a member with 27 links on two default domains:
 * search (kept in the address bar), a tag filter, sort by clicks, page 2, QR thumbnails, bulk
 * archive and delete, CSV export of the filtered list; each result checked through the API.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { readFileSync } from 'node:fs'
import { parseCsv } from '../../web/app/csv'
import { type DashboardBrowser, type DashboardPage, dashboardBrowser } from '../helpers/dashboard'
import { startServer, type TestServer } from '../helpers/server'

const BROWSER_UA = 'Mozilla/5.0 (X11; Linux x86_64; rv:125.0) Gecko/20100101 Firefox/125.0'
const COUNT = 27

let server: TestServer
let browser: DashboardBrowser
let desktop: DashboardPage
let phone: DashboardPage
let memberKey: string
const tagIds: Record<string, string> = {}
/** key → link record as created. */
const links = new Map<string, { id: string; shortLink: string; key: string }>()
const qrStatuses: number[] = []

const api = (path: string, init: Parameters<TestServer['api']>[1] = {}) => server.api(path, { key: memberKey, ...init })
const listKeys = async (query: string) => ((await (await api(`/links?${query}`)).json()) as { links: { key: string }[] }).links.map((l) => l.key)
const keyOf = (n: number) => `promo-${String(n).padStart(2, '0')}`

beforeAll(async () => {
  server = await startServer({ toml: '[domains]\ndefaults = ["localhost", "go.localhost"]\n' })
  memberKey = await server.keyFor('marketer', 'member')
  for (const name of ['spring', 'menu']) {
    const r = await api('/tags', { method: 'POST', json: { name } })
    tagIds[name] = ((await r.json()) as { id: string }).id
  }
  // Links 1-5 tagged spring, 6-8 menu; 20+ on the second domain; lunch or dinner in the destination.
  for (let n = 1; n <= COUNT; n++) {
    const tags = n <= 5 ? [tagIds.spring] : n <= 8 ? [tagIds.menu] : []
    const r = await api('/links/link', {
      method: 'POST',
      json: {
        data: { url: `https://bistro.example/${n % 3 === 0 ? 'lunch' : 'dinner'}/${n}` },
        linkOptions: { key: keyOf(n), tags, domain: n >= 20 ? 'go.localhost' : 'localhost', comment: n === 6 ? 'menu card, "summer"' : undefined },
      },
    })
    expect(r.status).toBe(200)
    const l = (await r.json()) as { id: string; shortLink: string; key: string }
    links.set(l.key, l)
  }
  // Clicks: promo-07 three, promo-02 one (counted visits from a browser's User-Agent).
  for (const [key, visits] of [
    ['promo-07', 3],
    ['promo-02', 1],
  ] as const)
    for (let i = 0; i < visits; i++) expect((await server.fetch(links.get(key)!.shortLink, { headers: { 'user-agent': BROWSER_UA } })).status).toBe(302)
  await server.clicksFlushed()

  browser = await dashboardBrowser()
  ;[desktop, phone] = await Promise.all([
    browser.open(server, { signIn: { apiKey: memberKey } }),
    browser.open(server, { width: 'phone', signIn: { apiKey: memberKey } }),
  ])
  desktop.page.on('response', (r) => {
    if (new URL(r.url()).pathname.startsWith('/api/qr/')) qrStatuses.push(r.status())
  })
}, 90_000)

afterAll(async () => {
  await browser?.close()
  await server?.stop()
})

/** The keys shown in the table, top to bottom. */
const shownKeys = async (p: DashboardPage) => (await p.page.locator('.links-short a.mono').allTextContents()).map((t) => t.slice(t.lastIndexOf('/') + 1))
/** Waits for the table to show exactly `keys` (in order when `ordered`). */
async function expectRows(p: DashboardPage, keys: string[], ordered = false) {
  await p.page.waitForFunction(
    ([want, inOrder]) => {
      const got = [...document.querySelectorAll('.links-short a.mono')].map((a) => a.textContent!.slice(a.textContent!.lastIndexOf('/') + 1))
      if (document.querySelector('.links-table[aria-busy="true"]')) return false
      const w = want as string[]
      return inOrder ? JSON.stringify(got) === JSON.stringify(w) : got.length === w.length && w.every((k) => got.includes(k))
    },
    [keys, ordered] as const,
  )
}

test('the table: first page, QR thumbnails that load, copy buttons, links to edit, QR and statistics', async () => {
  const { page } = desktop
  await desktop.goto('/links')
  await page.getByText(`1–25 of ${COUNT}`).waitFor()
  expect(await page.locator('tbody tr').count()).toBe(25)
  const l = links.get('promo-27')!
  await page.getByRole('button', { name: `Copy: ${l.shortLink}` }).waitFor()
  const row = page.locator('tr', { has: page.getByRole('button', { name: `Copy: ${l.shortLink}` }) })
  expect(await row.getByRole('link', { name: /^Edit/ }).getAttribute('href')).toBe(`/app/links/${l.id}`)
  expect(await row.getByRole('link', { name: /^QR/ }).getAttribute('href')).toBe(`/app/links/${l.id}/qr`)
  expect(await row.getByRole('link', { name: /^Stats/ }).getAttribute('href')).toBe(`/app/links/${l.id}/stats`)
  const thumb = row.getByRole('img', { name: `QR code for ${l.shortLink.replace('https://', '')}` })
  expect(await thumb.getAttribute('loading')).toBe('lazy')
  // The thumbnails in view load (lazy ones below the fold may wait), every answer a 200.
  await page.waitForFunction(() => {
    const imgs = [...document.querySelectorAll<HTMLImageElement>('.links-qr img')].slice(0, 5)
    return imgs.length === 5 && imgs.every((i) => i.complete && i.naturalWidth > 0)
  })
  expect(qrStatuses.length).toBeGreaterThanOrEqual(5)
  expect(qrStatuses.every((s) => s === 200)).toBe(true)
  await desktop.screenshot('links')
  expect(await desktop.seriousA11yViolations()).toEqual([])
})

test('search narrows the table and stays in the address bar across a reload', async () => {
  const { page } = desktop
  const lunch = await listKeys('search=lunch&pageSize=100')
  expect(lunch.length).toBe(9)
  await page.getByLabel('Search').fill('lunch')
  await expectRows(desktop, lunch)
  expect(new URL(page.url()).searchParams.get('q')).toBe('lunch')
  await page.reload({ waitUntil: 'networkidle' })
  expect(await page.getByLabel('Search').inputValue()).toBe('lunch')
  await expectRows(desktop, lunch)
  await page.getByLabel('Search').fill('')
  await expectRows(desktop, (await listKeys('pageSize=25')).slice(0, 25))
})

test('a tag filter, then sort by clicks, then page 2', async () => {
  const { page } = desktop
  await page.getByLabel('Tag', { exact: true }).selectOption({ label: 'spring' })
  await expectRows(desktop, ['promo-01', 'promo-02', 'promo-03', 'promo-04', 'promo-05'])
  await page.getByLabel('Sort by').selectOption({ label: 'Most clicks' })
  await expectRows(desktop, (await listKeys(`tagIds=${tagIds.spring}&sortBy=clicks`)).slice(0, 5), true)
  expect((await shownKeys(desktop))[0]).toBe('promo-02')
  await page.getByLabel('Tag', { exact: true }).selectOption({ label: 'Any tag' })
  await expectRows(desktop, (await listKeys('sortBy=clicks&pageSize=25')).slice(0, 25), true)
  expect((await shownKeys(desktop)).slice(0, 2)).toEqual(['promo-07', 'promo-02'])
  await page.getByRole('button', { name: 'Next page' }).click()
  await page.getByText(`26–27 of ${COUNT}`).waitFor()
  await expectRows(desktop, await listKeys('sortBy=clicks&pageSize=25&page=2'), true)
  expect(new URL(page.url()).searchParams.get('page')).toBe('2')
})

test('bulk: archive two, then delete two after confirming', async () => {
  const { page } = desktop
  await desktop.goto('/links')
  const select = (key: string) => page.getByRole('checkbox', { name: `Select ${links.get(key)!.shortLink.replace('https://', '')}` })
  await select('promo-10').check()
  await select('promo-11').check()
  await page.getByText('2 links selected').waitFor()
  const archived = page.waitForResponse((r) => r.url().endsWith('/api/links/bulk') && r.request().method() === 'PATCH')
  await page.getByRole('button', { name: 'Archive', exact: true }).click()
  expect((await archived).status()).toBe(200)
  for (const key of ['promo-10', 'promo-11']) expect(((await (await api(`/links/${links.get(key)!.id}`)).json()) as { archived: boolean }).archived).toBe(true)
  await page.getByText(`1–25 of ${COUNT - 2}`).waitFor()

  // The header checkbox selects the whole page; clear, then pick two to delete.
  await page.getByRole('checkbox', { name: 'Select all links on this page' }).check()
  await page.getByText('25 links selected').waitFor()
  await page.getByRole('button', { name: 'Clear selection' }).click()
  await select('promo-12').check()
  await select('promo-13').check()
  await page.getByRole('button', { name: 'Delete', exact: true }).click()
  const dialog = page.getByRole('dialog', { name: 'Delete 2 links?' })
  await dialog.waitFor()
  expect(await dialog.getByText('cannot be undone').count()).toBe(1)
  const deleted = page.waitForResponse((r) => r.url().includes('/api/links/bulk?') && r.request().method() === 'DELETE')
  await dialog.getByRole('button', { name: 'Delete 2 links' }).click()
  expect((await deleted).status()).toBe(200)
  for (const key of ['promo-12', 'promo-13']) expect([404, 410]).toContain((await api(`/links/${links.get(key)!.id}`)).status)
  await page.getByText(`1–${COUNT - 4} of ${COUNT - 4}`).waitFor()
  expect(await page.getByRole('dialog').count()).toBe(0)
})

test('export downloads every link matching the filters as CSV', async () => {
  const { page } = desktop
  await desktop.goto(`/links?tag=${tagIds.menu}`)
  await expectRows(desktop, ['promo-06', 'promo-07', 'promo-08'])
  const download = page.waitForEvent('download')
  await page.getByRole('button', { name: 'Export CSV' }).click()
  const file = await download
  expect(file.suggestedFilename()).toMatch(/^links-\d{4}-\d{2}-\d{2}\.csv$/)
  const [header, ...rows] = parseCsv(readFileSync((await file.path())!, 'utf8'))
  expect(header).toEqual(['id', 'shortLink', 'url', 'key', 'domain', 'type', 'tags', 'comment', 'clicks', 'createdAt'])
  const apiList = ((await (await api(`/links?tagIds=${tagIds.menu}&pageSize=100`)).json()) as { links: any[] }).links
  expect(rows.map((r) => r[0])).toEqual(apiList.map((l) => l.id))
  const six = rows.find((r) => r[3] === 'promo-06')!
  expect(six).toEqual([
    links.get('promo-06')!.id,
    links.get('promo-06')!.shortLink,
    'https://bistro.example/lunch/6',
    'promo-06',
    'localhost',
    'link',
    'menu',
    'menu card, "summer"',
    '0',
    six[9]!,
  ])

  // Every page: the whole list (23 live links) takes one request of 100, and the file has them all.
  await desktop.goto('/links')
  const all = page.waitForEvent('download')
  await page.getByRole('button', { name: 'Export CSV' }).click()
  const allRows = parseCsv(readFileSync((await (await all).path())!, 'utf8')).slice(1)
  expect(allRows.length).toBe(COUNT - 4)
  expect(desktop.errors).toEqual([])
  expect(desktop.externalRequests).toEqual([])
})

test('phone width: short link, clicks and actions; the rest hidden', async () => {
  const { page } = phone
  await phone.goto('/links')
  await page.getByText(`1–${COUNT - 4} of ${COUNT - 4}`).waitFor()
  expect(await page.getByRole('columnheader', { name: 'Destination' }).isVisible()).toBe(false)
  expect(await page.getByRole('columnheader', { name: 'Clicks' }).isVisible()).toBe(true)
  expect(await page.getByRole('link', { name: 'New link' }).isVisible()).toBe(true)
  await phone.screenshot('links')
  expect(await phone.seriousA11yViolations()).toEqual([])
  expect(phone.errors).toEqual([])
  expect(phone.externalRequests).toEqual([])
})

test('a user with no links is invited to create one; a readonly user sees no write controls', async () => {
  const newcomer = await browser.open(server, { signIn: { apiKey: await server.keyFor('newcomer', 'member') } })
  await newcomer.goto('/links')
  await newcomer.page.getByText('No links yet').waitFor()
  expect(await newcomer.page.getByRole('link', { name: 'Create a link' }).getAttribute('href')).toBe('/app/links/new')
  await newcomer.screenshot('links-empty')
  expect(await newcomer.seriousA11yViolations()).toEqual([])
  expect(newcomer.errors).toEqual([])
  await newcomer.close()

  const reader = await browser.open(server, { width: 'phone', signIn: { apiKey: await server.keyFor('reader', 'readonly') } })
  await reader.goto('/links')
  await reader.page.getByText('No links to show').waitFor()
  await reader.screenshot('links-empty')
  expect(await reader.page.getByRole('link', { name: 'New link' }).count()).toBe(0)
  expect(await reader.page.getByRole('link', { name: /^Import/ }).count()).toBe(0)
  expect(reader.errors).toEqual([])
  await reader.close()
})
