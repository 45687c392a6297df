import type { Migration } from './index'
import { BUSY_LINK_CLICKS, rebuildSql } from '../../stats/stats.rollup'

/**
 * Statistics round 3 (measured in src/stats/STORAGE.md): link types become rollup groups
 * beside owners (`type:<linkType>` in stats_owners); region and city rollup values become
 * country/region paths; links with BUSY_LINK_CLICKS clicks get per-day dimension rows.
 * Each part is rebuilt from the events already stored.
 */
export const statsBusyLinks: Migration = {
  id: 8,
  name: '0008_stats_busy_links',
  sql: `
CREATE TABLE stats_busy_links (
  seq INTEGER PRIMARY KEY
);
INSERT OR IGNORE INTO stats_owners (user_id) SELECT DISTINCT 'type:' || link_type FROM links ORDER BY 1;
DELETE FROM stats_hour WHERE dim IN (2, 3);
DELETE FROM stats_day WHERE dim IN (2, 3);
${rebuildSql(['all', 'owner'], [2, 3])}
${rebuildSql(['type'])}
INSERT INTO stats_busy_links (seq) SELECT link_seq FROM click_events GROUP BY link_seq HAVING sum(n) >= ${BUSY_LINK_CLICKS};
${rebuildSql(['busy'])}
`,
}
