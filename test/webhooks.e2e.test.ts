/**
 * Webhooks and live events against the compiled binary, with a receiver on loopback started
 * here that checks every delivery with the Standard Webhooks reference library (npm
 * `standardwebhooks`), fails some on purpose and counts duplicates:
 * - links created, changed, deleted and visited arrive as signed events, each exactly once,
 *   the failed ones after their retry;
 * - kill -9 with deliveries pending (some in flight), start again: every event arrives;
 * - the live stream (GET /events) resumed with Last-Event-ID after a disconnect loses nothing;
 *   a comment line at least every 15 s; a member sees only their own links; a revoked key ends it;
 * - a private target is refused by a server without `[webhooks] allowPrivateNetworks`.
 * With SHORTLINK_TEST_PG_URL the same runs on PostgreSQL (scripts/test.sh).
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { until } from './helpers/poll'
import { json, startServer, type TestServer } from './helpers/server'
import { openSse } from './helpers/sse'
import { type Receiver, startReceiver } from './helpers/webhook-receiver'

const BROWSER_UA = 'Mozilla/5.0 (X11; Linux x86_64; rv:125.0) Gecko/20100101 Firefox/125.0'
const ALLOW_PRIVATE = '[webhooks]\nallowPrivateNetworks = true\n'

let server: TestServer
let receiver: Receiver
beforeAll(async () => {
  receiver = startReceiver()
  server = await startServer({ toml: ALLOW_PRIVATE })
})
afterAll(async () => {
  receiver?.stop()
  await server?.stop()
})

const createLink = async (s: TestServer, key: string, apiKey?: string) => {
  const r = await s.api('/links/link', { method: 'POST', key: apiKey, json: { data: { url: `https://${key}.example/` }, linkOptions: { key } } })
  expect(r.status).toBe(200)
  return (await r.json()) as { id: string; shortLink: string; key: string }
}
const visit = (s: TestServer, shortLink: string, scan = false) => s.fetch(scan ? `${shortLink}?qr=1` : shortLink, { headers: { 'user-agent': BROWSER_UA } })

describe('deliveries to a receiver', () => {
  test('every change and every visit arrives signed, exactly once; failed attempts are retried; the deliveries say so', async () => {
    const made = await json(
      await server.api('/webhooks', {
        method: 'POST',
        json: { url: receiver.url('/all'), events: ['link.created', 'link.updated', 'link.deleted', 'link.clicked'], name: 'everything' },
      }),
    )
    expect(made.status).toBe(200)
    receiver.secrets.set('/all', made.body.secret)
    // Every fourth event fails its first attempt: 503, or a redirect that must not be followed.
    let n = 0
    const failedOnPurpose = new Set<string>()
    receiver.answer = ({ id, attempt }) => {
      if (attempt > 1 || ++n % 4 !== 0) return 204
      failedOnPurpose.add(id)
      return n % 8 === 0 ? new Response(null, { status: 307, headers: { location: receiver.url('/elsewhere') } }) : 503
    }
    const links: { id: string; shortLink: string; key: string }[] = []
    for (let i = 0; i < 12; i++) links.push(await createLink(server, `hooked-${i}`))
    for (const l of links.slice(0, 4))
      expect((await server.api(`/links/${l.id}`, { method: 'PATCH', json: { linkOptions: { comment: 'changed' } } })).status).toBe(200)
    for (const l of links.slice(10)) expect((await server.api(`/links/${l.id}`, { method: 'DELETE' })).status).toBe(200)
    const visits = [0, 1, 1, 2, 2, 2, 3, 4, 5, 6]
    for (const [i, k] of visits.entries()) expect((await visit(server, links[k]!.shortLink, i % 3 === 0)).status).toBe(302)
    const expected = 12 + 4 + 2 + visits.length
    await until(
      'every event delivered',
      async () => receiver.delivered().size,
      (d) => d >= expected,
      60_000,
    )
    expect(receiver.unverified).toEqual([])
    expect(receiver.duplicates()).toEqual([])
    expect(receiver.delivered().size).toBe(expected)
    expect(receiver.arrivals.some((a) => a.path === '/elsewhere')).toBe(false)
    expect(failedOnPurpose.size).toBeGreaterThan(3)
    const byType = (type: string) => receiver.arrivals.filter((a) => a.type === type && a.answered === 204)
    expect([byType('link.created').length, byType('link.updated').length, byType('link.deleted').length, byType('link.clicked').length]).toEqual([12, 4, 2, 10])
    // link.clicked: the contract's fields, the short link as the API shows it, scans marked.
    const clicks = byType('link.clicked')
    const first = clicks.find((c) => c.envelope.data.link.id === links[0]!.id)!
    expect(first.envelope.data.link).toEqual({
      id: links[0]!.id,
      domain: 'localhost',
      key: 'hooked-0',
      shortLink: links[0]!.shortLink,
      destination: 'https://hooked-0.example/',
    })
    expect(Object.keys(first.envelope.data.click)).toEqual([
      'at',
      'scan',
      'continent',
      'country',
      'region',
      'city',
      'device',
      'os',
      'browser',
      'referer',
      'refererUrl',
      'utmSource',
      'utmMedium',
      'utmCampaign',
      'utmTerm',
      'utmContent',
    ])
    expect(first.envelope.data.click).toMatchObject({ scan: true, os: 'Linux', browser: 'Firefox', device: 'Desktop' })
    expect(clicks.filter((c) => c.envelope.data.click.scan).length).toBe(4)
    // link.updated carries the record as it is now.
    expect(byType('link.updated')[0]!.envelope.data).toMatchObject({ comments: 'changed', id: links[0]!.id })
    // The failed-then-delivered ones show two attempts.
    await until(
      'every delivery written as delivered',
      async () => (await json(await server.api(`/webhooks/${made.body.id}/deliveries?pageSize=100&status=delivered`))).body.length,
      (d) => d === expected,
    )
    const deliveries = (await json(await server.api(`/webhooks/${made.body.id}/deliveries?pageSize=100`))).body as {
      eventId: string
      attempts: number
      status: string
    }[]
    expect(deliveries.length).toBe(expected)
    expect(
      deliveries
        .filter((d) => d.attempts === 2)
        .map((d) => d.eventId)
        .sort(),
    ).toEqual([...failedOnPurpose].sort())
    expect((await server.api(`/webhooks/${made.body.id}`, { method: 'DELETE' })).status).toBe(200)
  })
})

describe('a crash', () => {
  test('kill -9 with deliveries pending and in flight, start again: every event arrives', async () => {
    const r = startReceiver()
    const node = await startServer({ toml: ALLOW_PRIVATE })
    try {
      const made = (await json(await node.api('/webhooks', { method: 'POST', json: { url: r.url('/k'), events: ['link.created', 'link.clicked'] } }))).body
      r.secrets.set('/k', made.secret)
      // The receiver is down (503) for most, and holds two requests open when the server dies.
      let hung = 0
      r.answer = () => (hung++ < 2 ? 'hang' : 503)
      const links: { id: string; shortLink: string; key: string }[] = []
      for (let i = 0; i < 10; i++) links.push(await createLink(node, `crash-${i}`))
      for (const l of links.slice(0, 3)) await visit(node, l.shortLink)
      await node.clicksFlushed()
      await until(
        'attempts made',
        async () => r.arrivals.length,
        (n) => n >= 5,
      )
      const ids = new Set((await json(await node.api(`/webhooks/${made.id}/deliveries?pageSize=100`))).body.map((d: { eventId: string }) => d.eventId))
      expect(node.proc.kill('SIGKILL')).toBeUndefined()
      await node.proc.exited
      r.answer = () => 200
      const again = await startServer({ dir: node.dir, toml: ALLOW_PRIVATE, env: { SHORTLINK_ADMIN_KEY: '' } })
      try {
        // 10 links, 3 visits and the flush barrier's link and visit: all of them, each delivered.
        await until(
          'every event after the restart',
          async () => r.delivered().size,
          (n) => n >= 15,
          60_000,
        )
        for (const id of ids) expect(r.delivered().has(id as string)).toBe(true)
        expect(r.delivered().size).toBe(15)
        expect(r.unverified).toEqual([])
      } finally {
        await again.stop()
      }
    } finally {
      r.stop()
      await node.stop()
    }
  })
})

describe('the live stream', () => {
  test('resumed with Last-Event-ID after a disconnect, it loses nothing; members see their own links; a comment at least every 15 s', async () => {
    const member = await server.keyFor('sse-member', 'member')
    const other = await server.keyFor('sse-other', 'member')
    const url = `${server.baseUrl}/events`
    const headers = { authorization: `Bearer ${member}` }
    const { response, stream } = await openSse(url, { headers, tls: { ca: server.ca } })
    expect(response.status).toBe(200)
    expect(response.headers.get('content-type')).toContain('text/event-stream')
    const mine: string[] = []
    const link = await createLink(server, 'sse-a', member)
    await createLink(server, 'sse-not-mine', other)
    await visit(server, link.shortLink)
    await until(
      'two events on the stream',
      async () => stream!.messages.length,
      (n) => n >= 2,
    )
    for (const m of stream!.messages) mine.push(m.id!)
    stream!.close()
    await stream!.ended

    // While it is away: more changes and visits (and another user's).
    const link2 = await createLink(server, 'sse-b', member)
    await createLink(server, 'sse-other-2', other)
    for (let i = 0; i < 5; i++) await visit(server, link2.shortLink, i === 0)
    await server.api(`/links/${link.id}`, { method: 'DELETE', key: member })
    await server.clicksFlushed()

    const resumed = await openSse(url, { headers: { ...headers, 'last-event-id': mine.at(-1)! }, tls: { ca: server.ca } })
    await until(
      'the missed events',
      async () => resumed.stream!.messages.length,
      (n) => n >= 7,
    )
    const all = [...stream!.messages, ...resumed.stream!.messages]
    // In the order they were committed (a click batch commits after the deletion that followed its visits).
    const types = all.map((m) => m.event).sort()
    expect(types).toEqual([
      'link.clicked',
      'link.clicked',
      'link.clicked',
      'link.clicked',
      'link.clicked',
      'link.clicked',
      'link.created',
      'link.created',
      'link.deleted',
    ])
    expect(new Set(all.map((m) => m.id)).size).toBe(all.length)
    for (const m of all) {
      const envelope = JSON.parse(m.data)
      expect(envelope.id).toBe(m.id)
      expect(envelope.type).toBe(m.event)
      expect([link.id, link2.id]).toContain(envelope.data.id ?? envelope.data.link.id)
    }
    // Quiet: a comment line within 15 s.
    const quietSince = Date.now()
    await until(
      'a comment line',
      async () => resumed.stream!.comments.filter((c) => c.at > quietSince).length,
      (n) => n > 0,
      15_000,
    )
    resumed.stream!.close()
  })

  test('types narrow the stream; a revoked key ends it; no key is 401', async () => {
    const made = (await json(await server.api('/keys', { method: 'POST', json: { userId: 'usr_admin', role: 'readonly', name: 'stream' } }))).body
    const { stream } = await openSse(`${server.baseUrl}/events?types=link.deleted`, {
      headers: { authorization: `Bearer ${made.key}` },
      tls: { ca: server.ca },
    })
    const l = await createLink(server, 'sse-types')
    expect((await server.api(`/links/${l.id}`, { method: 'DELETE' })).status).toBe(200)
    await until(
      'the deletion',
      async () => stream!.messages.length,
      (n) => n >= 1,
    )
    expect(stream!.messages.map((m) => m.event)).toEqual(['link.deleted'])
    expect((await server.api(`/keys/${made.id}`, { method: 'DELETE' })).status).toBe(200)
    await until(
      'the stream ended',
      async () => stream!.closed,
      (c) => c,
      15_000,
    )
    expect((await server.fetch(`${server.baseUrl}/events`)).status).toBe(401)
  })
})

describe('private targets, and stopping', () => {
  test('a server without [webhooks] allowPrivateNetworks refuses loopback targets (parameter_error); SIGTERM ends its live streams and exits 0', async () => {
    const strict = await startServer()
    try {
      for (const url of [receiver.url('/x'), `http://localhost:${receiver.port}/x`]) {
        const r = await json(await strict.api('/webhooks', { method: 'POST', json: { url, events: ['link.created'] } }))
        expect(r.status).toBe(422)
        expect(r.body).toMatchObject({ code: 'parameter_error' })
        expect(r.body.message).toContain('allowPrivateNetworks')
      }
      // A live stream never ends by itself: stopping the server ends it instead of waiting for it.
      const { stream } = await openSse(`${strict.baseUrl}/events`, { headers: { authorization: `Bearer ${strict.adminKey}` }, tls: { ca: strict.ca } })
      await until(
        'the stream open',
        async () => stream!.comments.length,
        (n) => n > 0,
      )
      expect(await strict.stop('SIGTERM')).toBe(0)
      await stream!.ended
      expect(stream!.closed).toBe(true)
    } finally {
      await strict.stop()
    }
  })
})
