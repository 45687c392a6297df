/**
 * Opens the embedded store. All pragmas live here: WAL so readers never block the
 * writer, a busy timeout so the CLI and the server can share the file, foreign keys on,
 * synchronous=NORMAL (durable at each WAL checkpoint, safe against process crashes).
 */
import { Database } from 'bun:sqlite'
import { mkdirSync } from 'node:fs'
import { dirname } from 'node:path'
import { migrate } from './migrate'

export type Store = Database

/** Opens (and migrates) the store; `onMigration` hears of each migration before it runs. */
export function openStore(path: string, onMigration?: (name: string) => void): Store {
  if (path !== ':memory:') mkdirSync(dirname(path), { recursive: true })
  const db = new Database(path, { create: true, strict: true })
  db.exec('PRAGMA journal_mode = WAL')
  db.exec('PRAGMA busy_timeout = 5000')
  db.exec('PRAGMA foreign_keys = ON')
  db.exec('PRAGMA synchronous = NORMAL')
  db.exec('PRAGMA temp_store = MEMORY')
  migrate(db, onMigration)
  return db
}

export const storePath = (dataDir: string) => `${dataDir}/shortlink.db`
