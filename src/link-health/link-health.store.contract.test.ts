/**
 * The link-health store port, one set of cases run against both adapters: SQLite on ':memory:'
 * and PostgreSQL (a real server, a fresh migrated database). Same answers from both: URL states
 * under the 2-failures / 1-pass rule, each link's status settled once per change, the links a
 * URL's change reaches, the list filter `health`, and what a round leaves behind. On
 * PostgreSQL the links whose redirects change are announced on the real invalidation bus.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import type { SQL } from 'bun'
import { until } from '../../test/helpers/poll'
import { startMigratedDatabase } from '../../test/helpers/postgres'
import { createAuthStore, createPgAuthStore } from '../auth'
import { createLinkStore, createPgLinkStore, type LinkStorePort } from '../links'
import { createLogger } from '../shared'
import { createInvalidationBus, type InvalidationBus, openStore } from '../store'
import { mappedLink } from './link-health.rounds'
import { type CheckResult, type Outcome, type Settled, urlKey } from './link-health.rules'
import { createHealthStore, type HealthStorePort } from './link-health.store'
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
  /** Keys announced to other nodes (PostgreSQL), as the bus delivered them. */
  announced(): string[]
}

const adapters: [string, () => Promise<Opened>][] = [
  [
    'sqlite',
    async () => {
      const db = openStore(':memory:')
      createAuthStore(db).addUser('usr_a')
      return { health: createHealthStore(db), links: createLinkStore(db), announced: () => [] }
    },
  ],
  [
    'postgres',
    async () => {
      const sql = pg!.sql as SQL
      await sql`TRUNCATE links, users, health_urls, kv CASCADE`
      await createPgAuthStore(sql).addUser('usr_a')
      heard.length = 0
      return { health: createPgHealthStore(sql, { publish: bus!.publish }), links: createPgLinkStore(sql), announced: () => [...heard] }
    },
  ],
]

const T = Date.parse('2026-05-01T10:00:00Z')
const fail: Outcome = { result: 'fail', httpStatus: 503, error: null }
const pass: Outcome = { result: 'pass', httpStatus: 200, error: null }
const result = (url: string, outcome: Outcome, at: number): CheckResult => ({ url, key: urlKey(url), outcome, at })
const moves = (s: Settled) => s.transitions.map((t) => `${t.link.key}:${t.from}→${t.to}`).sort()

describe.each(adapters)('link-health store on %s', (name, open) => {
  test('URLs shared by links: 2 failures break every link using it, once; a pass mends them; the filter follows', async () => {
    const { health, links, announced } = await open()
    const make = async (key: string, type: string, data: object, options: object = {}) => {
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
        [],
        key,
      )
      return row!
    }
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
})
