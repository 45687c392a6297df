/**
 * The click batch's outbox function on both stores: who could want a visit decides whether
 * it becomes an event at all (nobody subscribed: nothing written), a merged row of n visits
 * gives n events, webhook filters and live listeners widen or narrow it; and, through the
 * real SQLite click writer, the events commit and roll back with their batch.
 */

import type { Database } from 'bun:sqlite'
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import type { SQL } from 'bun'
import { startMigratedDatabase } from '../../test/helpers/postgres'
import type { ClickEvent } from '../stats/click-event'
import { createEventWriter } from '../stats/click-writer'
import { openStore } from '../store'
import { appendClickEvents } from './click-events'
import { appendClickEventsPg } from './click-events.pg'
import type { VisitRow } from './click-events.shared'

let pg: Awaited<ReturnType<typeof startMigratedDatabase>> | undefined
beforeAll(async () => {
  pg = await startMigratedDatabase('click_events_outbox')
})
afterAll(() => pg?.close())

const T0 = Date.parse('2026-05-01T10:00:00Z')

const SETUP = [
  "INSERT INTO users (id, created_at, role) VALUES ('usr_admin', 1, 'admin'), ('usr_a', 1, 'member'), ('usr_b', 1, 'member')",
  `INSERT INTO links (id, user_id, domain, key, link_type, destination, match_key, data, options, created_at, updated_at) VALUES
    ('lnk_a1', 'usr_a', 'sho.rt', 'a1', 'link', 'https://a1.example/', 'm1', '{}', '{}', 1, 1),
    ('lnk_a2', 'usr_a', 'sho.rt', 'a2', 'link', 'https://a2.example/', 'm2', '{}', '{}', 1, 1),
    ('lnk_b1', 'usr_b', 'sho.rt', 'b1', 'text', 'https://sho.rt/b1', 'm3', '{}', '{}', 1, 1)`,
  "INSERT INTO tags (id, user_id, name, name_key, color, created_at, updated_at) VALUES ('tag_hot', 'usr_b', 'hot', 'hot', 'red', 1, 1)",
  "INSERT INTO link_tags (tag_id, link_seq, pos) VALUES ('tag_hot', 3, 0)",
]

interface Side {
  run(sql: string): Promise<void>
  append(visits: VisitRow[], now: number): Promise<number>
  events(): Promise<{ type: string; user_id: string; link_id: string; tag_ids: string | null; data: string; created_at: number; id: string }[]>
}

const sides: [string, () => Promise<Side>][] = [
  [
    'sqlite',
    async () => {
      const db = openStore(':memory:')
      return {
        run: async (sql) => void db.run(sql),
        append: async (visits, now) => db.transaction(() => appendClickEvents(db, visits, now))(),
        events: async () => db.query('SELECT id, type, user_id, link_id, tag_ids, data, created_at FROM events ORDER BY seq').all() as never,
      }
    },
  ],
  [
    'postgres',
    async () => {
      const sql = pg!.sql
      await sql`TRUNCATE events, webhooks, event_listeners, link_tags, tags, links, users RESTART IDENTITY CASCADE`
      return {
        run: async (text) => void (await sql.unsafe(text)),
        append: (visits, now) => sql.begin((tx: SQL) => appendClickEventsPg(tx, visits, now)),
        events: async () =>
          (await sql`SELECT id, type, user_id, link_id, tag_ids, data, created_at::float8 AS created_at FROM events ORDER BY xid, seq`) as never,
      }
    },
  ],
]

const visit = (linkSeq: number, n = 1, extra: Partial<ClickEvent> = {}): ClickEvent => ({
  linkSeq,
  domain: 'sho.rt',
  at: T0 + linkSeq,
  scan: false,
  continent: 'EU',
  country: 'DE',
  region: 'Bavaria',
  city: 'Munich',
  os: 'Linux',
  browser: 'Firefox',
  device: 'Desktop',
  referer: null,
  refererUrl: null,
  utmSource: 'news',
  utmMedium: null,
  utmCampaign: null,
  utmTerm: null,
  utmContent: null,
  n,
  ...extra,
})

const webhook = (id: string, user: string, events: string[], o: { links?: string[]; tags?: string[]; disabled?: number } = {}) =>
  `INSERT INTO webhooks (id, user_id, url, events, link_ids, tag_ids, secret, disabled, created_at, updated_at)
   VALUES ('${id}', '${user}', 'https://hook.example/', '${JSON.stringify(events)}', '${JSON.stringify(o.links ?? [])}', '${JSON.stringify(o.tags ?? [])}', 'whsec_x', ${o.disabled ?? 0}, 1, 1)`

const transcripts: Record<string, unknown[]> = {}

describe.each(sides)('appendClickEvents on %s', (name, open) => {
  test('nobody subscribed writes nothing; subscribers decide which visits become events, one per visit', async () => {
    const s = await open()
    for (const q of SETUP) await s.run(q)
    const out: unknown[] = []
    const batch = [visit(1, 3), visit(2), visit(3, 2, { scan: true })]
    const step = async (label: string) => {
      const before = (await s.events()).length
      const n = await s.append(batch, T0)
      const rows = (await s.events()).slice(before)
      expect(rows.length).toBe(n)
      out.push([label, rows.map((r) => [r.link_id, r.user_id, r.tag_ids])])
      return rows
    }
    expect(await step('no webhook, no listener')).toEqual([])
    // Subscribed to other types, disabled, or owned by a disabled user: still nothing.
    await s.run(webhook('whk_other', 'usr_a', ['link.created']))
    await s.run(webhook('whk_off', 'usr_a', ['link.clicked'], { disabled: 1 }))
    expect(await step('only other types or disabled')).toEqual([])

    // A member's webhook: their links' visits, one event per visit (3 + 1).
    await s.run(webhook('whk_a', 'usr_a', ['link.clicked']))
    const own = await step('member webhook')
    expect(own.map((r) => r.link_id)).toEqual(['lnk_a1', 'lnk_a1', 'lnk_a1', 'lnk_a2'])
    expect(new Set(own.map((r) => r.id)).size).toBe(4)
    const data = JSON.parse(own[0]!.data)
    expect(data).toEqual({
      link: { id: 'lnk_a1', domain: 'sho.rt', key: 'a1', linkType: 'link', destination: 'https://a1.example/' },
      click: {
        at: new Date(T0 + 1).toISOString(),
        scan: false,
        continent: 'EU',
        country: 'DE',
        region: 'Bavaria',
        city: 'Munich',
        device: 'Desktop',
        os: 'Linux',
        browser: 'Firefox',
        referer: null,
        refererUrl: null,
        utmSource: 'news',
        utmMedium: null,
        utmCampaign: null,
        utmTerm: null,
        utmContent: null,
      },
    })
    expect(own[0]!.created_at).toBe(T0 + 1)
    await s.run("DELETE FROM webhooks WHERE id = 'whk_a'")

    // A tag filter of another member: only the tagged link, and the rows carry its tags.
    await s.run(webhook('whk_b', 'usr_b', ['link.clicked'], { tags: ['tag_hot'] }))
    const tagged = await step('tag filter')
    expect(tagged.map((r) => [r.link_id, r.tag_ids])).toEqual([
      ['lnk_b1', '["tag_hot"]'],
      ['lnk_b1', '["tag_hot"]'],
    ])
    await s.run("DELETE FROM webhooks WHERE id = 'whk_b'")

    // An admin's webhook narrowed to one link of another user.
    await s.run(webhook('whk_admin', 'usr_admin', ['link.clicked', 'link.created'], { links: ['lnk_a2'] }))
    expect((await step('admin, one link')).map((r) => r.link_id)).toEqual(['lnk_a2'])
    await s.run("DELETE FROM webhooks WHERE id = 'whk_admin'")

    // A live listener of user b (until it expires), then one for every link.
    await s.run(`INSERT INTO event_listeners (scope, user_id, expires_at) VALUES ('user:usr_b', 'usr_b', ${T0 + 1000})`)
    expect((await step('listener b')).map((r) => r.link_id)).toEqual(['lnk_b1', 'lnk_b1'])
    await s.run(`UPDATE event_listeners SET expires_at = ${T0}`)
    expect(await step('listener expired')).toEqual([])
    await s.run(`INSERT INTO event_listeners (scope, user_id, expires_at) VALUES ('all', NULL, ${T0 + 1000})`)
    expect((await step('listener all')).length).toBe(6)
    transcripts[name] = out
  })
})

test('both stores wrote the same events', () => {
  expect(Object.keys(transcripts).sort()).toEqual(['postgres', 'sqlite'])
  expect(transcripts.postgres).toEqual(transcripts.sqlite!)
})

test("the SQLite click writer appends a batch's events in its own transaction: they commit and roll back with the clicks", () => {
  const db: Database = openStore(':memory:')
  for (const q of SETUP) db.run(q)
  db.run(webhook('whk_a', 'usr_a', ['link.clicked']))
  const write = createEventWriter(db)
  const count = (table: string) => db.query<{ n: number }, []>(`SELECT count(*) AS n FROM ${table}`).get()!.n
  write([visit(1, 2)])
  expect([count('click_events_compact'), count('events')]).toEqual([1, 2])
  // A batch that fails (a link seq that breaks the busy-link insert is hard to make; a trigger stands in for any failure).
  db.run("CREATE TEMP TRIGGER fail_batch BEFORE INSERT ON events WHEN NEW.link_id = 'lnk_a2' BEGIN SELECT RAISE(ABORT, 'disk full'); END")
  expect(() => write([visit(1, 1), visit(2, 1)])).toThrow('disk full')
  expect([count('click_events_compact'), count('events')]).toEqual([1, 2])
})
