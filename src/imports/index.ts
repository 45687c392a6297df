/** Imports: other services' export files → links (POST /imports, `shortlink import`). Other modules import this file only. */
export { importRoutes } from './imports.routes'
export { IMPORT_SOURCES, type ImportSourceName, SOURCE_HELP } from './imports.schema'
export { createImportService, type ImportRecordValue, type ImportService, STALE_MS } from './imports.service'
export { createImportStore, type ImportStorePort } from './imports.store'
export { createPgImportStore } from './imports.store.pg'
