/**
 * The tag store port, one set of cases run against both adapters: SQLite on ':memory:'
 * (today's store) and PostgreSQL (a real server, a fresh migrated database). Both must give
 * the same answers: the same rows, the same order (text by code point), the same paging and
 * search. Then the tag service over each.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, test } from 'bun:test'
import type { SQL } from 'bun'
import { startMigratedDatabase } from '../../test/helpers/postgres'
import { type Caller, createAuthStore, createPgAuthStore } from '../auth'
import type { ListPage } from '../shared'
import { openStore } from '../store'
import { createTagService } from './tags.service'
import { createTagStore, type TagFilter, type TagStorePort } from './tags.store'
import { createPgTagStore } from './tags.store.pg'

let pgSql: SQL | undefined
let closePg: (() => Promise<void>) | undefined

beforeAll(async () => {
  const started = await startMigratedDatabase('tags_contract')
  pgSql = started.sql
  closePg = started.close
})
afterAll(() => closePg?.())

const T0 = Date.parse('2026-03-01T12:00:00Z')
const USERS = ['usr_a', 'usr_b']

/** A store whose clock steps by one second per write, with the users that own tags. */
const adapters: [string, (now: () => number) => Promise<TagStorePort>][] = [
  [
    'sqlite',
    async (now) => {
      const db = openStore(':memory:')
      const auth = createAuthStore(db)
      for (const id of USERS) auth.addUser(id)
      return createTagStore(db, now)
    },
  ],
  [
    'postgres',
    async (now) => {
      const sql = pgSql!
      await sql`TRUNCATE tags, users CASCADE`
      const auth = createPgAuthStore(sql)
      for (const id of USERS) await auth.addUser(id)
      return createPgTagStore(sql, now)
    },
  ],
]

describe.each(adapters)('tag store port on %s', (_name, open) => {
  let store: TagStorePort
  let clock: number
  beforeEach(async () => {
    clock = T0
    store = await open(() => (clock += 1000))
  })

  test('insert, get, find by name (case-insensitively, per user), update, remove', async () => {
    await store.insert({ id: 'tag_1', userId: 'usr_a', name: 'Summer', color: 'teal' })
    const made = {
      id: 'tag_1',
      name: 'Summer',
      color: 'teal',
      userId: 'usr_a',
      createdAt: new Date(T0 + 1000).toISOString(),
      updatedAt: new Date(T0 + 1000).toISOString(),
    }
    expect(await store.get('tag_1')).toEqual(made)
    expect(await store.get('tag_none')).toBeNull()
    expect(await store.findByName('usr_a', 'SUMMER')).toEqual(made)
    expect(await store.findByName('usr_b', 'summer')).toBeNull()

    await store.update('tag_1', 'Été', 'red')
    expect(await store.get('tag_1')).toEqual({ ...made, name: 'Été', color: 'red', updatedAt: new Date(T0 + 2000).toISOString() })
    expect(await store.findByName('usr_a', 'summer')).toBeNull()
    expect((await store.findByName('usr_a', 'éTÉ'))!.id).toBe('tag_1')
    await store.update('tag_none', 'x', 'red')

    await store.remove('tag_1')
    await store.remove('tag_1')
    expect(await store.get('tag_1')).toBeNull()
  })

  test('a second tag of the same name (any case) for one user is refused; another user may have it', async () => {
    await store.insert({ id: 'tag_1', userId: 'usr_a', name: 'Promo', color: 'teal' })
    expect(async () => await store.insert({ id: 'tag_2', userId: 'usr_a', name: 'PROMO', color: 'red' })).toThrow()
    await store.insert({ id: 'tag_3', userId: 'usr_b', name: 'promo', color: 'red' })
    expect((await store.list(page({}))).total).toBe(2)
  })

  const page = (f: Partial<TagFilter>): TagFilter => ({ sortBy: 'created_at', sortOrder: 'desc', limit: 100, offset: 0, ...f })
  const names = async (f: Partial<TagFilter>) => {
    const { tags, total } = await store.list(page(f))
    return { names: tags.map((t) => t.name), total }
  }

  test('list: owner, ids, search (literal wildcards), order by name (code points) or creation, paging', async () => {
    const made: [string, string][] = [
      ['usr_a', 'beta'],
      ['usr_a', 'Zeta'],
      ['usr_a', 'äpfel'],
      ['usr_a', '100%_off'],
      ['usr_a', 'alpha'],
      ['usr_b', 'Alphabet'],
    ]
    for (const [i, [userId, name]] of made.entries()) await store.insert({ id: `tag_${i}`, userId, name, color: 'gray' })

    expect(await names({})).toEqual({ names: ['Alphabet', 'alpha', '100%_off', 'äpfel', 'Zeta', 'beta'], total: 6 })
    expect(await names({ sortOrder: 'asc', userId: 'usr_a' })).toEqual({ names: ['beta', 'Zeta', 'äpfel', '100%_off', 'alpha'], total: 5 })
    const byName = (sortOrder: ListPage['sortOrder']) => names({ sortBy: 'name', sortOrder })
    expect(await byName('asc')).toEqual({ names: ['100%_off', 'alpha', 'Alphabet', 'beta', 'Zeta', 'äpfel'], total: 6 })
    expect(await byName('desc')).toEqual({ names: ['äpfel', 'Zeta', 'beta', 'Alphabet', 'alpha', '100%_off'], total: 6 })

    expect(await names({ search: 'ALPHA', sortBy: 'name', sortOrder: 'asc' })).toEqual({ names: ['alpha', 'Alphabet'], total: 2 })
    expect(await names({ search: 'ALPHA', userId: 'usr_b' })).toEqual({ names: ['Alphabet'], total: 1 })
    expect(await names({ search: '%_' })).toEqual({ names: ['100%_off'], total: 1 })
    expect(await names({ search: '_' })).toEqual({ names: ['100%_off'], total: 1 })
    expect(await names({ search: 'Ä' })).toEqual({ names: ['äpfel'], total: 1 })
    expect(await names({ search: 'none' })).toEqual({ names: [], total: 0 })

    expect(await names({ ids: ['tag_1', 'tag_5', 'tag_none'], sortBy: 'name', sortOrder: 'asc' })).toEqual({ names: ['Alphabet', 'Zeta'], total: 2 })
    expect(await names({ ids: ['tag_1', 'tag_5'], userId: 'usr_a' })).toEqual({ names: ['Zeta'], total: 1 })
    expect(await names({ ids: [] })).toMatchObject({ total: 6 })

    expect(await names({ sortBy: 'name', sortOrder: 'asc', limit: 2, offset: 2 })).toEqual({ names: ['Alphabet', 'beta'], total: 6 })
    expect(await names({ limit: 2, offset: 6 })).toEqual({ names: [], total: 6 })
  })

  test('list: created in the same millisecond, the greater id sorts as the newer', async () => {
    store = await open(() => T0)
    for (const id of ['tag_b', 'tag_c', 'tag_a']) await store.insert({ id, userId: 'usr_a', name: id, color: 'gray' })
    expect((await names({})).names).toEqual(['tag_c', 'tag_b', 'tag_a'])
    expect((await names({ sortOrder: 'asc' })).names).toEqual(['tag_a', 'tag_b', 'tag_c'])
  })
})

/** The tag service over each adapter: the answers the API gives. */
describe.each(adapters)('tag service on %s', (_name, open) => {
  const alice: Caller = { userId: 'usr_a', role: 'member', keyId: 'key_a' }
  const bob: Caller = { userId: 'usr_b', role: 'member', keyId: 'key_b' }
  const admin: Caller = { userId: 'usr_admin', role: 'admin', keyId: 'key_admin' }

  test('create, update, list, remove; names unique per user; owners only', async () => {
    const tags = createTagService(await open(Date.now))
    const summer = await tags.create(alice, { name: ' Summer ', color: 'teal' })
    expect(summer).toMatchObject({ name: 'Summer', color: 'teal', userId: 'usr_a' })
    expect(summer.id).toMatch(/^tag_/)
    expect(async () => await tags.create(alice, { name: 'SUMMER' })).toThrow("'name' a tag named 'Summer' already exists")
    expect(async () => await tags.create(alice, { name: '  ' })).toThrow("'name' must not be blank")
    const promo = await tags.create(bob, { name: 'summer' })
    expect(promo.color).toBeString()

    expect(await tags.update(alice, summer.id, { name: 'summer' })).toMatchObject({ name: 'summer', color: 'teal' })
    expect(async () => await tags.update(bob, summer.id, { color: 'red' })).toThrow('belongs to another user')
    expect(async () => await tags.getOwned(alice, 'tag_none')).toThrow('tag tag_none')

    expect((await tags.list(alice, {})).tags.map((t) => t.id)).toEqual([summer.id])
    expect((await tags.list(admin, { sortBy: 'name', sortOrder: 'asc' })).total).toBe(2)

    expect(async () => await tags.remove(bob, summer.id)).toThrow('belongs to another user')
    expect(await tags.remove(alice, summer.id)).toEqual({ id: summer.id })
    expect(async () => await tags.getOwned(alice, summer.id)).toThrow('not found')
    expect((await tags.list(admin, {})).total).toBe(1)
  })
})
