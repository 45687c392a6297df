import { type Caller, canAccessOwnedBy } from '../auth'
import { AppError, badRequest, forbidden, imageSize, newId, notFound, pageWindow, parameterError, type SizedKind } from '../shared'
import type { BlobStore } from './files.blobs'
import type { StoredContent } from './files.content'
import { ALLOWED_TYPES, sniffType } from './files.sniff'
import { type FileRecord, type FileStore, type StoredFile, toRecord } from './files.store'

export interface FileServiceDeps {
  store: FileStore
  blobs: BlobStore
  maxBytes: number
  /** Whether a live link shows the file: such a file cannot be deleted. */
  isInUse: (fileId: string) => boolean
}

export interface ListFilesInput {
  ids?: string[]
  search?: string
  extension?: string
  sortBy?: 'name' | 'created_at'
  sortOrder?: 'asc' | 'desc'
  page?: number
  pageSize?: number
  includeArchived?: boolean
}

const EXTENSION_ALIASES: Record<string, string> = { jpeg: 'jpg', jpe: 'jpg', svgz: 'svg', oga: 'ogg', wave: 'wav', mpeg: 'mp3', m4v: 'mp4' }
// biome-ignore lint/suspicious/noControlCharactersInRegex: matching control characters is the point (names must not carry them)
const CONTROL_CHARS = /[\u0000-\u001f\u007f-\u009f\u2028\u2029]/

/** Display name from an upload: the last path segment, trimmed, at most 255 characters. */
export function cleanUploadName(raw: string | undefined, extension: string): string {
  const base = (raw ?? '').split(/[\\/]/).pop()!.replace(new RegExp(CONTROL_CHARS, 'g'), '').trim()
  const chars = [...base]
  return chars.length ? chars.slice(0, 255).join('') : `file.${extension}`
}

/**
 * Most pixels an uploaded image may declare: 150 MP, above any camera's photos (108 MP is
 * 12000×9000). A few hundred bytes can declare 30000×30000 (900 MP, 3.6 GB decoded): such a
 * file is refused before anything (here, a QR design, a visitor's browser) decodes it. QR
 * designs hold their logos and frames to a smaller budget (src/qr/qr.image-size.ts).
 */
export const MAX_UPLOAD_PIXELS = 150_000_000
const SIZED: Record<string, SizedKind> = { png: 'png', jpg: 'jpeg', svg: 'svg' }

function checkDeclaredPixels(bytes: Uint8Array, extension: string) {
  const kind = SIZED[extension]
  if (!kind) return
  const size = imageSize(bytes, kind)
  if (!size || !(size.width >= 1 && size.height >= 1)) throw parameterError(`'file' the ${kind.toUpperCase()} image's size cannot be read from its header`)
  if (size.width * size.height > MAX_UPLOAD_PIXELS)
    throw parameterError(`'file' the image declares ${size.width}×${size.height} px; at most ${MAX_UPLOAD_PIXELS / 1e6} megapixels are accepted`)
}

export function createFileService({ store, blobs, maxBytes, isInUse }: FileServiceDeps) {
  function getOwned(caller: Caller, id: string): StoredFile {
    const f = store.get(id)
    if (!f) throw notFound(`file ${id}`)
    if (!canAccessOwnedBy(caller, f.userId)) throw forbidden(`file ${id} belongs to another user`)
    if (f.deleted) throw new AppError('record_gone', `file ${id} was deleted`)
    return f
  }

  function checkName(name: string): string {
    const trimmed = name.trim()
    if (!trimmed) throw parameterError(`'name' must not be blank`)
    if (CONTROL_CHARS.test(trimmed)) throw parameterError(`'name' must not contain control characters`)
    // The multipart `name` field has no schema in front of it: the record's rule is checked here.
    if ([...trimmed].length > 255) throw parameterError(`'name' length must be 1-255`)
    return trimmed
  }

  const live = (id: string) => {
    const f = store.get(id)
    return f && !f.deleted ? f : null
  }

  return {
    /**
     * Stores an upload. The type comes from the bytes; the blob is committed and the
     * row inserted in one synchronous step, so a concurrent delete of a file with the
     * same content cannot remove the blob between the two.
     */
    async create(caller: Caller, file: unknown, nameOverride?: string): Promise<FileRecord> {
      if (!(file instanceof Blob)) throw parameterError(`'file' is required: send the file as the multipart/form-data field 'file'`)
      if (file.size > maxBytes) throw badRequest(`'file' is too large: ${file.size} bytes, the limit is ${maxBytes} bytes`)
      if (file.size === 0) throw parameterError(`'file' is empty`)
      const bytes = new Uint8Array(await file.arrayBuffer())
      if (bytes.byteLength > maxBytes) throw badRequest(`'file' is too large: ${bytes.byteLength} bytes, the limit is ${maxBytes} bytes`)
      const type = sniffType(bytes)
      if (!type)
        throw parameterError(
          `'file' type is not allowed: the content is none of ${Object.keys(ALLOWED_TYPES).join(', ')} (the type is read from the bytes, not the name)`,
        )
      checkDeclaredPixels(bytes, type.extension)
      const name = nameOverride !== undefined ? checkName(nameOverride) : cleanUploadName((file as File).name, type.extension)
      const staged = await blobs.stage(bytes)
      const id = newId('fil')
      try {
        staged.commit()
        store.insert({ id, userId: caller.userId, name, sha256: staged.sha256, size: bytes.byteLength, ...type })
      } catch (e) {
        staged.discard()
        if (store.liveUsersOf(staged.sha256) === 0) blobs.remove(staged.sha256)
        throw e
      }
      return toRecord(store.get(id)!)
    },

    /** A caller's file (404 / 403 / 410 as the contract says). */
    getOwned: (caller: Caller, id: string): FileRecord => toRecord(getOwned(caller, id)),

    list(caller: Caller, q: ListFilesInput): { files: FileRecord[]; total: number } {
      const { limit, offset } = pageWindow(q.page, q.pageSize)
      const ext = q.extension?.trim().toLowerCase().replace(/^\./, '')
      const { files, total } = store.list({
        userId: caller.role === 'admin' ? undefined : caller.userId,
        ids: q.ids,
        search: q.search,
        extension: ext ? (EXTENSION_ALIASES[ext] ?? ext) : undefined,
        includeArchived: q.includeArchived ?? false,
        sortBy: q.sortBy ?? 'created_at',
        sortOrder: q.sortOrder ?? 'desc',
        limit,
        offset,
      })
      return { files: files.map(toRecord), total }
    },

    update(caller: Caller, id: string, input: { name?: string; archived?: boolean }): FileRecord {
      const f = getOwned(caller, id)
      const name = input.name !== undefined ? checkName(input.name) : f.name
      store.update(id, name, input.archived ?? f.archived)
      return toRecord(store.get(id)!)
    },

    /** Refuses (422) while a live link shows the file; the bytes go when no live record shares them. */
    remove(caller: Caller, id: string): { id: string } {
      const f = getOwned(caller, id)
      if (isInUse(id)) throw parameterError(`file ${id} is used by a link; delete the link or point it at other content first`)
      store.markDeleted(id)
      if (store.liveUsersOf(f.sha256) === 0) blobs.remove(f.sha256)
      return { id }
    },

    /** The bytes of a caller's file, for GET /files/{id}/content. */
    content(caller: Caller, id: string): StoredContent {
      const f = getOwned(caller, id)
      return { path: blobs.pathOf(f.sha256), mimeType: f.mimeType, size: f.size, sha256: f.sha256, name: f.name }
    },

    // For the redirect server and landing pages: no caller, live files only.
    /** The record of a live (not deleted) file, or null. */
    get(id: string): FileRecord | null {
      const f = live(id)
      return f ? toRecord(f) : null
    },
    /** Where a live file's bytes are, for serving them on a landing page; null when gone. */
    open(id: string): (StoredContent & { id: string }) | null {
      const f = live(id)
      if (!f) return null
      return { id: f.id, path: blobs.pathOf(f.sha256), mimeType: f.mimeType, size: f.size, sha256: f.sha256, name: f.name }
    },
  }
}
export type FileService = ReturnType<typeof createFileService>
