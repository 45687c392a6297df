/** Uploaded files: type sniffing, content-addressed blobs on disk, ownership, serving with Range. Other modules import this file only. */
export { createBlobStore } from './files.blobs'
export { contentResponse } from './files.content'
export { fileRoutes } from './files.routes'
export { createFileService, type FileService } from './files.service'
export { createFileStore } from './files.store'
