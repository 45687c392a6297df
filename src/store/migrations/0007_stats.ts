import type { Migration } from './index'
import { rebuildSql } from '../../stats/stats.rollup'

/**
 * Statistics rollups (see src/stats/stats.rollup.ts for the layout and why): per scope
 * (0 = all links, −owner number, +link seq) × time unit (quarter hour, hour, day, 7 days) × dimension value, summed clicks
 * and scans; filled from the events already stored. The `*_links` indexes read the link
 * totals of a time range in time order when a query spans thousands of links. `stats_owners` numbers link owners so
 * owner scopes are small integers.
 */
export const stats: Migration = {
  id: 7,
  name: '0007_stats',
  sql: `
CREATE TABLE stats_owners (
  num INTEGER PRIMARY KEY,
  user_id TEXT NOT NULL UNIQUE
);
CREATE TABLE stats_quarter (
  scope INTEGER NOT NULL,
  dim INTEGER NOT NULL,
  t INTEGER NOT NULL,
  value TEXT NOT NULL,
  clicks INTEGER NOT NULL,
  scans INTEGER NOT NULL,
  PRIMARY KEY (scope, dim, t, value)
) WITHOUT ROWID;
CREATE TABLE stats_hour (
  scope INTEGER NOT NULL,
  dim INTEGER NOT NULL,
  t INTEGER NOT NULL,
  value TEXT NOT NULL,
  clicks INTEGER NOT NULL,
  scans INTEGER NOT NULL,
  PRIMARY KEY (scope, dim, t, value)
) WITHOUT ROWID;
CREATE TABLE stats_day (
  scope INTEGER NOT NULL,
  dim INTEGER NOT NULL,
  t INTEGER NOT NULL,
  value TEXT NOT NULL,
  clicks INTEGER NOT NULL,
  scans INTEGER NOT NULL,
  PRIMARY KEY (scope, dim, t, value)
) WITHOUT ROWID;
CREATE TABLE stats_week (
  scope INTEGER NOT NULL,
  dim INTEGER NOT NULL,
  t INTEGER NOT NULL,
  value TEXT NOT NULL,
  clicks INTEGER NOT NULL,
  scans INTEGER NOT NULL,
  PRIMARY KEY (scope, dim, t, value)
) WITHOUT ROWID;
CREATE INDEX stats_hour_links ON stats_hour (t, scope, clicks, scans) WHERE scope > 0 AND dim = 0;
CREATE INDEX stats_day_links ON stats_day (t, scope, clicks, scans) WHERE scope > 0 AND dim = 0;
CREATE INDEX stats_week_links ON stats_week (t, scope, clicks, scans) WHERE scope > 0 AND dim = 0;
INSERT INTO stats_owners (user_id) SELECT DISTINCT user_id FROM links ORDER BY user_id;
${rebuildSql(['all', 'owner', 'link'])}
`,
}
