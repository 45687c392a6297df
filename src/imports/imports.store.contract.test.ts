/**
 * The import store port on both adapters (SQLite ':memory:' and a real PostgreSQL): the same
 * rows back, progress written only while running, and the sweep's conditional failure of a
 * stale import (one node wins; a moved heartbeat is not failed).
 */
import { afterAll, beforeAll, beforeEach, describe, expect, test } from 'bun:test'
import type { SQL } from 'bun'
import { startMigratedDatabase } from '../../test/helpers/postgres'
import { createAuthStore, createPgAuthStore } from '../auth'
import { openStore } from '../store'
import { createImportStore, type ImportRow, type ImportStorePort } from './imports.store'
import { createPgImportStore } from './imports.store.pg'

let pgSql: SQL | undefined
let closePg: (() => Promise<void>) | undefined
beforeAll(async () => {
  const started = await startMigratedDatabase('imports_contract')
  pgSql = started.sql
  closePg = started.close
})
afterAll(() => closePg?.())

const adapters: [string, () => Promise<ImportStorePort>][] = [
  [
    'sqlite',
    async () => {
      const db = openStore(':memory:')
      createAuthStore(db).addUser('usr_a')
      return createImportStore(db)
    },
  ],
  [
    'postgres',
    async () => {
      await pgSql!`TRUNCATE imports, users CASCADE`
      await createPgAuthStore(pgSql!).addUser('usr_a')
      return createPgImportStore(pgSql!)
    },
  ],
]

const T0 = Date.parse('2026-03-01T12:00:00Z')
const row = (id: string, over: Partial<ImportRow> = {}): ImportRow => ({
  id,
  user_id: 'usr_a',
  source: 'bitly',
  status: 'running',
  dry_run: 0,
  file_name: 'links.json',
  domain: 'localhost',
  runner: 'host:42',
  total: 0,
  created: 0,
  updated: 0,
  skipped: 0,
  failed: 0,
  errors: '[]',
  created_at: T0,
  updated_at: T0,
  finished_at: null,
  ...over,
})

describe.each(adapters)('import store port on %s', (_name, open) => {
  let store: ImportStorePort
  beforeEach(async () => {
    store = await open()
  })

  test('insert and get give the row back as written; an unknown id is null', async () => {
    await store.insert(row('imp_1', { total: 12, errors: '[{"row":3,"message":"x"}]' }))
    expect(await store.get('imp_1')).toEqual(row('imp_1', { total: 12, errors: '[{"row":3,"message":"x"}]' }))
    expect(await store.get('imp_none')).toBeNull()
  })

  test('progress is written while running, and refused once the import has ended', async () => {
    await store.insert(row('imp_1'))
    const p = { status: 'running' as const, total: 10, created: 4, updated: 1, skipped: 2, failed: 1, errors: '[]', updated_at: T0 + 1000, finished_at: null }
    expect(await store.progress('imp_1', p)).toBe(true)
    expect(await store.progress('imp_1', { ...p, status: 'done', created: 6, finished_at: T0 + 2000, updated_at: T0 + 2000 })).toBe(true)
    expect(await store.progress('imp_1', { ...p, created: 9 })).toBe(false)
    expect(await store.get('imp_1')).toMatchObject({ status: 'done', created: 6, finished_at: T0 + 2000 })
  })

  test('running lists the running imports; failRunning wins once, and spares one whose heartbeat moved since it was seen', async () => {
    await store.insert(row('imp_old', { updated_at: T0 }))
    await store.insert(row('imp_fresh', { updated_at: T0 + 120_000 }))
    await store.insert(row('imp_done', { status: 'done', updated_at: T0 }))
    expect((await store.running()).map((r) => r.id).sort()).toEqual(['imp_fresh', 'imp_old'])
    expect(await store.failRunning('imp_fresh', '[]', T0 + 130_000, T0)).toBe(false)
    expect(await store.failRunning('imp_old', '[{"row":0,"message":"stopped"}]', T0 + 130_000, T0)).toBe(true)
    expect(await store.failRunning('imp_old', '[]', T0 + 130_000, T0)).toBe(false)
    expect(await store.get('imp_old')).toMatchObject({ status: 'failed', errors: '[{"row":0,"message":"stopped"}]', finished_at: T0 + 130_000 })
  })
})
