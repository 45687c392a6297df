/**
 * Sign-in screen: a user's password or an API key, then a session cookie the page cannot
 * read; no key in the browser's storage; sign out; a wrong password said plainly.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { type DashboardBrowser, dashboardBrowser } from '../helpers/dashboard'
import { startServer, type TestServer } from '../helpers/server'

let server: TestServer
let browser: DashboardBrowser

beforeAll(async () => {
  server = await startServer()
  browser = await dashboardBrowser()
  const made = await server.api('/users', { method: 'POST', json: { id: 'maria', password: 'terrace-menu-2026', role: 'member' } })
  expect(made.status).toBe(200)
})

afterAll(async () => {
  await browser?.close()
  await server?.stop()
})

for (const width of ['phone', 'desktop'] as const)
  test(`${width}: the form, a wrong password, then a password session in an HttpOnly cookie; sign out`, async () => {
    const dash = await browser.open(server, { width, signIn: null })
    const { page } = dash
    await dash.goto('/')
    await page.getByRole('heading', { name: 'Sign in to shortlink' }).waitFor()
    expect(await dash.seriousA11yViolations()).toEqual([])
    await dash.screenshot('sign-in')

    await page.getByLabel('User id').fill('maria')
    await page.locator('input[name="password"]').fill('not her password')
    await page.getByRole('button', { name: 'Sign in' }).click()
    await expect(page.getByRole('alert').textContent()).resolves.toContain('wrong user id or password')
    // The one failed sign-in is the one console error (Chromium logs a 401 answer).
    expect(dash.errors).toHaveLength(1)
    expect(dash.errors[0]).toContain('401')
    dash.errors.length = 0

    await page.locator('input[name="password"]').fill('terrace-menu-2026')
    await page.getByRole('button', { name: 'Sign in' }).click()
    await page.locator('nav#nav').waitFor({ state: 'attached' })
    await page.getByRole('heading', { level: 1 }).waitFor()
    expect(new URL(page.url()).pathname).toBe('/app/links')

    const cookies = await dash.context.cookies()
    expect(cookies.map((c) => ({ name: c.name, httpOnly: c.httpOnly, secure: c.secure, sameSite: c.sameSite, path: c.path }))).toEqual([
      { name: '__Host-shortlink_session', httpOnly: true, secure: true, sameSite: 'Strict', path: '/' },
    ])
    // The page can read neither the cookie nor any key: nothing is kept in the browser's storage.
    expect(await page.evaluate(() => [document.cookie, localStorage.length, sessionStorage.length])).toEqual(['', 0, 0])

    // The cookie is what the API sees: the session acts as maria.
    const token = cookies[0]!.value
    const viaCookie = await server.fetch(`${server.baseUrl}/session`, { headers: { cookie: `__Host-shortlink_session=${token}` } })
    expect(await viaCookie.json()).toMatchObject({ userId: 'usr_maria', role: 'member', method: 'password' })

    if (width === 'phone') await page.getByRole('button', { name: 'Menu' }).click()
    await page.getByRole('button', { name: 'Sign out' }).click()
    await page.getByRole('heading', { name: 'Sign in to shortlink' }).waitFor()
    const after = await server.fetch(`${server.baseUrl}/links`, { headers: { cookie: `__Host-shortlink_session=${token}` } })
    expect(after.status).toBe(401)
    expect(dash.errors).toEqual([])
    expect(dash.externalRequests).toEqual([])
    await dash.close()
  })

test('an API key signs in with its role; a revoked key ends the session at the next request', async () => {
  const created = await server.api('/keys', { method: 'POST', json: { userId: 'maria', role: 'readonly', name: 'front desk' } })
  const key = (await created.json()) as { id: string; key: string }
  const dash = await browser.open(server, { signIn: { apiKey: key.key } })
  const { page } = dash
  await page.getByText('usr_maria').first().waitFor()
  expect(await page.locator('.nav-user .badge').textContent()).toBe('readonly')
  expect(await page.evaluate(() => JSON.stringify({ ...localStorage }) + JSON.stringify({ ...sessionStorage }))).not.toContain(key.key)
  await dash.screenshot('signed-in')

  expect((await server.api(`/keys/${key.id}`, { method: 'DELETE' })).status).toBe(200)
  await dash.goto('/tags')
  await page.getByRole('heading', { name: 'Sign in to shortlink' }).waitFor()
  expect(dash.externalRequests).toEqual([])
  await dash.close()
})

test('by keyboard alone: sign in, skip to the content, move between screens', async () => {
  const dash = await browser.open(server, { signIn: null })
  const { page } = dash
  await dash.goto('/')
  await page.getByRole('heading', { name: 'Sign in to shortlink' }).waitFor()
  // Tab order: the sign-in choice, then the user id and the password; Enter submits.
  await page.getByRole('radio', { name: 'Password' }).focus()
  await page.keyboard.press('Tab')
  expect(await page.evaluate(() => document.activeElement?.getAttribute('name'))).toBe('userId')
  await page.keyboard.type('maria')
  await page.keyboard.press('Tab')
  await page.keyboard.type('terrace-menu-2026')
  await page.keyboard.press('Enter')
  await page.locator('nav#nav').waitFor({ state: 'attached' })

  // The first Tab reaches "Skip to content"; the navigation's links follow and open screens with Enter.
  await page.keyboard.press('Tab')
  expect(await page.evaluate(() => document.activeElement?.textContent)).toBe('Skip to content')
  const statistics = page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Statistics' })
  await statistics.focus()
  await page.keyboard.press('Enter')
  await page.getByRole('heading', { level: 1, name: 'Statistics' }).waitFor()
  expect(new URL(page.url()).pathname).toBe('/app/stats')
  expect(await statistics.getAttribute('aria-current')).toBe('page')
  expect(dash.errors).toEqual([])
  await dash.close()
})
