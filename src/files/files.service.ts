/**
 * Uploaded files: upload checks (size, type from the bytes, declared pixels, name), ownership,
 * listing, renaming, deleting and the bytes for serving. The store and the bytes are ports
 * (docs/adr/0010): over the SQLite store every method that only reads or writes rows answers
 * at once (then-or-now), as before; over PostgreSQL with a promise.
 */
import { createHash } from 'node:crypto'
import { type Caller, canAccessOwnedBy } from '../auth'
import { AppError, badRequest, forbidden, imageSize, newId, notFound, pageWindow, parameterError, type SizedKind } from '../shared'
import type { BlobStore } from './files.blobs'
import { createDiskFileBytes, type FileBytesPort } from './files.bytes'
import type { StoredContent } from './files.content'
import { ALLOWED_TYPES, sniffType } from './files.sniff'
import { type FileRecord, type FileStore, type FileStorePort, type StoredFile, toRecord } from './files.store'

/** A result that is synchronous when the store `S` is (the SQLite one), else maybe a promise. */
export type StoreResult<S, T> = S extends FileStore ? T : T | Promise<T>

/** `f(value)`, at once when `value` is not a promise: keeps a synchronous store's path free of promises. */
function then<T, R>(value: T | Promise<T>, f: (v: T) => R | Promise<R>): R | Promise<R> {
  return value instanceof Promise ? value.then(f) : f(value)
}

export interface FileServiceDeps<S extends FileStorePort> {
  /** The rows: `createFileStore(db, now)` (SQLite) or `createPgFileStore(sql, now)` (which carries its bytes port). */
  store: S
  /** Where the bytes live, when not given by the store or `blobs`: `createDiskFileBytes(store, blobs)` or `createPgFileBytes(sql, now)`. */
  bytes?: FileBytesPort
  /** SQLite: the blob store on disk beside the SQLite `store` (`createBlobStore(dataDir)`). */
  blobs?: BlobStore
  maxBytes: number
  /** Whether a live link shows the file: such a file cannot be deleted. */
  isInUse: (fileId: string) => boolean | Promise<boolean>
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

export function createFileService<S extends FileStorePort = FileStore>(deps: FileServiceDeps<S>) {
  const { store, maxBytes, isInUse } = deps
  const bytes = deps.bytes ?? (store as { bytes?: FileBytesPort }).bytes ?? (deps.blobs && createDiskFileBytes(store as FileStore, deps.blobs))
  if (!bytes) throw new Error('createFileService: the bytes need a place: `bytes`, a store that carries them, or `blobs` beside the SQLite store')
  type R<T> = StoreResult<S, T>

  function getOwned(caller: Caller, id: string): R<StoredFile> {
    return then(store.get(id), (f) => {
      if (!f) throw notFound(`file ${id}`)
      if (!canAccessOwnedBy(caller, f.userId)) throw forbidden(`file ${id} belongs to another user`)
      if (f.deleted) throw new AppError('record_gone', `file ${id} was deleted`)
      return f
    }) as R<StoredFile>
  }

  function checkName(name: string): string {
    const trimmed = name.trim()
    if (!trimmed) throw parameterError(`'name' must not be blank`)
    if (CONTROL_CHARS.test(trimmed)) throw parameterError(`'name' must not contain control characters`)
    // The multipart `name` field has no schema in front of it: the record's rule is checked here.
    if ([...trimmed].length > 255) throw parameterError(`'name' length must be 1-255`)
    return trimmed
  }

  const live = (id: string) => then(store.get(id), (f) => (f && !f.deleted ? f : null))
  /** What serving needs: the bytes are read only when a response sends them. */
  const contentOf = (f: StoredFile): StoredContent & { id: string } => ({
    id: f.id,
    mimeType: f.mimeType,
    size: f.size,
    sha256: f.sha256,
    name: f.name,
    stream: (range) => bytes.stream(f, range),
  })

  return {
    /** Stores an upload: the type comes from the bytes; the row and the bytes are written as one step (FileBytesPort.put). */
    async create(caller: Caller, file: unknown, nameOverride?: string): Promise<FileRecord> {
      if (!(file instanceof Blob)) throw parameterError(`'file' is required: send the file as the multipart/form-data field 'file'`)
      if (file.size > maxBytes) throw badRequest(`'file' is too large: ${file.size} bytes, the limit is ${maxBytes} bytes`)
      if (file.size === 0) throw parameterError(`'file' is empty`)
      const data = new Uint8Array(await file.arrayBuffer())
      if (data.byteLength > maxBytes) throw badRequest(`'file' is too large: ${data.byteLength} bytes, the limit is ${maxBytes} bytes`)
      const type = sniffType(data)
      if (!type)
        throw parameterError(
          `'file' type is not allowed: the content is none of ${Object.keys(ALLOWED_TYPES).join(', ')} (the type is read from the bytes, not the name)`,
        )
      checkDeclaredPixels(data, type.extension)
      const name = nameOverride !== undefined ? checkName(nameOverride) : cleanUploadName((file as File).name, type.extension)
      const id = newId('fil')
      const sha256 = createHash('sha256').update(data).digest('hex')
      await bytes.put({ id, userId: caller.userId, name, sha256, size: data.byteLength, ...type }, data)
      return toRecord((await store.get(id))!)
    },

    /** A caller's file (404 / 403 / 410 as the contract says). */
    getOwned: (caller: Caller, id: string): R<FileRecord> => then(getOwned(caller, id), toRecord) as R<FileRecord>,

    list(caller: Caller, q: ListFilesInput): R<{ files: FileRecord[]; total: number }> {
      const { limit, offset } = pageWindow(q.page, q.pageSize)
      const ext = q.extension?.trim().toLowerCase().replace(/^\./, '')
      const found = store.list({
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
      return then(found, ({ files, total }) => ({ files: files.map(toRecord), total })) as R<{ files: FileRecord[]; total: number }>
    },

    update(caller: Caller, id: string, input: { name?: string; archived?: boolean }): R<FileRecord> {
      return then(getOwned(caller, id), (f) => {
        const name = input.name !== undefined ? checkName(input.name) : f.name
        return then(store.update(id, name, input.archived ?? f.archived), () => then(store.get(id), (u) => toRecord(u!)))
      }) as R<FileRecord>
    },

    /** Refuses (422) while a live link shows the file; the bytes go with the row (on disk, when no live record shares them). */
    remove(caller: Caller, id: string): { id: string } | Promise<{ id: string }> {
      return then(getOwned(caller, id), (f) =>
        then(isInUse(id), (used) => {
          if (used) throw parameterError(`file ${id} is used by a link; delete the link or point it at other content first`)
          return then(bytes.delete(f), () => ({ id }))
        }),
      )
    },

    /** The bytes of a caller's file, for GET /files/{id}/content. */
    content: (caller: Caller, id: string): R<StoredContent> => then(getOwned(caller, id), contentOf) as R<StoredContent>,

    // For the redirect server, landing pages and QR designs: no caller, live files only.
    /** The record of a live (not deleted) file, or null. */
    get: (id: string): R<FileRecord | null> => then(live(id), (f) => (f ? toRecord(f) : null)) as R<FileRecord | null>,
    /** A live file's type, size and bytes (read on demand), for serving on a landing page; null when gone. */
    open: (id: string): R<(StoredContent & { id: string }) | null> =>
      then(live(id), (f) => (f ? contentOf(f) : null)) as R<(StoredContent & { id: string }) | null>,
    /** All the bytes of a live file (at most the upload limit), for drawing it in a QR design; null when gone. */
    bytesOf: (id: string): R<Uint8Array | null> => then(live(id), (f) => (f ? bytes.get(f) : null)) as R<Uint8Array | null>,
  }
}
/** The service over the SQLite store (the default), or over any store port (`FileService<FileStorePort>`). */
export type FileService<S extends FileStorePort = FileStore> = ReturnType<typeof createFileService<S>>
