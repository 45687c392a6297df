/**
 * The import screen in real Chromium against the compiled binary: this dashboard's CSV shows a
 * preview (the server's dry run) with each problem row while nothing is written; importing then
 * creates exactly the good links with their tags; the same file again finds them all there. A
 * Bitly export chosen as such lands on the chosen domain with its titles and creation dates.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { type DashboardBrowser, type DashboardPage, dashboardBrowser } from '../helpers/dashboard'
import { startServer, type TestServer } from '../helpers/server'

let server: TestServer
let browser: DashboardBrowser
let desktop: DashboardPage
let phone: DashboardPage
let memberKey: string
let csvPath: string

const api = (path: string) => server.api(path, { key: memberKey })
const count = async () => ((await (await api('/links/count')).json()) as { count: number }).count

// A spreadsheet's export: BOM, CRLF, a quoted comment with a comma and doubled quotes.
const CSV = [
  '\uFEFFurl,key,tags,comment,type',
  'https://bistro.example/menu,menu-card,menu;Autumn,,link',
  'https://bistro.example/book,book-a-table,,"Book now, ""today""",',
  'https://forms.example/feedback,,menu,,google-form',
  'ftp://bistro.example/old,old-menu,,,',
  'https://bistro.example/x,bad key!,,,',
].join('\r\n')

beforeAll(async () => {
  server = await startServer()
  memberKey = await server.keyFor('owner', 'member')
  expect((await server.api('/tags', { method: 'POST', key: memberKey, json: { name: 'menu' } })).status).toBe(200)
  csvPath = join(mkdtempSync(join(tmpdir(), 'shortlink-import-')), 'links.csv')
  writeFileSync(csvPath, CSV)
  browser = await dashboardBrowser()
  ;[desktop, phone] = await Promise.all([
    browser.open(server, { signIn: { apiKey: memberKey } }),
    browser.open(server, { width: 'phone', signIn: { apiKey: memberKey } }),
  ])
})

afterAll(async () => {
  await browser?.close()
  await server?.stop()
})

async function preview(p: DashboardPage, file: string, source = 'CSV (this dashboard)') {
  await p.goto('/links/import')
  await p.page.getByLabel('Exported from').selectOption({ label: source })
  await p.page.getByLabel('Export file', { exact: true }).setInputFiles(file)
  await p.page.getByRole('heading', { name: /^Preview of / }).waitFor()
}

test('the choice: six sources, each saying what file to send; the domain for links not on a domain served here', async () => {
  const { page } = desktop
  await desktop.goto('/links/import')
  expect(await page.getByLabel('Exported from').locator('option').allTextContents()).toEqual([
    'CSV (this dashboard)',
    'Bitly',
    'Shlink',
    'YOURLS',
    'Kutt',
    'Rebrandly',
  ])
  await page.getByLabel('Exported from').selectOption({ label: 'Kutt' })
  await page.getByText("Send the JSON of Kutt's API GET /api/v2/links.").waitFor()
  await page.getByLabel('Short domain for links on domains not served here').waitFor()
  await desktop.screenshot('import-choose')
  expect(await desktop.seriousA11yViolations()).toEqual([])
})

test('the preview (a dry run on the server) shows each bad row with its problem before anything is written', async () => {
  const { page } = desktop
  await preview(desktop, csvPath)
  await page.getByText('3 links will be created').waitFor()
  await page.getByText('2 rows with problems').waitFor()
  await page.getByText('url "ftp://bistro.example/old" is not an http or https address').waitFor()
  await page.getByText('key "bad key!" may hold only letters, digits, - and _').waitFor()
  expect(await page.locator('.import-table tbody tr').count()).toBe(2)
  expect(await page.locator('.import-table tbody tr td.num').allTextContents()).toEqual(['5', '6'])
  // Nothing written: no link, no new tag.
  expect(await count()).toBe(0)
  expect(((await (await api('/tags')).json()) as { name: string }[]).map((t) => t.name)).toEqual(['menu'])
  await desktop.screenshot('import')
  expect(await desktop.seriousA11yViolations()).toEqual([])
})

test('import creates exactly the 3 good links, with their tags, type and comment', async () => {
  const { page } = desktop
  await page.getByRole('button', { name: 'Import 3 links' }).click()
  await page.getByText('3 created, 0 updated, 0 already there, 2 failed.').waitFor()
  expect(Number(await page.locator('progress').getAttribute('value'))).toBe(Number(await page.locator('progress').getAttribute('max')))

  const tags = (await (await api('/tags')).json()) as { id: string; name: string }[]
  const tagName = new Map(tags.map((t) => [t.id, t.name]))
  const { links } = (await (await api('/links?pageSize=100')).json()) as { links: any[] }
  expect(links.length).toBe(3)
  const byUrl = new Map(links.map((l) => [l.destination, l]))
  const menu = byUrl.get('https://bistro.example/menu')
  expect(menu.key).toBe('menu-card')
  expect(menu.tags.map((id: string) => tagName.get(id)).sort()).toEqual(['Autumn', 'menu'])
  expect(byUrl.get('https://bistro.example/book').comments).toBe('Book now, "today"')
  expect(byUrl.get('https://bistro.example/book').key).toBe('book-a-table')
  const form = byUrl.get('https://forms.example/feedback')
  expect(form.linkType).toBe('google-form')
  expect(form.tags.map((id: string) => tagName.get(id))).toEqual(['menu'])
  await desktop.screenshot('import-done')
  expect(desktop.errors).toEqual([])
  expect(desktop.externalRequests).toEqual([])
})

test('the same file again: the preview finds every good link already there, and nothing is to create', async () => {
  const { page } = desktop
  await preview(desktop, csvPath)
  await page.getByText('0 links will be created, 3 already there, 2 rows with problems').waitFor()
  expect(await page.getByRole('button', { name: 'Import 0 links' }).isDisabled()).toBe(true)
  expect(await count()).toBe(3)
})

test('a Bitly export (API JSON): links move to the chosen domain with their titles and creation dates', async () => {
  const { page } = desktop
  await page.getByRole('button', { name: 'Choose another file' }).click()
  await preview(desktop, resolve(import.meta.dir, '../fixtures/imports/bitly.json'), 'Bitly')
  await page.getByText('3 links will be created').waitFor()
  await page.getByText('url "javascript:alert(1)" is not an http or https address').waitFor()
  await page.getByRole('button', { name: 'Import 3 links' }).click()
  await page.getByText('3 created, 0 updated, 0 already there, 1 failed.').waitFor()
  const { links } = (await (await api('/links?pageSize=100&includeArchived=true')).json()) as { links: any[] }
  const careers = links.find((l) => l.key === 'acme-careers')
  expect(careers).toMatchObject({
    domain: 'localhost',
    destination: 'https://acme.example/careers',
    comments: 'Careers at ACME',
    createdAt: '2020-11-30T08:00:00.000Z',
  })
  expect(desktop.errors).toEqual([])
})

test("a YOURLS export's click totals show in the links list as imported, apart from the clicks counted here", async () => {
  const { page } = desktop
  await page.getByRole('button', { name: 'Import another file' }).click()
  await preview(desktop, resolve(import.meta.dir, '../fixtures/imports/yourls.csv'), 'YOURLS')
  await page.getByRole('button', { name: 'Import 3 links' }).click()
  await page.getByText('3 created, 0 updated, 0 already there, 1 failed.').waitFor()
  await page.getByRole('link', { name: 'View links' }).click()
  const row = page.locator('tr', { hasText: 'ozh.example' })
  await row.getByText('+1,012 imported').waitFor()
  expect((await row.locator('td.num').textContent())?.startsWith('0')).toBe(true)
  await desktop.screenshot('import-links')
  expect(desktop.errors).toEqual([])
})

test('phone width: the preview stays readable', async () => {
  await preview(phone, csvPath)
  await phone.page.getByText('3 already there').waitFor()
  await phone.screenshot('import')
  expect(await phone.seriousA11yViolations()).toEqual([])
  expect(phone.errors).toEqual([])
  expect(phone.externalRequests).toEqual([])
})
