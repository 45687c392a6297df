/**
 * Files, Tags and Templates in a real browser: upload, rename, archive and delete a file;
 * create, edit and delete a tag; rename and delete a template. Every change is checked
 * through the API; deletes are asked first.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { PNG } from 'pngjs'
import { type DashboardBrowser, type DashboardPage, dashboardBrowser } from '../helpers/dashboard'
import { startServer, type TestServer } from '../helpers/server'

let server: TestServer
let browser: DashboardBrowser
let desktop: DashboardPage
let phone: DashboardPage

beforeAll(async () => {
  server = await startServer()
  browser = await dashboardBrowser()
  ;[desktop, phone] = await Promise.all([browser.open(server), browser.open(server, { width: 'phone' })])
})

afterAll(async () => {
  await browser?.close()
  await server?.stop()
})

const json = async (path: string) => {
  const r = await server.api(path)
  return { status: r.status, body: (await r.json()) as any }
}
const answered = (p: DashboardPage, method: string, path: RegExp) =>
  p.page.waitForResponse((r) => r.request().method() === method && path.test(new URL(r.url()).pathname))

function photoPng(): Buffer {
  const png = new PNG({ width: 40, height: 30 })
  for (let i = 0; i < png.data.length; i += 4) png.data.set([30, 120, 200, 255], i)
  return PNG.sync.write(png)
}

test('files: upload, rename, archive, delete', async () => {
  const p = desktop
  const { page } = p
  await p.goto('/files')
  await page.getByText('No files yet').waitFor()
  await p.screenshot('files-empty')

  const uploaded = answered(p, 'POST', /\/files$/)
  await page.getByLabel('Upload files').setInputFiles({ name: 'terrace.png', mimeType: 'image/png', buffer: photoPng() })
  const file = (await (await uploaded).json()) as { id: string; size: number }
  await page.getByRole('link', { name: 'terrace.png' }).waitFor()
  const row = page.getByRole('row').filter({ hasText: 'terrace.png' })
  expect(await row.getByText('PNG', { exact: true }).count()).toBe(1)
  expect(await row.textContent()).toContain(`${file.size} B`)
  expect((await json(`/files/${file.id}`)).body).toMatchObject({ name: 'terrace.png', mimeType: 'image/png' })

  await page.getByRole('button', { name: 'Rename terrace.png' }).click()
  const rename = page.getByRole('dialog', { name: 'Rename file' })
  await rename.getByLabel('File name').fill('Terrace photo.png')
  const renamed = answered(p, 'PATCH', /\/files\/fil_/)
  await rename.getByRole('button', { name: 'Save' }).click()
  expect((await renamed).status()).toBe(200)
  await page.getByRole('link', { name: 'Terrace photo.png' }).waitFor()
  expect((await json(`/files/${file.id}`)).body.name).toBe('Terrace photo.png')
  await p.screenshot('files')
  expect(await p.seriousA11yViolations()).toEqual([])

  const archived = answered(p, 'PATCH', /\/files\/fil_/)
  await page.getByRole('button', { name: 'Archive Terrace photo.png' }).click()
  expect((await archived).status()).toBe(200)
  await page.getByText('No files yet').waitFor()
  expect((await json(`/files/${file.id}`)).body.archived).toBe(true)
  await page.getByLabel('Show archived files').check()
  await page.getByRole('row').filter({ hasText: 'Archived' }).waitFor()

  await page.getByRole('button', { name: 'Delete Terrace photo.png' }).click()
  const confirm = page.getByRole('dialog', { name: 'Delete file?' })
  const deleted = answered(p, 'DELETE', /\/files\/fil_/)
  await confirm.getByRole('button', { name: 'Delete file' }).click()
  expect((await deleted).status()).toBe(200)
  await page.getByText('No files yet').waitFor()
  expect([404, 410]).toContain((await json(`/files/${file.id}`)).status)
})

test('tags: create with a colour, rename and recolour, delete', async () => {
  const p = desktop
  const { page } = p
  await p.goto('/tags')
  await page.getByText('No tags yet').waitFor()
  await p.screenshot('tags-empty')

  await page.getByLabel('New tag name').fill('Summer menu')
  await page.getByLabel('Colour', { exact: true }).selectOption('green')
  const created = answered(p, 'POST', /\/tags$/)
  await page.getByRole('button', { name: 'Add tag' }).click()
  const tag = (await (await created).json()) as { id: string }
  await page.getByText('Summer menu', { exact: true }).waitFor()
  expect((await json(`/tags/${tag.id}`)).body).toMatchObject({ name: 'Summer menu', color: 'green' })

  await page.getByRole('button', { name: 'Edit Summer menu' }).click()
  const edit = page.getByRole('dialog', { name: 'Edit tag' })
  await edit.getByLabel('Tag name').fill('Autumn menu')
  await edit.getByLabel('Tag colour').selectOption('orange')
  const saved = answered(p, 'PATCH', /\/tags\/tag_/)
  await edit.getByRole('button', { name: 'Save' }).click()
  expect((await saved).status()).toBe(200)
  await page.getByText('Autumn menu', { exact: true }).waitFor()
  expect((await json(`/tags/${tag.id}`)).body).toMatchObject({ name: 'Autumn menu', color: 'orange' })
  await p.screenshot('tags')
  expect(await p.seriousA11yViolations()).toEqual([])

  await phone.goto('/tags')
  await phone.page.getByText('Autumn menu', { exact: true }).waitFor()
  await phone.screenshot('tags')
  expect(await phone.seriousA11yViolations()).toEqual([])

  await page.getByRole('button', { name: 'Delete Autumn menu' }).click()
  const deleted = answered(p, 'DELETE', /\/tags\/tag_/)
  await page.getByRole('dialog', { name: 'Delete tag?' }).getByRole('button', { name: 'Delete tag' }).click()
  expect((await deleted).status()).toBe(200)
  await page.getByText('No tags yet').waitFor()
  expect([404, 410]).toContain((await json(`/tags/${tag.id}`)).status)
})

test('templates: a thumbnail, open in designer, rename, delete', async () => {
  const made = await server.api('/qr/templates', {
    method: 'POST',
    json: { name: 'Night market', comment: 'For the stalls', qrOptions: { patterns: { body: { style_id: 'rounded', value: '#7c2d12' } } } },
  })
  const tpl = (await made.json()) as { id: string }
  const p = desktop
  const { page } = p
  const thumb = p.page.waitForResponse((r) => r.url().includes(`/qr/templates/${tpl.id}/preview`))
  await p.goto('/templates')
  expect((await thumb).headers()['content-type']).toBe('image/png')
  await page.getByRole('img', { name: 'QR code in the Night market design' }).waitFor()
  expect(await page.getByRole('link', { name: 'Open in designer: Night market' }).getAttribute('href')).toBe(`/app/qr?template=${tpl.id}`)

  await page.getByRole('button', { name: 'Rename Night market' }).click()
  const rename = page.getByRole('dialog', { name: 'Rename template' })
  await rename.getByLabel('Template name').fill('Night market stalls')
  const renamed = answered(p, 'PATCH', /\/qr\/templates\/tpl_/)
  await rename.getByRole('button', { name: 'Save' }).click()
  expect((await renamed).status()).toBe(200)
  await page.getByRole('heading', { name: 'Night market stalls' }).waitFor()
  expect((await json(`/qr/templates/${tpl.id}`)).body.name).toBe('Night market stalls')
  await p.screenshot('templates')
  expect(await p.seriousA11yViolations()).toEqual([])
  await phone.goto('/templates')
  await phone.page.getByRole('heading', { name: 'Night market stalls' }).waitFor()
  await phone.screenshot('templates')
  expect(await phone.seriousA11yViolations()).toEqual([])

  // The designer opens with the template's design.
  await page.getByRole('link', { name: 'Open in designer: Night market stalls' }).click()
  await page.getByText('Template: Night market stalls').waitFor()
  expect(await page.getByLabel('Body style').inputValue()).toBe('rounded')

  await p.goto('/templates')
  await page.getByRole('button', { name: 'Delete Night market stalls' }).click()
  const deleted = answered(p, 'DELETE', /\/qr\/templates\/tpl_/)
  await page.getByRole('dialog', { name: 'Delete template?' }).getByRole('button', { name: 'Delete template' }).click()
  expect((await deleted).status()).toBe(200)
  await page.getByText('No templates yet').waitFor()
  expect((await json(`/qr/templates/${tpl.id}`)).status).toBe(404)
})

test('phone: files list and upload zone', async () => {
  await phone.goto('/files')
  await phone.page.getByLabel('Upload files').waitFor()
  await phone.screenshot('files')
  expect(await phone.seriousA11yViolations()).toEqual([])
})

test('a read-only user sees the lists without write controls', async () => {
  const reader = await browser.open(server, { signIn: { apiKey: await server.keyFor('rex', 'readonly') } })
  await reader.goto('/files')
  await reader.page.getByRole('heading', { name: 'Files' }).waitFor()
  expect(await reader.page.getByLabel('Upload files').count()).toBe(0)
  await reader.goto('/tags')
  await reader.page.getByRole('heading', { name: 'Tags' }).waitFor()
  expect(await reader.page.getByLabel('New tag name').count()).toBe(0)
  expect(await reader.page.getByRole('button', { name: /^(Edit|Delete) / }).count()).toBe(0)
  expect(reader.errors).toEqual([])
  await reader.close()
})

test('no console errors and no requests leaving the origin', () => {
  for (const p of [desktop, phone]) {
    expect(p.errors).toEqual([])
    expect(p.externalRequests).toEqual([])
  }
})
