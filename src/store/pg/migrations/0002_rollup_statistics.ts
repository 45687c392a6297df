import type { PgMigration } from './index'

const ROLLUPS = ['stats_quarter', 'stats_hour', 'stats_day', 'stats_week']

/**
 * Planner statistics on the rollups' (scope, dim) pair. The two columns are correlated (the
 * all-links scope 0 holds a row per unit and value of every dimension, a link's scope only its
 * own), so from per-column statistics PostgreSQL expected 2.5M rows for `scope = 0 AND dim = 0`
 * of stats_hour where a year holds 8,760, and chose sequential scans (0.36-0.9 s at 10M events).
 * The most common pairs and their dependency let it estimate that read.
 *
 * ANALYZE gathers them now (a sample of 30k rows per table: seconds at 10M events, measured in
 * src/stats/STORAGE.md); afterwards autovacuum's analyze keeps them.
 */
export const rollupStatistics: PgMigration = {
  id: 2,
  name: '0002_rollup_statistics',
  sql: ROLLUPS.map((t) => `CREATE STATISTICS ${t}_scope_dim (dependencies, mcv) ON scope, dim FROM ${t};\nANALYZE ${t};`).join('\n'),
}
