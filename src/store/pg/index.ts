/** The PostgreSQL store: connecting (Bun.SQL), migrations under an advisory lock, click partitions, the copy from SQLite. */

// The cluster's building blocks (not wired into the server yet): cache invalidation, leader election, ACME lease locks, visit ordinals, a cluster-wide rate limit.
export { type ClusterRateLimiter, type ClusterRateState, createClusterRateLimiter } from './cluster-rate-limit'
export { connectPostgres, parsePostgresUrl, redactUrl, StoreUrlError } from './connect'
export {
  COPIED_TABLES,
  type CopiedTable,
  type CopyProgress,
  CopyRefusedError,
  type CopyResult,
  copySqliteToPostgres,
  type ExternalTables,
  openSqliteSource,
  type SqliteSource,
  type TableCount,
} from './copy'
export { createInvalidationBus, FLUSH, type Invalidation, type InvalidationBus } from './invalidation'
export { createLeader, type Leader, type Leadership } from './leader'
export { createLeaseLocks, type HeldLock, type LeaseLocks, LockLostError, LockTimeoutError } from './lease-lock'
export { MIGRATION_LOCK_KEY, migratePostgres, PgMigrationError, withAdvisoryLock } from './migrate'
export { type PgMigration, pgMigrations } from './migrations'
export { ensureClickPartitions, monthStart } from './partitions'
export { createVisitCounter, type VisitCounter } from './visit-counter'
