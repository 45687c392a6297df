import { afterAll, expect, test } from 'bun:test'
import { chmodSync, mkdirSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { openStore, storePath } from './db'

const root = mkdtempSync(join(tmpdir(), 'shortlink-db-'))
afterAll(() => rmSync(root, { recursive: true, force: true }))
const mode = (p: string) => (statSync(p).mode & 0o777).toString(8)

test('a new data dir is 0700 and the database, with its WAL files, 0600', () => {
  const dataDir = join(root, 'new/data')
  const db = openStore(storePath(dataDir))
  db.exec("INSERT INTO kv (key, value) VALUES ('k', 'v')")
  expect([mode(dataDir), mode(storePath(dataDir)), mode(`${storePath(dataDir)}-wal`), mode(`${storePath(dataDir)}-shm`)]).toEqual(['700', '600', '600', '600'])
  db.close()
})

test('a looser data dir and database left by an earlier version are tightened at open', () => {
  const dataDir = join(root, 'old')
  mkdirSync(dataDir, { mode: 0o755 })
  chmodSync(dataDir, 0o755)
  openStore(storePath(dataDir)).close()
  chmodSync(storePath(dataDir), 0o644)
  writeFileSync(join(dataDir, 'unrelated.txt'), '')
  openStore(storePath(dataDir)).close()
  expect([mode(dataDir), mode(storePath(dataDir))]).toEqual(['700', '600'])
})

test('a store in a shared sticky folder (like /tmp) leaves the folder as it is; the database is still 0600', () => {
  const shared = join(root, 'shared')
  mkdirSync(shared)
  chmodSync(shared, 0o1777)
  openStore(join(shared, 'bench.db')).close()
  expect([(statSync(shared).mode & 0o7777).toString(8), mode(join(shared, 'bench.db'))]).toEqual(['1777', '600'])
})
