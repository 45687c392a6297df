/**
 * The link-health store port, one set of cases run against both adapters: SQLite on ':memory:'
 * and PostgreSQL (a real server, a fresh migrated database). Same answers from both: URL states
 * under the 2-failures / 1-pass rule, each link's status settled once per change, the links a
 * URL's change reaches, the list filter `health`, and what a round leaves behind. On
 * PostgreSQL the links whose redirects change are announced on the real invalidation bus.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import type { SQL } from 'bun'
import { failEventsPg, failEventsSqlite } from '../../test/helpers/fail-events'
import { until } from '../../test/helpers/poll'
import { startMigratedDatabase } from '../../test/helpers/postgres'
import { createAuthStore, createPgAuthStore } from '../auth'
import { createLinkStore, createPgLinkStore, type LinkStorePort } from '../links'
import { createLogger } from '../shared'
import { createInvalidationBus, type InvalidationBus, openStore } from '../store'
import { mappedLink } from './link-health.rounds'
import { type CheckResult, type Outcome, type Settled, urlKey } from './link-health.rules'
import { createHealthStore, type HealthEventsOf, type HealthStorePort } from './link-health.store'
import { createPgHealthStore } from './link-health.store.pg'

let pg: Awaited<ReturnType<typeof startMigratedDatabase>> | undefined
let bus: InvalidationBus | undefined
const heard: string[] = []
beforeAll(async () => {
  pg = await startMigratedDatabase('health_contract')
  bus = await createInvalidationBus({ url: pg.url, channels: ['links'], epochPollMs: 200, log: createLogger(true) })
  bus.on('links', (k) => heard.push(k))
})
afterAll(async () => {
  await bus?.close()
  await pg?.close()
})

interface Opened {
  health: HealthStorePort
  links: LinkStorePort
  run(sql: string): Promise<void>
  /** The outbox, in order. */
  events(): Promise<{ type: string; user_id: string; link_id: string; tag_ids: string | null; data: string; created_at: number }[]>
  /** From now on (`true`) a transaction that appended an event fails at its end, after the event's row was written. */
  failEvents(on: boolean): Promise<void>
  /** Keys announced to other nodes (PostgreSQL), as the bus delivered them. */
  announced(): string[]
}

const adapters: [string, () => Promise<Opened>][] = [
  [
    'sqlite',
    async () => {
      const db = openStore(':memory:')
      createAuthStore(db).addUser('usr_a')
      return {
        health: createHealthStore(db),
        links: createLinkStore(db),
        run: async (q) => void db.run(q),
        events: async () => db.query('SELECT type, user_id, link_id, tag_ids, data, created_at FROM events ORDER BY seq').all() as never,
        failEvents: async (on) => failEventsSqlite(db, on),
        announced: () => [],
      }
    },
  ],
  [
    'postgres',
    async () => {
      const sql = pg!.sql as SQL
      await sql`TRUNCATE links, users, health_urls, kv, events CASCADE`
      await createPgAuthStore(sql).addUser('usr_a')
      heard.length = 0
      return {
        health: createPgHealthStore(sql, { publish: bus!.publish }),
        links: createPgLinkStore(sql),
        run: async (q) => void (await sql.unsafe(q)),
        events: async () => (await sql`SELECT type, user_id, link_id, tag_ids, data, created_at::float8 AS created_at FROM events ORDER BY xid, seq`) as never,
        failEvents: (on) => failEventsPg(sql, on),
        announced: () => [...heard],
      }
    },
  ],
]

const T = Date.parse('2026-05-01T10:00:00Z')

async function makeLink(links: LinkStorePort, key: string, type: string, data: object, options: object = {}, tags: string[] = []) {
  const row = await links.createLink(
    {
      id: `lnk_${key}`,
      user_id: 'usr_a',
      domain: 'sl.test',
      key,
      link_type: type,
      destination: (data as { url?: string }).url ?? 'https://sl.test/x',
      match_key: key,
      data: JSON.stringify(data),
      options: JSON.stringify(options),
      qr_options: null,
      password_hash: null,
      expires_at: null,
      archived: 0,
      created_at: T,
      updated_at: T,
    },
    tags,
    key,
  )
  return row!
}
const fail: Outcome = { result: 'fail', httpStatus: 503, error: null }
const pass: Outcome = { result: 'pass', httpStatus: 200, error: null }
const result = (url: string, outcome: Outcome, at: number): CheckResult => ({ url, key: urlKey(url), outcome, at })
const moves = (s: Settled) => s.transitions.map((t) => `${t.link.key}:${t.from}→${t.to}`).sort()

describe.each(adapters)('link-health store on %s', (name, open) => {
  test('URLs shared by links: 2 failures break every link using it, once; a pass mends them; the filter follows', async () => {
    const { health, links, announced } = await open()
    const make = (key: string, type: string, data: object, options: object = {}) => makeLink(links, key, type, data, options)
    const shared = 'https://shop.example/sale'
    const ios = 'https://apps.example/ios'
    const a = await make('a', 'link', { url: shared }, { Targeting: { targetType: 'device', targetDatas: { ios, android: shared } } })
    const b = await make('b', 'google-form', { url: shared })
    const text = await make('t', 'text', { text: 'hi' })
    expect(await health.lastLinkSeq()).toBe(text.seq)
    expect((await health.liveLinks(0, 10, T)).map((r) => r.key)).toEqual(['a', 'b'])

    expect(moves(await health.mapLinks([a, b].map(mappedLink), T))).toEqual([])
    expect(mappedLink(a).urls.map((u) => u.url)).toEqual([shared, ios])
    expect(await health.dueUrls([urlKey(shared), urlKey(ios)], T)).toEqual([urlKey(shared), urlKey(ios)])

    expect(moves(await health.recordResults([result(shared, fail, T + 1)], T + 1))).toEqual([])
    // Checked since T: not due again in this round.
    expect(await health.dueUrls([urlKey(shared), urlKey(ios)], T)).toEqual([urlKey(ios)])
    const broke = await health.recordResults([result(shared, fail, T + 2), result(ios, pass, T + 2)], T + 2)
    expect(moves(broke)).toEqual(['a:unknown→broken', 'b:unknown→broken'])
    expect(broke.touched.map((l) => l.key).sort()).toEqual(['a', 'b'])
    // Broken again: no change, nothing to announce.
    expect(await health.recordResults([result(shared, fail, T + 3)], T + 3)).toEqual({ transitions: [], touched: [] })

    const count = async (health: 'ok' | 'broken' | 'unknown') => links.count({ health, includeArchived: true })
    expect([await count('broken'), await count('ok'), await count('unknown')]).toEqual([2, 0, 0])
    expect(await health.brokenAmong([urlKey(shared), urlKey(ios)])).toEqual([shared])
    expect(await health.linkStates([a.seq, b.seq, text.seq])).toEqual(
      new Map([
        [a.seq, { status: 'broken', since: T + 2 }],
        [b.seq, { status: 'broken', since: T + 2 }],
      ]),
    )
    const rows = await health.urlRows([urlKey(shared)])
    expect(rows.get(urlKey(shared))).toMatchObject({ url: shared, status: 'broken', fails: 3, http_status: 503, error: null, checked_at: T + 3 })
    expect(await health.recordRows([urlKey(shared), urlKey(ios)], [a.seq, text.seq])).toEqual({
      urls: await health.urlRows([urlKey(shared), urlKey(ios)]),
      links: new Map([[a.seq, { status: 'broken', since: T + 2 }]]),
    })

    const mended = await health.recordResults([result(shared, pass, T + 4)], T + 4)
    expect(moves(mended)).toEqual(['a:broken→ok', 'b:broken→ok'])
    expect([await count('broken'), await count('ok'), await count('unknown')]).toEqual([0, 2, 0])
    if (name === 'postgres')
      await until(
        'announcements',
        async () => announced().sort(),
        (k) => k.includes('sl.test/a') && k.includes('sl.test/b'),
      )

    // Link a stops using the shared URL (an edit) and uses a new one: unknown again; the old URL keeps b.
    const edited = { ...a, data: JSON.stringify({ url: 'https://new.example/' }), options: '{}' }
    expect(moves(await health.mapLinks([mappedLink(edited)], T + 5))).toEqual(['a:ok→unknown'])
    expect([await count('ok'), await count('unknown')]).toEqual([1, 1])
    expect(await links.list({ health: 'unknown' }, { sortBy: 'created_at', sortOrder: 'desc', limit: 10, offset: 0 })).toMatchObject({
      total: 1,
      rows: [{ key: 'a' }],
    })

    // A round's sweep: URLs no live link uses are dropped (the iOS URL went with a's edit).
    await health.setRoundStartedAt(T + 6)
    expect(await health.roundStartedAt()).toBe(T + 6)
    await health.sweepLinks(0, 1000, T + 6)
    let key: string | null = ''
    while (key !== null) key = await health.sweepUrls(key, 1)
    expect([...(await health.urlRows([urlKey(shared), urlKey(ios), urlKey('https://new.example/')])).keys()].sort()).toEqual(
      [urlKey(shared), urlKey('https://new.example/')].sort(),
    )
    // A deleted link is forgotten: no status, no URLs.
    await links.softDeleteLinks([b.seq], T + 7)
    await health.forget([b.seq])
    expect(await health.linkStates([b.seq])).toEqual(new Map())
    expect(await health.recordResults([result(shared, fail, T + 8), result(shared, fail, T + 8)], T + 8)).toEqual({ transitions: [], touched: [] })
  })

  test('a change and its link.broken / link.recovered event commit together, once per change', async () => {
    const { health, links, run, events, failEvents } = await open()
    await run("INSERT INTO tags (id, user_id, name, name_key, color, created_at, updated_at) VALUES ('tag_x', 'usr_a', 'x', 'x', 'red', 1, 1)")
    const url = 'https://shop.example/gone'
    const a = await makeLink(links, 'a', 'link', { url }, {}, ['tag_x'])
    // The store's caller makes the events; this one keeps what the store hands it.
    const eventsOf: HealthEventsOf = (changes) =>
      changes.map((c) => ({ type: c.type, userId: c.row.user_id, linkId: c.row.id, tagIds: c.tags, data: { id: c.row.id, key: c.row.key, health: c.health } }))
    const seen = async () => (await events()).map((e) => ({ ...e, data: JSON.parse(e.data) }))

    expect(moves(await health.mapLinks([mappedLink(a)], T, eventsOf))).toEqual([])
    expect(moves(await health.recordResults([result(url, fail, T + 1)], T + 1, eventsOf))).toEqual([])
    expect(await events()).toEqual([])

    // The transaction of the change fails after its event was written: neither the change nor the event stays.
    await failEvents(true)
    try {
      await expect((async () => health.recordResults([result(url, fail, T + 2)], T + 2, eventsOf))()).rejects.toThrow('disk full')
    } finally {
      await failEvents(false)
    }
    expect(await events()).toEqual([])
    expect(await health.linkStates([a.seq])).toEqual(new Map())
    expect((await health.urlRows([urlKey(url)])).get(urlKey(url))).toMatchObject({ fails: 1, status: 'unknown' })

    // Committed: the change and exactly one link.broken, the record's health as the change left it.
    expect(moves(await health.recordResults([result(url, fail, T + 2)], T + 2, eventsOf))).toEqual(['a:unknown→broken'])
    const brokenHealth = {
      status: 'broken',
      checkedAt: new Date(T + 2).toISOString(),
      since: new Date(T + 2).toISOString(),
      brokenUrls: [{ url, httpStatus: 503, error: null }],
      urls: [{ url, status: 'broken', httpStatus: 503, error: null, checkedAt: new Date(T + 2).toISOString() }],
    }
    expect(await seen()).toEqual([
      {
        type: 'link.broken',
        user_id: 'usr_a',
        link_id: 'lnk_a',
        tag_ids: '["tag_x"]',
        data: { id: 'lnk_a', key: 'a', health: brokenHealth },
        created_at: T + 2,
      },
    ])
    // Broken again: no change, no event.
    await health.recordResults([result(url, fail, T + 3)], T + 3, eventsOf)
    expect((await events()).length).toBe(1)
    // One pass: recovered, once.
    expect(moves(await health.recordResults([result(url, pass, T + 4)], T + 4, eventsOf))).toEqual(['a:broken→ok'])
    const after = await seen()
    expect(after.map((e) => e.type)).toEqual(['link.broken', 'link.recovered'])
    expect(after[1]!.data.health).toMatchObject({ status: 'ok', since: new Date(T + 4).toISOString(), brokenUrls: [] })
    // ok → unknown (the link's URL changed) is no event.
    const edited = { ...a, data: JSON.stringify({ url: 'https://new.example/' }) }
    expect(moves(await health.mapLinks([mappedLink(edited)], T + 5, eventsOf))).toEqual(['a:ok→unknown'])
    expect((await events()).length).toBe(2)
  })
})
