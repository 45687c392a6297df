/**
 * Webhooks and Live in a real browser (Chromium, playwright-core) against the binary, with a
 * receiver on loopback checking every delivery with the Standard Webhooks reference library:
 * an admin adds a webhook (events, one link as its filter) and its secret, shown once, signs
 * what arrives; a test event and the deliveries list with a failed attempt and its retry;
 * disable and delete. A member watches Live while their links are visited: each visit shows
 * in the list and on the map, and the stream survives a dropped connection.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { CITY_DB, UA } from '../helpers/agents'
import { type DashboardBrowser, type DashboardPage, dashboardBrowser } from '../helpers/dashboard'
import { until } from '../helpers/poll'
import { startRoundRobinProxy } from '../helpers/proxy'
import { freePort, startServer, type TestServer } from '../helpers/server'
import { type Receiver, startReceiver } from '../helpers/webhook-receiver'

let server: TestServer
let browser: DashboardBrowser
let admin: DashboardPage
let receiver: Receiver

beforeAll(async () => {
  receiver = startReceiver()
  server = await startServer({ toml: `trustProxy = ["127.0.0.1", "::1"]\n[geoip]\ndatabase = "${CITY_DB}"\n[webhooks]\nallowPrivateNetworks = true\n` })
  browser = await dashboardBrowser()
  admin = await browser.open(server)
}, 60_000)

afterAll(async () => {
  await browser?.close()
  receiver?.stop()
  await server?.stop()
}, 60_000)

const createLink = async (key: string, apiKey?: string) => {
  const r = await server.api('/links/link', { method: 'POST', key: apiKey, json: { data: { url: `https://${key}.example/` }, linkOptions: { key } } })
  expect(r.status).toBe(200)
  return (await r.json()) as { id: string; shortLink: string }
}
const visit = (shortLink: string, ip: string) => server.fetch(shortLink, { headers: { 'user-agent': UA.iphone, 'x-forwarded-for': ip } }).then((r) => r.status)

test('an admin adds a webhook for one link; its secret, shown once, signs what arrives; test, deliveries, retry, disable, delete', async () => {
  const { page } = admin
  const watched = await createLink('watched-link')
  const other = await createLink('other-link')
  await admin.goto('/settings')
  await page.getByRole('heading', { name: 'Webhooks' }).waitFor()
  await page.getByText('No webhooks yet').waitFor()

  await page.getByRole('button', { name: 'Add webhook' }).click()
  const add = page.getByRole('dialog', { name: 'Add a webhook' })
  await add.getByLabel('Endpoint URL').fill(receiver.url('/dash'))
  await add.getByLabel('Name (optional)').fill('Growth Slack')
  // link.created and link.clicked are ticked already; add link.deleted.
  await add.getByRole('checkbox', { name: /link\.deleted/ }).check()
  await add.getByRole('radio', { name: 'Only these links' }).check()
  await add.getByLabel('Find a link').fill('watched')
  await add.getByRole('button', { name: /Add .*watched-link/ }).click()
  await add.getByRole('list', { name: 'Links chosen' }).getByText('watched-link').waitFor()
  await admin.screenshot('webhooks-add')
  await add.getByRole('button', { name: 'Add webhook' }).click()

  const shown = page.getByRole('dialog', { name: "Your webhook's signing secret" })
  await shown.getByText('it will not be shown again').waitFor()
  const secret = await shown.getByLabel(/Signing secret/).inputValue()
  expect(secret).toMatch(/^whsec_/)
  receiver.secrets.set('/dash', secret)
  await shown.getByRole('button', { name: 'I have saved it' }).click()
  await shown.waitFor({ state: 'detached' })
  expect(await page.content()).not.toContain(secret)
  const row = page.getByRole('row', { name: /Growth Slack/ })
  await row.getByText('Active').waitFor()
  const [hook] = (await (await server.api('/webhooks')).json()) as { id: string; events: string[]; linkIds: string[] }[]
  expect(hook).toMatchObject({ events: ['link.created', 'link.clicked', 'link.deleted'], linkIds: [watched.id] })

  // Only the chosen link's visits arrive, signed with the secret the page showed.
  expect(await visit(watched.shortLink, '8.8.8.8')).toBe(302)
  expect(await visit(other.shortLink, '8.8.8.8')).toBe(302)
  await server.clicksFlushed()
  await until(
    'the visit delivered',
    async () => receiver.arrivals.length,
    (n) => n >= 1,
  )
  expect(receiver.unverified).toEqual([])
  expect(receiver.arrivals.map((a) => [a.type, a.envelope.data.link.id])).toEqual([['link.clicked', watched.id]])

  // A test event from the list, then the deliveries: the endpoint fails it, a retry delivers it.
  receiver.answer = ({ attempt }) => (attempt === 1 ? 500 : 200)
  await row.getByRole('button', { name: /Send a test event/ }).click()
  await page.getByText('Test event sent to Growth Slack').waitFor()
  await row.getByRole('button', { name: /Deliveries of/ }).click()
  const deliveries = page.getByRole('dialog', { name: /Deliveries to Growth Slack/ })
  const testRow = deliveries.getByRole('row', { name: /webhook\.test/ })
  await testRow.getByText('500').waitFor()
  await testRow.getByText('Waiting').waitFor()
  await deliveries
    .getByRole('row', { name: /link\.clicked/ })
    .getByText('Delivered')
    .waitFor()
  await admin.screenshot('webhooks-deliveries')
  expect(await admin.seriousA11yViolations()).toEqual([])
  await testRow.getByRole('button', { name: /Retry/ }).click()
  await testRow.getByText('Delivered').waitFor()
  expect(receiver.arrivals.filter((a) => a.type === 'webhook.test').map((a) => a.attempt)).toEqual([1, 2])
  await deliveries.getByRole('button', { name: 'Close' }).click()

  // Disable (nothing is sent), enable, delete.
  await row.getByRole('button', { name: /^Disable/ }).click()
  await row.getByText('Disabled').waitFor()
  // Read back through the API (on PostgreSQL the read right after the page's change once answered false: polled within a few seconds).
  const stored = await until(
    'the webhook stored as disabled',
    async () => ((await (await server.api(`/webhooks/${hook!.id}`)).json()) as { disabled: boolean }).disabled,
    (d) => d === true,
    5_000,
  )
  expect(stored).toBe(true)
  await row.getByRole('button', { name: /^Enable/ }).click()
  await row.getByText('Active').waitFor()
  await row.getByRole('button', { name: /^Delete/ }).click()
  await page
    .getByRole('dialog', { name: /Delete webhook/ })
    .getByRole('button', { name: 'Delete webhook' })
    .click()
  await page.getByText('No webhooks yet').waitFor()
  expect((await server.api(`/webhooks/${hook!.id}`)).status).toBe(404)
  expect(admin.errors).toEqual([])
  expect(admin.externalRequests).toEqual([])
})

test('a member watches Live: visits of their links arrive in the list and on the map, and keep coming after the connection drops', async () => {
  // This page reaches its server through a TCP proxy the test can cut, as a flaky network would.
  const proxyPort = await freePort()
  const node = await startServer({
    publicBaseUrl: `https://localhost:${proxyPort}/api`,
    toml: `trustProxy = ["127.0.0.1", "::1"]\n[geoip]\ndatabase = "${CITY_DB}"\n`,
  })
  let proxy = startRoundRobinProxy([node.httpsPort], proxyPort)
  const direct = (shortLink: string) => shortLink.replace(`:${proxyPort}/`, `:${node.httpsPort}/`)
  const visitNode = (shortLink: string, ip: string, scan = false) =>
    node.fetch(direct(scan ? `${shortLink}?qr=1` : shortLink), { headers: { 'user-agent': UA.iphone, 'x-forwarded-for': ip } }).then((r) => r.status)
  const key = await node.keyFor('live-member', 'member')
  const member = await browser.open({ ...node, httpsPort: proxyPort }, { width: 'phone', signIn: { apiKey: key } })
  try {
    const made = async (k: string, apiKey?: string) =>
      (await (
        await node.api('/links/link', { method: 'POST', key: apiKey, json: { data: { url: `https://${k}.example/` }, linkOptions: { key: k } } })
      ).json()) as {
        id: string
        shortLink: string
      }
    const mine = await made('live-mine', key)
    const notMine = await made('live-not-mine')
    await member.goto('/live')
    await member.page.getByRole('status').filter({ hasText: 'Live' }).waitFor()
    await member.page.getByText('Waiting for visits…').waitFor()
    expect(await visitNode(mine.shortLink, '8.8.8.8')).toBe(302)
    expect(await visitNode(mine.shortLink, '8.8.8.8', true)).toBe(302)
    expect(await visitNode(notMine.shortLink, '8.8.8.8')).toBe(302)
    const list = member.page.getByRole('list', { name: 'Visits, newest first' })
    await until(
      'two visits listed',
      async () => list.getByRole('listitem').count(),
      (n) => n === 2,
    )
    expect(await list.getByText('QR scan').count()).toBe(1)
    expect(await list.getByText('United States').count()).toBe(2)
    expect(await member.page.locator('.stats-map path[data-country="US"]').getAttribute('data-clicks')).toBe('2')
    await member.screenshot('live')
    expect(await member.seriousA11yViolations()).toEqual([])

    // The connection drops; a visit meanwhile is not lost: the browser resumes with Last-Event-ID.
    proxy.stop()
    await member.page.getByText(/Reconnecting/).waitFor()
    expect(await visitNode(mine.shortLink, '5.9.0.1')).toBe(302)
    // Its click (and event) stored before the page can reconnect.
    await until(
      'the visit stored',
      async () => ((await (await node.api(`/links/${mine.id}`)).json()) as { clicks: number }).clicks,
      (n) => n === 3,
    )
    proxy = startRoundRobinProxy([node.httpsPort], proxyPort)
    await until(
      'the missed visit',
      async () => list.getByRole('listitem').count(),
      (n) => n === 3,
      30_000,
    )
    await list.getByText('Germany').waitFor()

    // One link's Live view.
    await member.goto(`/links/${mine.id}/live`)
    await member.page.getByText('live-mine').first().waitFor()
    expect(await visitNode(mine.shortLink, '8.8.8.8')).toBe(302)
    await until(
      'the visit on the one-link view',
      async () => member.page.getByRole('list', { name: 'Visits, newest first' }).getByRole('listitem').count(),
      (n) => n === 1,
    )
    expect(member.errors.filter((e) => !/ERR_CONNECTION|net::|EventSource/.test(e))).toEqual([])
  } finally {
    await member.close()
    proxy.stop()
    await node.stop()
  }
})
