import { type Awaitable, condition, idIn, type ListPage, listRows, matches, toIso } from '../shared'
import type { Db } from '../store'

/** A row of `tags`, as both adapters read it. */
export interface TagRow {
  id: string
  user_id: string
  name: string
  color: string
  created_at: number
  updated_at: number
}

export interface Tag {
  id: string
  name: string
  color: string
  userId: string
  createdAt: string
  updatedAt: string
}

export const toTag = (r: TagRow): Tag => ({
  id: r.id,
  name: r.name,
  color: r.color,
  userId: r.user_id,
  createdAt: toIso(r.created_at)!,
  updatedAt: toIso(r.updated_at)!,
})

export interface NewTag {
  id: string
  userId: string
  name: string
  color: string
}

export interface TagFilter extends ListPage {
  userId?: string
  ids?: string[]
  search?: string
}

/** `now` is the clock of the timestamps written (tests step it). */
export function createTagStore(db: Db, now: () => number = Date.now) {
  const byId = db.query<TagRow, [string]>('SELECT * FROM tags WHERE id = ?')
  const byName = db.query<TagRow, [string, string]>('SELECT * FROM tags WHERE user_id = ? AND name_key = ?')
  const insert = db.query('INSERT INTO tags (id, user_id, name, name_key, color, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?)')
  const update = db.query('UPDATE tags SET name = ?, name_key = ?, color = ?, updated_at = ? WHERE id = ?')
  const remove = db.query('DELETE FROM tags WHERE id = ?')

  return {
    get: (id: string) => {
      const r = byId.get(id)
      return r ? toTag(r) : null
    },
    findByName: (userId: string, name: string) => {
      const r = byName.get(userId, name.toLowerCase())
      return r ? toTag(r) : null
    },
    insert: (tag: NewTag): void => {
      const at = now()
      insert.run(tag.id, tag.userId, tag.name, tag.name.toLowerCase(), tag.color, at, at)
    },
    update: (id: string, name: string, color: string): void => {
      update.run(name, name.toLowerCase(), color, now(), id)
    },
    /** The tag leaves every link that carried it (link_tags cascades). */
    remove: (id: string): void => {
      remove.run(id)
    },
    list(f: TagFilter): { tags: Tag[]; total: number } {
      const { rows, total } = listRows<TagRow>(db, 'tags', [f.userId && condition('user_id = ?', f.userId), idIn(f.ids), matches(f.search, ['name_key'])], f)
      return { tags: rows.map(toTag), total }
    },
  }
}
export type TagStore = ReturnType<typeof createTagStore>
/** What the tag service needs of a store: the SQLite one above, or PostgreSQL's (tags.store.pg.ts). */
export type TagStorePort = Awaitable<TagStore>
