/**
 * Opens the embedded store. All pragmas live here, for every connection (the server's,
 * the CLI's and the click writer's in its worker): WAL so readers never block the writer,
 * a busy timeout so the CLI and the server can share the file, foreign keys on,
 * synchronous=NORMAL (durable at each WAL checkpoint, safe against process crashes).
 */
import { Database } from 'bun:sqlite'
import { chmodSync, closeSync, existsSync, mkdirSync, openSync, statSync } from 'node:fs'
import { dirname } from 'node:path'
import { migrate } from './migrate'

export type Db = Database

/** Opens (and migrates) the store; `onMigration` hears of each migration before it runs. */
export function openStore(path: string, onMigration?: (name: string) => void): Db {
  if (path !== ':memory:') keepPrivate(path)
  const db = connectStore(path)
  migrate(db, onMigration)
  return db
}

/** Another connection to a store `openStore` made (and migrated): the click writer's. */
export function connectStore(path: string): Db {
  const db = new Database(path, { create: true, strict: true })
  db.exec('PRAGMA journal_mode = WAL')
  db.exec('PRAGMA busy_timeout = 5000')
  db.exec('PRAGMA foreign_keys = ON')
  db.exec('PRAGMA synchronous = NORMAL')
  db.exec('PRAGMA temp_store = MEMORY')
  return db
}

export const storePath = (dataDir: string) => `${dataDir}/shortlink.db`

/**
 * The data dir holds TLS and ACME account keys and the cookie secret (in the database):
 * only the server's user may read it. Made 0700 and the database 0600 (SQLite gives its
 * -wal and -shm files the database's mode), and tightened on every start when looser (not a
 * shared sticky folder such as /tmp, whose mode belongs to everyone using it).
 */
function keepPrivate(path: string) {
  const dir = dirname(path)
  mkdirSync(dir, { recursive: true, mode: 0o700 })
  // A shared folder (the sticky bit, as on /tmp and /var/tmp) holds other users' files: its mode is not
  // ours to change (making /tmp 0700 locks every other user out); the database files are still 0600.
  if ((statSync(dir).mode & 0o1000) === 0) chmodSync(dir, 0o700)
  closeSync(openSync(path, 'a', 0o600))
  for (const file of [path, `${path}-wal`, `${path}-shm`]) if (existsSync(file)) chmodSync(file, 0o600)
}
