/**
 * CSV import in a real browser: a file with 3 good rows and 2 bad ones shows both problems in
 * the preview while nothing is written yet; importing then creates exactly the 3 good links
 * (with their tags, one created on the way), checked through the API.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
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

async function preview(p: DashboardPage, ready: number) {
  await p.goto('/links/import')
  await p.page.getByLabel('CSV file', { exact: true }).setInputFiles(csvPath)
  await p.page.getByText(`${ready} ready to import`).waitFor()
}

test('the preview shows each bad row with its problem before anything is written', async () => {
  const { page } = desktop
  await preview(desktop, 3)
  await page.getByText('2 with problems').waitFor()
  await page.getByText('url "ftp://bistro.example/old" is not an http or https address').waitFor()
  await page.getByText('key "bad key!" may hold only letters, digits, - and _').waitFor()
  await page.getByText('New tags will be created: Autumn.').waitFor()
  expect(await page.locator('.import-table tbody tr').count()).toBe(5)
  // Nothing written: no link, no new tag.
  expect(await count()).toBe(0)
  expect(((await (await api('/tags')).json()) as { name: string }[]).map((t) => t.name)).toEqual(['menu'])
  await desktop.screenshot('import')
  expect(await desktop.seriousA11yViolations()).toEqual([])
})

test('import creates exactly the 3 good links, with their tags, type and comment', async () => {
  const { page } = desktop
  await page.getByRole('button', { name: 'Import 3 links' }).click()
  await page.getByText('3 created, 0 failed.').waitFor()
  expect(await page.locator('progress').getAttribute('value')).toBe('3')
  expect(await page.getByText('created', { exact: true }).count()).toBe(3)
  expect(await page.getByText('skipped', { exact: true }).count()).toBe(2)

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

test('the same file again: the server already has those keys, so the preview says so', async () => {
  const { page } = desktop
  await preview(desktop, 1)
  await page.getByText('key "menu-card" is already used on localhost (https://bistro.example/menu)').waitFor()
  expect(await count()).toBe(3)
})

test('phone width: the preview stays readable', async () => {
  await preview(phone, 1)
  await phone.screenshot('import')
  expect(await phone.seriousA11yViolations()).toEqual([])
  expect(phone.errors).toEqual([])
  expect(phone.externalRequests).toEqual([])
})
