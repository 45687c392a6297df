/**
 * Settings screen in a real browser: an admin adds a user with a password, makes a key for
 * them (the secret shown once, working, then gone), revokes it and disables the user; a
 * member sees only their own keys. Every change checked through the API.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { type DashboardBrowser, type DashboardPage, dashboardBrowser } from '../helpers/dashboard'
import { onPostgres, startServer, type TestServer } from '../helpers/server'

let server: TestServer
let browser: DashboardBrowser
let admin: DashboardPage

beforeAll(async () => {
  server = await startServer()
  browser = await dashboardBrowser()
  admin = await browser.open(server)
})

afterAll(async () => {
  await browser?.close()
  await server?.stop()
})

test('an admin adds a user, makes a key shown once, revokes it and disables the user', async () => {
  const { page } = admin
  await admin.goto('/settings')
  await page.getByRole('heading', { name: 'You' }).waitFor()

  // Add a user with a password.
  await page.getByRole('button', { name: 'Add user' }).click()
  const addUser = page.getByRole('dialog', { name: 'Add a user' })
  await addUser.getByLabel('User id').fill('maria')
  await addUser.getByLabel('Role').selectOption({ label: 'Member' })
  await addUser.getByLabel('Password (optional)').fill('correct-horse-42')
  await addUser.getByRole('button', { name: 'Add user' }).click()
  await page.getByRole('row', { name: /maria/ }).waitFor()
  const maria = (await (await server.api('/users/maria')).json()) as Record<string, unknown>
  expect(maria).toMatchObject({ role: 'member', hasPassword: true, disabled: false })

  // A key for her: the secret is shown once and works.
  await page.getByRole('button', { name: 'Create key' }).click()
  const createKey = page.getByRole('dialog', { name: 'Create an API key' })
  await createKey.getByLabel('For user').fill('maria')
  await createKey.getByLabel('Role').selectOption({ label: 'Member' })
  await createKey.getByLabel('Name (optional)').fill('Newsletter tool')
  await createKey.getByRole('button', { name: 'Create key' }).click()
  const shown = page.getByRole('dialog', { name: 'Your new API key' })
  await shown.getByText('it will not be shown again').waitFor()
  const secret = await shown.getByLabel(/API key/).inputValue()
  expect(secret).toMatch(/^sk_/)
  expect((await server.api('/links', { key: secret })).status).toBe(200)
  await shown.getByRole('button', { name: 'I have saved it' }).click()
  await shown.waitFor({ state: 'detached' })
  const row = page.getByRole('row', { name: /Newsletter tool/ })
  await row.waitFor()
  expect(await page.content()).not.toContain(secret)

  await admin.screenshot('settings')
  expect(await admin.seriousA11yViolations()).toEqual([])

  // Revoke it: the API refuses it from then on.
  await row.getByRole('button', { name: 'Revoke key Newsletter tool' }).click()
  const revoked = page.waitForResponse((r) => r.url().includes('/keys/key_') && r.request().method() === 'DELETE')
  await page
    .getByRole('dialog', { name: /Revoke key/ })
    .getByRole('button', { name: 'Revoke key' })
    .click()
  expect((await revoked).status()).toBe(200)
  await row.waitFor({ state: 'detached' })
  expect((await server.api('/links', { key: secret })).status).toBe(401)

  // Disable her.
  await page.getByRole('button', { name: 'Disable maria' }).click()
  await page.getByRole('button', { name: 'Enable maria' }).waitFor()
  expect(((await (await server.api('/users/maria')).json()) as { disabled: boolean }).disabled).toBe(true)

  const phone = await browser.open(server, { width: 'phone' })
  await phone.goto('/settings')
  await phone.page.getByRole('heading', { name: 'Users' }).waitFor()
  await phone.page.getByRole('row', { name: /maria/ }).waitFor()
  await phone.screenshot('settings')
  expect(await phone.seriousA11yViolations()).toEqual([])
  expect([...admin.errors, ...phone.errors]).toEqual([])
  expect([...admin.externalRequests, ...phone.externalRequests]).toEqual([])
  await phone.close()
})

test('a member sees only their own keys and no users', async () => {
  const memberKey = await server.keyFor('lee', 'member')
  const own = (await (await server.api('/keys', { key: memberKey })).json()) as { prefix: string }[]
  const every = (await (await server.api('/keys')).json()) as { prefix: string; userId: string }[]
  expect(every.some((k) => k.userId !== 'usr_lee')).toBe(true)

  for (const width of ['desktop', 'phone'] as const) {
    const member = await browser.open(server, { width, signIn: { apiKey: memberKey } })
    await member.goto('/settings')
    await member.page.getByRole('heading', { name: 'Your API keys' }).waitFor()
    await member.page.getByText(`${own[0]!.prefix}…`).waitFor()
    expect(await member.page.getByRole('heading', { name: 'Users' }).count()).toBe(0)
    // One row per own key (plus the header row); nobody else's keys.
    expect(await member.page.getByRole('row').count()).toBe(own.length + 1)
    for (const k of every.filter((k) => k.userId !== 'usr_lee')) expect(await member.page.getByText(`${k.prefix}…`).count()).toBe(0)
    await member.screenshot('settings-member')
    expect(await member.seriousA11yViolations()).toEqual([])
    expect(member.errors).toEqual([])
    expect(member.externalRequests).toEqual([])
    await member.close()
  }
})

test('an admin sees when the node was last backed up; members do not see backups', async () => {
  const { page } = admin
  await admin.goto('/settings')
  const section = page.getByRole('region', { name: 'Backups' })
  if (onPostgres()) {
    await section.getByText('back it up with pg_dump').waitFor()
    return
  }
  await section.getByText('None yet').waitFor()
  const made = await server.run(['backup', `${server.dir}/settings-test.tar.zst`])
  expect(made.code).toBe(0)
  const status = (await (await server.api('/backups/status')).json()) as { lastSuccess: { at: string; bytes: number } }
  await page.reload()
  const shown = await section.getByRole('definition').first().textContent()
  // The time the API answers, as the browser writes it, and how the backup was made.
  const expected = await page.evaluate((at) => new Date(at).toLocaleString(undefined, { dateStyle: 'medium', timeStyle: 'short' }), status.lastSuccess.at)
  expect(shown).toContain(expected)
  expect(shown).toContain('by shortlink backup')
  await admin.screenshot('settings-backups')
  expect(await admin.seriousA11yViolations()).toEqual([])

  const memberKey = await server.keyFor('noor', 'member')
  const member = await browser.open(server, { signIn: { apiKey: memberKey } })
  await member.goto('/settings')
  await member.page.getByRole('heading', { name: 'Your API keys' }).waitFor()
  expect(await member.page.getByRole('heading', { name: 'Backups' }).count()).toBe(0)
  expect((await server.api('/backups/status', { key: memberKey })).status).toBe(403)
  await member.close()
})
