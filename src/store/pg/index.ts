/** The PostgreSQL store: connecting (Bun.SQL), migrations under an advisory lock, click partitions, the copy from SQLite. */
export { connectPostgres, parsePostgresUrl, redactUrl, StoreUrlError } from './connect'
export { MIGRATION_LOCK_KEY, migratePostgres, PgMigrationError } from './migrate'
export { type PgMigration, pgMigrations } from './migrations'
export { ensureClickPartitions, monthStart } from './partitions'
export {
  COPIED_TABLES,
  type CopiedTable,
  type CopyProgress,
  type CopyResult,
  CopyRefusedError,
  copySqliteToPostgres,
  openSqliteSource,
  type SqliteSource,
  type TableCount,
} from './copy'
