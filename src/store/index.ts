/** The store: the embedded SQLite file (pragmas, migrations, the data-dir lock) and PostgreSQL (src/store/pg). Other modules import this file only. */
export { connectStore, type Db, openStore, storePath } from './db'
export { DataDirLockedError, lockDataDir } from './lock'
export {
  COPIED_TABLES,
  type CopyProgress,
  CopyRefusedError,
  connectPostgres,
  copySqliteToPostgres,
  ensureClickPartitions,
  MIGRATION_LOCK_KEY,
  migratePostgres,
  monthStart,
  openSqliteSource,
  type PgMigration,
  PgMigrationError,
  parsePostgresUrl,
  pgMigrations,
  redactUrl,
  StoreUrlError,
  type TableCount,
} from './pg'
