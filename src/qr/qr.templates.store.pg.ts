/**
 * The QR template store on PostgreSQL (docs/adr/0010): the SQLite store's methods and
 * results, in PostgreSQL's SQL against migration 0001. Timestamps are cast to float8 (epoch
 * ms fit exactly), because Bun.SQL returns int8 as strings. The search lower-cases the
 * comment under COLLATE "C", which changes ASCII letters only, as SQLite's lower() does, so
 * both find the same templates whatever the database's locale.
 */
import type { SQL } from 'bun'
import { condition, idIn, listRowsPg, matches } from '../shared'
import { type NewTemplate, type StoredTemplate, type TemplateFilter, type TemplateRow, type TemplateStorePort, toTemplate } from './qr.templates.store'

const COLUMNS = 'id, user_id, name, comment, qr_options, archived, created_at::float8 AS created_at, updated_at::float8 AS updated_at'

/** `now` is the clock of the timestamps written (tests step it). */
export function createPgTemplateStore(sql: SQL, now: () => number = Date.now): TemplateStorePort {
  return {
    async get(id: string): Promise<StoredTemplate | null> {
      const [row] = await sql.unsafe(`SELECT ${COLUMNS} FROM qr_templates WHERE id = $1`, [id])
      return row ? toTemplate(row as TemplateRow) : null
    },
    async insert(t: NewTemplate): Promise<void> {
      const at = now()
      await sql`INSERT INTO qr_templates (id, user_id, name, name_key, comment, qr_options, archived, created_at, updated_at)
        VALUES (${t.id}, ${t.userId}, ${t.name}, ${t.name.toLowerCase()}, ${t.comment}, ${JSON.stringify(t.qrOptions)}, 0, ${at}, ${at})`
    },
    async update(t: StoredTemplate): Promise<void> {
      await sql`UPDATE qr_templates SET name = ${t.name}, name_key = ${t.name.toLowerCase()}, comment = ${t.comment},
        qr_options = ${JSON.stringify(t.qrOptions)}, archived = ${t.archived ? 1 : 0}, updated_at = ${now()} WHERE id = ${t.id}`
    },
    async remove(id: string): Promise<void> {
      await sql`DELETE FROM qr_templates WHERE id = ${id}`
    },
    async list(f: TemplateFilter): Promise<{ templates: StoredTemplate[]; total: number }> {
      const { rows, total } = await listRowsPg<TemplateRow>(
        sql,
        'qr_templates',
        COLUMNS,
        [!f.includeArchived && condition('archived = 0'), idIn(f.ids), matches(f.search, ['name_key', 'lower(comment COLLATE "C")'])],
        f,
      )
      return { templates: rows.map(toTemplate), total }
    },
  }
}
