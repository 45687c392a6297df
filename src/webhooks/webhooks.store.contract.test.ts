/**
 * The webhook store port on both adapters: SQLite on ':memory:' and a real PostgreSQL. One
 * scenario writes down every answer (fan-out by scope, type and filters; leases; outcomes and
 * the retry schedule; an outage's end; disabling after 5 days; deliveries, retry, test events;
 * the outbox read by position and filter; purge) and both transcripts must be equal. Then, on
 * PostgreSQL, two nodes leasing at once never get the same delivery, and two fanning out at
 * once never deliver an event twice.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { SQL } from 'bun'
import { startMigratedDatabase } from '../../test/helpers/postgres'
import { appendEvents, appendEventsPg, type NewEvent } from '../events'
import { openStore } from '../store'
import { matchEvents } from './webhooks.fanout'
import { createWebhookStore, type WebhookRow, type WebhookStorePort } from './webhooks.store'
import { createPgWebhookStore } from './webhooks.store.pg'

let pg: Awaited<ReturnType<typeof startMigratedDatabase>> | undefined
beforeAll(async () => {
  pg = await startMigratedDatabase('webhooks_contract')
})
afterAll(() => pg?.close())

const T0 = Date.parse('2026-06-01T08:00:00Z')
const DAY = 86_400_000

const SETUP = [
  "INSERT INTO users (id, created_at, role) VALUES ('usr_admin', 1, 'admin'), ('usr_a', 1, 'member'), ('usr_b', 1, 'member')",
  `INSERT INTO links (id, user_id, domain, key, link_type, destination, match_key, data, options, created_at, updated_at) VALUES
    ('lnk_a', 'usr_a', 'sho.rt', 'a', 'link', 'https://a.example/', 'm1', '{}', '{}', 1, 1),
    ('lnk_b', 'usr_b', 'sho.rt', 'b', 'link', 'https://b.example/', 'm2', '{}', '{}', 1, 1)`,
  "INSERT INTO tags (id, user_id, name, name_key, color, created_at, updated_at) VALUES ('tag_b', 'usr_b', 'b', 'b', 'red', 1, 1)",
]

interface Side {
  store: WebhookStorePort
  run(sql: string): Promise<void>
  append(events: NewEvent[], at: number): Promise<void>
}

const sides: [string, () => Promise<Side>][] = [
  [
    'sqlite',
    async () => {
      const db = openStore(':memory:')
      return {
        store: createWebhookStore(db),
        run: async (q) => void db.run(q),
        append: async (events, at) => void db.transaction(() => appendEvents(db, events, at))(),
      }
    },
  ],
  [
    'postgres',
    async () => {
      const sql = pg!.sql
      await sql`TRUNCATE events, event_cursors, event_listeners, webhooks, webhook_deliveries, link_tags, tags, links, users RESTART IDENTITY CASCADE`
      return {
        store: createPgWebhookStore(sql),
        run: async (q) => void (await sql.unsafe(q)),
        append: async (events, at) => void (await sql.begin((tx) => appendEventsPg(tx, events, at))),
      }
    },
  ],
]

const hook = (id: string, user: string, events: string[], o: Partial<WebhookRow> = {}): WebhookRow => ({
  id,
  user_id: user,
  url: `https://${id}.example/`,
  name: null,
  events: JSON.stringify(events),
  link_ids: '[]',
  tag_ids: '[]',
  secret: 'whsec_c2VjcmV0',
  disabled: 0,
  disabled_reason: null,
  failing_since: null,
  created_at: T0,
  updated_at: T0,
  ...o,
})

const transcripts: Record<string, unknown[]> = {}

describe.each(sides)('webhook store port on %s', (name, open) => {
  test('fan-out, leases, outcomes, schedule, outage, disabling, deliveries, retry, test events, reading the outbox, purge', async () => {
    const { store, run, append } = await open()
    for (const q of SETUP) await run(q)
    const out: unknown[] = []
    const note = (label: string, v: unknown) => out.push([label, v])
    // Event ids are random: name them by their data's `n`.
    const names = new Map<string, string>()
    const named = (v: unknown) => {
      let text = JSON.stringify(v) ?? 'null'
      for (const [id, n] of names) text = text.replaceAll(id, n)
      return JSON.parse(text)
    }
    const idOf = (n: string) => [...names].find(([, x]) => x === n)![0]

    await store.insertWebhook(hook('whk_a', 'usr_a', ['link.created', 'link.clicked']))
    await store.insertWebhook(hook('whk_b', 'usr_b', ['link.clicked'], { tag_ids: '["tag_b"]' }))
    await store.insertWebhook(hook('whk_admin', 'usr_admin', ['link.created', 'domain.updated', 'link.clicked'], { link_ids: '["lnk_b"]' }))
    await store.insertWebhook(hook('whk_late', 'usr_a', ['link.created'], { created_at: T0 + 10_000 }))
    await store.insertWebhook(hook('whk_off', 'usr_a', ['link.created'], { disabled: 1 }))
    note('webhook', await store.getWebhook('whk_b'))
    note(
      'list a',
      (await store.listWebhooks('usr_a', 10, 0)).rows.map((r) => r.id),
    )
    const all = await store.listWebhooks(null, 2, 1)
    note('list all', { ids: all.rows.map((r) => r.id), total: all.total })
    note('count a', await store.countWebhooks('usr_a'))
    note('owners', [await store.linkOwners(['lnk_a', 'lnk_none']), await store.tagOwners(['tag_b'])])

    const events: NewEvent[] = [
      { type: 'link.created', userId: 'usr_a', linkId: 'lnk_a', data: { n: 1 } },
      { type: 'link.clicked', userId: 'usr_b', linkId: 'lnk_b', tagIds: ['tag_b'], data: { n: 2 } },
      { type: 'link.clicked', userId: 'usr_a', linkId: 'lnk_a', data: { n: 3 } },
      { type: 'domain.updated', userId: null, data: { n: 4 } },
      { type: 'link.created', userId: 'usr_b', linkId: 'lnk_b', data: { n: 5 } },
      { type: 'link.created', userId: 'usr_a', linkId: 'lnk_a', data: { n: 6 } },
    ]
    await append(events.slice(0, 4), T0 + 1000)
    await append(events.slice(4), T0 + 20_000)
    const outbox = await store.readEvents('', await store.tailPosition(), { userId: null }, 100)
    for (const e of outbox) names.set(e.id, `evt_${JSON.parse(e.data).n}`)
    note('outbox', named(outbox.map(({ seq: _s, position: _p, ...e }) => e)))

    const fanned = await store.fanOut(T0 + 30_000, 3, matchEvents)
    const fannedRest = await store.fanOut(T0 + 30_000, 3, matchEvents)
    note('fan-out in two rounds', [fanned, fannedRest, await store.fanOut(T0 + 30_000, 3, matchEvents)])
    const deliveriesOf = async (id: string) => named((await store.listDeliveries(id, null, 50, 0)).rows.map((d) => `${d.event_id} ${d.status}`))
    note('deliveries', {
      a: await deliveriesOf('whk_a'),
      b: await deliveriesOf('whk_b'),
      admin: await deliveriesOf('whk_admin'),
      late: await deliveriesOf('whk_late'),
      off: await deliveriesOf('whk_off'),
    })
    // Scope (a member's own links, an admin's all), types, filters (links or tags), created after the webhook, enabled.
    expect(await deliveriesOf('whk_a')).toEqual(['evt_6 pending', 'evt_3 pending', 'evt_1 pending'])
    expect(await deliveriesOf('whk_b')).toEqual(['evt_2 pending'])
    expect(await deliveriesOf('whk_admin')).toEqual(['evt_5 pending', 'evt_4 pending', 'evt_2 pending'])
    expect(await deliveriesOf('whk_late')).toEqual(['evt_6 pending'])
    expect(await deliveriesOf('whk_off')).toEqual([])

    const now = T0 + 40_000
    note('due', (await store.dueWebhooks(now)).map((w) => w.id).sort())
    const first = await store.claim('whk_admin', 'node1', now, now + 20_000, 2)
    const second = await store.claim('whk_admin', 'node2', now, now + 20_000, 5)
    note('claims', named([first.map((c) => c.event_id), second.map((c) => c.event_id)]))
    note('claimed row', named(first[0]))
    note('nothing left to lease', await store.claim('whk_admin', 'node3', now, now + 20_000, 5))
    note('a lease that ran out is taken again', named((await store.claim('whk_admin', 'node3', now + 20_000, now + 40_000, 5)).map((c) => c.event_id)))

    // Outcomes: only the lease holder's count; a failure waits 5 s, then 5 min.
    const o = (eventSeq: number, ok: boolean, at: number, attempts = 0) => ({
      webhookId: 'whk_admin',
      eventSeq,
      attempts,
      ok,
      responseStatus: ok ? 200 : 503,
      at,
    })
    await store.recordOutcomes([o(first[0]!.event_seq, false, now + 1)], 'node1', now + 1)
    const admin = async () => named((await store.listDeliveries('whk_admin', null, 50, 0)).rows)
    note('not the holder: ignored', await admin())
    await store.recordOutcomes([o(first[0]!.event_seq, false, now + 2)], 'node3', now + 2)
    const once = await admin()
    note('the holder: failed once, due again in 5 s', once)
    expect(once.find((r: { event_id: string }) => r.event_id === 'evt_2')).toMatchObject({ attempts: 1, response_status: 503, next_attempt_at: now + 5002 })
    note('failing since', (await store.getWebhook('whk_admin'))!.failing_since)
    note('not due before', (await store.dueWebhooks(now + 5000)).map((w) => w.id).sort())
    // An outage: everything fails for over 10 s (evt_2 a second time: 5 min more), then a success.
    const again = await store.claim('whk_admin', 'node3', now + 70_000, now + 90_000, 3)
    note('leased in the outage', named(again.map((c) => [c.event_id, c.attempts])))
    await store.recordOutcomes(
      again.map((c) => o(c.event_seq, false, now + 70_000, c.attempts)),
      'node3',
      now + 70_000,
    )
    note('in the outage', await admin())
    const leased = await store.claim('whk_admin', 'node3', now + 90_000, now + 100_000, 1)
    note('leased after the outage', named(leased.map((c) => c.event_id)))
    await store.recordOutcomes([o(leased[0]!.event_seq, true, now + 90_001, leased[0]!.attempts)], 'node3', now + 90_001)
    // The waiting ones are due now (not sooner than 5 s after their last attempt), not in 5 min.
    const ended = await admin()
    note('after the outage ended', ended)
    const row = (rows: { event_id: string }[], id: string) =>
      rows.find((r) => r.event_id === id) as unknown as { next_attempt_at: number; status: string; attempts: number }
    expect(row(ended, 'evt_2').next_attempt_at).toBe(now + 90_001)
    note('healthy again', (await store.getWebhook('whk_admin'))!.failing_since)
    // A failure among successes keeps its own schedule.
    const later = await store.claim('whk_admin', 'node3', now + 100_000, now + 120_000, 5)
    note('leased later', named(later.map((c) => [c.event_id, c.attempts])))
    await store.recordOutcomes([o(2, false, now + 100_001, 2), o(5, true, now + 100_002, 1)], 'node3', now + 100_002)
    const mixed = await admin()
    note('a failure among successes', mixed)
    expect(row(mixed, 'evt_2')).toMatchObject({ status: 'pending', attempts: 3, next_attempt_at: now + 100_001 + 30 * 60_000 })
    // Five days of failures disable the webhook.
    await store.recordOutcomes([{ ...o(1, false, T0 + 6 * DAY), webhookId: 'whk_a' }], 'nobody', T0 + 6 * DAY)
    await store.recordOutcomes([{ ...o(1, false, T0 + 11 * DAY), webhookId: 'whk_a' }], 'nobody', T0 + 11 * DAY)
    const aRow = (await store.getWebhook('whk_a'))!
    note('disabled after 5 days', [aRow.disabled, aRow.disabled_reason, aRow.failing_since])
    expect([aRow.disabled, aRow.failing_since]).toEqual([1, T0 + 6 * DAY])
    note('disabled webhooks are not due', (await store.dueWebhooks(T0 + 12 * DAY)).map((w) => w.id).sort())

    // By hand: retry (any state), and a test event for one webhook.
    note('retry', named(await store.retryDelivery('whk_admin', idOf('evt_2'), now + 110_000)))
    note('retry unknown', await store.retryDelivery('whk_admin', 'evt_none', now))
    const t = await store.testEvent({ id: 'whk_b', user_id: 'usr_b' }, { hello: 1 }, now + 100_001)
    names.set(t.event_id, 'evt_test')
    note('test delivery', named(t))
    note('fan-out leaves test events alone', await store.fanOut(now + 100_002, 10, matchEvents))
    note('deliveries b by status', named((await store.listDeliveries('whk_b', 'pending', 10, 0)).rows.map((d) => d.event_id)))

    // The outbox by position and filter.
    const tail = await store.tailPosition()
    const after1 = (await store.positionOf(idOf('evt_1')))!
    note('member b sees', named((await store.readEvents('', tail, { userId: 'usr_b' }, 10)).map((e) => e.id)))
    note(
      'after evt_1, clicks of lnk_a',
      named((await store.readEvents(after1, tail, { userId: null, types: ['link.clicked'], linkIds: ['lnk_a'] }, 10)).map((e) => e.id)),
    )
    note('paged', named((await store.readEvents('', tail, { userId: null }, 2)).map((e) => e.id)))
    note('nothing after the tail', await store.readEvents(tail, tail, { userId: null }, 10))
    note('unknown id', await store.positionOf('evt_none'))
    await store.touchListener('user:usr_b', 'usr_b', T0 + DAY)
    await store.touchListener('user:usr_b', 'usr_b', T0 + 10)
    note('pending', await store.pendingCount())

    // Purge: delivered deliveries of events older than a day and then such events; pending ones stay; expired listeners go.
    note('purged', await store.purge(T0 + 2 * DAY))
    note('left', named((await store.readEvents('', tail, { userId: null }, 100)).map((e) => e.id)))
    note('admin deliveries left', named((await store.listDeliveries('whk_admin', null, 50, 0)).rows.map((d) => `${d.event_id} ${d.status}`)))
    expect(await store.deleteWebhook('whk_b')).toBe(true)
    expect(await store.deleteWebhook('whk_b')).toBe(false)
    note('deleted webhook has no deliveries', await store.listDeliveries('whk_b', null, 10, 0))
    transcripts[name] = out
  })
})

test('both adapters gave the same answers', () => {
  expect(transcripts.sqlite?.length).toBeGreaterThan(30)
  const lite = transcripts.sqlite!
  for (const [i, entry] of transcripts.postgres!.entries()) expect(entry).toEqual(lite[i] as never)
})

describe('several nodes on PostgreSQL', () => {
  test('two nodes leasing at once never get the same delivery; two fanning out at once never make one twice', async () => {
    const sql = pg!.sql
    await sql`TRUNCATE events, event_cursors, webhooks, webhook_deliveries, users RESTART IDENTITY CASCADE`
    await sql`INSERT INTO users (id, created_at, role) VALUES ('usr_admin', 1, 'admin')`
    const other = new SQL(pg!.url, { max: 4 })
    const [a, b] = [createPgWebhookStore(sql), createPgWebhookStore(other)]
    await a.insertWebhook(hook('whk_1', 'usr_admin', ['link.created']))
    for (let i = 0; i < 10; i++)
      await sql.begin((tx) =>
        appendEventsPg(
          tx,
          Array.from({ length: 50 }, (_, j) => ({ type: 'link.created' as const, userId: 'usr_x', data: { n: i * 50 + j } })),
          T0,
        ),
      )
    const fanned = await Promise.all(Array.from({ length: 6 }, (_, i) => (i % 2 ? a : b).fanOut(T0 + 1, 60, matchEvents)))
    let more = fanned.reduce((n, f) => n + f.read, 0)
    while ((await a.fanOut(T0 + 1, 500, matchEvents)).read > 0) more++
    const [{ n }] = await sql`SELECT count(*)::int AS n FROM webhook_deliveries`
    expect(n).toBe(500)
    const claims = await Promise.all(Array.from({ length: 20 }, (_, i) => (i % 2 ? a : b).claim('whk_1', `node${i}`, T0 + 2, T0 + 30_000, 30)))
    const seqs = claims.flat().map((c) => c.event_seq)
    expect(seqs.length).toBe(500)
    expect(new Set(seqs).size).toBe(500)
    expect(more).toBeGreaterThan(0)
    await other.close()
  })
})
