/**
 * Where a file's bytes live, beside its row (docs/adr/0010). SQLite keeps them on disk,
 * content-addressed (files.blobs.ts); PostgreSQL in the row's `bytes` column
 * (files.store.pg.ts). Writing a file and deleting one are each one port method, so the row
 * and its bytes come and go together.
 */
import { readFileSync } from 'node:fs'
import type { BlobStore } from './files.blobs'
import type { FileStore, NewFile } from './files.store'

/** Which stored file: disk finds bytes by hash, PostgreSQL by id. */
export interface FileRef {
  id: string
  sha256: string
}

/** Bytes `start` to `end`, both included. */
export interface ByteRange {
  start: number
  end: number
}

export interface FileBytesPort {
  /** Inserts the file's row with its bytes, as one step: after a failure neither is kept. */
  put(file: NewFile, bytes: Uint8Array): Promise<void>
  /** Marks the file deleted and drops its bytes (on disk, once no live row shares them). */
  delete(file: FileRef): void | Promise<void>
  /** All the bytes of a live file (at most the upload limit), or null when they are gone. */
  get(file: FileRef): Uint8Array | null | Promise<Uint8Array | null>
  /** The bytes to send: a lazily read file slice on disk, the range read from the row on PostgreSQL; null when gone. */
  stream(file: FileRef, range?: ByteRange): Blob | Uint8Array | null | Promise<Blob | Uint8Array | null>
}

/**
 * The SQLite side: bytes under `<dataDir>/files`, rows in `store`. The blob is committed and
 * the row inserted in one synchronous step, so a concurrent delete of a file with the same
 * content cannot remove the blob between the two.
 */
export function createDiskFileBytes(store: FileStore, blobs: BlobStore) {
  return {
    async put(file: NewFile, bytes: Uint8Array): Promise<void> {
      const staged = await blobs.stage(bytes)
      try {
        staged.commit()
        store.insert({ ...file, sha256: staged.sha256 })
      } catch (e) {
        staged.discard()
        if (store.liveUsersOf(staged.sha256) === 0) blobs.remove(staged.sha256)
        throw e
      }
    },
    delete(file: FileRef): void {
      store.markDeleted(file.id)
      if (store.liveUsersOf(file.sha256) === 0) blobs.remove(file.sha256)
    },
    get(file: FileRef): Uint8Array | null {
      try {
        return new Uint8Array(readFileSync(blobs.pathOf(file.sha256)))
      } catch {
        return null
      }
    },
    stream(file: FileRef, range?: ByteRange): Blob {
      const blob = Bun.file(blobs.pathOf(file.sha256))
      return range ? blob.slice(range.start, range.end + 1) : blob
    },
  } satisfies FileBytesPort
}
