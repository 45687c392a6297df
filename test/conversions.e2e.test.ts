/**
 * Conversions against the compiled binary, driven by Dub's own SDK (the `dub` package) with only
 * its server URL and key changed: a visit to a link with trackConversion hands the landing page
 * its click id (sl_id); the SDK's track.lead and track.sale record a lead and a sale on it;
 * statistics with conversions=true count them beside the clicks. Runs on SQLite and, through
 * scripts/with-postgres.ts, on PostgreSQL.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { Dub } from 'dub'
import { HTTPClient } from 'dub/lib/http.js'
import { until } from './helpers/poll'
import { startServer, type TestServer } from './helpers/server'
import { type Receiver, startReceiver } from './helpers/webhook-receiver'

const IPHONE = 'Mozilla/5.0 (iPhone; CPU iPhone OS 17_0 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.0 Mobile/15E148 Safari/604.1'

let server: TestServer
let member: string
let other: string
let dub: Dub
let link: { id: string; shortLink: string }
let receiver: Receiver

/** Dub's SDK pointed at this server: its URL, a shortlink key, and a fetch trusting the server's CA. */
function dubFor(key: string): Dub {
  const httpClient = new HTTPClient({ fetcher: (req) => fetch(req as Request, { tls: { ca: server.ca } } as RequestInit) })
  return new Dub({ token: key, serverURL: server.baseUrl, httpClient, retryConfig: { strategy: 'none' } })
}

/** A counted visit (a phone), answered with the click id the destination receives. */
async function visitForClickId(): Promise<string> {
  const r = await server.fetch(link.shortLink, { headers: { 'user-agent': IPHONE } })
  expect(r.status).toBe(302)
  const id = new URL(r.headers.get('location')!).searchParams.get('sl_id')
  expect(id).toMatch(/^[A-Za-z0-9_-]{16,32}$/)
  return id!
}

beforeAll(async () => {
  server = await startServer({ toml: '\n[webhooks]\nallowPrivateNetworks = true\n' })
  receiver = startReceiver()
  member = await server.keyFor('shopkeeper', 'member')
  other = await server.keyFor('stranger', 'member')
  dub = dubFor(member)
  const r = await server.api('/links/link', {
    method: 'POST',
    key: member,
    json: { data: { url: 'https://shop.example/welcome' }, linkOptions: { key: 'spring-sale', trackConversion: true, utm: { campaign: 'spring' } } },
  })
  expect(r.status).toBe(200)
  link = (await r.json()) as typeof link
  const hook = await server.api('/webhooks', { method: 'POST', key: member, json: { url: receiver.url('/shop'), events: ['lead.created', 'sale.created'] } })
  expect(hook.status).toBe(200)
  receiver.secrets.set('/shop', ((await hook.json()) as { secret: string }).secret)
})
afterAll(async () => {
  await server?.stop()
  receiver?.stop()
})

describe("Dub's SDK against shortlink", () => {
  test('track.lead right after the visit, and again (the first lead answers, nothing is counted twice)', async () => {
    const clickId = await visitForClickId()
    const lead = await dub.track.lead({ clickId, eventName: 'Sign up', customerExternalId: 'cus-42', customerName: 'Ada', customerEmail: 'ada@shop.example' })
    expect(lead.click.id).toBe(clickId)
    expect(lead.link).toMatchObject({ id: link.id, shortLink: link.shortLink, url: 'https://shop.example/welcome' })
    expect(lead.customer).toMatchObject({ name: 'Ada', email: 'ada@shop.example', externalId: 'cus-42' })
    const again = await dub.track.lead({ clickId: await visitForClickId(), eventName: 'Sign up', customerExternalId: 'cus-42' })
    expect(again.click.id).toBe(clickId)
  })

  test('track.sale goes to the lead; the same invoice twice is one sale; another amount with it is a conflict', async () => {
    const sale = { customerExternalId: 'cus-42', amount: 2900, currency: 'eur', invoiceId: 'INV-1001', paymentProcessor: 'stripe' as const }
    const first = await dub.track.sale(sale)
    expect(first).toMatchObject({ eventName: 'Purchase', customer: { externalId: 'cus-42' }, sale: { amount: 2900, currency: 'eur', invoiceId: 'INV-1001' } })
    const again = await dub.track.sale(sale)
    expect(again.sale).toEqual(first.sale)
    await expect(dub.track.sale({ ...sale, amount: 3900 })).rejects.toMatchObject({ statusCode: 409 })
    await dub.track.sale({ customerExternalId: 'cus-42', amount: 1000 })
  })

  test('20 identical sale calls at once make one sale (the store keeps the invoice id, on SQLite and PostgreSQL)', async () => {
    const body = { customerExternalId: 'cus-42', amount: 500, currency: 'usd', invoiceId: 'INV-RACE', eventName: 'Upgrade' }
    const answers = await Promise.all(Array.from({ length: 20 }, () => server.api('/track/sale', { method: 'POST', key: member, json: body })))
    expect(answers.map((a) => a.status)).toEqual(Array(20).fill(200))
    const ids = new Set(await Promise.all(answers.map(async (a) => ((await a.json()) as { id: string }).id)))
    expect(ids.size).toBe(1)
  })

  test("a member tracking against another user's click is refused (404), and nothing is counted", async () => {
    const clickId = await visitForClickId()
    await expect(dubFor(other).track.lead({ clickId, eventName: 'Sign up', customerExternalId: 'intruder' })).rejects.toMatchObject({ statusCode: 404 })
  })

  test('statistics with conversions=true: leads, sales and revenue per currency beside the clicks, by every grouping', async () => {
    await server.clicksFlushed()
    const stats = async (q: string) => {
      const r = await server.api(`/statistics?conversions=true&linkId=${link.id}&${q}`, { key: member })
      expect(r.status).toBe(200)
      return (await r.json()) as any
    }
    const count = await stats('groupBy=count')
    expect(count).toEqual({ clicks: 3, scans: 0, leads: 1, sales: 3, saleAmount: { eur: 2900, usd: 1500 } })
    expect(await stats('groupBy=device')).toEqual([{ device: 'Mobile', clicks: 3, scans: 0, leads: 1, sales: 3, saleAmount: { eur: 2900, usd: 1500 } }])
    expect(await stats('groupBy=utm_campaign')).toEqual([
      { utmCampaign: 'spring', clicks: 3, scans: 0, leads: 1, sales: 3, saleAmount: { eur: 2900, usd: 1500 } },
    ])
    expect(await stats('groupBy=link')).toMatchObject([{ linkId: link.id, clicks: 3, leads: 1, sales: 3 }])
    expect(await stats('groupBy=count&device=Desktop')).toEqual({ clicks: 0, scans: 0, leads: 0, sales: 0, saleAmount: {} })
    const series = (await stats('groupBy=time&granularity=day&interval=24h')) as { leads: number; sales: number }[]
    expect(series.reduce((n, b) => n + b.leads, 0)).toBe(1)
    expect(series.reduce((n, b) => n + b.sales, 0)).toBe(3)
    // Without the flag the answer is the contract's plain one.
    expect(await (await server.api(`/statistics?linkId=${link.id}`, { key: member })).json()).toEqual({ clicks: 3, scans: 0 })
  })

  test('the raw export lists leads and sales with their click fields', async () => {
    const r = await server.api(`/statistics/events?event=sales&format=ndjson&linkId=${link.id}`, { key: member })
    expect(r.status).toBe(200)
    const rows = (await r.text())
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l))
    expect(rows).toHaveLength(3)
    expect(rows[0]).toMatchObject({
      linkId: link.id,
      device: 'Mobile',
      utmCampaign: 'spring',
      eventName: 'Purchase',
      customerExternalId: 'cus-42',
      amount: 2900,
      currency: 'eur',
      invoiceId: 'INV-1001',
    })
    expect(rows[0].clickId).toMatch(/^[A-Za-z0-9_-]{22}$/)
    const leads = await (await server.api(`/statistics/events?event=leads&format=csv&linkId=${link.id}`, { key: member })).text()
    expect(leads.split('\n')[0]).toContain('clickId')
    expect(leads.trim().split('\n')).toHaveLength(2)
  })

  test('lead.created and sale.created are delivered once per conversion, signed, with the link and its destination', async () => {
    // One lead (cus-42 "Sign up"; the second call counted nothing) and three sales (INV-1001, the 1000 without invoice, INV-RACE).
    await until(
      '4 deliveries',
      async () => receiver.delivered().size,
      (n) => n >= 4,
    )
    expect(receiver.unverified).toEqual([])
    expect(receiver.duplicates()).toEqual([])
    const types = receiver.arrivals.filter((a) => a.answered < 300).map((a) => a.type)
    expect(types.filter((t) => t === 'lead.created')).toHaveLength(1)
    expect(types.filter((t) => t === 'sale.created')).toHaveLength(3)
    const lead = receiver.arrivals.find((a) => a.type === 'lead.created')!
    expect(lead.envelope.data).toMatchObject({
      eventName: 'Sign up',
      customer: { externalId: 'cus-42' },
      link: { id: link.id, shortLink: link.shortLink, destination: 'https://shop.example/welcome' },
    })
    const race = receiver.arrivals.find((a) => a.type === 'sale.created' && a.envelope.data.sale.invoiceId === 'INV-RACE')!
    expect(race.envelope.data).toMatchObject({ eventName: 'Upgrade', sale: { amount: 500, currency: 'usd' }, link: { id: link.id } })
  })
})
