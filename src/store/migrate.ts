/**
 * Migrations are code compiled into the binary, applied in order at start and
 * recorded in `schema_migrations`, each in its own transaction.
 */
import type { Database } from 'bun:sqlite'
import { migrations } from './migrations'

/** Applies the pending migrations, or only those up to id `upTo` (tests build the schema an older version left). */
export function migrate(db: Database, onMigration?: (name: string) => void, upTo = Infinity): string[] {
  db.exec(`CREATE TABLE IF NOT EXISTS schema_migrations (
    id INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at INTEGER NOT NULL)`)
  const done = new Set(
    db
      .query<{ id: number }, []>('SELECT id FROM schema_migrations')
      .all()
      .map((r) => r.id),
  )
  const applied: string[] = []
  for (const m of migrations) {
    if (m.id > upTo) break
    if (done.has(m.id)) continue
    onMigration?.(m.name)
    db.transaction(() => {
      db.exec(m.sql)
      db.query('INSERT INTO schema_migrations (id, name, applied_at) VALUES (?, ?, ?)').run(m.id, m.name, Date.now())
    })()
    applied.push(m.name)
  }
  return applied
}
