/** The import store on PostgreSQL (docs/adr/0010): the SQLite store's methods and answers, against migration 0005. */
import type { SQL } from 'bun'
import type { ImportProgress, ImportRow, ImportStorePort } from './imports.store'

const COLUMNS = `id, user_id, source, status, dry_run, file_name, domain, runner, total::float8 AS total, created::float8 AS created,
  updated::float8 AS updated, skipped::float8 AS skipped, failed::float8 AS failed, errors, created_at::float8 AS created_at,
  updated_at::float8 AS updated_at, finished_at::float8 AS finished_at`

export function createPgImportStore(sql: SQL): ImportStorePort {
  return {
    async get(id: string): Promise<ImportRow | null> {
      const [row] = await sql.unsafe(`SELECT ${COLUMNS} FROM imports WHERE id = $1`, [id])
      return (row as ImportRow | undefined) ?? null
    },
    async insert(r: ImportRow): Promise<void> {
      await sql`INSERT INTO imports (id, user_id, source, status, dry_run, file_name, domain, runner, total, created, updated, skipped, failed,
        errors, created_at, updated_at, finished_at) VALUES (${r.id}, ${r.user_id}, ${r.source}, ${r.status}, ${r.dry_run}, ${r.file_name},
        ${r.domain}, ${r.runner}, ${r.total}, ${r.created}, ${r.updated}, ${r.skipped}, ${r.failed}, ${r.errors}, ${r.created_at}, ${r.updated_at}, ${r.finished_at})`
    },
    async progress(id: string, p: ImportProgress): Promise<boolean> {
      const done = await sql`UPDATE imports SET status = ${p.status}, total = ${p.total}, created = ${p.created}, updated = ${p.updated},
        skipped = ${p.skipped}, failed = ${p.failed}, errors = ${p.errors}, updated_at = ${p.updated_at}, finished_at = ${p.finished_at}
        WHERE id = ${id} AND status = 'running' RETURNING id`
      return done.length === 1
    },
    async running(): Promise<ImportRow[]> {
      return [...(await sql.unsafe(`SELECT ${COLUMNS} FROM imports WHERE status = 'running'`))] as ImportRow[]
    },
    async failRunning(id: string, errors: string, now: number, seen: number): Promise<boolean> {
      const done = await sql`UPDATE imports SET status = 'failed', errors = ${errors}, updated_at = ${now}, finished_at = ${now}
        WHERE id = ${id} AND status = 'running' AND updated_at = ${seen} RETURNING id`
      return done.length === 1
    },
  }
}
