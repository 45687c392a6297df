/**
 * The tables of the cluster building blocks (lease locks, visit counters, rate windows),
 * created on first use when missing. The PostgreSQL migrations are meant to own the same
 * DDL; until then, and for tests on a bare database, each block creates its own table.
 */
import type { SQL } from 'bun'

export const CLUSTER_TABLES = {
  locks: 'CREATE TABLE IF NOT EXISTS locks (key text PRIMARY KEY, holder text NOT NULL, expires_at bigint NOT NULL)',
  visit_counters: 'CREATE TABLE IF NOT EXISTS visit_counters (link_id text PRIMARY KEY, n bigint NOT NULL)',
  rate_windows:
    'CREATE TABLE IF NOT EXISTS rate_windows (bucket text NOT NULL, window_start bigint NOT NULL, hits int NOT NULL, window_ms bigint NOT NULL DEFAULT 0, PRIMARY KEY (bucket, window_start))',
} as const
export type ClusterTable = keyof typeof CLUSTER_TABLES

/** Any fixed key: serialises the CREATEs of nodes starting together (two concurrent CREATE TABLE IF NOT EXISTS can both try to create the row type and one fails). */
const DDL_LOCK = 0x5_1c_7ab1e

const created = new WeakMap<SQL, Map<ClusterTable, Promise<void>>>()

/** Creates the table once per client; a failure (database down) is retried by the next call. */
export function ensureClusterTable(sql: SQL, table: ClusterTable): Promise<void> {
  let tables = created.get(sql)
  if (!tables) {
    tables = new Map()
    created.set(sql, tables)
  }
  let done = tables.get(table)
  if (!done) {
    done = sql
      .begin(async (tx) => {
        await tx`SELECT pg_advisory_xact_lock(${DDL_LOCK})`
        await tx.unsafe(CLUSTER_TABLES[table])
      })
      .then(() => {})
    done.catch(() => tables.delete(table))
    tables.set(table, done)
  }
  return done
}
