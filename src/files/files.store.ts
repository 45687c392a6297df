import type { Store } from '../store'
import { toIso, escapeLike } from '../shared'

interface FileRow {
  id: string
  user_id: string
  name: string
  sha256: string
  size: number
  mime_type: string
  extension: string
  archived: number
  created_at: number
  updated_at: number
  deleted_at: number | null
}

export interface FileRecord {
  id: string
  name: string
  size: number
  createdAt: string
  mimeType: string
  extension: string
  archived: boolean
  userId: string
  updatedAt: string
}

/** The record plus what only the server needs. */
export interface StoredFile extends FileRecord {
  sha256: string
  deleted: boolean
}

const toFile = (r: FileRow): StoredFile => ({
  id: r.id,
  name: r.name,
  size: r.size,
  createdAt: toIso(r.created_at)!,
  mimeType: r.mime_type,
  extension: r.extension,
  archived: r.archived === 1,
  userId: r.user_id,
  updatedAt: toIso(r.updated_at)!,
  sha256: r.sha256,
  deleted: r.deleted_at !== null,
})

export function toRecord(f: StoredFile): FileRecord {
  const { sha256: _h, deleted: _d, ...record } = f
  return record
}

export interface FileFilter {
  userId?: string
  ids?: string[]
  search?: string
  extension?: string
  includeArchived: boolean
  sortBy: 'name' | 'created_at'
  sortOrder: 'asc' | 'desc'
  limit: number
  offset: number
}

export function createFileStore(db: Store) {
  const byId = db.query<FileRow, [string]>('SELECT * FROM files WHERE id = ?')
  const insert = db.query(
    `INSERT INTO files (id, user_id, name, name_key, sha256, size, mime_type, extension, created_at, updated_at)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
  )
  const update = db.query('UPDATE files SET name = ?, name_key = ?, archived = ?, updated_at = ? WHERE id = ?')
  const markDeleted = db.query('UPDATE files SET deleted_at = ?, updated_at = ? WHERE id = ? AND deleted_at IS NULL')
  const liveWithHash = db.query<{ n: number }, [string]>('SELECT count(*) AS n FROM files WHERE sha256 = ? AND deleted_at IS NULL')

  return {
    get(id: string): StoredFile | null {
      const r = byId.get(id)
      return r ? toFile(r) : null
    },
    insert(f: { id: string; userId: string; name: string; sha256: string; size: number; mimeType: string; extension: string }) {
      const now = Date.now()
      insert.run(f.id, f.userId, f.name, f.name.toLowerCase(), f.sha256, f.size, f.mimeType, f.extension, now, now)
    },
    update(id: string, name: string, archived: boolean) {
      update.run(name, name.toLowerCase(), archived ? 1 : 0, Date.now(), id)
    },
    markDeleted(id: string) {
      const now = Date.now()
      markDeleted.run(now, now, id)
    },
    /** Live rows sharing these bytes; the blob may go when this reaches 0. */
    liveUsersOf(sha256: string): number {
      return liveWithHash.get(sha256)!.n
    },
    list(f: FileFilter): { files: StoredFile[]; total: number } {
      const where: string[] = ['deleted_at IS NULL']
      const args: (string | number)[] = []
      if (f.userId) (where.push('user_id = ?'), args.push(f.userId))
      if (!f.includeArchived) where.push('archived = 0')
      if (f.ids?.length) (where.push(`id IN (${f.ids.map(() => '?').join(',')})`), args.push(...f.ids))
      if (f.search) (where.push(`name_key LIKE ? ESCAPE '\\'`), args.push(`%${escapeLike(f.search.toLowerCase())}%`))
      if (f.extension) (where.push('extension = ?'), args.push(f.extension))
      const clause = `WHERE ${where.join(' AND ')}`
      const order = f.sortBy === 'name' ? 'name_key' : 'created_at'
      const dir = f.sortOrder === 'asc' ? 'ASC' : 'DESC'
      const rows = db
        .query<FileRow, (string | number)[]>(`SELECT * FROM files ${clause} ORDER BY ${order} ${dir}, rowid ${dir} LIMIT ? OFFSET ?`)
        .all(...args, f.limit, f.offset)
      const total = db.query<{ n: number }, (string | number)[]>(`SELECT count(*) AS n FROM files ${clause}`).get(...args)!.n
      return { files: rows.map(toFile), total }
    },
  }
}
export type FileStore = ReturnType<typeof createFileStore>
