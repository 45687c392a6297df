/** The store: the embedded SQLite file (pragmas, migrations, the data-dir lock) and PostgreSQL (src/store/pg). Other modules import this file only. */
export { connectStore, type Db, openStore, storePath } from './db'
export { DataDirLockedError, lockDataDir } from './lock'
export {
  connectPostgres,
  ensureClickPartitions,
  MIGRATION_LOCK_KEY,
  migratePostgres,
  monthStart,
  type PgMigration,
  PgMigrationError,
  parsePostgresUrl,
  pgMigrations,
  redactUrl,
  StoreUrlError,
} from './pg'
