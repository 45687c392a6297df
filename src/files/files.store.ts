import { type Awaitable, condition, idIn, type ListPage, listRows, matches, toIso } from '../shared'
import type { Db } from '../store'

export interface FileRow {
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

export const toFile = (r: FileRow): StoredFile => ({
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

export interface FileFilter extends ListPage {
  userId?: string
  ids?: string[]
  search?: string
  extension?: string
  includeArchived: boolean
}

/** A new file's row, as the service builds it from an upload. */
export interface NewFile {
  id: string
  userId: string
  name: string
  sha256: string
  size: number
  mimeType: string
  extension: string
}

/** `now` is the clock of the timestamps written (tests step it). */
export function createFileStore(db: Db, now: () => number = Date.now) {
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
    insert(f: NewFile) {
      const at = now()
      insert.run(f.id, f.userId, f.name, f.name.toLowerCase(), f.sha256, f.size, f.mimeType, f.extension, at, at)
    },
    update(id: string, name: string, archived: boolean) {
      update.run(name, name.toLowerCase(), archived ? 1 : 0, now(), id)
    },
    markDeleted(id: string) {
      const at = now()
      markDeleted.run(at, at, id)
    },
    /** Live rows sharing these bytes; the blob may go when this reaches 0. */
    liveUsersOf(sha256: string): number {
      return liveWithHash.get(sha256)!.n
    },
    list(f: FileFilter): { files: StoredFile[]; total: number } {
      const { rows, total } = listRows<FileRow>(
        db,
        'files',
        [
          condition('deleted_at IS NULL'),
          f.userId && condition('user_id = ?', f.userId),
          !f.includeArchived && condition('archived = 0'),
          idIn(f.ids),
          matches(f.search, ['name_key']),
          f.extension && condition('extension = ?', f.extension),
        ],
        f,
        'rowid',
      )
      return { files: rows.map(toFile), total }
    },
  }
}
export type FileStore = ReturnType<typeof createFileStore>
/** The port (docs/adr/0010): the SQLite store's methods, each allowed to answer with a promise. */
export type FileStorePort = Awaitable<FileStore>
