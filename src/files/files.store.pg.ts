/**
 * Files on PostgreSQL (docs/adr/0010): the rows, as the SQLite store answers them, and the
 * bytes in the same row's `bytes` column (migration 0001), so every node serves every file.
 * An upload is one INSERT of row and bytes; a delete marks the row and drops its bytes in
 * one UPDATE. Reads take only the range asked for (`substring` of the bytea). Timestamps
 * are cast to float8 because Bun.SQL returns int8 as strings.
 */
import type { SQL } from 'bun'
import { condition, idIn, listRowsPg, matches } from '../shared'
import type { ByteRange, FileBytesPort, FileRef } from './files.bytes'
import { type FileFilter, type FileRow, type FileStorePort, type NewFile, type StoredFile, toFile } from './files.store'

const COLUMNS =
  'id, user_id, name, sha256, size::float8 AS size, mime_type, extension, archived, created_at::float8 AS created_at, updated_at::float8 AS updated_at, deleted_at::float8 AS deleted_at'

/** Inserts a row, with its bytes or none. */
async function insertFile(sql: SQL, at: number, f: NewFile, bytes: Uint8Array | null): Promise<void> {
  await sql`INSERT INTO files (id, user_id, name, name_key, sha256, size, mime_type, extension, created_at, updated_at, bytes)
    VALUES (${f.id}, ${f.userId}, ${f.name}, ${f.name.toLowerCase()}, ${f.sha256}, ${f.size}, ${f.mimeType}, ${f.extension}, ${at}, ${at}, ${bytes})`
}

/** Deleted rows keep no bytes. */
async function markFileDeleted(sql: SQL, at: number, id: string): Promise<void> {
  await sql`UPDATE files SET deleted_at = ${at}, updated_at = ${at}, bytes = NULL WHERE id = ${id} AND deleted_at IS NULL`
}

/**
 * The rows, and (`bytes`) the bytes port over the same rows, so the file service needs only
 * the store. `now` is the clock of the timestamps written (tests step it).
 */
export function createPgFileStore(sql: SQL, now: () => number = Date.now) {
  return {
    bytes: createPgFileBytes(sql, now),
    async get(id: string): Promise<StoredFile | null> {
      const [row] = await sql.unsafe(`SELECT ${COLUMNS} FROM files WHERE id = $1`, [id])
      return row ? toFile(row as FileRow) : null
    },
    /** A row without bytes: the service writes files through the bytes port's `put`. */
    insert: (f: NewFile) => insertFile(sql, now(), f, null),
    async update(id: string, name: string, archived: boolean): Promise<void> {
      await sql`UPDATE files SET name = ${name}, name_key = ${name.toLowerCase()}, archived = ${archived ? 1 : 0}, updated_at = ${now()} WHERE id = ${id}`
    },
    markDeleted: (id: string) => markFileDeleted(sql, now(), id),
    async liveUsersOf(sha256: string): Promise<number> {
      const [row] = await sql`SELECT count(*)::int AS n FROM files WHERE sha256 = ${sha256} AND deleted_at IS NULL`
      return row.n as number
    },
    async list(f: FileFilter): Promise<{ files: StoredFile[]; total: number }> {
      const { rows, total } = await listRowsPg<FileRow>(
        sql,
        'files',
        COLUMNS,
        [
          condition('deleted_at IS NULL'),
          f.userId && condition('user_id = ?', f.userId),
          !f.includeArchived && condition('archived = 0'),
          idIn(f.ids),
          matches(f.search, ['name_key']),
          f.extension && condition('extension = ?', f.extension),
        ],
        f,
        'seq', // upload order breaks ties, as SQLite's rowid does
      )
      return { files: rows.map(toFile), total }
    },
  } satisfies FileStorePort & { bytes: FileBytesPort }
}

/** The bytes, in the rows' `bytes` column (see FileBytesPort). */
export function createPgFileBytes(sql: SQL, now: () => number = Date.now): FileBytesPort {
  const read = async (file: FileRef, range?: ByteRange): Promise<Uint8Array | null> => {
    // substring counts from 1; only the range leaves the database.
    const [row] = range
      ? await sql`SELECT substring(bytes FROM ${range.start + 1} FOR ${range.end - range.start + 1}) AS bytes FROM files WHERE id = ${file.id} AND deleted_at IS NULL`
      : await sql`SELECT bytes FROM files WHERE id = ${file.id} AND deleted_at IS NULL`
    return (row?.bytes as Uint8Array | null | undefined) ?? null
  }
  return {
    put: (file, bytes) => insertFile(sql, now(), file, bytes),
    delete: (file) => markFileDeleted(sql, now(), file.id),
    get: (file) => read(file),
    stream: read,
  }
}
