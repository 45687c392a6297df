/** SQL for imports. Rows in, rows out; the service owns the rules. */
import type { Awaitable } from '../shared'
import type { Db } from '../store'

export interface ImportRow {
  id: string
  user_id: string
  source: string
  status: 'running' | 'done' | 'failed'
  dry_run: number
  file_name: string | null
  domain: string | null
  /** The process running it, `host:pid`. */
  runner: string | null
  total: number
  created: number
  updated: number
  skipped: number
  failed: number
  /** JSON: [{ row, message }], the first rows that failed. */
  errors: string
  created_at: number
  updated_at: number
  finished_at: number | null
}

/** What a running import writes as it goes (and once more when it ends). */
export type ImportProgress = Pick<ImportRow, 'status' | 'total' | 'created' | 'updated' | 'skipped' | 'failed' | 'errors' | 'updated_at' | 'finished_at'>

export function createImportStore(db: Db) {
  const byId = db.query<ImportRow, [string]>('SELECT * FROM imports WHERE id = ?')
  const insert = db.query(`INSERT INTO imports (id, user_id, source, status, dry_run, file_name, domain, runner, total, created, updated, skipped,
    failed, errors, created_at, updated_at, finished_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`)
  const progress = db.query(`UPDATE imports SET status = ?, total = ?, created = ?, updated = ?, skipped = ?, failed = ?, errors = ?,
    updated_at = ?, finished_at = ? WHERE id = ? AND status = 'running'`)
  const running = db.query<ImportRow, []>("SELECT * FROM imports WHERE status = 'running'")
  const failRunning = db.query(
    "UPDATE imports SET status = 'failed', errors = ?, updated_at = ?, finished_at = ? WHERE id = ? AND status = 'running' AND updated_at = ?",
  )
  return {
    get: (id: string) => byId.get(id),
    insert(r: ImportRow): void {
      insert.run(
        r.id,
        r.user_id,
        r.source,
        r.status,
        r.dry_run,
        r.file_name,
        r.domain,
        r.runner,
        r.total,
        r.created,
        r.updated,
        r.skipped,
        r.failed,
        r.errors,
        r.created_at,
        r.updated_at,
        r.finished_at,
      )
    },
    /** Writes a running import's progress; false when it is no longer running (declared dead meanwhile). */
    progress(id: string, p: ImportProgress): boolean {
      return progress.run(p.status, p.total, p.created, p.updated, p.skipped, p.failed, p.errors, p.updated_at, p.finished_at, id).changes === 1
    },
    /** Every running import (a handful at most). */
    running: () => running.all(),
    /** Marks a running import failed with these errors unless its heartbeat moved from `seen` (or it ended) meanwhile; true when it did. */
    failRunning: (id: string, errors: string, now: number, seen: number): boolean => failRunning.run(errors, now, now, id, seen).changes === 1,
  }
}
export type ImportStore = ReturnType<typeof createImportStore>
/** The import store port (docs/adr/0010): SQLite's store with every result allowed to be a promise. */
export type ImportStorePort = Awaitable<ImportStore>
