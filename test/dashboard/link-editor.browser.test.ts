/**
 * The link editor through the UI, as a marketer or a restaurant owner uses it: one link
 * of each of the 16 types (files uploaded through the form), one link with every option,
 * each rule type, an edit, and the API's own message for a taken key next to the field.
 * Every result is read back through the API.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test'
import type { Page } from 'playwright-core'
import { sampleMp3, sampleMp4, samplePdf, samplePng, sampleSvg } from '../../src/files/files.samples'
import { type DashboardBrowser, type DashboardPage, dashboardBrowser } from '../helpers/dashboard'
import { startServer, type TestServer } from '../helpers/server'

let server: TestServer
let browser: DashboardBrowser
let dash: DashboardPage
let page: Page
const created: Record<string, string> = {}

beforeAll(async () => {
  server = await startServer()
  browser = await dashboardBrowser()
  dash = await browser.open(server, { width: 'desktop' })
  page = dash.page
})

afterAll(async () => {
  await browser?.close()
  await server?.stop()
})

const linkOf = async (id: string): Promise<any> => {
  const r = await server.api(`/links/${id}`)
  expect(r.status).toBe(200)
  return r.json()
}

/** The API's message for the expected 422 is logged by Chromium as a failed resource load; nothing else may be. */
const unexpectedErrors = () => dash.errors.filter((e) => !/status of 422/.test(e))

async function pickType(label: string) {
  await page.getByRole('link', { name: new RegExp(`^\\S* ?${label} `) }).click()
  await page.getByRole('heading', { level: 1, name: new RegExp(`^New ${label.toLowerCase()} link$`) }).waitFor()
}

/** Clicks Create link, waits for the saved link's page, and returns its id. */
async function create(): Promise<string> {
  const answer = page.waitForResponse((r) => r.request().method() === 'POST' && /\/api\/links\/[a-z-]+$/.test(r.url()))
  await page.getByRole('button', { name: 'Create link' }).click()
  const r = await answer
  expect(r.status()).toBe(200)
  await page.waitForURL(/\/app\/links\/lnk_[^/]+$/)
  await page.getByRole('region', { name: 'Short link' }).waitFor()
  return decodeURIComponent(new URL(page.url()).pathname.split('/').pop()!)
}

async function newLink(label: string) {
  await page.getByRole('link', { name: 'New link' }).click()
  await pickType(label)
}

async function upload(name: string, mimeType: string, bytes: Uint8Array) {
  await page.getByLabel('Upload a file').setInputFiles({ name, mimeType, buffer: Buffer.from(bytes) })
  await page.locator('.le-file-chosen').getByText(name).waitFor()
}

async function openSection(title: string) {
  const details = page.locator('details.le-section', { has: page.locator('summary', { hasText: title }) })
  if (!(await details.evaluate((d) => (d as HTMLDetailsElement).open))) await details.locator('summary').click()
}

test('a link of each of the 16 types, created through the form', async () => {
  await dash.goto('/links/new')
  await page.getByRole('list', { name: 'Link types' }).waitFor()
  // The 16 below and GS1 products (test/dashboard/gs1-print.browser.test.ts).
  expect(await page.getByRole('list', { name: 'Link types' }).getByRole('link').count()).toBe(17)
  expect(await dash.seriousA11yViolations()).toEqual([])
  await dash.screenshot('link-editor-types')

  await pickType('Website')
  await page.getByLabel('Destination URL').fill('https://example.com/spring')
  await dash.screenshot('link-editor-url')
  expect(await dash.seriousA11yViolations()).toEqual([])
  created.link = await create()
  expect(await linkOf(created.link)).toMatchObject({ linkType: 'link', data: { url: 'https://example.com/spring' }, destination: 'https://example.com/spring' })

  await newLink('Google Form')
  await page.getByLabel('Google Form URL').fill('https://docs.google.com/forms/d/e/abc/viewform')
  created['google-form'] = await create()
  expect(await linkOf(created['google-form'])).toMatchObject({ linkType: 'google-form', data: { url: 'https://docs.google.com/forms/d/e/abc/viewform' } })

  await newLink('Menu')
  await page.getByLabel('Menu title').fill('Lunch')
  const first = page.getByRole('group', { name: 'Section 1' })
  await first.getByLabel('Dish', { exact: true }).fill('Onion soup')
  await first.getByLabel('Price', { exact: true }).fill('€7')
  await page.getByRole('button', { name: '+ Add section' }).click()
  const second = page.getByRole('group', { name: 'Section 2' })
  await second.getByLabel('Section name', { exact: true }).fill('Mains')
  await second.getByLabel('Dish', { exact: true }).fill('Steak frites')
  await second.getByLabel('Price', { exact: true }).fill('€19')
  await second.getByLabel('Description', { exact: true }).fill('With béarnaise')
  await second.getByRole('button', { name: 'Add dish to Mains' }).click()
  await second.getByLabel('Dish', { exact: true }).nth(1).fill('Fish of the day')
  await page.getByRole('button', { name: 'Move section Mains up' }).click()
  expect(await dash.seriousA11yViolations()).toEqual([])
  await dash.screenshot('link-editor-menu')
  created.menu = await create()
  expect((await linkOf(created.menu)).data).toEqual({
    title: 'Lunch',
    sections: [
      { name: 'Mains', items: [{ name: 'Steak frites', price: '€19', description: 'With béarnaise' }, { name: 'Fish of the day' }] },
      { name: 'Starters', items: [{ name: 'Onion soup', price: '€7' }] },
    ],
  })

  await newLink('App stores')
  await page.getByLabel('App Store URL (iPhone, iPad)').fill('https://apps.apple.com/app/id123')
  await page.getByLabel('Google Play URL (Android)').fill('https://play.google.com/store/apps/details?id=com.example')
  created['app-stores'] = await create()
  expect(await linkOf(created['app-stores'])).toMatchObject({
    linkType: 'app-stores',
    data: { ios: 'https://apps.apple.com/app/id123', android: 'https://play.google.com/store/apps/details?id=com.example' },
  })

  await newLink('Wi-Fi')
  await page.getByLabel('Network name (SSID)').fill('Cafe Guest')
  await page.getByLabel('Network password').fill('croissant42')
  created['wi-fi'] = await create()
  expect(await linkOf(created['wi-fi'])).toMatchObject({
    linkType: 'wi-fi',
    data: { ssid: 'Cafe Guest', password: 'croissant42', encryption: 'WPA', hidden: false },
  })

  await newLink('Email')
  await page.getByLabel('Send to').fill('hello@example.com')
  await page.getByLabel('Subject').fill('Table for two')
  created.email = await create()
  expect(await linkOf(created.email)).toMatchObject({ linkType: 'email', data: { to: 'hello@example.com', subject: 'Table for two' } })

  for (const [label, type] of [
    ['SMS', 'sms'],
    ['WhatsApp', 'whatsapp'],
  ] as const) {
    await newLink(label)
    await page.getByLabel('Phone number').fill('+33 6 12 34 56 78')
    await page.getByLabel('Message').fill('Hello!')
    created[type] = await create()
    expect(await linkOf(created[type])).toMatchObject({ linkType: type, data: { phone: '+33 6 12 34 56 78', message: 'Hello!' } })
  }

  await newLink('Map')
  await page.getByLabel('Address or place').fill('Café de Flore, Paris')
  created.map = await create()
  expect(await linkOf(created.map)).toMatchObject({ linkType: 'map', data: { query: 'Café de Flore, Paris' } })

  await newLink('Text')
  await page.getByLabel('Text', { exact: true }).fill('Open every day from 9 to 17.')
  created.text = await create()
  expect(await linkOf(created.text)).toMatchObject({ linkType: 'text', data: { text: 'Open every day from 9 to 17.' } })

  const files = [
    ['Document', 'document', 'brochure.pdf', 'application/pdf', samplePdf()],
    ['Image', 'image', 'poster.png', 'image/png', samplePng()],
    ['Video', 'video', 'clip.mp4', 'video/mp4', sampleMp4()],
    ['Audio', 'audio', 'jingle.mp3', 'audio/mpeg', sampleMp3()],
    ['SVG', 'svg', 'logo.svg', 'image/svg+xml', sampleSvg()],
    ['File', 'file', 'price-list.pdf', 'application/pdf', samplePdf('Prices')],
  ] as const
  for (const [label, type, name, mime, bytes] of files) {
    await newLink(label)
    await upload(name, mime, bytes as Uint8Array)
    created[type] = await create()
    // The saved link's page names the file (the link holds only its id).
    await page.locator('.le-file-chosen').getByText(name).waitFor()
    const link = await linkOf(created[type])
    expect(link.linkType).toBe(type)
    expect(link.data.fileId).toMatch(/^fil_/)
    const file = await (await server.api(`/files/${link.data.fileId}`)).json()
    expect(file.name).toBe(name)
  }

  expect(Object.keys(created).sort()).toHaveLength(16)
  expect(unexpectedErrors()).toEqual([])
  expect(dash.externalRequests).toEqual([])
}, 90_000)

let optionsLink = ''

test('a link with every option: key, tags, comment, password, expiry, UTM in the URL, protection, social preview, a rule', async () => {
  await dash.goto('/links/new?type=link')
  await page.getByLabel('Destination URL').fill('https://shop.example/sale?color=blue')
  await page.locator('details.le-options-area > summary').click()
  await page.getByLabel('Custom key').fill('spring-sale')
  await openSection('Tags and comment')
  await page.getByLabel('New tag').fill('Spring campaign')
  await page.getByRole('button', { name: 'Create tag' }).click()
  await page.getByRole('checkbox', { name: 'Spring campaign', checked: true }).waitFor()
  await page.getByLabel('Comment').fill('Posters in the shop window')
  await openSection('Password and expiry')
  await page.getByLabel('Password', { exact: true }).fill('opensesame')
  await page.getByRole('checkbox', { name: 'Expires' }).check()
  await page.getByLabel('Expires at').fill('2031-05-01T12:00')
  await page.getByLabel('Afterwards, send visitors to').fill('https://shop.example/ended')
  await openSection('Campaign tracking (UTM)')
  await page.getByLabel('Source (utm_source)').fill('newsletter')
  await page.getByLabel('Medium (utm_medium)').fill('email')
  await page.getByLabel('Campaign (utm_campaign)').fill('spring')
  // The builder writes into the URL as the user types.
  expect(await page.getByLabel('Destination URL').inputValue()).toBe(
    'https://shop.example/sale?color=blue&utm_source=newsletter&utm_medium=email&utm_campaign=spring',
  )
  await openSection('Content protection')
  await page.getByRole('checkbox', { name: 'Watermark' }).check()
  await page.getByLabel('Watermark text').fill('Preview')
  await page.getByRole('checkbox', { name: 'Discourage screenshots' }).check()
  await openSection('Social preview')
  await page.getByLabel('Preview title').fill('Spring sale: 30% off')
  await page.getByLabel('Preview description').fill('Only until Sunday')
  await page.getByLabel('Preview image URL').fill('https://shop.example/og.png')
  // The live card shows what was typed, without loading the outside image.
  const card = page.getByRole('figure', { name: 'Social preview card' })
  await card.getByText('Spring sale: 30% off').waitFor()
  await card.getByText('Image from shop.example').waitFor()
  await openSection('Rules (targeting)')
  await page.getByLabel('Send some visitors elsewhere by').selectOption('location')
  await page.getByLabel('Country', { exact: true }).selectOption('DE')
  await page.getByLabel('Send them to').fill('https://shop.example/de')
  expect(await dash.seriousA11yViolations()).toEqual([])
  await dash.screenshot('link-editor-options')
  optionsLink = await create()

  const link = await linkOf(optionsLink)
  const tags = await (await server.api('/tags')).json()
  expect(link).toMatchObject({
    key: 'spring-sale',
    tags: [tags.find((t: { name: string }) => t.name === 'Spring campaign').id],
    comments: 'Posters in the shop window',
    hasPassword: true,
    expiration: { time: new Date('2031-05-01T12:00').toISOString(), url: 'https://shop.example/ended' },
    destination: 'https://shop.example/sale?color=blue&utm_source=newsletter&utm_medium=email&utm_campaign=spring',
    option: { isWaterMark: true, watermarkText: 'Preview', isScreenshotProtected: true },
    previewData: { title: 'Spring sale: 30% off', desc: 'Only until Sunday', image: 'https://shop.example/og.png' },
    Targeting: { targetType: 'location', targetDatas: [{ country: 'DE', url: 'https://shop.example/de' }] },
  })
  expect(unexpectedErrors()).toEqual([])
  expect(dash.externalRequests).toEqual([])
})

test('editing a link changes it, through each of the other rule types', async () => {
  expect(optionsLink).not.toBe('')
  await dash.goto(`/links/${optionsLink}`)
  await page.getByRole('heading', { level: 1, name: 'Edit website link' }).waitFor()
  await openSection('Tags and comment')
  await page.getByLabel('Comment').fill('Window posters, second run')
  await openSection('Rules (targeting)')
  const rules = page.getByLabel('Send some visitors elsewhere by')
  const save = async () => {
    const answer = page.waitForResponse((r) => r.request().method() === 'PATCH' && r.url().endsWith(`/api/links/${optionsLink}`))
    await page.getByRole('button', { name: 'Save changes' }).click()
    expect((await answer).status()).toBe(200)
    return linkOf(optionsLink)
  }

  await rules.selectOption('device')
  await page.getByLabel('iPhone and iPad go to').fill('https://apps.apple.com/app/id1')
  await page.getByLabel('Android goes to').fill('https://play.google.com/store/apps/details?id=x')
  expect(await save()).toMatchObject({
    comments: 'Window posters, second run',
    hasPassword: true,
    Targeting: { targetType: 'device', targetDatas: { ios: 'https://apps.apple.com/app/id1', android: 'https://play.google.com/store/apps/details?id=x' } },
  })

  await rules.selectOption('language')
  await page.getByLabel('Language', { exact: true }).selectOption('fr')
  await page.getByLabel('Send them to').fill('https://shop.example/fr')
  expect((await save()).Targeting).toEqual({ targetType: 'language', targetDatas: [{ language: 'fr', url: 'https://shop.example/fr' }] })

  await rules.selectOption('time')
  const day = (n: string) => page.getByRole('group', { name: 'Days' }).getByRole('checkbox', { name: n })
  await day('Sat').check()
  await day('Mon').uncheck()
  await page.getByLabel('From', { exact: true }).fill('18:00')
  await page.getByLabel('Until').fill('20:00')
  await page.getByLabel('Time zone').selectOption('Europe/Paris')
  await page.getByLabel('Send them to').fill('https://shop.example/happy-hour')
  expect((await save()).Targeting).toEqual({
    targetType: 'time',
    targetDatas: [{ start: '18:00', end: '20:00', days: [2, 3, 4, 5, 6], timezone: 'Europe/Paris', url: 'https://shop.example/happy-hour' }],
  })

  await rules.selectOption('number')
  await page.getByLabel('From visit').fill('1')
  await page.getByLabel('To visit').fill('10')
  await page.getByLabel('Send them to').fill('https://shop.example/winner')
  await page.getByRole('button', { name: '+ Add rule' }).click()
  await page.getByLabel('From visit').nth(1).fill('11')
  await page.getByLabel('To visit').nth(1).fill('20')
  await page.getByLabel('Send them to').nth(1).fill('https://shop.example/runner-up')
  expect((await save()).Targeting).toEqual({
    targetType: 'number',
    targetDatas: [
      { from: 1, to: 10, url: 'https://shop.example/winner' },
      { from: 11, to: 20, url: 'https://shop.example/runner-up' },
    ],
  })
  expect(unexpectedErrors()).toEqual([])
})

test('a taken key: the API message appears next to the key field', async () => {
  expect(optionsLink).not.toBe('')
  await dash.goto('/links/new?type=link')
  await page.getByLabel('Destination URL').fill('https://example.com/other')
  await page.locator('details.le-options-area > summary').click()
  await page.getByLabel('Custom key').fill('spring-sale')
  const answer = page.waitForResponse((r) => r.request().method() === 'POST' && r.url().endsWith('/api/links/link'))
  await page.getByRole('button', { name: 'Create link' }).click()
  const r = await answer
  expect(r.status()).toBe(422)
  const message = ((await r.json()) as { message: string }).message
  expect(message).toContain("'linkOptions.key'")
  const key = page.getByLabel('Custom key')
  expect(await key.getAttribute('aria-invalid')).toBe('true')
  const describedBy = (await key.getAttribute('aria-describedby'))!.split(' ').find((id) => id.endsWith('-error'))!
  expect(await page.locator(`[id="${describedBy}"]`).textContent()).toBe(message)
  expect(page.url()).toEndWith('/app/links/new?type=link')
  expect(unexpectedErrors()).toEqual([])
  expect(dash.errors.filter((e) => /status of 422/.test(e))).toHaveLength(1)
})

test('phone width: picker, URL form, menu and options in one column', async () => {
  const phone = await browser.open(server, { width: 'phone' })
  try {
    await phone.goto('/links/new')
    await phone.screenshot('link-editor-types')
    await phone.goto('/links/new?type=link')
    await phone.page.getByLabel('Destination URL').fill('https://example.com/spring')
    await phone.screenshot('link-editor-url')
    await phone.goto(`/links/${created.menu}`)
    await phone.page.getByRole('group', { name: 'Section 2' }).waitFor()
    await phone.screenshot('link-editor-menu')
    await phone.goto(`/links/${optionsLink}`)
    await phone.page.getByRole('heading', { level: 1, name: 'Edit website link' }).waitFor()
    await phone.page.evaluate(() => {
      for (const d of document.querySelectorAll('details')) d.open = true
    })
    expect(await phone.seriousA11yViolations()).toEqual([])
    await phone.screenshot('link-editor-options')
    // One column: nothing wider than the screen.
    expect(await phone.page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390)
    expect(phone.errors).toEqual([])
    expect(phone.externalRequests).toEqual([])
  } finally {
    await phone.close()
  }
})

test('archive, unarchive and delete (after confirming) from the edit screen', async () => {
  const id = created.text!
  expect(id).toBeDefined()
  await dash.goto(`/links/${id}`)
  const patched = () => page.waitForResponse((r) => r.request().method() === 'PATCH' && r.url().endsWith(`/api/links/${id}`))
  let answer = patched()
  await page.getByRole('button', { name: 'Archive', exact: true }).click()
  expect((await answer).status()).toBe(200)
  expect((await linkOf(id)).archived).toBe(true)
  answer = patched()
  await page.getByRole('button', { name: 'Unarchive' }).click()
  expect((await answer).status()).toBe(200)
  expect((await linkOf(id)).archived).toBe(false)
  await page.getByRole('button', { name: 'Delete', exact: true }).click()
  const dialog = page.getByRole('dialog', { name: 'Delete this link?' })
  await dialog.getByRole('button', { name: 'Keep it' }).click()
  expect((await server.api(`/links/${id}`)).status).toBe(200)
  await page.getByRole('button', { name: 'Delete', exact: true }).click()
  await dialog.getByRole('button', { name: 'Delete link' }).click()
  await page.waitForURL(/\/app\/links$/)
  expect((await server.api(`/links/${id}`)).status).toBe(410)
  expect(unexpectedErrors()).toEqual([])
})

test('a read-only user sees the link without write controls', async () => {
  expect(optionsLink).not.toBe('')
  const readonlyKey = await server.keyFor('usr_admin', 'readonly')
  const reader = await browser.open(server, { width: 'desktop', signIn: { apiKey: readonlyKey } })
  try {
    await reader.goto(`/links/${optionsLink}`)
    await reader.page.getByRole('heading', { level: 1, name: 'Website link' }).waitFor()
    expect(await reader.page.getByLabel('Destination URL').isDisabled()).toBe(true)
    for (const name of ['Save changes', 'Delete', 'Archive', '+ Add rule', 'Create tag'])
      expect(await reader.page.getByRole('button', { name, exact: true }).count()).toBe(0)
    await reader.goto('/links/new')
    await reader.page.getByText('Your role is read-only').waitFor()
    expect(await reader.page.getByRole('list', { name: 'Link types' }).count()).toBe(0)
    expect(reader.errors).toEqual([])
  } finally {
    await reader.close()
  }
})
