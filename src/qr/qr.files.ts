/**
 * Logos and frames given as uploaded file ids (`fil_…`). A design may draw only the files
 * of the user who owns it (the link's or template's owner; an admin's designs any file),
 * and only while the file is live and not archived: checked when a design is saved and
 * again at every render, so a file that is deleted, archived or out of reach later stops
 * being drawn (the code still renders, reported as `logo-unavailable`/`frame-unavailable`).
 */
import type { FileService, FileStorePort } from '../files'
import { parameterError } from '../shared'
import { type FetchedImage, sniffImage } from './qr.fetch'
import { checkDesignImage, MAX_ASSET_BYTES } from './qr.render'

/** Over the SQLite store every answer but `read` comes at once; over PostgreSQL as a promise. */
export interface DesignFiles {
  /** Whether a design owned by `ownerId` may draw file `id`. */
  usable(id: string, ownerId: string): boolean | Promise<boolean>
  /** The bytes of a live file, when they are a PNG, JPEG or SVG image. */
  read(id: string): Promise<FetchedImage | null>
  /** Bytes, type and the size its header declares within the limits (see checkDesignImage), for a design being saved. Throws parameter_error. */
  checkImage(id: string, field: string): void | Promise<void>
}

/** `f(value)`, at once when `value` is not a promise. */
const then = <T, R>(value: T | Promise<T>, f: (v: T) => R | Promise<R>): R | Promise<R> => (value instanceof Promise ? value.then(f) : f(value))

export function createDesignFiles<S extends FileStorePort>(deps: {
  files: () => FileService<S>
  isAdminUser(userId: string): boolean | Promise<boolean>
}): DesignFiles {
  return {
    usable: (id, ownerId) => then(deps.files().get(id), (f) => (!f || f.archived ? false : f.userId === ownerId || deps.isAdminUser(ownerId))),
    read: (id) => readUploadedImage(deps.files(), id),
    checkImage: (id, field) =>
      then(deps.files().open(id), (f) => {
        if (!f) throw parameterError(fileNotFoundMessage(field, id))
        // The size first: files may be far larger than a logo may be, and this runs on save.
        if (f.size > MAX_ASSET_BYTES) throw parameterError(`'${field}' file ${id} is larger than ${MAX_ASSET_BYTES / 1024 / 1024} MB`)
        return then(deps.files().bytesOf(id), (bytes) => {
          if (!bytes) throw parameterError(fileNotFoundMessage(field, id))
          const kind = sniffImage(bytes)
          if (!kind) throw parameterError(`'${field}' file ${id} is not a PNG, JPEG or SVG image`)
          checkDesignImage({ bytes, kind }, field)
        })
      }),
  }
}

/** The error for a file a design may not draw: the same as for a missing one, so other users' ids reveal nothing. */
export const fileNotFoundMessage = (field: string, id: string) => `'${field}' file ${id} not found`

export async function readUploadedImage<S extends FileStorePort>(files: FileService<S>, id: string): Promise<FetchedImage | null> {
  const bytes = await files.bytesOf(id)
  if (!bytes) return null
  const kind = sniffImage(bytes)
  return kind ? { bytes, kind } : null
}
