/**
 * Conversions through the API in-process (the real app on an in-memory SQLite store and an
 * in-memory events engine), with visits through the redirect handler the server uses: the click
 * id handed over as sl_id, leads and sales attributed to it, idempotency kept by the store,
 * scope, the attribution window, and the outbox events.
 */
import { beforeAll, describe, expect, test } from 'bun:test'
import { type ApiHarness, createHarness } from '../../test/helpers/in-process'
import type { RedirectHandler } from '../redirect/redirect.handler'
import { redirectHandlerFor } from '../redirect/redirect.test-fixtures'
import { newClickId } from '../stats'

let h: ApiHarness
let redirects: RedirectHandler

async function visit(path: string, headers: Record<string, string> = {}) {
  const request = new Request(`https://localhost${path}`, {
    headers: { 'user-agent': 'Mozilla/5.0 (iPhone; CPU iPhone OS 17_0 like Mac OS X) Safari/604.1', ...headers },
  })
  const q = path.indexOf('?')
  return redirects.handle(request, q < 0 ? path : path.slice(0, q), q < 0 ? '' : path.slice(q + 1), 'localhost', () => '192.0.2.1')
}

/** A visit's click id, read from the Location it was sent to. */
async function clickOf(path: string): Promise<string> {
  const res = await visit(path)
  expect(res.status).toBe(302)
  const id = new URL(res.headers.get('location')!).searchParams.get('sl_id')
  expect(id).toMatch(/^[A-Za-z0-9_-]{22}$/)
  return id!
}

let alicesLink: { id: string; shortLink: string }
beforeAll(async () => {
  h = createHarness()
  redirects = redirectHandlerFor(h.deps)
  const made = await h.call('POST', '/links/link', {
    key: h.keys.member,
    json: { data: { url: 'https://shop.example/landing?sl_id=stale#buy' }, linkOptions: { key: 'shop', trackConversion: true, utm: { source: 'qr' } } },
  })
  expect(made.status).toBe(200)
  alicesLink = made.body
})

describe('trackConversion', () => {
  test('is on the record; off by default; refused for types whose visitors go to no http(s) URL', async () => {
    expect((await h.call('GET', `/links/${alicesLink.id}`)).body.trackConversion).toBe(true)
    const plain = await h.call('POST', '/links/link', { json: { data: { url: 'https://x.example/' } } })
    expect(plain.body.trackConversion).toBe(false)
    const hosted = await h.call('POST', '/links/text', { json: { data: { text: 'hello' }, linkOptions: { trackConversion: true } } })
    expect(hosted.status).toBe(422)
    expect(hosted.body.message).toContain('linkOptions.trackConversion')
    const off = await h.call('PATCH', `/links/${plain.body.id}`, { json: { linkOptions: { trackConversion: true } } })
    expect(off.body.trackConversion).toBe(true)
    const back = await h.call('PATCH', `/links/${plain.body.id}`, { json: { linkOptions: { trackConversion: null } } })
    expect(back.body.trackConversion).toBe(false)
  })

  test('each counted visit gets its own click id as sl_id, after the UTM merge, replacing one already there', async () => {
    const res = await visit('/shop?utm_medium=print')
    const location = new URL(res.headers.get('location')!)
    expect(location.origin + location.pathname).toBe('https://shop.example/landing')
    expect(location.searchParams.getAll('sl_id')).toHaveLength(1)
    expect(location.searchParams.get('sl_id')).not.toBe('stale')
    expect(location.searchParams.get('utm_source')).toBe('qr')
    expect(location.searchParams.get('utm_medium')).toBe('print')
    expect(location.hash).toBe('#buy')
    expect(await clickOf('/shop')).not.toBe(await clickOf('/shop'))
    // A bot is not counted: no click id (the destination's own sl_id stays as it is).
    const bot = await visit('/shop', { 'user-agent': 'Googlebot/2.1 (+http://www.google.com/bot.html)' })
    expect(new URL(bot.headers.get('location')!).searchParams.getAll('sl_id')).toEqual(['stale'])
  })
})

describe('POST /track/lead', () => {
  test("answers Dub's fields and more; the same customer and event again answer the first lead and count nothing", async () => {
    const clickId = await clickOf('/shop')
    const body = { clickId, eventName: 'Sign up', customerExternalId: 'cust-1', customerName: 'Ann', customerEmail: null, customerAvatar: null, mode: 'async' }
    const r = await h.call('POST', '/track/lead', { key: h.keys.member, json: body })
    expect(r.status).toBe(200)
    expect(r.body).toMatchObject({
      eventName: 'Sign up',
      clickId,
      linkId: alicesLink.id,
      eventQuantity: 1,
      click: { id: clickId },
      link: {
        id: alicesLink.id,
        domain: 'localhost',
        key: 'shop',
        shortLink: alicesLink.shortLink,
        url: 'https://shop.example/landing?sl_id=stale#buy',
        partnerId: null,
      },
      customer: { name: 'Ann', email: null, avatar: null, externalId: 'cust-1' },
    })
    expect(r.body.id).toMatch(/^led_/)
    const again = await h.call('POST', '/track/lead', { key: h.keys.member, json: { ...body, clickId: await clickOf('/shop') } })
    expect(again.status).toBe(200)
    expect(again.body.id).toBe(r.body.id)
    expect(again.body.clickId).toBe(clickId)
    const rows = h.deps.db.query("SELECT count(*) AS n FROM conversions WHERE kind = 'lead' AND event_name = 'Sign up'").get() as { n: number }
    expect(rows.n).toBe(1)
  })

  test("another member's click is not found; a readonly key is refused; unknown ids are not found; bad input is 422", async () => {
    const clickId = await clickOf('/shop')
    const lead = { clickId, eventName: 'Sign up', customerExternalId: 'cust-x' }
    const bobs = await h.call('POST', '/track/lead', { key: h.keys.other, json: lead })
    expect(bobs.status).toBe(404)
    expect(bobs.body.code).toBe('not_found')
    expect((await h.call('POST', '/track/lead', { key: h.keys.readonly, json: lead })).status).toBe(403)
    expect((await h.call('POST', '/track/lead', { key: h.keys.member, json: { ...lead, clickId: 'nosuchclickid1234567890' } })).status).toBe(404)
    for (const bad of [
      { ...lead, eventName: '' },
      { ...lead, customerExternalId: 'x'.repeat(101) },
      { ...lead, eventQuantity: 101 },
      { ...lead, mode: 'later' },
      { ...lead, extra: 1 },
      { ...lead, metadata: { big: 'x'.repeat(10_001) } },
      { ...lead, eventName: 'a\u0000b' },
    ]) {
      const r = await h.call('POST', '/track/lead', { key: h.keys.member, json: bad })
      expect(r.status).toBe(422)
      expect(r.body.code).toBe('parameter_error')
    }
    const count = h.deps.db.query("SELECT count(*) AS n FROM conversions WHERE user_id = 'usr_bob' OR event_name LIKE 'a%b'").get() as { n: number }
    expect(count.n).toBe(0)
    // The admin may track against anyone's click.
    expect((await h.call('POST', '/track/lead', { key: h.keys.admin, json: lead })).status).toBe(200)
  })

  test('a click older than the attribution window is 422', async () => {
    // A visit of 91 days ago, recorded as the redirect records one (its id carries its time).
    const at = Date.now() - 91 * 86_400_000
    const clickId = newClickId(at)
    h.deps.recorder.record({
      linkSeq: h.deps.links.findLiveRow('localhost', 'shop')!.seq,
      domain: 'localhost',
      at,
      scan: false,
      referer: null,
      refererUrl: null,
      clickId,
      visitor: { id: 1, os: 'IOS', browser: 'Safari', device: 'Mobile' },
      geo: { id: 0, continent: null, country: null, region: null, city: null },
      utm: { id: 0, source: null, medium: null, campaign: null, term: null, content: null },
    })
    await h.deps.recorder.drain()
    const r = await h.call('POST', '/track/lead', { key: h.keys.member, json: { clickId, eventName: 'Sign up', customerExternalId: 'late' } })
    expect(r.status).toBe(422)
    expect(r.body.message).toContain('attribution window of 90 days')
  })
})

describe('POST /track/sale', () => {
  test("goes to the click of the customer's latest lead; 20 identical calls at once make one sale; another body with the invoice is 409", async () => {
    const clickId = await clickOf('/shop')
    expect((await h.call('POST', '/track/lead', { key: h.keys.member, json: { clickId, eventName: 'Sign up', customerExternalId: 'buyer' } })).status).toBe(200)
    const sale = { customerExternalId: 'buyer', amount: 4900, currency: 'EUR', invoiceId: 'inv-1', paymentProcessor: 'stripe', metadata: { plan: 'pro' } }
    const answers = await Promise.all(Array.from({ length: 20 }, () => h.call('POST', '/track/sale', { key: h.keys.member, json: sale })))
    for (const a of answers) expect(a.status).toBe(200)
    expect(new Set(answers.map((a) => a.body.id)).size).toBe(1)
    expect(answers[0]!.body).toMatchObject({
      eventName: 'Purchase',
      linkId: alicesLink.id,
      clickId,
      customer: { externalId: 'buyer' },
      sale: { amount: 4900, currency: 'eur', paymentProcessor: 'stripe', invoiceId: 'inv-1', metadata: { plan: 'pro' } },
    })
    expect(answers[0]!.body.id).toMatch(/^sal_/)
    expect((h.deps.db.query("SELECT count(*) AS n FROM conversions WHERE invoice_id = 'inv-1'").get() as { n: number }).n).toBe(1)
    const other = await h.call('POST', '/track/sale', { key: h.keys.member, json: { ...sale, amount: 5000 } })
    expect(other.status).toBe(409)
    expect(other.body.code).toBe('conflict')
    // Without an invoice id each call is a sale.
    const { invoiceId: _, ...noInvoice } = sale
    const a = await h.call('POST', '/track/sale', { key: h.keys.member, json: noInvoice })
    const b = await h.call('POST', '/track/sale', { key: h.keys.member, json: noInvoice })
    expect(a.body.id).not.toBe(b.body.id)
  })

  test('an unknown customer is 404 without clickId and is created on the click with it; members see only their customers', async () => {
    const unknown = await h.call('POST', '/track/sale', { key: h.keys.member, json: { customerExternalId: 'walk-in', amount: 100 } })
    expect(unknown.status).toBe(404)
    const clickId = await clickOf('/shop')
    const direct = await h.call('POST', '/track/sale', {
      key: h.keys.member,
      json: { customerExternalId: 'walk-in', amount: 100, clickId, customerName: 'Walk' },
    })
    expect(direct.status).toBe(200)
    expect(direct.body).toMatchObject({ clickId, customer: { externalId: 'walk-in', name: 'Walk' }, sale: { currency: 'usd', paymentProcessor: 'custom' } })
    // Bob has no customer 'buyer' (Alice's): 404, nothing recorded.
    expect((await h.call('POST', '/track/sale', { key: h.keys.other, json: { customerExternalId: 'buyer', amount: 100 } })).status).toBe(404)
    expect((await h.call('POST', '/track/sale', { key: h.keys.member, json: { customerExternalId: 'buyer', amount: 0 } })).status).toBe(422)
    expect((await h.call('POST', '/track/sale', { key: h.keys.member, json: { customerExternalId: 'buyer', amount: 100, currency: 'euro' } })).status).toBe(422)
  })
})

describe('outbox', () => {
  test('lead.created and sale.created are appended once, with the link and its destination, in the scope of its owner', async () => {
    const clickId = await clickOf('/shop')
    await h.call('POST', '/track/lead', { key: h.keys.member, json: { clickId, eventName: 'Trial', customerExternalId: 'evt-1' } })
    await h.call('POST', '/track/lead', { key: h.keys.member, json: { clickId, eventName: 'Trial', customerExternalId: 'evt-1' } })
    await h.call('POST', '/track/sale', { key: h.keys.member, json: { customerExternalId: 'evt-1', amount: 1200, invoiceId: 'evt-inv' } })
    await h.call('POST', '/track/sale', { key: h.keys.member, json: { customerExternalId: 'evt-1', amount: 1200, invoiceId: 'evt-inv' } })
    const rows = h.deps.db
      .query<{ type: string; user_id: string; link_id: string; data: string }, []>(
        "SELECT type, user_id, link_id, data FROM events WHERE type IN ('lead.created', 'sale.created') AND data LIKE '%evt-1%' ORDER BY seq",
      )
      .all()
    expect(rows.map((r) => r.type)).toEqual(['lead.created', 'sale.created'])
    for (const r of rows) {
      expect(r.user_id).toBe('usr_alice')
      expect(r.link_id).toBe(alicesLink.id)
      expect(JSON.parse(r.data).link).toMatchObject({ id: alicesLink.id, destination: 'https://shop.example/landing?sl_id=stale#buy' })
    }
    expect(JSON.parse(rows[1]!.data).sale).toMatchObject({ amount: 1200, invoiceId: 'evt-inv' })
  })
})

describe('statistics with conversions=true', () => {
  test('leads, sales and revenue per currency on every row of every groupBy, filtered by the click dimensions, scoped to the caller', async () => {
    const made = await h.call('POST', '/links/link', {
      key: h.keys.other,
      json: { data: { url: 'https://bob.example/' }, linkOptions: { key: 'bobs', trackConversion: true, utm: { source: 'news' } } },
    })
    const clickId = await clickOf('/bobs')
    await h.call('POST', '/track/lead', { key: h.keys.other, json: { clickId, eventName: 'Sign up', customerExternalId: 'b1', eventQuantity: 3 } })
    await h.call('POST', '/track/sale', { key: h.keys.other, json: { customerExternalId: 'b1', amount: 500, currency: 'gbp' } })
    await h.call('POST', '/track/sale', { key: h.keys.other, json: { customerExternalId: 'b1', amount: 700, currency: 'GBP' } })
    await h.call('POST', '/track/sale', { key: h.keys.other, json: { customerExternalId: 'b1', amount: 100 } })
    await h.deps.recorder.drain()
    const stats = async (q: string, key = h.keys.other) => {
      const r = await h.call('GET', `/statistics?conversions=true&${q}`, { key })
      expect(r.status).toBe(200)
      return r.body
    }
    const totals = { leads: 3, sales: 3, saleAmount: { gbp: 1200, usd: 100 } }
    expect(await stats('groupBy=count')).toEqual({ clicks: 1, scans: 0, ...totals })
    expect(await stats('groupBy=device')).toEqual([{ device: 'Mobile', clicks: 1, scans: 0, ...totals }])
    expect(await stats('groupBy=os')).toEqual([{ os: 'IOS', clicks: 1, scans: 0, ...totals }])
    expect(await stats('groupBy=utm_source')).toEqual([{ utmSource: 'news', clicks: 1, scans: 0, ...totals }])
    expect(await stats('groupBy=link')).toEqual([
      { linkId: made.body.id, shortLink: made.body.shortLink, destination: 'https://bob.example/', clicks: 1, scans: 0, ...totals },
    ])
    expect(await stats('groupBy=link_type')).toEqual([{ linkType: 'link', clicks: 1, scans: 0, ...totals }])
    expect(await stats('groupBy=count&device=Desktop')).toEqual({ clicks: 0, scans: 0, leads: 0, sales: 0, saleAmount: {} })
    expect(await stats('groupBy=count&utmSource=news&qr=false')).toEqual({ clicks: 1, scans: 0, ...totals })
    expect(await stats('groupBy=count&qr=true')).toEqual({ clicks: 0, scans: 0, leads: 0, sales: 0, saleAmount: {} })
    const series = (await stats('groupBy=time&granularity=hour&interval=24h')) as { leads: number; sales: number; saleAmount: Record<string, number> }[]
    expect(series.length).toBeGreaterThanOrEqual(24)
    expect(series.reduce((n, b) => n + b.leads, 0)).toBe(3)
    expect(series.at(-1)).toMatchObject(totals)
    // Every zone (whole hours, :30) and granularity puts each conversion in exactly one bucket: the last, today's.
    for (const q of [
      'granularity=day&interval=7d',
      'granularity=day&interval=7d&timezone=Asia/Kolkata',
      'granularity=week&interval=30d&timezone=America/New_York',
    ]) {
      const rows = (await stats(`groupBy=time&${q}`)) as { leads: number; sales: number; saleAmount: Record<string, number> }[]
      expect(rows.reduce((n, b) => n + b.leads, 0)).toBe(3)
      expect(rows.at(-1)).toMatchObject(totals)
    }
    // Alice's statistics hold none of Bob's conversions; the admin's hold them.
    const alice = await stats(`groupBy=count&linkId=${alicesLink.id}`, h.keys.member)
    expect(alice.saleAmount.gbp).toBeUndefined()
    expect((await stats('groupBy=count', h.keys.admin)).saleAmount.gbp).toBe(1200)
    // Without the flag: the contract's plain rows.
    expect((await h.call('GET', '/statistics?groupBy=count', { key: h.keys.other })).body).toEqual({ clicks: 1, scans: 0 })
  })
})
