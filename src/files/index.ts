/** Uploaded files: type sniffing, bytes on disk (SQLite) or in the row (PostgreSQL), ownership, serving with Range. Other modules import this file only. */
export { createBlobStore } from './files.blobs'
export { createDiskFileBytes, type FileBytesPort } from './files.bytes'
export { contentResponse, type StoredContent } from './files.content'
export { fileRoutes } from './files.routes'
export { createFileService, type FileService } from './files.service'
export { createFileStore, type FileStorePort } from './files.store'
export { createPgFileBytes, createPgFileStore } from './files.store.pg'
