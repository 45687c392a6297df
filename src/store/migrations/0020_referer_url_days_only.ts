import type { Migration } from './index'

/**
 * Full referer URLs are rolled up per day only, for all links too (stats.rollup.ts `levelsFor`; PostgreSQL's
 * migration 0016, the events engine at its next open): nearly every such URL is a visit of its own, so its
 * hour rows were a row per visit. The hour rows written before are never read again (dim 8: referer_url).
 */
export const refererUrlDaysOnly: Migration = {
  id: 20,
  name: '0020_referer_url_days_only',
  sql: `DELETE FROM stats_hour WHERE scope = 0 AND dim = 8;`,
}
