/**
 * The A/B store's verdict write, against both adapters: SQLite on ':memory:' and PostgreSQL (a
 * real server, a fresh migrated database). A verdict and its `link.test_completed` commit
 * together: a transaction failing after the event's row was written (a trigger on `events`)
 * leaves neither, and the test stays due; a stored verdict has exactly one event, and storing
 * it again (another node's try) adds none.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import type { SQL } from 'bun'
import { failEventsPg, failEventsSqlite } from '../../test/helpers/fail-events'
import { startMigratedDatabase } from '../../test/helpers/postgres'
import { createAuthStore, createPgAuthStore } from '../auth'
import { onEventsAppended } from '../events'
import { createLinkStore, createPgLinkStore, type LinkStorePort } from '../links'
import { openStore } from '../store'
import { type AbTestStorePort, createAbTestStore, type VerdictEventsOf, type VerdictRow } from './ab-tests.store'
import { createPgAbTestStore } from './ab-tests.store.pg'

let pg: Awaited<ReturnType<typeof startMigratedDatabase>> | undefined
beforeAll(async () => {
  pg = await startMigratedDatabase('ab_tests_contract')
})
afterAll(async () => {
  await pg?.close()
})

interface Opened {
  abTests: AbTestStorePort
  links: LinkStorePort
  /** The outbox, in order. */
  events(): Promise<{ type: string; user_id: string; link_id: string; tag_ids: string | null; data: string; created_at: number }[]>
  /** From now on (`true`) a transaction that appended an event fails at its end, after the event's row was written. */
  failEvents(on: boolean): Promise<void>
}

const adapters: [string, () => Promise<Opened>][] = [
  [
    'sqlite',
    async () => {
      const db = openStore(':memory:')
      createAuthStore(db).addUser('usr_a')
      // Visits are not read here: the verdict write never touches the events engine.
      const noVisits = { snapshot: () => Promise.reject(new Error('the events engine is not read by a verdict write')) }
      return {
        abTests: createAbTestStore(db, noVisits),
        links: createLinkStore(db),
        events: async () => db.query('SELECT type, user_id, link_id, tag_ids, data, created_at FROM events ORDER BY seq').all() as never,
        failEvents: async (on) => failEventsSqlite(db, on),
      }
    },
  ],
  [
    'postgres',
    async () => {
      const sql = pg!.sql as SQL
      await sql`TRUNCATE links, users, link_tests, events CASCADE`
      await createPgAuthStore(sql).addUser('usr_a')
      return {
        abTests: createPgAbTestStore(sql),
        links: createPgLinkStore(sql),
        events: async () => (await sql`SELECT type, user_id, link_id, tag_ids, data, created_at::float8 AS created_at FROM events ORDER BY xid, seq`) as never,
        failEvents: (on) => failEventsPg(sql, on),
      }
    },
  ],
]

const T = Date.parse('2026-05-01T10:00:00Z')
const STARTED = T - 86_400_000

describe.each(adapters)('A/B test store on %s', (_name, open) => {
  test('a verdict and its link.test_completed commit together, exactly one event per verdict', async () => {
    const { abTests, links, events, failEvents } = await open()
    const options = {
      trackConversion: true,
      testVariants: [
        { url: 'https://a.example/', percentage: 50 },
        { url: 'https://b.example/', percentage: 50 },
      ],
      testCompletedAt: new Date(T - 1000).toISOString(),
      testStartedAt: STARTED,
    }
    const row = (await links.createLink(
      {
        id: 'lnk_t',
        user_id: 'usr_a',
        domain: 'sl.test',
        key: 't',
        link_type: 'link',
        destination: 'https://plain.example/',
        match_key: 't',
        data: JSON.stringify({ url: 'https://plain.example/' }),
        options: JSON.stringify(options),
        qr_options: null,
        password_hash: null,
        expires_at: null,
        archived: 0,
        created_at: STARTED,
        updated_at: STARTED,
      },
      [],
      't',
    ))!
    const due = [{ seq: row.seq, id: 'lnk_t', startedAt: STARTED }]
    expect(await abTests.dueTests(T, 10)).toEqual(due)

    const tally = (clicks: number, leadVisits: number) => ({ clicks, leads: leadVisits, sales: 0, leadVisits, saleVisits: 0 })
    const verdict: VerdictRow = {
      linkSeq: row.seq,
      startedAt: STARTED,
      status: 'completed',
      winner: 1,
      pValue: 0.0001,
      variants: [tally(200, 20), tally(200, 60)],
      judgedAt: T,
    }
    // The store's caller makes the events; this one counts its calls and keeps what it is given.
    let made = 0
    const eventsOf: VerdictEventsOf = () => {
      made++
      return [
        {
          type: 'link.test_completed',
          userId: 'usr_a',
          linkId: 'lnk_t',
          tagIds: ['tag_x'],
          data: { link: { id: 'lnk_t' }, test: { status: 'completed', winner: 1 } },
        },
      ]
    }
    let woken = 0
    const stopHearing = onEventsAppended(() => woken++)
    try {
      // The transaction fails after the event's row was written: neither the verdict nor the event stays; the test is still due.
      await failEvents(true)
      try {
        await expect(abTests.saveVerdict(verdict, eventsOf)).rejects.toThrow('disk full')
      } finally {
        await failEvents(false)
      }
      expect(made).toBe(1)
      expect(await events()).toEqual([])
      expect(await abTests.verdictOf(row.seq, STARTED)).toBeNull()
      expect(await abTests.dueTests(T, 10)).toEqual(due)

      // Committed: the verdict and exactly one link.test_completed, as the caller made it.
      expect(await abTests.saveVerdict(verdict, eventsOf)).toBe(true)
      expect(await abTests.verdictOf(row.seq, STARTED)).toEqual(verdict)
      expect(await abTests.dueTests(T, 10)).toEqual([])
      const written = await events()
      expect(written.map((e) => ({ ...e, data: JSON.parse(e.data) }))).toEqual([
        {
          type: 'link.test_completed',
          user_id: 'usr_a',
          link_id: 'lnk_t',
          tag_ids: '["tag_x"]',
          data: { link: { id: 'lnk_t' }, test: { status: 'completed', winner: 1 } },
          created_at: T,
        },
      ])
      // This process's dispatcher and live stream hear of it once it committed (SQLite: after its microtask).
      await Promise.resolve()
      expect(woken).toBeGreaterThanOrEqual(1)

      // The same verdict stored again (another node's try, or a second look): not stored, no event made or written.
      const second = { ...verdict, status: 'inconclusive' as const, winner: null, judgedAt: T + 5 }
      expect(await abTests.saveVerdict(second, eventsOf)).toBe(false)
      expect(made).toBe(2)
      expect(await abTests.verdictOf(row.seq, STARTED)).toEqual(verdict)
      expect((await events()).length).toBe(1)
    } finally {
      stopHearing()
    }
  })
})
