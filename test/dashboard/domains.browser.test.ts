/**
 * Domains screen in a real browser: add a domain and read the DNS record to create, set the
 * not-found page, edit a deep-link file (invalid JSON refused, valid JSON saved), archive and
 * unarchive; every change checked through the API.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { type DashboardBrowser, type DashboardPage, dashboardBrowser } from '../helpers/dashboard'
import { startServer, type TestServer } from '../helpers/server'

const TARGET = 'edge.links-test.example'
const DOMAIN = 'go.shop-test.example'

let server: TestServer
let browser: DashboardBrowser
let desktop: DashboardPage
let phone: DashboardPage

beforeAll(async () => {
  // The CNAME target comes from the configuration; DNS goes to a closed port, so checks stay pending (no outside lookups).
  server = await startServer({ toml: `[domains]\ncnameTarget = "${TARGET}"\ndnsServers = ["127.0.0.1:9"]\n` })
  browser = await dashboardBrowser()
  ;[desktop, phone] = await Promise.all([browser.open(server), browser.open(server, { width: 'phone' })])
})

afterAll(async () => {
  await browser?.close()
  await server?.stop()
})

const domain = async (slug: string) => (await (await server.api(`/domains/${slug}`)).json()) as Record<string, any>

test('a fresh server has no custom domain: the empty state invites adding one', async () => {
  for (const p of [desktop, phone]) {
    await p.goto('/domains')
    await p.page.getByText('No custom domains yet').waitFor()
    // The built-in domain is listed apart.
    await p.page.getByRole('heading', { name: 'Built-in domains' }).waitFor()
    await p.screenshot('domains-empty')
    expect(await p.seriousA11yViolations()).toEqual([])
  }
})

test('add a domain, see its DNS record, set redirects and deep-link files, archive it', async () => {
  const { page } = desktop
  await page.getByRole('button', { name: 'Add domain', exact: true }).click()
  const dialog = page.getByRole('dialog', { name: 'Add a domain' })
  await dialog.getByLabel('Domain name').fill(`https://${DOMAIN}/`)
  await dialog.getByRole('button', { name: 'Add domain' }).click()

  // The API lists it, and the page shows the record the API says to create.
  await page.getByRole('heading', { name: DOMAIN }).waitFor()
  const listed = (await (await server.api('/domains')).json()) as { slug: string; cnameTarget: string }[]
  const created = listed.find((d) => d.slug === DOMAIN)!
  expect(created.cnameTarget).toBe(TARGET)
  expect(await page.getByTestId('cname-target').textContent()).toBe(created.cnameTarget)
  expect(await page.getByTestId('cname-record').textContent()).toBe(`${DOMAIN}. CNAME ${TARGET}.`)
  await page.getByText('DNS: Checking DNS…').or(page.getByText('DNS: DNS not pointing here')).first().waitFor()

  // Check again asks the server to look now.
  const verified = page.waitForResponse((r) => r.url().endsWith(`/domains/${DOMAIN}/verify`) && r.request().method() === 'POST')
  await page.getByRole('button', { name: 'Check again' }).click()
  expect((await verified).status()).toBe(200)

  // Not-found page.
  await page.getByLabel('Not-found page').fill('https://shop-test.example/oops')
  const savedRedirects = page.waitForResponse((r) => r.url().endsWith(`/domains/${DOMAIN}`) && r.request().method() === 'PATCH')
  await page.getByRole('button', { name: 'Save redirects' }).click()
  expect((await savedRedirects).status()).toBe(200)
  expect((await domain(DOMAIN)).notFoundUrl).toBe('https://shop-test.example/oops')

  // A deep-link file with broken JSON: the error names the line, and nothing can be saved.
  const editor = page.getByLabel('apple-app-site-association', { exact: true })
  const save = page.getByRole('button', { name: 'Save apple-app-site-association' })
  await editor.fill('{\n  "applinks": {\n    "details": [}\n}')
  await page.getByText(/^Line 3, column \d+: /).waitFor()
  expect(await editor.getAttribute('aria-invalid')).toBe('true')
  expect(await save.isDisabled()).toBe(true)
  expect((await domain(DOMAIN)).appleAppSiteAssociation).toBeNull()

  const aasa = '{"applinks":{"details":[{"appIDs":["TEAM.com.example.shop"],"components":[{"/":"/*"}]}]}}'
  await editor.fill(aasa)
  expect(await page.getByText(/^Line \d+, column/).count()).toBe(0)
  const savedFile = page.waitForResponse((r) => r.url().endsWith(`/domains/${DOMAIN}`) && r.request().method() === 'PATCH')
  await save.click()
  expect((await savedFile).status()).toBe(200)
  expect((await domain(DOMAIN)).appleAppSiteAssociation).toBe(aasa)

  await desktop.screenshot('domains')
  expect(await desktop.seriousA11yViolations()).toEqual([])

  // Archive, then bring it back.
  await page.getByRole('button', { name: 'Archive domain', exact: true }).click()
  await page.getByRole('button', { name: 'Unarchive domain', exact: true }).waitFor()
  expect((await domain(DOMAIN)).archived).toBe(true)
  expect(((await (await server.api('/domains')).json()) as { slug: string }[]).map((d) => d.slug)).not.toContain(DOMAIN)
  await page.getByRole('button', { name: 'Unarchive domain', exact: true }).click()
  await page.getByRole('button', { name: 'Archive domain', exact: true }).waitFor()
  expect((await domain(DOMAIN)).archived).toBe(false)

  await phone.goto(`/domains?domain=${DOMAIN}`)
  await phone.page.getByTestId('cname-record').waitFor()
  await phone.screenshot('domains')
  expect(await phone.seriousA11yViolations()).toEqual([])
})

test('a member sees domains and their DNS record but no controls that change them', async () => {
  const memberKey = await server.keyFor('mia', 'member')
  const member = await browser.open(server, { signIn: { apiKey: memberKey } })
  await member.goto(`/domains?domain=${DOMAIN}`)
  await member.page.getByTestId('cname-record').waitFor()
  expect(await member.page.getByRole('button', { name: 'Add domain' }).count()).toBe(0)
  expect(await member.page.getByRole('button', { name: 'Archive domain', exact: true }).count()).toBe(0)
  expect(await member.page.getByRole('button', { name: 'Check again' }).count()).toBe(0)
  expect(await member.page.getByRole('button', { name: 'Save redirects' }).count()).toBe(0)
  expect(member.errors).toEqual([])
  expect(member.externalRequests).toEqual([])
  await member.close()
})

test('no console errors and no requests leaving the origin', () => {
  for (const p of [desktop, phone]) {
    expect(p.errors).toEqual([])
    expect(p.externalRequests).toEqual([])
  }
})
