/**
 * Logos and frames given as uploaded file ids (`fil_…`). A design may draw only the files
 * of the user who owns it (the link's or template's owner; an admin's designs any file),
 * and only while the file is live and not archived: checked when a design is saved and
 * again at every render, so a file that is deleted, archived or out of reach later stops
 * being drawn (the code still renders, reported as `logo-unavailable`/`frame-unavailable`).
 */
import { readFileSync, statSync } from 'node:fs'
import type { FileService } from '../files'
import { parameterError } from '../shared'
import { type FetchedImage, sniffImage } from './qr.fetch'
import { checkDesignImage, MAX_ASSET_BYTES } from './qr.render'

export interface DesignFiles {
  /** Whether a design owned by `ownerId` may draw file `id`. */
  usable(id: string, ownerId: string): boolean
  /** The bytes of a live file, when they are a PNG, JPEG or SVG image. */
  read(id: string): Promise<FetchedImage | null>
  /** Bytes, type and the size its header declares within the limits (see checkDesignImage), for a design being saved. Throws parameter_error. */
  checkImage(id: string, field: string): void
}

export function createDesignFiles(deps: { files: () => FileService; isAdminUser(userId: string): boolean }): DesignFiles {
  return {
    usable(id, ownerId) {
      const f = deps.files().get(id)
      return !!f && !f.archived && (f.userId === ownerId || deps.isAdminUser(ownerId))
    },
    read: (id) => readUploadedImage(deps.files(), id),
    checkImage(id, field) {
      const f = deps.files().open(id)
      if (!f) throw parameterError(fileNotFoundMessage(field, id))
      // The size first: files may be far larger than a logo may be, and this runs on save.
      const size = statSync(f.path).size
      if (size > MAX_ASSET_BYTES) throw parameterError(`'${field}' file ${id} is larger than ${MAX_ASSET_BYTES / 1024 / 1024} MB`)
      const bytes = new Uint8Array(readFileSync(f.path))
      const kind = sniffImage(bytes)
      if (!kind) throw parameterError(`'${field}' file ${id} is not a PNG, JPEG or SVG image`)
      checkDesignImage({ bytes, kind }, field)
    },
  }
}

/** The error for a file a design may not draw: the same as for a missing one, so other users' ids reveal nothing. */
export const fileNotFoundMessage = (field: string, id: string) => `'${field}' file ${id} not found`

export async function readUploadedImage(files: FileService, id: string): Promise<FetchedImage | null> {
  const f = files.open(id)
  if (!f) return null
  const bytes = new Uint8Array(await Bun.file(f.path).arrayBuffer())
  const kind = sniffImage(bytes)
  return kind ? { bytes, kind } : null
}
