/**
 * The QR template store port, one set of cases run against both adapters: SQLite on
 * ':memory:' (today's store) and PostgreSQL (a real server, a fresh migrated database). Both
 * must give the same answers: the same records, the same order (text by code point), the
 * same paging and search. Then the template service over each.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, test } from 'bun:test'
import type { SQL } from 'bun'
import { startMigratedDatabase } from '../../test/helpers/postgres'
import { type Caller, createAuthStore, createPgAuthStore } from '../auth'
import { parameterError } from '../shared'
import { openStore } from '../store'
import { createTemplateService } from './qr.templates.service'
import { createTemplateStore, type TemplateFilter, type TemplateStorePort } from './qr.templates.store'
import { createPgTemplateStore } from './qr.templates.store.pg'

let pgSql: SQL | undefined
let closePg: (() => Promise<void>) | undefined

beforeAll(async () => {
  const started = await startMigratedDatabase('templates_contract')
  pgSql = started.sql
  closePg = started.close
})
afterAll(() => closePg?.())

const T0 = Date.parse('2026-03-01T12:00:00Z')
const USERS = ['usr_a', 'usr_b']
const at = (ms: number) => new Date(ms).toISOString()
const design = { patterns: { body: { style_id: 'rounded', value: '#1e3a8a' } }, logo: { url: 'fil_x' }, texts: ['ä', 1.5, null] }

/** A store on the given clock, with the users that own templates. */
const adapters: [string, (now: () => number) => Promise<TemplateStorePort>][] = [
  [
    'sqlite',
    async (now) => {
      const db = openStore(':memory:')
      const auth = createAuthStore(db)
      for (const id of USERS) auth.addUser(id)
      return createTemplateStore(db, now)
    },
  ],
  [
    'postgres',
    async (now) => {
      const sql = pgSql!
      await sql`TRUNCATE qr_templates, users CASCADE`
      const auth = createPgAuthStore(sql)
      for (const id of USERS) await auth.addUser(id)
      return createPgTemplateStore(sql, now)
    },
  ],
]

describe.each(adapters)('template store port on %s', (_name, open) => {
  let store: TemplateStorePort
  let clock: number
  beforeEach(async () => {
    clock = T0
    store = await open(() => (clock += 1000))
  })

  test('insert, get, update (archive), remove', async () => {
    await store.insert({ id: 'tpl_1', userId: 'usr_a', name: 'Navy', comment: 'brand', qrOptions: design })
    const made = {
      id: 'tpl_1',
      userId: 'usr_a',
      name: 'Navy',
      comment: 'brand',
      qrOptions: design,
      archived: false,
      createdAt: at(T0 + 1000),
      updatedAt: at(T0 + 1000),
    }
    expect(await store.get('tpl_1')).toEqual(made)
    expect(await store.get('tpl_none')).toBeNull()

    await store.update({ ...made, name: 'Marine', comment: '', qrOptions: {}, archived: true })
    expect(await store.get('tpl_1')).toEqual({ ...made, name: 'Marine', comment: '', qrOptions: {}, archived: true, updatedAt: at(T0 + 2000) })
    await store.update({ ...made, id: 'tpl_none' })
    expect(await store.get('tpl_none')).toBeNull()

    await store.remove('tpl_1')
    await store.remove('tpl_1')
    expect(await store.get('tpl_1')).toBeNull()
  })

  const page = (f: Partial<TemplateFilter>): TemplateFilter => ({
    sortBy: 'created_at',
    sortOrder: 'desc',
    limit: 100,
    offset: 0,
    includeArchived: false,
    ...f,
  })
  const names = async (f: Partial<TemplateFilter>) => {
    const { templates, total } = await store.list(page(f))
    return { names: templates.map((t) => t.name), total }
  }

  test('list: archived, ids, search in name and comment (literal wildcards), order by name (code points) or creation, paging', async () => {
    const made: [string, string, string][] = [
      ['usr_a', 'beta', 'CAFÉ Menu'],
      ['usr_b', 'Zeta', ''],
      ['usr_a', 'äpfel', '50%_off'],
      ['usr_b', 'alpha', 'spring'],
      ['usr_a', 'Alphabet', ''],
    ]
    for (const [i, [userId, name, comment]] of made.entries()) await store.insert({ id: `tpl_${i}`, userId, name, comment, qrOptions: {} })
    const archived = (await store.get('tpl_1'))!
    await store.update({ ...archived, archived: true })

    expect(await names({})).toEqual({ names: ['Alphabet', 'alpha', 'äpfel', 'beta'], total: 4 })
    expect(await names({ includeArchived: true, sortOrder: 'asc' })).toEqual({ names: ['beta', 'Zeta', 'äpfel', 'alpha', 'Alphabet'], total: 5 })
    expect(await names({ includeArchived: true, sortBy: 'name', sortOrder: 'asc' })).toEqual({
      names: ['alpha', 'Alphabet', 'beta', 'Zeta', 'äpfel'],
      total: 5,
    })
    expect(await names({ includeArchived: true, sortBy: 'name', sortOrder: 'desc' })).toEqual({
      names: ['äpfel', 'Zeta', 'beta', 'Alphabet', 'alpha'],
      total: 5,
    })

    expect(await names({ search: 'ALPHA', sortBy: 'name', sortOrder: 'asc' })).toEqual({ names: ['alpha', 'Alphabet'], total: 2 })
    expect(await names({ search: 'menu' })).toEqual({ names: ['beta'], total: 1 })
    expect(await names({ search: 'SPRING' })).toEqual({ names: ['alpha'], total: 1 })
    expect(await names({ search: '%_' })).toEqual({ names: ['äpfel'], total: 1 })
    expect(await names({ search: 'Ä' })).toEqual({ names: ['äpfel'], total: 1 })
    // The comment is lower-cased in ASCII letters only (SQLite's lower()), on both.
    expect(await names({ search: 'café' })).toEqual({ names: [], total: 0 })
    expect(await names({ search: 'zeta' })).toEqual({ names: [], total: 0 })
    expect(await names({ search: 'zeta', includeArchived: true })).toEqual({ names: ['Zeta'], total: 1 })

    expect(await names({ ids: ['tpl_1', 'tpl_4', 'tpl_none'], includeArchived: true })).toEqual({ names: ['Alphabet', 'Zeta'], total: 2 })
    expect(await names({ ids: ['tpl_1', 'tpl_4'] })).toEqual({ names: ['Alphabet'], total: 1 })
    expect(await names({ sortBy: 'name', sortOrder: 'asc', limit: 2, offset: 1 })).toEqual({ names: ['Alphabet', 'beta'], total: 4 })
    expect(await names({ limit: 2, offset: 4 })).toEqual({ names: [], total: 4 })
  })

  test('list: created in the same millisecond, the greater id sorts as the newer', async () => {
    store = await open(() => T0)
    for (const id of ['tpl_b', 'tpl_c', 'tpl_a']) await store.insert({ id, userId: 'usr_a', name: id, comment: '', qrOptions: {} })
    expect((await names({})).names).toEqual(['tpl_c', 'tpl_b', 'tpl_a'])
    expect((await names({ sortOrder: 'asc' })).names).toEqual(['tpl_a', 'tpl_b', 'tpl_c'])
  })
})

/** The template service over each adapter: the answers the API gives (the scan check is qr.templates.test.ts's; here a design scans unless it says not to). */
describe.each(adapters)('template service on %s', (_name, open) => {
  const alice: Caller = { userId: 'usr_a', role: 'member', keyId: 'key_a' }
  const bob: Caller = { userId: 'usr_b', role: 'member', keyId: 'key_b' }
  const admin: Caller = { userId: 'usr_admin', role: 'admin', keyId: 'key_admin' }

  test('create, get, design, update, list, remove; members change only their own', async () => {
    const checked: [unknown, string][] = []
    const templates = createTemplateService({
      store: await open(Date.now),
      baseUrl: 'https://sl.example/api',
      assertScannable: async (qrOptions, ownerId) => {
        checked.push([qrOptions, ownerId])
        if ((qrOptions as { unscannable?: boolean }).unscannable) throw parameterError("'qrOptions' does not scan")
      },
    })
    const made = await templates.create(alice, { name: ' Navy ', qrOptions: design })
    expect(made).toMatchObject({ name: 'Navy', comment: '', qrOptions: design, archived: false, userId: 'usr_a' })
    expect(made.image).toBe(`https://sl.example/api/qr/templates/${made.id}/preview`)
    expect(await templates.get(made.id)).toEqual(made)
    expect(await templates.qrDesignOf(made.id)).toEqual({ qrOptions: design, ownerId: 'usr_a' })
    expect(async () => await templates.qrDesignOf('tpl_none')).toThrow('template tpl_none')
    expect(async () => await templates.create(alice, { name: 'x', qrOptions: { unscannable: true } })).toThrow('does not scan')

    expect(async () => await templates.update(bob, made.id, { archived: true })).toThrow('belongs to another user')
    expect(await templates.update(alice, made.id, { comment: 'brand', archived: true })).toMatchObject({ name: 'Navy', comment: 'brand', archived: true })
    // An admin's new design is checked as Alice's: the template keeps its owner.
    expect(await templates.update(admin, made.id, { qrOptions: {} })).toMatchObject({ qrOptions: {}, userId: 'usr_a', comment: 'brand' })
    expect(checked.map(([, owner]) => owner)).toEqual(['usr_a', 'usr_a', 'usr_a'])
    expect(await templates.list({})).toEqual({ templates: [], total: 0 })
    expect((await templates.list({ includeArchived: true })).templates.map((t) => t.id)).toEqual([made.id])

    expect(async () => await templates.remove(bob, made.id)).toThrow('belongs to another user')
    expect(await templates.remove(alice, made.id)).toEqual({ id: made.id })
    expect(async () => await templates.get(made.id)).toThrow('not found')
  })
})
