/**
 * The link store port, one scenario run against both adapters: SQLite on ':memory:' (today's
 * store) and PostgreSQL (a real server, a fresh migrated database). Each run writes down every
 * answer; both transcripts must be equal (same rows, order, paging, search, refusals), and the
 * PostgreSQL writes must publish the addresses they change. Then the link service over each.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import type { SQL } from 'bun'
import { startMigratedDatabase } from '../../test/helpers/postgres'
import { type Caller, createAuthStore, createPgAuthStore } from '../auth'
import { deriveSettings } from '../config'
import { buildConfig } from '../config/config.load'
import { createVisitCounter, openStore } from '../store'
import { createPgTagStore, createTagStore, type TagStorePort } from '../tags'
import { createLinkService } from './links.service'
import { createLinkStore, type LinkFilter, type LinkSort, type LinkStorePort, type NewLinkRow } from './links.store'
import { createPgLinkStore } from './links.store.pg'

let pgSql: SQL | undefined
let closePg: (() => Promise<void>) | undefined

beforeAll(async () => {
  const started = await startMigratedDatabase('links_contract')
  pgSql = started.sql
  closePg = started.close
})
afterAll(() => closePg?.())

const USERS = ['usr_a', 'usr_b', 'usr_admin']
const T0 = Date.parse('2026-03-01T12:00:00Z')

interface Opened {
  store: LinkStorePort
  tags: TagStorePort
  /** Sets stored clicks as the click writer would. */
  setClicks(seq: number, clicks: number, last: number | null): Promise<void>
  /** What the adapter published: [channel, keys] per call. */
  published: [string, string[]][]
  /** The outbox, oldest first. */
  events(): Promise<{ type: string; user_id: string; link_id: string; tag_ids: string | null; data: string }[]>
}

const adapters: [string, () => Promise<Opened>][] = [
  [
    'sqlite',
    async () => {
      const db = openStore(':memory:')
      const auth = createAuthStore(db)
      for (const id of USERS) if (!auth.getUser(id)) auth.addUser(id)
      const setClicks = db.query('UPDATE links SET clicks = ?, last_clicked = ? WHERE seq = ?')
      return {
        store: createLinkStore(db),
        tags: createTagStore(db, () => T0),
        setClicks: async (seq, clicks, last) => void setClicks.run(clicks, last, seq),
        published: [],
        events: async () => db.query('SELECT type, user_id, link_id, tag_ids, data FROM events ORDER BY seq').all() as never,
      }
    },
  ],
  [
    'postgres',
    async () => {
      const sql = pgSql!
      await sql`TRUNCATE links, link_clicks, link_tags, tags, users, events RESTART IDENTITY CASCADE`
      const auth = createPgAuthStore(sql)
      for (const id of USERS) if (!(await auth.getUser(id))) await auth.addUser(id)
      const published: [string, string[]][] = []
      return {
        store: createPgLinkStore(sql, {
          publish: async (_tx, channel, keys) => {
            published.push([channel, [...keys].sort()])
          },
        }),
        tags: createPgTagStore(sql, () => T0),
        setClicks: async (seq, clicks, last) => {
          // The click writer's counters table (PostgreSQL migration 0010).
          await sql`INSERT INTO link_clicks (seq, clicks, last_clicked) VALUES (${seq}, ${clicks}, ${last})
            ON CONFLICT (seq) DO UPDATE SET clicks = excluded.clicks, last_clicked = excluded.last_clicked`
        },
        published,
        events: async () => (await sql`SELECT type, user_id, link_id, tag_ids, data FROM events ORDER BY xid, seq`) as never,
      }
    },
  ],
]

/** A link row of the scenario; `i` gives its timestamps. */
function row(i: number, o: Partial<NewLinkRow> & { key: string }): NewLinkRow {
  const destination = o.destination ?? `https://shop${i}.example.com/page`
  return {
    id: `lnk_${String(i).padStart(2, '0')}`,
    user_id: 'usr_a',
    domain: 'localhost',
    link_type: 'link',
    destination,
    match_key: destination,
    data: JSON.stringify({ url: destination }),
    options: '{}',
    qr_options: null,
    password_hash: null,
    expires_at: null,
    archived: 0,
    created_at: T0 + i * 1000,
    updated_at: T0 + i * 1000,
    ...o,
  }
}
const searchTextOf = (r: NewLinkRow) => {
  const strings: string[] = []
  const walk = (v: unknown) => {
    if (typeof v === 'string') strings.push(v)
    else if (v && typeof v === 'object') Object.values(v).forEach(walk)
  }
  walk(JSON.parse(r.data))
  return `${r.key} ${r.destination} ${strings.join(' ')}`
}

const transcripts: Record<string, unknown[]> = {}

describe.each(adapters)('link store port on %s', (name, open) => {
  test('every method: create, read, key checks, tags, clicks, files, update, delete, list, count, search', async () => {
    const { store, tags, setClicks, published } = await open()
    const out: unknown[] = []
    const note = (label: string, value: unknown) => out.push([label, value])
    await tags.insert({ id: 'tag_1', userId: 'usr_a', name: 'one', color: 'gray' })
    await tags.insert({ id: 'tag_2', userId: 'usr_a', name: 'two', color: 'gray' })

    const rows = [
      row(1, { key: 'alpha', destination: 'https://Summer.example.com/a' }),
      row(2, { key: 'beta', link_type: 'text', destination: 'https://localhost/beta', data: JSON.stringify({ text: 'Summer SALE 100%_off' }) }),
      row(3, { key: 'gamma', user_id: 'usr_b', domain: 'go.example' }),
      row(4, { key: 'delta', archived: 1, destination: 'https://summer.example.org/' }),
      row(5, { key: 'Ab', link_type: 'document', data: JSON.stringify({ url: 'https://x.example/d.pdf', fileId: 'fil_1' }) }),
      row(6, { key: 'eps', user_id: 'usr_b', destination: 'https://café.example/menu' }),
      row(7, { key: 'zeta', destination: 'https://shop7.example.com/SU' }),
    ]
    const seqs: number[] = []
    for (const [i, r] of rows.entries()) {
      const saved = await store.createLink(r, i === 0 ? ['tag_2', 'tag_1'] : i === 1 ? ['tag_1'] : [], searchTextOf(r))
      seqs.push(saved!.seq)
      note(`created ${r.key}`, saved)
    }
    expect(seqs).toEqual([1, 2, 3, 4, 5, 6, 7])
    note('same address refused', await store.createLink(row(8, { key: 'alpha' }), [], 'x'))
    note('same key, other domain', (await store.createLink(row(9, { key: 'alpha', domain: 'go.example' }), [], 'alpha'))?.seq)
    await setClicks(1, 5, T0 + 50_000)
    await setClicks(2, 5, T0 + 60_000)
    await setClicks(3, 9, T0 + 40_000)
    await setClicks(6, 1, T0 + 40_000)

    note('getById', await store.getById('lnk_01'))
    note('getById none', await store.getById('lnk_none'))
    note('getByDomainKey', await store.getByDomainKey('go.example', 'gamma'))
    note('getByDomainKey other domain', await store.getByDomainKey('localhost', 'gamma'))
    note('keyTaken', [
      await store.keyTaken('localhost', 'alpha'),
      await store.keyTaken('localhost', 'alpha', 1),
      await store.keyTaken('localhost', 'alpha', 2),
      await store.keyTaken('localhost', 'nope'),
      await store.keyTaken('localhost', 'ALPHA'),
    ])
    note('findForUpsert', (await store.findForUpsert('usr_a', 'link', 'https://summer.example.org/'))?.id)
    note('findForUpsert other user', await store.findForUpsert('usr_b', 'link', 'https://summer.example.org/'))
    note('tagsOf', [...(await store.tagsOf([1, 2, 3, 99]))])
    note('tagsOf none', [...(await store.tagsOf([]))])
    note('storedClicks', [await store.storedClicks(1), await store.storedClicks(4), await store.storedClicks(99)])
    note('fileInUse', [await store.fileInUse('fil_1'), await store.fileInUse('fil_2')])

    const sorts: LinkSort[] = []
    for (const sortBy of ['created_at', 'clicks', 'last_created_at'] as const)
      for (const sortOrder of ['desc', 'asc'] as const)
        for (const [limit, offset] of [
          [20, 0],
          [2, 1],
          [5, 20],
        ] as const)
          sorts.push({ sortBy, sortOrder, limit, offset })
    const filters: LinkFilter[] = [
      {},
      { includeArchived: true },
      { userIds: ['usr_b'] },
      { userIds: ['usr_a', 'usr_b'], includeArchived: true },
      { ids: ['lnk_01', 'lnk_03', 'lnk_04', 'lnk_none'] },
      { domainKeys: [] },
      {
        domainKeys: [
          { domain: 'go.example', key: 'gamma' },
          { domain: 'localhost', key: 'alpha' },
        ],
      },
      { domain: 'GO.example' },
      { linkType: 'text' },
      { tagIds: ['tag_1'] },
      { tagIds: ['tag_2', 'tag_none'] },
      { search: 'summer' },
      { search: 'SUMMER', includeArchived: true },
      { search: '100%_' },
      { search: '%_' },
      { search: '_' },
      { search: 'su' },
      { search: 'SU', userIds: ['usr_a'] },
      { search: 'ab' },
      { search: 'café' },
      { search: 'fil_1' },
      { search: 'nothing here' },
      { search: 'summer', tagIds: ['tag_1'], linkType: 'link' },
    ]
    for (const f of filters) {
      note(`count ${JSON.stringify(f)}`, await store.count(f))
      for (const s of sorts) {
        const page = await store.list(f, s)
        note(`list ${JSON.stringify(f)} ${JSON.stringify(s)}`, { ids: page.rows.map((r) => r.id), total: page.total })
      }
    }
    note('a listed row in full', (await store.list({ ids: ['lnk_02'] }, sorts[0]!)).rows)
    // Spot checks of the shared answers (the transcripts compare the rest).
    expect(await store.count({ search: 'summer' })).toBe(2)
    expect((await store.list({ search: 'su' }, { sortBy: 'clicks', sortOrder: 'desc', limit: 10, offset: 0 })).rows.map((r) => r.key)).toEqual([
      'beta',
      'alpha',
      'zeta',
    ])

    // Updates: all or none.
    const alpha = (await store.getById('lnk_01'))!
    const moved = {
      ...alpha,
      key: 'alpha2',
      destination: 'https://winter.example.com/',
      data: JSON.stringify({ url: 'https://winter.example.com/' }),
      updated_at: T0 + 99_000,
    }
    published.length = 0
    note('save moved', await store.saveLinks([{ base: alpha, row: moved, tags: ['tag_1'], searchText: searchTextOf(moved) }]))
    if (name === 'postgres') expect(published).toEqual([['links', ['localhost/alpha', 'localhost/alpha2']]])
    note('after move', [await store.getByDomainKey('localhost', 'alpha'), await store.getByDomainKey('localhost', 'alpha2'), [...(await store.tagsOf([1]))]])
    note('search after move', [await store.count({ search: 'summer' }), await store.count({ search: 'winter' })])
    const beta = (await store.getById('lnk_02'))!
    const zeta = (await store.getById('lnk_07'))!
    published.length = 0
    const refused = await store.saveLinks([
      { base: zeta, row: { ...zeta, archived: 1 }, searchText: searchTextOf(zeta) },
      { base: beta, row: { ...beta, key: 'alpha2' }, searchText: 'x' },
    ])
    expect(refused).toEqual({ refused: 'key_taken', id: 'lnk_02', domain: 'localhost', key: 'alpha2' })
    expect(published).toEqual([])
    note('refused: key taken', refused)
    note('nothing written', [await store.getById('lnk_07'), await store.getById('lnk_02')])
    // A write computed from a row read before the move is refused: it would undo the move.
    const stale = await store.saveLinks([{ base: alpha, row: { ...alpha, archived: 1 }, searchText: searchTextOf(alpha) }])
    expect(stale).toEqual({ refused: 'changed', id: 'lnk_01', domain: 'localhost', key: 'alpha' })
    note('refused: changed since read', [stale, await store.getById('lnk_01')])

    // Tombstones.
    published.length = 0
    note('softDeleteLinks', await store.softDeleteLinks([2, 3, 99], T0 + 100_000))
    if (name === 'postgres') expect(published).toEqual([['links', ['go.example/gamma', 'localhost/beta']]])
    published.length = 0
    note('softDeleteLinks again', await store.softDeleteLinks([2], T0 + 101_000))
    expect(published).toEqual([])
    note('softDeleteLinks none', await store.softDeleteLinks([], T0 + 101_000))
    note('deleted row', await store.getById('lnk_02'))
    note('deleted: gone from lookups', [
      await store.getByDomainKey('localhost', 'beta'),
      await store.keyTaken('localhost', 'beta'),
      await store.count({ search: 'summer' }),
    ])
    note('refused: gone', await store.saveLinks([{ base: beta, row: { ...beta, destination: 'https://x.example/' }, searchText: 'x' }]))
    note('a deleted key is free again', (await store.createLink(row(10, { key: 'beta' }), [], 'beta'))?.seq)
    note('final list', (await store.list({ includeArchived: true }, { sortBy: 'created_at', sortOrder: 'asc', limit: 100, offset: 0 })).rows)

    transcripts[name] = out
  })
})

test('both adapters gave the same answers', () => {
  expect(transcripts.sqlite?.length).toBeGreaterThan(100)
  const pg = transcripts.postgres!
  for (const [i, entry] of transcripts.sqlite!.entries()) expect(pg[i]).toEqual(entry as never)
  expect(pg.length).toBe(transcripts.sqlite!.length)
})

describe.each(adapters)('the link service over %s', (name, open) => {
  test('createLinks (an import batch): rows in order, each with its tags; null where the key is taken, in the store or earlier in the batch', async () => {
    const { store, tags } = await open()
    await tags.insert({ id: 'tag_1', userId: 'usr_a', name: 'one', color: 'gray' })
    await store.createLink(row(1, { key: 'taken' }), [], 'taken')
    const batch = [row(2, { key: 'b1', imported_clicks: 42 }), row(3, { key: 'taken' }), row(4, { key: 'b2' }), row(5, { key: 'b1' })]
    const saved = await store.createLinks(batch.map((r, i) => ({ row: r, tags: i === 0 ? ['tag_1'] : [], searchText: searchTextOf(r) })))
    expect(saved.map((r) => r?.key ?? null)).toEqual(['b1', null, 'b2', null])
    expect(saved[0]).toMatchObject({ id: 'lnk_02', imported_clicks: 42, clicks: 0, created_at: T0 + 2000 })
    expect([...(await store.tagsOf([saved[0]!.seq])).values()]).toEqual([['tag_1']])
    expect((await store.getByDomainKey('localhost', 'taken'))?.id).toBe('lnk_01')
  })

  test('create, get, update, upsert, bulk update, list, search, count, delete; each write appends its events in its own transaction', async () => {
    const { store, tags, events } = await open()
    await tags.insert({ id: 'tag_1', userId: 'usr_a', name: 'one', color: 'gray' })
    const settings = deriveSettings(buildConfig({}, {}))
    let clock = T0
    const links = createLinkService({ store, tags, settings, isUsableDomain: async (d) => settings.defaultDomains.includes(d), now: () => (clock += 1000) })
    const changes: string[] = []
    links.onChange((c) => changes.push(`${c.domain}/${c.key}`))
    const alice: Caller = { userId: 'usr_a', role: 'member' } as Caller
    const admin: Caller = { userId: 'usr_admin', role: 'admin' } as Caller
    const ids = new Map<string, string>()
    /** A record with its random id named by order of creation, so both runs compare. */
    const plain = (r: { id: string }) => {
      if (!ids.has(r.id)) ids.set(r.id, `link${ids.size + 1}`)
      return JSON.parse(JSON.stringify(r).replaceAll(r.id, ids.get(r.id)!))
    }
    const out: unknown[] = []
    const a = await links.create(alice, 'link', { data: { url: 'https://summer.example.com/a' }, linkOptions: { key: 'sa', tags: ['tag_1'] } })
    out.push(plain(a))
    const b = await links.create(alice, 'text', { data: { text: 'Summer menu' }, linkOptions: { key: 'sb' } })
    out.push(plain(b))
    await expect(links.create(alice, 'link', { data: { url: 'https://x.example/' }, linkOptions: { key: 'sa' } })).rejects.toThrow(
      "'linkOptions.key' 'sa' is already used on localhost",
    )
    await expect(links.create(alice, 'link', { data: { url: 'https://x.example/' }, linkOptions: { tags: ['tag_none'] } })).rejects.toThrow('tag_none')
    out.push(plain(await links.get(alice, a.id)))
    out.push(plain(await links.update(alice, a.id, { linkOptions: { key: 'sa2', comment: 'moved' } })))
    // Another request (or node) archives the link between this update's read and its write: both changes stay.
    const racing = createLinkService<LinkStorePort>({
      store: {
        ...store,
        saveLinks: async (writes, eventsOf) => {
          if (writes[0]!.base.archived === 0) await links.update(alice, a.id, { linkOptions: { archived: true } })
          return store.saveLinks(writes, eventsOf)
        },
      },
      tags,
      settings,
      isUsableDomain: () => true,
      now: () => (clock += 1000),
    })
    const raced = await racing.update(alice, a.id, { linkOptions: { comment: 'both' } })
    expect(raced).toMatchObject({ archived: true, comments: 'both', key: 'sa2' })
    out.push(plain(raced))
    out.push(plain(await links.update(alice, a.id, { linkOptions: { archived: false } })))
    out.push(
      await links.upsert(alice, 'link', { data: { url: 'https://summer.example.com/a' } }).then((u) => ({ created: u.created, record: plain(u.record) })),
    )
    const bulk = await links.bulkUpdate(alice, [a.id, b.id], { linkOptions: { archived: true } })
    out.push({ updatedCount: bulk.updatedCount, links: bulk.links.map(plain) })
    await expect(links.bulkUpdate(alice, [a.id, 'lnk_none'], { linkOptions: { archived: false } })).rejects.toThrow('lnk_none')
    out.push((await links.list(alice, { includeArchived: true, search: 'summer' })).links.map(plain))
    out.push((await links.list(admin, { search: 'SA' })).total)
    out.push(await links.count(alice, { includeArchived: true }))
    out.push((await links.findLiveRow('localhost', 'sa2'))?.key)
    out.push(await links.remove(alice, b.id).then(plain))
    await expect(links.get(alice, b.id)).rejects.toThrow('was deleted')
    out.push(await links.bulkRemove(admin, `${a.id},${b.id},lnk_none`))
    out.push(await links.count(admin, { includeArchived: true }))
    out.push(changes)
    expect(changes).toContain('localhost/sa2')
    // The outbox: one event per link written, none for refused or rolled-back writes, none for an upsert that changed nothing.
    const written = (await events()).map((e) => ({ ...e, data: plain(JSON.parse(e.data)) }))
    expect(written.map((e) => `${e.type} ${ids.get(e.link_id)}`)).toEqual([
      'link.created link1',
      'link.created link2',
      'link.updated link1',
      'link.updated link1',
      'link.updated link1',
      'link.updated link1',
      'link.updated link1',
      'link.updated link2',
      'link.deleted link2',
      'link.deleted link1',
    ])
    // Data: the record as the service answered it after that write; scope: the owner; tags for webhook filters.
    expect(written[0]).toEqual({ type: 'link.created', user_id: 'usr_a', link_id: a.id, tag_ids: '["tag_1"]', data: plain(a) })
    expect(written[4]!.data).toEqual(plain(raced))
    expect(written[8]!.data).toMatchObject({ id: 'link2', key: 'sb' })
    out.push(written.map((e) => ({ ...e, link_id: ids.get(e.link_id) })))
    transcripts[`service ${name}`] = out
  })
})

test('the service gave the same answers on both adapters', () => {
  expect(transcripts['service postgres']).toEqual(transcripts['service sqlite']!)
})

test("on postgres, deleting a link drops its number-targeting count (visit_counters); other links' counts stay", async () => {
  const sql = pgSql!
  await sql`TRUNCATE links, link_clicks, link_tags, tags, users, visit_counters RESTART IDENTITY CASCADE`
  await createPgAuthStore(sql).addUser('usr_a')
  const store = createPgLinkStore(sql)
  const kept = (await store.createLink(row(1, { key: 'kept' }), [], 'kept'))!
  const gone = (await store.createLink(row(2, { key: 'gone' }), [], 'gone'))!
  const counter = createVisitCounter(sql)
  for (const l of [kept, gone]) await counter.next(l.id)
  expect(await store.softDeleteLinks([gone.seq], T0 + 1)).toBe(1)
  expect((await sql`SELECT link_id FROM visit_counters ORDER BY link_id`).map((r: { link_id: string }) => r.link_id)).toEqual([kept.id])
})
