/**
 * The tag store on PostgreSQL (docs/adr/0010): the SQLite store's methods and results, in
 * PostgreSQL's SQL against migration 0001. Timestamps are cast to float8 (epoch ms fit
 * exactly), because Bun.SQL returns int8 as strings; names are keyed by JavaScript's
 * lower-casing, as on SQLite, so both find the same tag by the same name.
 */
import type { SQL } from 'bun'
import { condition, idIn, listRowsPg, matches } from '../shared'
import { type NewTag, type Tag, type TagFilter, type TagRow, type TagStorePort, toTag } from './tags.store'

const COLUMNS = 'id, user_id, name, color, created_at::float8 AS created_at, updated_at::float8 AS updated_at'

/** `now` is the clock of the timestamps written (tests step it). */
export function createPgTagStore(sql: SQL, now: () => number = Date.now): TagStorePort {
  const one = async (where: string, args: unknown[]): Promise<Tag | null> => {
    const [row] = await sql.unsafe(`SELECT ${COLUMNS} FROM tags WHERE ${where}`, args)
    return row ? toTag(row as TagRow) : null
  }
  return {
    get: (id: string) => one('id = $1', [id]),
    findByName: (userId: string, name: string) => one('user_id = $1 AND name_key = $2', [userId, name.toLowerCase()]),
    async insert(tag: NewTag): Promise<void> {
      const at = now()
      await sql`INSERT INTO tags (id, user_id, name, name_key, color, created_at, updated_at)
        VALUES (${tag.id}, ${tag.userId}, ${tag.name}, ${tag.name.toLowerCase()}, ${tag.color}, ${at}, ${at})`
    },
    async update(id: string, name: string, color: string): Promise<void> {
      await sql`UPDATE tags SET name = ${name}, name_key = ${name.toLowerCase()}, color = ${color}, updated_at = ${now()} WHERE id = ${id}`
    },
    /** The tag leaves every link that carried it (link_tags cascades). */
    async remove(id: string): Promise<void> {
      await sql`DELETE FROM tags WHERE id = ${id}`
    },
    async list(f: TagFilter): Promise<{ tags: Tag[]; total: number }> {
      const { rows, total } = await listRowsPg<TagRow>(
        sql,
        'tags',
        COLUMNS,
        [f.userId && condition('user_id = ?', f.userId), idIn(f.ids), matches(f.search, ['name_key'])],
        f,
      )
      return { tags: rows.map(toTag), total }
    },
  }
}
