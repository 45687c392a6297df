/**
 * The dispatcher and one attempt, on a real SQLite store with real receivers on loopback
 * (every delivery verified with the Standard Webhooks reference library): the retry schedule
 * to the 8th attempt, a slow endpoint beside a fast one, a failing endpoint probed one attempt
 * at a time with its backlog left in the store, redirects not followed, bodies read to a cap,
 * the deadline, and a name that resolves inside the network at connect time. The dispatcher's
 * clock is a variable the test moves; signatures use real time (the verifier checks it).
 */
import { afterEach, describe, expect, test } from 'bun:test'
import { until } from '../../test/helpers/poll'
import { type Receiver, startReceiver } from '../../test/helpers/webhook-receiver'
import type { Caller } from '../auth'
import { appendEvents, type NewEvent } from '../events'
import { createLogger } from '../shared'
import { openStore } from '../store'
import { createDispatcher } from './webhooks.dispatch'
import { envelopeOf } from './webhooks.envelope'
import { createSender } from './webhooks.send'
import { createWebhookService } from './webhooks.service'
import { createWebhookStore } from './webhooks.store'
import { MAX_ATTEMPTS, RETRY_SCHEDULE_MS } from './webhooks.values'

const admin: Caller = { userId: 'usr_admin', role: 'admin', keyId: 'key_admin' }
const receivers: Receiver[] = []
afterEach(() => {
  for (const r of receivers.splice(0)) r.stop()
})

function setup(o: { timeoutMs?: number; allowPrivateNetworks?: boolean; resolveHost?: (h: string) => Promise<string[]>; concurrency?: number } = {}) {
  const db = openStore(':memory:')
  db.run("INSERT INTO users (id, created_at, role) VALUES ('usr_admin', 1, 'admin')")
  const store = createWebhookStore(db)
  let clock = Date.now()
  const allowPrivateNetworks = o.allowPrivateNetworks ?? true
  const service = createWebhookService({ store, allowPrivateNetworks, resolveHost: o.resolveHost, now: () => clock })
  const send = createSender({ allowPrivateNetworks, userAgent: 'test', timeoutMs: o.timeoutMs ?? 2000, resolveHost: o.resolveHost })
  const dispatcher = createDispatcher({
    store,
    send,
    render: (c) => envelopeOf({ id: c.event_id, type: c.event_type, data: c.data, created_at: c.created_at }, () => ''),
    log: createLogger(true),
    now: () => clock,
    pollMs: 60_000,
    concurrency: o.concurrency,
    soleNode: true,
  })
  const receiver = () => {
    const r = startReceiver()
    receivers.push(r)
    return r
  }
  return {
    store,
    service,
    dispatcher,
    receiver,
    advance: (ms: number) => {
      clock += ms
    },
    now: () => clock,
    append: (events: NewEvent[]) => db.transaction(() => appendEvents(db, events, clock))(),
    /** A webhook for `events` at `url` whose secret `r` verifies with. */
    async hook(url: string, r: Receiver | null, events = ['link.created']) {
      const w = await service.create(admin, { url, events })
      r?.secrets.set(new URL(url).pathname, w.secret)
      return w
    },
    deliveries: async (id: string) => (await service.deliveries(admin, id, { pageSize: 100 })).deliveries,
  }
}

const created = (n: number): NewEvent => ({ type: 'link.created', userId: 'usr_x', linkId: `lnk_${n}`, data: { n } })

describe('the dispatcher', () => {
  test('a failing delivery is tried 8 times on the schedule (5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h), each time signed with the same id, then failed', async () => {
    const s = setup()
    const r = s.receiver()
    r.answer = () => 503
    const w = await s.hook(r.url('/always-503'), r)
    s.append([created(1)])
    await s.dispatcher.start()
    const waits: number[] = []
    for (let attempt = 1; attempt <= MAX_ATTEMPTS; attempt++) {
      await s.dispatcher.tick()
      await until(
        `attempt ${attempt}`,
        async () => r.arrivals.length,
        (n) => n === attempt,
      )
      await s.dispatcher.idle()
      const [d] = await s.deliveries(w.id)
      expect(d!.attempts).toBe(attempt)
      if (attempt < MAX_ATTEMPTS) {
        const wait = Date.parse(d!.nextAttemptAt!) - Date.parse(d!.at)
        waits.push(wait)
        // Not a moment before its time.
        s.advance(wait - 1)
        await s.dispatcher.tick()
        await s.dispatcher.idle()
        expect(r.arrivals.length).toBe(attempt)
        s.advance(1)
      } else expect(d).toMatchObject({ status: 'failed', nextAttemptAt: null, responseStatus: 503 })
    }
    expect(waits).toEqual([...RETRY_SCHEDULE_MS])
    expect(new Set(r.arrivals.map((a) => a.id)).size).toBe(1)
    expect(r.unverified).toEqual([])
    await s.dispatcher.stop()
  })

  test('a slow endpoint does not hold up another; it never has more than `concurrency` attempts open, and its backlog waits in the store', async () => {
    const s = setup({ timeoutMs: 1500, concurrency: 4 })
    const slow = s.receiver()
    const fast = s.receiver()
    slow.answer = () => 'hang'
    const ws = await s.hook(slow.url('/slow'), slow)
    const wf = await s.hook(fast.url('/fast'), fast)
    s.append(Array.from({ length: 60 }, (_, i) => created(i)))
    await s.dispatcher.start()
    await until(
      'the fast endpoint has all 60',
      async () => fast.delivered().size,
      (n) => n === 60,
      10_000,
    )
    // Meanwhile the slow one held at most 4 requests open, and the rest of its events wait in the store.
    expect(slow.arrivals.length).toBeLessThanOrEqual(4)
    expect((await s.deliveries(ws.id)).filter((d) => d.status === 'pending').length).toBe(60)
    await until(
      'the fast deliveries written',
      async () => (await s.deliveries(wf.id)).filter((d) => d.status === 'delivered').length,
      (n) => n === 60,
    )
    expect(fast.unverified).toEqual([])
    slow.stop()
    await s.dispatcher.stop()
  })

  test('an endpoint that fails gets one attempt at a time until it answers again, then its backlog drains', async () => {
    const s = setup({ concurrency: 8 })
    const r = s.receiver()
    let open = 0
    let most = 0
    let down = true
    r.answer = () => (down ? 503 : 200)
    const counting = Bun.serve({
      port: 0,
      hostname: '127.0.0.1',
      async fetch(req) {
        open++
        most = Math.max(most, open)
        await Bun.sleep(5)
        const res = await fetch(r.url('/probe'), { method: 'POST', headers: req.headers, body: await req.text() })
        open--
        return new Response(null, { status: res.status })
      },
    })
    const w = await s.hook(`http://127.0.0.1:${counting.port}/probe`, r)
    s.append([created(0)])
    await s.dispatcher.start()
    await until(
      'the first failure',
      async () => r.arrivals.length,
      (n) => n === 1,
    )
    await s.dispatcher.idle()
    most = 0
    s.append(Array.from({ length: 30 }, (_, i) => created(i + 1)))
    await s.dispatcher.tick()
    await until(
      '30 first attempts',
      async () => r.arrivals.length,
      (n) => n === 31,
    )
    // The last attempt reached the receiver but may still be on its way back; its failure must be written at
    // this clock (its retry due 5 s later), not after the clock moved on.
    await s.dispatcher.idle()
    expect(most).toBe(1)
    // It answers again: the next success empties the backlog at full width.
    down = false
    s.advance(5000)
    most = 0
    await s.dispatcher.tick()
    await until(
      'every event delivered',
      async () => r.delivered().size,
      (n) => n === 31,
    )
    expect(most).toBeGreaterThan(1)
    expect(r.duplicates()).toEqual([])
    await s.dispatcher.idle()
    expect((await s.deliveries(w.id)).every((d) => d.status === 'delivered')).toBe(true)
    counting.stop(true)
    await s.dispatcher.stop()
  })
})

describe('one attempt', () => {
  test('a redirect is not followed; a huge body is read to a cap; no answer within the deadline fails', async () => {
    const s = setup({ timeoutMs: 800 })
    const r = s.receiver()
    r.answer = ({ path }) =>
      path === '/moved'
        ? new Response(null, { status: 302, headers: { location: r.url('/elsewhere') } })
        : path === '/endless'
          ? new Response(new ReadableStream({ pull: (c) => c.enqueue(new Uint8Array(65_536)) }), { status: 200 })
          : 'hang'
    const moved = await s.hook(r.url('/moved'), r)
    const endless = await s.hook(r.url('/endless'), r)
    const silent = await s.hook(r.url('/silent'), r)
    r.secrets.set('/elsewhere', 'whsec_bm90IHRoaXMgb25l')
    s.append([created(1)])
    await s.dispatcher.start()
    await until(
      'three attempts written',
      async () => (await Promise.all([moved, endless, silent].map((w) => s.deliveries(w.id)))).map((d) => d[0]!.attempts),
      (a) => a.every((n) => n === 1),
    )
    expect((await s.deliveries(moved.id))[0]).toMatchObject({ status: 'pending', responseStatus: 302 })
    expect(r.arrivals.map((a) => a.path).sort()).toEqual(['/endless', '/moved', '/silent'])
    expect((await s.deliveries(endless.id))[0]).toMatchObject({ status: 'delivered', responseStatus: 200 })
    expect((await s.deliveries(silent.id))[0]).toMatchObject({ status: 'pending', responseStatus: null })
    await s.dispatcher.stop()
  })

  test('without allowPrivateNetworks, a name that resolved outside when saved and inside at delivery is not connected to', async () => {
    let inside = false
    const resolveHost = async () => (inside ? ['127.0.0.1'] : ['93.184.216.34'])
    const s = setup({ allowPrivateNetworks: false, resolveHost })
    const r = s.receiver()
    const w = await s.hook(`http://hooks.test:${r.port}/in`, r)
    inside = true
    s.append([created(1)])
    await s.dispatcher.start()
    await until(
      'the refused attempt',
      async () => (await s.deliveries(w.id))[0]!.attempts,
      (n) => n === 1,
    )
    expect((await s.deliveries(w.id))[0]).toMatchObject({ status: 'pending', responseStatus: null })
    expect(r.arrivals).toEqual([])
    await s.dispatcher.stop()
  })
})

describe('an outage', () => {
  test('an endpoint down for minutes while events arrive: when it answers again, the whole backlog goes out at once, nothing lost or doubled', async () => {
    const s = setup({ concurrency: 8 })
    const r = s.receiver()
    let down = true
    r.answer = () => (down ? 503 : 200)
    const w = await s.hook(r.url('/outage'), r)
    await s.dispatcher.start()
    // Ten minutes of fake time, an event every 10 s, the dispatcher ticking every 5 s.
    let n = 0
    for (let t = 0; t < 600_000; t += 5000) {
      if (t % 10_000 === 0) s.append([created(n++)])
      await s.dispatcher.tick()
      await s.dispatcher.idle()
      s.advance(5000)
    }
    const waiting = await s.deliveries(w.id)
    expect(waiting.length).toBe(60)
    expect(waiting.every((d) => d.status === 'pending')).toBe(true)
    // Most wait for a retry minutes away.
    expect(waiting.filter((d) => Date.parse(d.nextAttemptAt!) - s.now() > 60_000).length).toBeGreaterThan(40)
    down = false
    for (let i = 0; i < 4; i++) {
      await s.dispatcher.tick()
      await s.dispatcher.idle()
      s.advance(5000)
    }
    expect(r.delivered().size).toBe(60)
    expect(r.duplicates()).toEqual([])
    expect((await s.deliveries(w.id)).every((d) => d.status === 'delivered')).toBe(true)
    await s.dispatcher.stop()
  })
})
