import type { PgMigration } from './index'

/**
 * Full referer URLs are rolled up per day only, for all links too (stats.rollup.ts `levelsFor`): nearly
 * every such URL is a visit of its own, so its hour rows were a new row per visit, a fifth of the rows a
 * batch upserted. A range's partial days read raw events for this dimension now; the hour rows written
 * before are never read again, and go (dim 8: referer_url).
 */
export const refererUrlDaysOnly: PgMigration = {
  id: 16,
  name: '0016_referer_url_days_only',
  sql: `DELETE FROM stats_hour WHERE scope = 0 AND dim = 8;`,
}
