/**
 * Webhooks through the API in-process (the real app on an in-memory store) with a real
 * receiver on loopback that checks every delivery with the Standard Webhooks reference
 * library: the rules of the endpoints (secret once, scope, filters, private targets), and
 * events delivered to the webhooks that want them, signed, with deliveries, retry and test.
 */
import { afterAll, afterEach, beforeAll, describe, expect, test } from 'bun:test'
import { type ApiHarness, createHarness } from '../../test/helpers/in-process'
import { until } from '../../test/helpers/poll'
import { type Receiver, startReceiver } from '../../test/helpers/webhook-receiver'

let h: ApiHarness
let receiver: Receiver
beforeAll(async () => {
  h = createHarness({ webhooks: { allowPrivateNetworks: true } })
  await h.deps.webhooks.start()
  receiver = startReceiver()
})
afterAll(async () => {
  await h.deps.webhooks.stop()
  receiver.stop()
})
afterEach(() => {
  receiver.answer = () => 204
})

const newLink = async (key: string, as?: string, extra: object = {}) => {
  const r = await h.call('POST', '/links/link', { key: as, json: { data: { url: `https://${key}.example/` }, linkOptions: { key, ...extra } } })
  expect(r.status).toBe(200)
  return r.body as { id: string; shortLink: string }
}

describe('webhook records', () => {
  test('create shows the secret once; reads never; bad input is 422 naming the field; 404 for links the owner cannot see', async () => {
    const made = await h.call('POST', '/webhooks', {
      key: h.keys.member,
      json: { url: 'https://hooks.example.com/in?x=1', events: ['link.created', 'link.clicked'], name: 'Zapier' },
    })
    expect(made.status).toBe(200)
    expect(made.body).toMatchObject({
      url: 'https://hooks.example.com/in?x=1',
      events: ['link.created', 'link.clicked'],
      name: 'Zapier',
      linkIds: [],
      tagIds: [],
      disabled: false,
      userId: 'usr_alice',
      failingSince: null,
    })
    expect(made.body.id).toMatch(/^whk_/)
    expect(made.body.secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/)
    const read = await h.call('GET', `/webhooks/${made.body.id}`, { key: h.keys.member })
    expect(read.status).toBe(200)
    expect(JSON.stringify(read.body)).not.toContain('whsec_')
    const { secret: _, ...shown } = made.body
    expect(read.body).toEqual(shown)

    const bad = async (json: unknown, field: string) => {
      const r = await h.call('POST', '/webhooks', { key: h.keys.member, json })
      expect(r.status).toBe(422)
      expect(r.body.code).toBe('parameter_error')
      expect(r.body.message).toContain(field)
    }
    await bad({ url: 'ftp://x.example/', events: ['link.created'] }, "'url'")
    await bad({ url: 'not a url', events: ['link.created'] }, "'url'")
    await bad({ url: 'https://user:pw@x.example/', events: ['link.created'] }, "'url'")
    await bad({ url: 'https://x.example/', events: [] }, 'events')
    await bad({ url: 'https://x.example/', events: ['link.created', 'link.created'] }, 'events')
    await bad({ url: 'https://x.example/', events: ['link.exploded'] }, 'events')
    await bad({ url: 'https://x.example/', events: ['link.created'], secret: 'mine' }, 'secret')
    const bobs = await newLink('bobs-link', h.keys.other)
    const hidden = await h.call('POST', '/webhooks', { key: h.keys.member, json: { url: 'https://x.example/', events: ['link.clicked'], linkIds: [bobs.id] } })
    expect(hidden.status).toBe(404)
    const admins = await h.call('POST', '/webhooks', { json: { url: 'https://x.example/', events: ['link.clicked'], linkIds: [bobs.id] } })
    expect(admins.status).toBe(200)
    expect((await h.call('DELETE', `/webhooks/${admins.body.id}`)).status).toBe(200)
    expect((await h.call('DELETE', `/webhooks/${made.body.id}`, { key: h.keys.member })).body).toEqual({ id: made.body.id })
    expect((await h.call('GET', `/webhooks/${made.body.id}`, { key: h.keys.member })).status).toBe(404)
  })

  test("members see and change their own webhooks only; admins everyone's; read-only keys read", async () => {
    const mine = (await h.call('POST', '/webhooks', { key: h.keys.member, json: { url: 'https://a.example/', events: ['link.created'] } })).body
    const theirs = (await h.call('POST', '/webhooks', { key: h.keys.other, json: { url: 'https://b.example/', events: ['link.created'] } })).body
    const listed = await h.call('GET', '/webhooks', { key: h.keys.member })
    expect(listed.body.map((w: { id: string }) => w.id)).toEqual([mine.id])
    expect(listed.headers.get('x-total-count')).toBe('1')
    const all = await h.call('GET', '/webhooks?pageSize=100')
    expect(all.body.map((w: { id: string }) => w.id)).toEqual(expect.arrayContaining([mine.id, theirs.id]))
    expect((await h.call('GET', `/webhooks/${theirs.id}`, { key: h.keys.member })).status).toBe(403)
    expect((await h.call('PATCH', `/webhooks/${theirs.id}`, { key: h.keys.member, json: { disabled: true } })).status).toBe(403)
    expect((await h.call('GET', `/webhooks/${theirs.id}/deliveries`, { key: h.keys.member })).status).toBe(403)
    expect((await h.call('POST', `/webhooks/${theirs.id}/test`, { key: h.keys.member })).status).toBe(403)
    const patched = await h.call('PATCH', `/webhooks/${theirs.id}`, { json: { name: 'By the admin', events: ['link.deleted'] } })
    expect(patched.body).toMatchObject({ name: 'By the admin', events: ['link.deleted'], userId: 'usr_bob' })
    expect((await h.call('POST', '/webhooks', { key: h.keys.readonly, json: { url: 'https://c.example/', events: ['link.created'] } })).status).toBe(403)
    expect((await h.call('GET', '/webhooks', { key: h.keys.readonly })).status).toBe(200)
    for (const w of [mine, theirs]) await h.call('DELETE', `/webhooks/${w.id}`)
  })

  test('private, loopback and link-local targets are refused without [webhooks] allowPrivateNetworks', async () => {
    const strict = createHarness()
    for (const url of [
      'http://127.0.0.1:8080/hook',
      'http://localhost/hook',
      'http://[::1]/',
      'http://10.1.2.3/',
      'http://169.254.169.254/latest',
      'http://[::ffff:192.168.0.1]/',
    ]) {
      const r = await strict.call('POST', '/webhooks', { json: { url, events: ['link.created'] } })
      expect(r.status).toBe(422)
      expect(r.body.message).toContain('allowPrivateNetworks')
    }
    const ok = await strict.call('POST', '/webhooks', { json: { url: 'https://93.184.216.34/hook', events: ['link.created'] } })
    expect(ok.status).toBe(200)
    const moved = await strict.call('PATCH', `/webhooks/${ok.body.id}`, { json: { url: 'http://192.168.1.10/' } })
    expect(moved.status).toBe(422)
  })
})

describe('deliveries', () => {
  test("events reach the webhooks that want them, signed; a member's webhook gets only their links; data is the record", async () => {
    const alice = await h.call('POST', '/webhooks', { key: h.keys.member, json: { url: receiver.url('/alice'), events: ['link.created', 'link.deleted'] } })
    const admin = await h.call('POST', '/webhooks', { json: { url: receiver.url('/admin'), events: ['link.created'] } })
    receiver.secrets.set('/alice', alice.body.secret)
    receiver.secrets.set('/admin', admin.body.secret)
    const mine = await newLink('alices-first', h.keys.member)
    const bobs = await newLink('bobs-second', h.keys.other)
    await h.call('DELETE', `/links/${mine.id}`, { key: h.keys.member })
    await until(
      'three deliveries',
      async () => receiver.arrivals.length,
      (n) => n >= 4,
    )
    await h.deps.webhooks.delivery.idle()
    expect(receiver.unverified).toEqual([])
    const at = (path: string) => receiver.arrivals.filter((a) => a.path === path).map((a) => `${a.type} ${a.envelope.data.key}`)
    expect(at('/alice')).toEqual(['link.created alices-first', 'link.deleted alices-first'])
    expect(at('/admin')).toEqual(['link.created alices-first', 'link.created bobs-second'])
    const created = receiver.arrivals.find((a) => a.path === '/alice')!
    expect(created.envelope).toEqual({ id: created.id, type: 'link.created', createdAt: expect.any(String), data: expect.objectContaining({ id: mine.id }) })
    expect(created.id).toMatch(/^evt_/)
    expect(created.headers['content-type']).toBe('application/json')
    expect(created.headers['user-agent']).toContain('shortlink-webhooks')
    void bobs
    const list = await h.call('GET', `/webhooks/${alice.body.id}/deliveries`, { key: h.keys.member })
    expect(list.body).toEqual([
      expect.objectContaining({ type: 'link.deleted', status: 'delivered', attempts: 1, responseStatus: 204, nextAttemptAt: null }),
      expect.objectContaining({ type: 'link.created', status: 'delivered', attempts: 1, responseStatus: 204, eventId: created.id }),
    ])
    for (const w of [alice, admin]) await h.call('DELETE', `/webhooks/${w.body.id}`)
  })

  test('a test event goes to that webhook only; a failed delivery is retried by hand and delivered', async () => {
    const w = await h.call('POST', '/webhooks', { key: h.keys.member, json: { url: receiver.url('/t'), events: ['link.deleted'] } })
    receiver.secrets.set('/t', w.body.secret)
    receiver.answer = () => 500
    const t = await h.call('POST', `/webhooks/${w.body.id}/test`, { key: h.keys.member })
    expect(t.status).toBe(202)
    expect(t.body).toMatchObject({ type: 'webhook.test', status: 'pending', attempts: 0 })
    const failed = await until(
      'the failed first attempt',
      async () => (await h.call('GET', `/webhooks/${w.body.id}/deliveries`, { key: h.keys.member })).body[0],
      (d) => d.attempts === 1,
    )
    expect(failed).toMatchObject({ status: 'pending', responseStatus: 500, eventId: t.body.eventId })
    expect(Date.parse(failed.nextAttemptAt) - Date.parse(failed.at)).toBe(5000)
    receiver.answer = () => 200
    const again = await h.call('POST', `/webhooks/${w.body.id}/deliveries/${t.body.eventId}/retry`, { key: h.keys.member })
    expect(again.status).toBe(202)
    const done = await until(
      'the retried delivery',
      async () => (await h.call('GET', `/webhooks/${w.body.id}/deliveries`, { key: h.keys.member })).body[0],
      (d) => d.status === 'delivered',
    )
    expect(done).toMatchObject({ attempts: 2, responseStatus: 200 })
    const arrivals = receiver.arrivals.filter((a) => a.path === '/t')
    expect(arrivals.map((a) => [a.id, a.attempt, a.type])).toEqual([
      [t.body.eventId, 1, 'webhook.test'],
      [t.body.eventId, 2, 'webhook.test'],
    ])
    expect(arrivals[0]!.envelope.data).toEqual({ webhookId: w.body.id, message: expect.any(String) })
    expect((await h.call('POST', `/webhooks/${w.body.id}/deliveries/evt_nope/retry`, { key: h.keys.member })).status).toBe(404)
    await h.call('DELETE', `/webhooks/${w.body.id}`)
  })
})
