import { type Awaitable, condition, idIn, type ListPage, listRows, matches, toIso } from '../shared'
import type { Db } from '../store'

/** A row of `qr_templates`, as both adapters read it. */
export interface TemplateRow {
  id: string
  user_id: string
  name: string
  comment: string
  qr_options: string
  archived: number
  created_at: number
  updated_at: number
}

export interface StoredTemplate {
  id: string
  userId: string
  name: string
  comment: string
  qrOptions: unknown
  archived: boolean
  createdAt: string
  updatedAt: string
}

export const toTemplate = (r: TemplateRow): StoredTemplate => ({
  id: r.id,
  userId: r.user_id,
  name: r.name,
  comment: r.comment,
  qrOptions: JSON.parse(r.qr_options),
  archived: r.archived === 1,
  createdAt: toIso(r.created_at)!,
  updatedAt: toIso(r.updated_at)!,
})

export interface NewTemplate {
  id: string
  userId: string
  name: string
  comment: string
  qrOptions: unknown
}

export interface TemplateFilter extends ListPage {
  ids?: string[]
  search?: string
  includeArchived: boolean
}

/** `now` is the clock of the timestamps written (tests step it). */
export function createTemplateStore(db: Db, now: () => number = Date.now) {
  const byId = db.query<TemplateRow, [string]>('SELECT * FROM qr_templates WHERE id = ?')
  const insert = db.query(
    'INSERT INTO qr_templates (id, user_id, name, name_key, comment, qr_options, archived, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, 0, ?, ?)',
  )
  const update = db.query('UPDATE qr_templates SET name = ?, name_key = ?, comment = ?, qr_options = ?, archived = ?, updated_at = ? WHERE id = ?')
  const remove = db.query('DELETE FROM qr_templates WHERE id = ?')

  return {
    get(id: string): StoredTemplate | null {
      const r = byId.get(id)
      return r ? toTemplate(r) : null
    },
    insert(t: NewTemplate): void {
      const at = now()
      insert.run(t.id, t.userId, t.name, t.name.toLowerCase(), t.comment, JSON.stringify(t.qrOptions), at, at)
    },
    update(t: StoredTemplate): void {
      update.run(t.name, t.name.toLowerCase(), t.comment, JSON.stringify(t.qrOptions), t.archived ? 1 : 0, now(), t.id)
    },
    remove: (id: string): void => {
      remove.run(id)
    },
    list(f: TemplateFilter): { templates: StoredTemplate[]; total: number } {
      const { rows, total } = listRows<TemplateRow>(
        db,
        'qr_templates',
        [!f.includeArchived && condition('archived = 0'), idIn(f.ids), matches(f.search, ['name_key', 'lower(comment)'])],
        f,
      )
      return { templates: rows.map(toTemplate), total }
    },
  }
}
export type TemplateStore = ReturnType<typeof createTemplateStore>
/** What the template service needs of a store: the SQLite one above, or PostgreSQL's (qr.templates.store.pg.ts). */
export type TemplateStorePort = Awaitable<TemplateStore>
