/**
 * PostgreSQL migrations: applied at start, in order, each in its own transaction, recorded in
 * `schema_migrations` as the SQLite ones are. Every node runs this when it starts; a session
 * advisory lock with a fixed key, held on one reserved connection, makes the others wait and
 * then find nothing left to do, so N nodes starting together migrate exactly once.
 */
import type { SQL } from 'bun'
import { type PgMigration, pgMigrations } from './migrations'

/** The advisory lock key of the migrator (any fixed number no other code uses). */
export const MIGRATION_LOCK_KEY = 7_240_514_001n

/** A migration that failed: its transaction was rolled back, nothing of it remains. */
export class PgMigrationError extends Error {
  constructor(
    readonly migration: string,
    override readonly cause: unknown,
  ) {
    super(`PostgreSQL migration ${migration} failed: ${(cause as Error)?.message ?? String(cause)}`)
  }
}

export interface MigrateOptions {
  /** Hears of each migration before it runs. */
  onMigration?: (name: string) => void
  /** The list to apply (tests); the shipped list by default. */
  migrations?: PgMigration[]
}

/** Applies the pending migrations; returns the names applied by this call. */
export async function migratePostgres(sql: SQL, opts: MigrateOptions = {}): Promise<string[]> {
  const list = opts.migrations ?? pgMigrations
  return withAdvisoryLock(sql, MIGRATION_LOCK_KEY, async (conn) => {
    await conn`CREATE TABLE IF NOT EXISTS schema_migrations (
      id integer PRIMARY KEY, name text NOT NULL, applied_at bigint NOT NULL)`
    const rows: { id: number }[] = await conn`SELECT id FROM schema_migrations`
    const done = new Set(rows.map((r) => r.id))
    const applied: string[] = []
    for (const m of list) {
      if (done.has(m.id)) continue
      opts.onMigration?.(m.name)
      try {
        await conn.begin(async (tx) => {
          await tx.unsafe(m.sql)
          await tx`INSERT INTO schema_migrations (id, name, applied_at) VALUES (${m.id}, ${m.name}, ${Date.now()})`
        })
      } catch (e) {
        throw new PgMigrationError(m.name, e)
      }
      applied.push(m.name)
    }
    return applied
  })
}

/**
 * Runs `fn` holding the session advisory lock `key` on a reserved connection (handed to `fn`):
 * one holder at a time over the whole cluster; the others wait.
 */
export async function withAdvisoryLock<T>(sql: SQL, key: bigint, fn: (conn: SQL) => Promise<T>): Promise<T> {
  const conn = await sql.reserve()
  try {
    await conn`SELECT pg_advisory_lock(${key.toString()}::bigint)`
    try {
      return await fn(conn)
    } finally {
      await conn`SELECT pg_advisory_unlock(${key.toString()}::bigint)`.catch(() => {})
    }
  } finally {
    conn.release()
  }
}
