/**
 * The PostgreSQL click writer and recorder against a real PostgreSQL (one cluster for the
 * file): the same events give the same rows as the SQLite writer; three nodes writing at once
 * keep every counter and rollup exact; an outage loses nothing below the held-rows bound.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { SQL } from 'bun'
import { until } from '../../test/helpers/poll'
import { startMigratedDatabase } from '../../test/helpers/postgres'
import { seededRandom } from '../../test/helpers/random'
import type { Logger } from '../shared/log'
import { migratePostgres, openStore } from '../store'
import type { ClickEvent } from './click-event'
import { createPgClickRecorder, type Visit } from './click-recorder'
import { createEventWriter } from './click-writer'
import { createPgEventWriter, pgJournalMark } from './click-writer.pg'
import { createPairRoller } from './stats.pairs.pg'

let db: Awaited<ReturnType<typeof startMigratedDatabase>>
beforeAll(async () => {
  db = await startMigratedDatabase('clicks')
})
afterAll(async () => {
  await db?.close()
})

/** Links 1..count: owners u1/u2, types link/menu; the same seqs on both stores. */
const LINKS = Array.from({ length: 8 }, (_, i) => ({ seq: i + 1, user: `u${(i % 2) + 1}`, type: i % 3 ? 'link' : 'menu' }))

function sqliteWithLinks() {
  const lite = openStore(':memory:')
  for (const u of ['u1', 'u2']) lite.run('INSERT INTO users (id, created_at) VALUES (?, 1)', [u])
  for (const l of LINKS)
    lite.run(
      `INSERT INTO links (seq, id, user_id, domain, key, link_type, destination, match_key, data, created_at, updated_at)
       VALUES (?, ?, ?, 'localhost', ?, ?, 'https://dest.example/', ?, '{}', 1, 1)`,
      [l.seq, `lnk_${l.seq}`, l.user, `k${l.seq}`, l.type, `m${l.seq}`],
    )
  return lite
}

async function pgWithLinks(sql: SQL) {
  await sql`INSERT INTO users (id, created_at) VALUES ('u1', 1), ('u2', 1)`
  for (const l of LINKS)
    await sql`INSERT INTO links (seq, id, user_id, domain, key, link_type, destination, match_key, data, created_at, updated_at)
      VALUES (${l.seq}, ${`lnk_${l.seq}`}, ${l.user}, 'localhost', ${`k${l.seq}`}, ${l.type}, 'https://dest.example/', ${`m${l.seq}`}, '{}', 1, 1)`
}

/** A fresh migrated database in the file's cluster, with the links. */
async function freshDatabase(name: string, max = 4): Promise<{ sql: SQL; url: string }> {
  const url = await db.pg.createDatabase(name)
  const sql = new SQL(url, { max })
  await migratePostgres(sql)
  await pgWithLinks(sql)
  return { sql, url }
}

const pick = <T>(rnd: () => number, xs: readonly T[]): T => xs[Math.floor(rnd() * xs.length)]!
const GEO = [
  { continent: 'EU', country: 'DE', region: 'Bavaria', city: 'Munich' },
  { continent: 'EU', country: 'FR', region: 'Île-de-France', city: 'Paris' },
  { continent: 'AS', country: 'IN', region: 'Delhi', city: null },
  { continent: null, country: null, region: null, city: null },
]
const REFERERS = [
  [null, null],
  ['news.example', 'https://news.example/a?b=1'],
  // Characters COPY's text format must escape.
  ['odd.example', 'https://odd.example/tab\there\\back\nline\rcr'],
] as const
const UTM = [null, 'mail', 'ünïcode', 'x\\y']

/** Random-ish events: several links (link 1 busy), three months, hours around local-day edges (+0530, −0500). */
function randomEvents(count: number, seed: number): ClickEvent[] {
  const rnd = seededRandom(seed)
  const months = [Date.UTC(2026, 0, 31, 18, 29), Date.UTC(2026, 1, 28, 23, 45), Date.UTC(2026, 2, 15, 4, 59)]
  return Array.from({ length: count }, () => {
    const geo = pick(rnd, GEO)
    const [referer, refererUrl] = pick(rnd, REFERERS)
    const scan = rnd() < 0.3
    return {
      linkSeq: rnd() < 0.4 ? 1 : 1 + Math.ceil(rnd() * (LINKS.length - 1)),
      domain: 'localhost',
      at: pick(rnd, months) + Math.floor(rnd() * 3 * 3_600_000),
      scan,
      ...geo,
      os: pick(rnd, ['IOS', 'Android', 'Windows']),
      browser: pick(rnd, ['Safari', 'Chrome']),
      device: pick(rnd, ['Mobile', 'Desktop']),
      referer,
      refererUrl,
      utmSource: pick(rnd, UTM),
      utmMedium: pick(rnd, UTM),
      utmCampaign: pick(rnd, UTM),
      utmTerm: null,
      utmContent: pick(rnd, UTM),
      n: 1 + Math.floor(rnd() * 3),
    }
  })
}

const ROLLUPS = ['stats_quarter', 'stats_hour', 'stats_day', 'stats_week'] as const
const sorted = (rows: unknown[]) => rows.map((r) => JSON.stringify(r)).sort()

/** Everything the writer writes, as sorted row sets; group scopes as group names when `byName` (numbering differs between nodes). */
async function pgState(sql: SQL, byName = false) {
  const groups: { num: number; name: string }[] = await sql`SELECT num::float8 AS num, name FROM stats_groups`
  const nameOf = new Map(groups.map((g) => [-g.num, g.name]))
  const scope = (s: number) => (byName && s < 0 ? nameOf.get(s) : s)
  const out: Record<string, string[]> = {}
  for (const t of ROLLUPS) {
    const rows: Record<string, number | string>[] = await sql.unsafe(
      `SELECT scope::float8 AS scope, dim, t::float8 AS t, value, clicks::float8 AS clicks, scans::float8 AS scans FROM ${t}`,
    )
    out[t] = sorted(rows.map((r) => ({ ...r, scope: scope(r.scope as number) })))
  }
  out.links = sorted(
    await sql`SELECT l.seq::float8 AS seq, coalesce(c.clicks, 0)::float8 AS clicks, c.last_clicked::float8 AS last_clicked
      FROM links l LEFT JOIN link_clicks c ON c.seq = l.seq`,
  )
  out.groups = sorted(byName ? groups.map((g) => g.name) : groups)
  out.busy = sorted(await sql`SELECT seq::float8 AS seq FROM stats_busy_links`)
  out.events = sorted(
    await sql`SELECT link_seq::float8 AS link_seq, at::float8 AS at, scan, continent, country, region, city, os, browser, device, referer,
      referer_url, utm_source, utm_medium, utm_campaign, utm_term, utm_content, n FROM click_events`,
  )
  return out
}

function sqliteState(lite: ReturnType<typeof openStore>, byName = false) {
  const groups = lite.query<{ num: number; name: string }, []>('SELECT num, name FROM stats_groups').all()
  const nameOf = new Map(groups.map((g) => [-g.num, g.name]))
  const scope = (s: number) => (byName && s < 0 ? nameOf.get(s) : s)
  const out: Record<string, string[]> = {}
  for (const t of ROLLUPS)
    out[t] = sorted(
      lite
        .query<Record<string, number | string>, []>(`SELECT scope, dim, t, value, clicks, scans FROM ${t}`)
        .all()
        .map((r) => ({ ...r, scope: scope(r.scope as number) })),
    )
  out.links = sorted(lite.query('SELECT seq, clicks, last_clicked FROM links').all())
  out.groups = sorted(byName ? groups.map((g) => g.name) : groups)
  out.busy = sorted(lite.query('SELECT seq FROM stats_busy_links').all())
  out.events = sorted(
    lite
      .query(`SELECT link_seq, at, scan, continent, country, region, city, os, browser, device, referer,
      referer_url, utm_source, utm_medium, utm_campaign, utm_term, utm_content, n FROM click_events`)
      .all(),
  )
  return out
}

const quietLog = (errors: string[] = [], warnings: Record<string, unknown>[] = []): Logger => ({
  info() {},
  warn: (_m, f) => void warnings.push(f ?? {}),
  error: (m, f) => void errors.push(`${m} ${JSON.stringify(f)}`),
})

/**
 * Holds a lock on stats_week in its own transaction: a batch's rollup upserts wait for it until
 * `release`. `waiting` settles once one does (locks of this database only: the cluster is shared).
 */
async function holdStatsWeek(sql: SQL) {
  const blocker = await sql.reserve()
  await blocker`BEGIN`
  await blocker`LOCK TABLE stats_week IN SHARE MODE`
  const waiters = "NOT granted AND relation = 'stats_week'::regclass AND database = (SELECT oid FROM pg_database WHERE datname = current_database())"
  const waitingCount = async () => (await sql.unsafe(`SELECT count(*)::int AS n FROM pg_locks WHERE ${waiters}`))[0].n as number
  return {
    waitingCount,
    waiting: () => until('a batch waiting for the lock', waitingCount, (n) => n > 0),
    /** Cancels the waiting statements: their batches fail, their connections live on. */
    cancelWaiting: () => sql.unsafe(`SELECT pg_cancel_backend(pid) FROM pg_locks WHERE ${waiters}`),
    async release() {
      await blocker`COMMIT`
      blocker.release()
    },
  }
}

/** Visits in each link's counters and in the events: equal, and what was recorded, when each visit is written once. */
async function storedVisits(sql: SQL) {
  const [{ n }] = await sql`SELECT coalesce(sum(clicks), 0)::float8 AS n FROM link_clicks`
  const [{ e }] = await sql`SELECT coalesce(sum(n), 0)::float8 AS e FROM click_events`
  return { n, e }
}

describe('PostgreSQL click writer', () => {
  test.each(['copy', 'unnest'] as const)('the same batches give the same rows as the SQLite writer (events by %s)', async (mode) => {
    const events = randomEvents(1500, 14)
    const lite = sqliteWithLinks()
    const writeLite = createEventWriter(lite, { busyLinkClicks: 400 })
    const { sql } = await freshDatabase(`same_${mode}`)
    const writePg = createPgEventWriter(sql, { busyLinkClicks: 400, eventInsert: mode })
    for (let i = 0; i < events.length; i += 97) {
      const batch = events.slice(i, i + 97)
      writeLite(batch.map((e) => ({ ...e })))
      await writePg(batch)
    }
    const [expected, got] = [sqliteState(lite), await pgState(sql)]
    // The test means something: link 1 became busy mid-way, several partitions hold events.
    expect(expected.busy).toEqual([JSON.stringify({ seq: 1 })])
    const parts: { n: number }[] = await sql`SELECT count(*)::int AS n FROM pg_inherits WHERE inhparent = 'click_events_compact'::regclass`
    expect(parts[0]!.n).toBe(4) // three months and the default
    expect(got).toEqual(expected)
    await sql.close()
  })

  test('three nodes writing disjoint links (shared all-links and group rollups) at once never deadlock, even without a retry', async () => {
    const { sql, url } = await freshDatabase('lock_order')
    const all = randomEvents(3 * 40 * 50, 21)
    const total = all.reduce((n, e) => n + e.n, 0)
    const writers = [0, 1, 2].map((k) => {
      const client = new SQL(url, { max: 1 })
      // Node k writes links 3+2k and 4+2k only: no link row lock orders its batches against the others'.
      const mine = all.slice(k * 2000, (k + 1) * 2000).map((e, i) => ({ ...e, linkSeq: 3 + 2 * k + (i % 2), at: Date.UTC(2026, 5, 1) + (e.at % 7_200_000) }))
      return { client, mine, write: createPgEventWriter(client, { maxAttempts: 1 }) }
    })
    await Promise.all(
      writers.map(async (w) => {
        for (let i = 0; i < w.mine.length; i += 40) await w.write(w.mine.slice(i, i + 40))
      }),
    )
    const [{ clicks }] = await sql`SELECT sum(clicks)::float8 AS clicks FROM stats_day WHERE scope = 0 AND dim = 0`
    expect(clicks).toBe(total)
    for (const w of writers) await w.client.close()
    await sql.close()
  }, 120_000)

  test('a batch chosen as a deadlock victim (another writer of the link counters locking in the other order) runs again, and counts once', async () => {
    const { sql, url } = await freshDatabase('victim')
    const writerClient = new SQL(url, { max: 1 })
    const other = new SQL(url, { max: 1 })
    const [e] = randomEvents(1, 5)
    const batch = [4, 5].map((linkSeq) => ({ ...e!, linkSeq, n: 1 }))
    let written: Promise<unknown> = Promise.resolve()
    await other.begin(async (tx) => {
      // This side waits 10 s before it looks for a deadlock, the writer 1 s: the writer's batch is the victim.
      await tx`SET LOCAL deadlock_timeout = '10s'`
      await tx`INSERT INTO link_clicks (seq, clicks) VALUES (5, 0)`
      written = createPgEventWriter(writerClient)(batch) // takes 4, then waits for 5
      for (;;) {
        const [{ n }] = await sql`SELECT count(*)::int AS n FROM pg_locks WHERE NOT granted AND locktype = 'transactionid'`
        if (n > 0) break
        await Bun.sleep(10) // polling for the writer to queue behind this lock
      }
      await tx`INSERT INTO link_clicks (seq, clicks) VALUES (4, 0)`
    })
    await written
    const clicks = await sql`SELECT seq::float8 AS seq, clicks::float8 AS clicks FROM link_clicks WHERE seq IN (4, 5) ORDER BY seq`
    expect(clicks).toEqual([
      { seq: 4, clicks: 1 },
      { seq: 5, clicks: 1 },
    ])
    const [{ n }] = await sql`SELECT count(*)::int AS n FROM click_events`
    expect(n).toBe(2)
    await writerClient.close()
    await other.close()
    await sql.close()
  })

  describe('a batch called while another is written (the recorder writes ahead)', () => {
    /** A writer whose first batch waits for a lock on stats_week until `release`; `waiting` once it does. */
    async function heldWriter(name: string) {
      const { sql, url } = await freshDatabase(name)
      const client = new SQL(url, { max: 2 })
      const write = createPgEventWriter(client, { maxAttempts: 1 })
      const lock = await holdStatsWeek(sql)
      const stored = async () => Number((await sql`SELECT coalesce(sum(n), 0)::float8 AS n FROM click_events`)[0].n)
      const close = async () => {
        await client.close()
        await sql.close()
      }
      return { sql, write, lock, stored, close }
    }
    const events = (seed: number, linkSeq: number) => randomEvents(30, seed).map((e) => ({ ...e, linkSeq, at: Date.UTC(2026, 7, 1) }))
    const visitsOf = (es: ClickEvent[]) => es.reduce((n, e) => n + e.n, 0)
    /** A caller's side of a batch written ahead: `isPrepared` once the writer said so; its turn taken when it comes. */
    function turnOf() {
      let prepared = false
      return {
        turn: {
          prepared() {
            prepared = true
          },
          starting: () => true,
        },
        isPrepared: async () => prepared,
      }
    }

    test('is prepared at once, inserts its events in a transaction of its own while the first is written, and commits after it, each once', async () => {
      const w = await heldWriter('ahead_order')
      const [first, second] = [events(1, 2), events(2, 3)]
      const firstDone = w.write(first)
      await w.lock.waiting()
      const { turn, isPrepared } = turnOf()
      const secondDone = w.write(second, undefined, turn)
      await until('the second batch prepared', isPrepared, Boolean)
      // Its events are in, in its own transaction, idle while it waits for the first batch (which waits for the lock):
      // it holds no lock the first one needs, and nothing of either is stored yet.
      const eventsInWaiting = async () =>
        (
          await w.sql`SELECT count(DISTINCT l.pid)::int AS n FROM pg_locks l
            JOIN pg_class c ON c.oid = l.relation JOIN pg_stat_activity a ON a.pid = l.pid
            WHERE l.database = (SELECT oid FROM pg_database WHERE datname = current_database())
              AND c.relname LIKE 'click_events_compact%' AND l.mode = 'RowExclusiveLock' AND a.state = 'idle in transaction'`
        )[0].n as number
      await until('the second batch waiting in its transaction, its events in', eventsInWaiting, (n) => n === 1)
      expect(await w.lock.waitingCount()).toBe(1)
      expect(await w.stored()).toBe(0)
      await w.lock.release()
      expect(await Promise.all([firstDone, secondDone])).toEqual([true, true])
      expect(await w.stored()).toBe(visitsOf(first) + visitsOf(second))
      await w.close()
    })

    test('taken back before its turn (starting answers false): nothing of it is written', async () => {
      const w = await heldWriter('ahead_cancel')
      const [first, second] = [events(3, 2), events(4, 3)]
      const firstDone = w.write(first)
      await w.lock.waiting()
      const secondDone = w.write(second, undefined, { prepared() {}, starting: () => false })
      await w.lock.release()
      expect(await Promise.all([firstDone, secondDone])).toEqual([true, false])
      expect(await w.stored()).toBe(visitsOf(first))
      await w.close()
    })

    test('a journal chunk after a batch that fails is not written: its mark stays where it was', async () => {
      const w = await heldWriter('ahead_chunk')
      const [first, chunk] = [events(5, 2), events(6, 3)]
      // Outcomes taken at once: a batch that fails before the test reads it must not be an unhandled rejection meanwhile.
      const outcome = (p: Promise<boolean>) =>
        p.then(
          () => 'written',
          (e) => `failed: ${e}`,
        )
      const firstDone = outcome(w.write(first))
      await w.lock.waiting()
      const { turn, isPrepared } = turnOf()
      const mark = { journal: 'j1', upTo: 100 }
      const chunkDone = outcome(w.write(chunk, mark, turn))
      await until('the chunk prepared', isPrepared, Boolean)
      // The first batch's statement is cancelled while it waits: that batch fails (its connection lives on).
      await w.lock.cancelWaiting()
      expect(await firstDone).toContain('failed: ')
      expect(await chunkDone).toContain('the write before this journal chunk failed')
      await w.lock.release()
      expect(await pgJournalMark(w.sql, 'j1')).toBeNull()
      expect(await w.stored()).toBe(0)
      // Offered again, it is written once.
      expect(await w.write(chunk, mark)).toBe(true)
      expect(await pgJournalMark(w.sql, 'j1')).toBe(100)
      expect(await w.stored()).toBe(visitsOf(chunk))
      await w.close()
    })
  })

  test('a NUL in a visitor-controlled value is dropped, not a batch that fails forever', async () => {
    const { sql } = await freshDatabase('nul')
    const [e] = randomEvents(1, 3)
    await createPgEventWriter(sql)([{ ...e!, utmSource: 'a\0b', refererUrl: 'https://x.example/\0' }])
    const rows = await sql`SELECT utm_source, referer_url FROM click_events`
    expect(rows).toEqual([{ utm_source: 'ab', referer_url: 'https://x.example/' }])
    await sql.close()
  })

  test('quotes, backslashes, braces and commas in visitor-controlled values reach the rollups as they came', async () => {
    const { sql } = await freshDatabase('quoting')
    const [e] = randomEvents(1, 4)
    const odd = ['a"b', 'c\\d', '{e,f}', 'g h', '"', '\\', 'NULL']
    await createPgEventWriter(sql)(odd.map((utmCampaign, i) => ({ ...e!, n: 1, at: e!.at + i, utmCampaign })))
    const rows: { value: string }[] = await sql`SELECT value FROM stats_day WHERE scope = 0 AND dim = 11 ORDER BY value`
    expect(rows.map((r) => r.value)).toEqual([...odd].sort())
    const events: { utm_campaign: string }[] = await sql`SELECT utm_campaign FROM click_events ORDER BY utm_campaign`
    expect(events.map((r) => r.utm_campaign)).toEqual([...odd].sort())
    await sql.close()
  })

  test('a batch appends the link.clicked events its subscribers want in its own transaction, one per visit (NULs dropped); nobody subscribed, none', async () => {
    const { sql } = await freshDatabase('click_outbox')
    const write = createPgEventWriter(sql)
    const events = randomEvents(40, 5).map((e, i) => (i === 0 ? { ...e, linkSeq: 2, utmSource: 'a\0b' } : e))
    await write(events)
    expect((await sql`SELECT count(*)::int AS n FROM events`)[0].n).toBe(0)
    // u1 owns the odd seqs (1, 3, 5, 7); a webhook of u1 for link.clicked wants those.
    await sql`INSERT INTO webhooks (id, user_id, url, events, secret, created_at, updated_at) VALUES ('whk_1', 'u1', 'https://h.example/', '["link.clicked"]', 'whsec_x', 1, 1)`
    await write(events)
    const wanted = events.filter((e) => e.linkSeq % 2 === 1).reduce((n, e) => n + e.n, 0)
    const rows: { link_id: string; data: string }[] = await sql`SELECT link_id, data FROM events`
    expect(rows.length).toBe(wanted)
    expect(new Set(rows.map((r) => r.link_id))).toEqual(new Set(events.filter((e) => e.linkSeq % 2 === 1).map((e) => `lnk_${e.linkSeq}`)))
    await sql`UPDATE webhooks SET user_id = 'u2'`
    await write(events.slice(0, 1))
    expect((await sql`SELECT data FROM events WHERE link_id = 'lnk_2'`).map((r: { data: string }) => JSON.parse(r.data).click.utmSource)).toEqual(
      Array(events[0]!.n).fill('ab'),
    )
    await sql.close()
  })
})

/** A visit of link `seq` with one of a few visitors, places and referers (so rows merge, and rollup keys collide across nodes). */
function visitOf(rnd: () => number, seq: number, at: number): Visit {
  const geoId = Math.floor(rnd() * GEO.length)
  const [referer, refererUrl] = pick(rnd, REFERERS)
  const visitorId = Math.floor(rnd() * 3)
  return {
    linkSeq: seq,
    domain: 'localhost',
    at,
    scan: rnd() < 0.25,
    referer,
    refererUrl,
    visitor: { id: visitorId + 1, os: ['IOS', 'Android', 'Windows'][visitorId]!, browser: 'Chrome', device: 'Mobile' },
    geo: { id: geoId + 1, ...GEO[geoId]! },
    utm: { id: 0, source: null, medium: null, campaign: null, term: null, content: null },
  }
}

describe('PostgreSQL click recorder', () => {
  test('three nodes recording at once: counters and rollups exact, no deadlock surfaced, stop() writes the rest', async () => {
    const { sql, url } = await freshDatabase('nodes')
    const errors: string[] = []
    const perNode = 3000
    const nodes = [1, 2, 3].map((n) => {
      const client = new SQL(url, { max: 2 })
      return { client, recorder: createPgClickRecorder(client, quietLog(errors), { busyLinkClicks: 1500, maxBatch: 40 }), rnd: seededRandom(n) }
    })
    const expected = new Map<number, number>()
    const base = Date.UTC(2026, 4, 31, 22, 0)
    // Interleaved: every node records a slice, its batches go out while the others record.
    for (let i = 0; i < perNode; i += 100) {
      for (const node of nodes)
        for (let j = i; j < i + 100; j++) {
          // Links 1 and 2 take most visits and cross the busy threshold while three nodes write them.
          const seq = node.rnd() < 0.7 ? 1 + Math.floor(node.rnd() * 2) : 3 + Math.floor(node.rnd() * 6)
          expected.set(seq, (expected.get(seq) ?? 0) + 1)
          node.recorder.record(visitOf(node.rnd, seq, base + j * 1500))
        }
      await Promise.all(nodes.map((n) => n.recorder.flush()))
    }
    await Promise.all(nodes.map((n) => n.recorder.stop()))
    expect(errors).toEqual([])
    expect(nodes.map((n) => n.recorder.pendingCount())).toEqual([0, 0, 0])

    const clicks: { seq: number; clicks: number }[] =
      await sql`SELECT l.seq::float8 AS seq, coalesce(c.clicks, 0)::float8 AS clicks FROM links l LEFT JOIN link_clicks c ON c.seq = l.seq ORDER BY l.seq`
    expect(clicks).toEqual(LINKS.map((l) => ({ seq: l.seq, clicks: expected.get(l.seq) ?? 0 })))
    const busy = await sql`SELECT seq::float8 AS seq FROM stats_busy_links ORDER BY seq`
    expect(busy).toEqual([{ seq: 1 }, { seq: 2 }])
    // Every rollup is what the SQLite writer makes of the events that were written, in one batch.
    const events: ClickEvent[] = (
      await sql`SELECT link_seq::float8 AS "linkSeq", at::float8 AS at, scan, continent, country, region, city, os, browser, device,
        referer, referer_url AS "refererUrl", utm_source AS "utmSource", utm_medium AS "utmMedium", utm_campaign AS "utmCampaign",
        utm_term AS "utmTerm", utm_content AS "utmContent", n FROM click_events`
    ).map((e: Omit<ClickEvent, 'scan' | 'domain'> & { scan: number }) => ({ ...e, domain: 'localhost', scan: e.scan === 1 }))
    expect(events.reduce((n, e) => n + e.n, 0)).toBe(3 * perNode)
    const lite = sqliteWithLinks()
    createEventWriter(lite, { busyLinkClicks: 1500 })(events)
    const [want, got] = [sqliteState(lite, true), await pgState(sql, true)]
    for (const key of [...ROLLUPS, 'links', 'groups', 'busy']) expect({ [key]: got[key] }).toEqual({ [key]: want[key] })
    for (const n of nodes) await n.client.close()
    await sql.close()
  }, 120_000)

  test('PostgreSQL down while visits arrive: memory stays within the bound, the rest waits in the journal, and every visit is written once it is back', async () => {
    const { sql, url } = await freshDatabase('outage')
    const errors: string[] = []
    const warnings: Record<string, unknown>[] = []
    const client = new SQL(url, { max: 2, connectionTimeout: 2 })
    const maxHeldRows = 200
    const journalDir = mkdtempSync(join(tmpdir(), 'pg-journal-'))
    const recorder = createPgClickRecorder(client, quietLog(errors, warnings), { maxHeldRows, maxBatch: 1_000_000, journalDir })
    const rnd = seededRandom(7)
    const base = Date.UTC(2026, 6, 1)
    let recorded = 0
    // Each visit a row of its own (its own referer URL), so the bound is reached.
    const distinct = (i: number): Visit => ({ ...visitOf(rnd, 1 + (i % LINKS.length), base + i), refererUrl: `https://r.example/${i}` })
    for (; recorded < 50; recorded++) recorder.record(distinct(recorded))
    await recorder.flush()
    expect(recorder.pendingCount()).toBe(0)

    await db.pg.stop()
    try {
      for (let round = 0; round < 3; round++) {
        for (let k = 0; k < 1000; k++, recorded++) recorder.record(distinct(recorded))
        await recorder.flush() // fails: the rows go to the journal
        expect(recorder.held().rows).toBeLessThanOrEqual(maxHeldRows)
      }
      expect(errors.length).toBeGreaterThan(0)
      expect(errors.length).toBeLessThan(3) // logged once per outage, not per flush
    } finally {
      await db.pg.start()
    }
    expect(recorder.pendingCount()).toBe(3000)
    expect(warnings.some((w) => typeof w.visits === 'number' && w.visits > 0)).toBe(true) // the bound was reached
    recorder.start()
    await until(
      'the journal written',
      async () => recorder.pendingCount(),
      (n) => n === 0,
    )
    await recorder.stop()
    expect(await storedVisits(sql)).toEqual({ n: recorded, e: recorded })
    await client.close()
    await sql.close()
    rmSync(journalDir, { recursive: true, force: true })
  }, 120_000)

  test('a writer held up by a lock: visits that waited a flush window go to the journal, and each is written once', async () => {
    const { sql, url } = await freshDatabase('slow')
    const client = new SQL(url, { max: 2 })
    const journalDir = mkdtempSync(join(tmpdir(), 'pg-journal-'))
    const recorder = createPgClickRecorder(client, quietLog([]), { flushMs: 50, maxHeldRows: 100, journalDir })
    const rnd = seededRandom(9)
    const base = Date.UTC(2026, 7, 1)
    const distinct = (i: number): Visit => ({ ...visitOf(rnd, 1 + (i % LINKS.length), base + i), refererUrl: `https://slow.example/${i}` })
    recorder.start()
    let recorded = 0
    // The writer's batch waits for this lock (its rollup upserts) until the transaction ends.
    const lock = await holdStatsWeek(sql)
    for (; recorded < 50; recorded++) recorder.record(distinct(recorded))
    await lock.waiting()
    for (let round = 0; round < 20; round++) {
      for (let k = 0; k < 200; k++, recorded++) recorder.record(distinct(recorded))
      expect(recorder.held().rows).toBeLessThanOrEqual(100)
      // A flush window later the tick moves the pending rows to the journal: only the stuck batch stays in memory.
      await until(
        'pending rows moved to the journal',
        async () => recorder.held().rows,
        (n) => n === 50,
      )
    }
    expect(recorder.pendingCount()).toBe(recorded)
    await lock.release()
    await until(
      'every visit written',
      async () => recorder.pendingCount(),
      (n) => n === 0,
    )
    await recorder.stop()
    expect(await storedVisits(sql)).toEqual({ n: recorded, e: recorded })
    await client.close()
    await sql.close()
    rmSync(journalDir, { recursive: true, force: true })
  }, 120_000)

  test('a batch written ahead that waits a flush window for its turn goes to the journal; every visit is written once', async () => {
    const { sql, url } = await freshDatabase('ahead_waits')
    const client = new SQL(url, { max: 2 })
    const journalDir = mkdtempSync(join(tmpdir(), 'pg-journal-'))
    // A window long enough that the second batch surely goes ahead while the first is still young; writes of
    // 40 rows, so that 30 rows (more than half a write) may go ahead.
    const recorder = createPgClickRecorder(client, quietLog([]), { flushMs: 2_000, journalDir, maxWriteRows: 40 })
    const rnd = seededRandom(12)
    const base = Date.UTC(2026, 7, 1)
    const distinct = (i: number, site: string): Visit => ({ ...visitOf(rnd, 1 + (i % LINKS.length), base + i), refererUrl: `https://${site}.example/${i}` })
    recorder.start()
    const lock = await holdStatsWeek(sql)
    let recorded = 0
    for (; recorded < 40; recorded++) recorder.record(distinct(recorded, 'first'))
    void recorder.flush()
    await lock.waiting()
    for (; recorded < 70; recorded++) recorder.record(distinct(recorded, 'ahead'))
    void recorder.flush()
    // The second batch is prepared (its referer URLs numbered) and held in memory with the first.
    await until(
      'the second batch prepared',
      async () => (await sql`SELECT count(*)::int AS n FROM stats_values WHERE value LIKE 'https://ahead.example/%'`)[0].n,
      (n) => n === 30,
    )
    expect(recorder.held().rows).toBe(70)
    // At the tick a window later it is taken back into the journal: only the stuck batch stays in memory.
    await until(
      'the waiting batch moved to the journal',
      async () => recorder.held().rows,
      (n) => n === 40,
    )
    expect(recorder.pendingCount()).toBe(70)
    await lock.release()
    await recorder.drain()
    expect(recorder.pendingCount()).toBe(0)
    await recorder.stop()
    expect(await storedVisits(sql)).toEqual({ n: recorded, e: recorded })
    await client.close()
    await sql.close()
    rmSync(journalDir, { recursive: true, force: true })
  }, 120_000)

  test('a journal chunk offered twice is written once: its mark is kept in the batch transaction', async () => {
    const { sql } = await freshDatabase('marks')
    const write = createPgEventWriter(sql)
    const events = randomEvents(20, 4)
    expect(await write(events, { journal: 'node-a', upTo: 700 })).toBe(true)
    expect(await write(events, { journal: 'node-a', upTo: 700 })).toBe(false)
    expect(await write(events, { journal: 'node-a', upTo: 300 })).toBe(false)
    expect(await write(events, { journal: 'node-b', upTo: 300 })).toBe(true)
    expect(await pgJournalMark(sql, 'node-a')).toBe(700)
    const [{ n }] = await sql`SELECT coalesce(sum(clicks), 0)::float8 AS n FROM link_clicks`
    expect(n).toBe(2 * events.reduce((a, x) => a + x.n, 0))
    await sql.close()
  })

  test('stop() on SIGTERM does not wait forever for a server that never answers; what it could not write is logged', async () => {
    // Accepts the connection and says nothing, as a server behind a dead network path.
    const silent = Bun.listen({ hostname: '127.0.0.1', port: 0, socket: { data() {} } })
    const client = new SQL(`postgres://postgres@127.0.0.1:${silent.port}/clicks`, { max: 1, connectionTimeout: 600 })
    const errors: string[] = []
    const recorder = createPgClickRecorder(client, quietLog(errors), { stopWaitMs: 100 })
    recorder.record(visitOf(seededRandom(1), 1, Date.UTC(2026, 0, 1)))
    recorder.record(visitOf(seededRandom(2), 2, Date.UTC(2026, 0, 1)))
    await recorder.stop()
    expect(errors).toEqual([expect.stringContaining('"visits":2')])
    silent.stop(true)
    client.close().catch(() => {})
  })
})

describe('pair rollups (migration 0011)', () => {
  test("on an empty store the roll-up starts today: today's events are left to it, a batch writes no pair rows", async () => {
    const { sql } = await freshDatabase('pairs_today')
    const [{ upto }] = await sql`SELECT upto FROM stats_pairs_state`
    expect(upto).toBe(Math.floor(Date.now() / 86_400_000))
    await createPgEventWriter(sql)(randomEvents(50, 3).map((e) => ({ ...e, at: Date.now() })))
    const [{ n }] = await sql`SELECT count(*)::int AS n FROM stats_pairs`
    expect(n).toBe(0)
    await sql.close()
  })

  /** Every pair row, as sorted text. */
  const pairRows = async (sql: SQL) => sorted(await sql`SELECT a, b, day, va, vb, clicks::float8 AS clicks, scans::float8 AS scans FROM stats_pairs`)

  test('days rolled up while batches keep coming, some with events of days already rolled up: the rows are those of rolling every day from the events', async () => {
    const { sql, url } = await freshDatabase('pairs')
    const base = Date.UTC(2026, 0, 10)
    // The roll-up starts at the first day; its clock moves a day per turn, racing the writer's batches.
    await sql`UPDATE stats_pairs_state SET upto = ${Math.floor(base / 86_400_000)}`
    let day = 0
    const roller = createPairRoller(new SQL(url, { max: 1 }), quietLog([]), { now: () => base + day * 86_400_000 })
    const write = createPgEventWriter(new SQL(url, { max: 1 }))
    const rnd = seededRandom(11)
    for (day = 1; day <= 8; day++) {
      // Events of today and of each of the three days before it (late ones, once rolled up).
      const events = randomEvents(120, day).map((e, i) => ({ ...e, at: base + (day - (i % 4)) * 86_400_000 + Math.floor(rnd() * 86_400_000) }))
      await Promise.all([write(events), roller.roll()])
    }
    const [{ upto }] = await sql`SELECT upto FROM stats_pairs_state`
    expect(upto).toBeGreaterThan(Math.floor(base / 86_400_000) + 4) // the roll-up moved on meanwhile
    day = 100 // the days after: rolled up too
    await roller.roll()
    const written = await pairRows(sql)
    expect(written.length).toBeGreaterThan(1000)
    // The same rows from the events alone: every day rolled up again from scratch.
    await sql`TRUNCATE stats_pairs`
    await sql`UPDATE stats_pairs_state SET upto = ${Math.floor(base / 86_400_000) - 3}`
    await roller.roll()
    expect(await pairRows(sql)).toEqual(written)
    await sql.close()
  }, 120_000)
})
