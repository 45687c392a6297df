import type { Migration } from './index'

/**
 * Statistics rollups (see src/stats/stats.rollup.ts for the layout and why): per scope
 * (0 = all links, −owner number, +link seq) × time unit (quarter hour, hour, day, 7 days) × dimension value, summed clicks
 * and scans; filled from the events already stored. The `*_links` indexes read the link
 * totals of a time range in time order when a query spans thousands of links. `stats_owners` numbers link owners so
 * owner scopes are small integers.
 *
 * The backfill INSERTs are the text rebuildSql(['all', 'owner', 'link']) produced when this
 * shipped, frozen here: a later change to the rollups must not change what this migration does.
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
INSERT INTO stats_quarter (scope, dim, t, value, clicks, scans)
  SELECT 0, 0, e.at / 900000, '', sum(e.n), sum(e.n * e.scan) FROM click_events e 
  GROUP BY 1, 3, 4;
INSERT INTO stats_quarter (scope, dim, t, value, clicks, scans)
  SELECT -o.num, 0, e.at / 900000, '', sum(e.n), sum(e.n * e.scan) FROM click_events e JOIN links l ON l.seq = e.link_seq JOIN stats_owners o ON o.user_id = l.user_id
  GROUP BY 1, 3, 4;
INSERT INTO stats_hour (scope, dim, t, value, clicks, scans)
  SELECT 0, 0, e.at / 3600000, '', sum(e.n), sum(e.n * e.scan) FROM click_events e 
  GROUP BY 1, 3, 4;
INSERT INTO stats_hour (scope, dim, t, value, clicks, scans)
  SELECT 0, 1, e.at / 3600000, coalesce(e.country, ''), sum(e.n), sum(e.n * e.scan) FROM click_events e 
  GROUP BY 1, 3, 4;
INSERT INTO stats_hour (scope, dim, t, value, clicks, scans)
  SELECT 0, 2, e.at / 3600000, (CASE WHEN length(e.country) = 2 THEN e.country ELSE '--' END) || coalesce(e.region, ''), sum(e.n), sum(e.n * e.scan) FROM click_events e 
  GROUP BY 1, 3, 4;
INSERT INTO stats_hour (scope, dim, t, value, clicks, scans)
  SELECT 0, 3, e.at / 3600000, (CASE WHEN length(e.country) = 2 THEN e.country ELSE '--' END) || coalesce(e.region, '') || char(31) || coalesce(e.city, ''), sum(e.n), sum(e.n * e.scan) FROM click_events e 
  GROUP BY 1, 3, 4;
INSERT INTO stats_hour (scope, dim, t, value, clicks, scans)
  SELECT 0, 4, e.at / 3600000, coalesce(e.os, ''), sum(e.n), sum(e.n * e.scan) FROM click_events e 
  GROUP BY 1, 3, 4;
INSERT INTO stats_hour (scope, dim, t, value, clicks, scans)
  SELECT 0, 5, e.at / 3600000, coalesce(e.browser, ''), sum(e.n), sum(e.n * e.scan) FROM click_events e 
  GROUP BY 1, 3, 4;
INSERT INTO stats_hour (scope, dim, t, value, clicks, scans)
  SELECT 0, 6, e.at / 3600000, coalesce(e.device, ''), sum(e.n), sum(e.n * e.scan) FROM click_events e 
  GROUP BY 1, 3, 4;
INSERT INTO stats_hour (scope, dim, t, value, clicks, scans)
  SELECT 0, 7, e.at / 3600000, coalesce(e.referer, ''), sum(e.n), sum(e.n * e.scan) FROM click_events e 
  GROUP BY 1, 3, 4;
INSERT INTO stats_hour (scope, dim, t, value, clicks, scans)
  SELECT 0, 8, e.at / 3600000, coalesce(e.referer_url, ''), sum(e.n), sum(e.n * e.scan) FROM click_events e 
  GROUP BY 1, 3, 4;
INSERT INTO stats_hour (scope, dim, t, value, clicks, scans)
  SELECT 0, 9, e.at / 3600000, coalesce(e.utm_source, ''), sum(e.n), sum(e.n * e.scan) FROM click_events e 
  GROUP BY 1, 3, 4;
INSERT INTO stats_hour (scope, dim, t, value, clicks, scans)
  SELECT 0, 10, e.at / 3600000, coalesce(e.utm_medium, ''), sum(e.n), sum(e.n * e.scan) FROM click_events e 
  GROUP BY 1, 3, 4;
INSERT INTO stats_hour (scope, dim, t, value, clicks, scans)
  SELECT 0, 11, e.at / 3600000, coalesce(e.utm_campaign, ''), sum(e.n), sum(e.n * e.scan) FROM click_events e 
  GROUP BY 1, 3, 4;
INSERT INTO stats_hour (scope, dim, t, value, clicks, scans)
  SELECT 0, 12, e.at / 3600000, coalesce(e.utm_term, ''), sum(e.n), sum(e.n * e.scan) FROM click_events e 
  GROUP BY 1, 3, 4;
INSERT INTO stats_hour (scope, dim, t, value, clicks, scans)
  SELECT 0, 13, e.at / 3600000, coalesce(e.utm_content, ''), sum(e.n), sum(e.n * e.scan) FROM click_events e 
  GROUP BY 1, 3, 4;
INSERT INTO stats_hour (scope, dim, t, value, clicks, scans)
  SELECT -o.num, 0, e.at / 3600000, '', sum(e.n), sum(e.n * e.scan) FROM click_events e JOIN links l ON l.seq = e.link_seq JOIN stats_owners o ON o.user_id = l.user_id
  GROUP BY 1, 3, 4;
INSERT INTO stats_hour (scope, dim, t, value, clicks, scans)
  SELECT e.link_seq, 0, e.at / 3600000, '', sum(e.n), sum(e.n * e.scan) FROM click_events e 
  GROUP BY 1, 3, 4;
INSERT INTO stats_day (scope, dim, t, value, clicks, scans)
  SELECT 0, 0, e.at / 86400000, '', sum(e.n), sum(e.n * e.scan) FROM click_events e 
  GROUP BY 1, 3, 4;
INSERT INTO stats_day (scope, dim, t, value, clicks, scans)
  SELECT 0, 1, e.at / 86400000, coalesce(e.country, ''), sum(e.n), sum(e.n * e.scan) FROM click_events e 
  GROUP BY 1, 3, 4;
INSERT INTO stats_day (scope, dim, t, value, clicks, scans)
  SELECT 0, 2, e.at / 86400000, (CASE WHEN length(e.country) = 2 THEN e.country ELSE '--' END) || coalesce(e.region, ''), sum(e.n), sum(e.n * e.scan) FROM click_events e 
  GROUP BY 1, 3, 4;
INSERT INTO stats_day (scope, dim, t, value, clicks, scans)
  SELECT 0, 3, e.at / 86400000, (CASE WHEN length(e.country) = 2 THEN e.country ELSE '--' END) || coalesce(e.region, '') || char(31) || coalesce(e.city, ''), sum(e.n), sum(e.n * e.scan) FROM click_events e 
  GROUP BY 1, 3, 4;
INSERT INTO stats_day (scope, dim, t, value, clicks, scans)
  SELECT 0, 4, e.at / 86400000, coalesce(e.os, ''), sum(e.n), sum(e.n * e.scan) FROM click_events e 
  GROUP BY 1, 3, 4;
INSERT INTO stats_day (scope, dim, t, value, clicks, scans)
  SELECT 0, 5, e.at / 86400000, coalesce(e.browser, ''), sum(e.n), sum(e.n * e.scan) FROM click_events e 
  GROUP BY 1, 3, 4;
INSERT INTO stats_day (scope, dim, t, value, clicks, scans)
  SELECT 0, 6, e.at / 86400000, coalesce(e.device, ''), sum(e.n), sum(e.n * e.scan) FROM click_events e 
  GROUP BY 1, 3, 4;
INSERT INTO stats_day (scope, dim, t, value, clicks, scans)
  SELECT 0, 7, e.at / 86400000, coalesce(e.referer, ''), sum(e.n), sum(e.n * e.scan) FROM click_events e 
  GROUP BY 1, 3, 4;
INSERT INTO stats_day (scope, dim, t, value, clicks, scans)
  SELECT 0, 8, e.at / 86400000, coalesce(e.referer_url, ''), sum(e.n), sum(e.n * e.scan) FROM click_events e 
  GROUP BY 1, 3, 4;
INSERT INTO stats_day (scope, dim, t, value, clicks, scans)
  SELECT 0, 9, e.at / 86400000, coalesce(e.utm_source, ''), sum(e.n), sum(e.n * e.scan) FROM click_events e 
  GROUP BY 1, 3, 4;
INSERT INTO stats_day (scope, dim, t, value, clicks, scans)
  SELECT 0, 10, e.at / 86400000, coalesce(e.utm_medium, ''), sum(e.n), sum(e.n * e.scan) FROM click_events e 
  GROUP BY 1, 3, 4;
INSERT INTO stats_day (scope, dim, t, value, clicks, scans)
  SELECT 0, 11, e.at / 86400000, coalesce(e.utm_campaign, ''), sum(e.n), sum(e.n * e.scan) FROM click_events e 
  GROUP BY 1, 3, 4;
INSERT INTO stats_day (scope, dim, t, value, clicks, scans)
  SELECT 0, 12, e.at / 86400000, coalesce(e.utm_term, ''), sum(e.n), sum(e.n * e.scan) FROM click_events e 
  GROUP BY 1, 3, 4;
INSERT INTO stats_day (scope, dim, t, value, clicks, scans)
  SELECT 0, 13, e.at / 86400000, coalesce(e.utm_content, ''), sum(e.n), sum(e.n * e.scan) FROM click_events e 
  GROUP BY 1, 3, 4;
INSERT INTO stats_day (scope, dim, t, value, clicks, scans)
  SELECT -o.num, 0, e.at / 86400000, '', sum(e.n), sum(e.n * e.scan) FROM click_events e JOIN links l ON l.seq = e.link_seq JOIN stats_owners o ON o.user_id = l.user_id
  GROUP BY 1, 3, 4;
INSERT INTO stats_day (scope, dim, t, value, clicks, scans)
  SELECT -o.num, 1, e.at / 86400000, coalesce(e.country, ''), sum(e.n), sum(e.n * e.scan) FROM click_events e JOIN links l ON l.seq = e.link_seq JOIN stats_owners o ON o.user_id = l.user_id
  GROUP BY 1, 3, 4;
INSERT INTO stats_day (scope, dim, t, value, clicks, scans)
  SELECT -o.num, 2, e.at / 86400000, (CASE WHEN length(e.country) = 2 THEN e.country ELSE '--' END) || coalesce(e.region, ''), sum(e.n), sum(e.n * e.scan) FROM click_events e JOIN links l ON l.seq = e.link_seq JOIN stats_owners o ON o.user_id = l.user_id
  GROUP BY 1, 3, 4;
INSERT INTO stats_day (scope, dim, t, value, clicks, scans)
  SELECT -o.num, 3, e.at / 86400000, (CASE WHEN length(e.country) = 2 THEN e.country ELSE '--' END) || coalesce(e.region, '') || char(31) || coalesce(e.city, ''), sum(e.n), sum(e.n * e.scan) FROM click_events e JOIN links l ON l.seq = e.link_seq JOIN stats_owners o ON o.user_id = l.user_id
  GROUP BY 1, 3, 4;
INSERT INTO stats_day (scope, dim, t, value, clicks, scans)
  SELECT -o.num, 4, e.at / 86400000, coalesce(e.os, ''), sum(e.n), sum(e.n * e.scan) FROM click_events e JOIN links l ON l.seq = e.link_seq JOIN stats_owners o ON o.user_id = l.user_id
  GROUP BY 1, 3, 4;
INSERT INTO stats_day (scope, dim, t, value, clicks, scans)
  SELECT -o.num, 5, e.at / 86400000, coalesce(e.browser, ''), sum(e.n), sum(e.n * e.scan) FROM click_events e JOIN links l ON l.seq = e.link_seq JOIN stats_owners o ON o.user_id = l.user_id
  GROUP BY 1, 3, 4;
INSERT INTO stats_day (scope, dim, t, value, clicks, scans)
  SELECT -o.num, 6, e.at / 86400000, coalesce(e.device, ''), sum(e.n), sum(e.n * e.scan) FROM click_events e JOIN links l ON l.seq = e.link_seq JOIN stats_owners o ON o.user_id = l.user_id
  GROUP BY 1, 3, 4;
INSERT INTO stats_day (scope, dim, t, value, clicks, scans)
  SELECT -o.num, 7, e.at / 86400000, coalesce(e.referer, ''), sum(e.n), sum(e.n * e.scan) FROM click_events e JOIN links l ON l.seq = e.link_seq JOIN stats_owners o ON o.user_id = l.user_id
  GROUP BY 1, 3, 4;
INSERT INTO stats_day (scope, dim, t, value, clicks, scans)
  SELECT -o.num, 8, e.at / 86400000, coalesce(e.referer_url, ''), sum(e.n), sum(e.n * e.scan) FROM click_events e JOIN links l ON l.seq = e.link_seq JOIN stats_owners o ON o.user_id = l.user_id
  GROUP BY 1, 3, 4;
INSERT INTO stats_day (scope, dim, t, value, clicks, scans)
  SELECT -o.num, 9, e.at / 86400000, coalesce(e.utm_source, ''), sum(e.n), sum(e.n * e.scan) FROM click_events e JOIN links l ON l.seq = e.link_seq JOIN stats_owners o ON o.user_id = l.user_id
  GROUP BY 1, 3, 4;
INSERT INTO stats_day (scope, dim, t, value, clicks, scans)
  SELECT -o.num, 10, e.at / 86400000, coalesce(e.utm_medium, ''), sum(e.n), sum(e.n * e.scan) FROM click_events e JOIN links l ON l.seq = e.link_seq JOIN stats_owners o ON o.user_id = l.user_id
  GROUP BY 1, 3, 4;
INSERT INTO stats_day (scope, dim, t, value, clicks, scans)
  SELECT -o.num, 11, e.at / 86400000, coalesce(e.utm_campaign, ''), sum(e.n), sum(e.n * e.scan) FROM click_events e JOIN links l ON l.seq = e.link_seq JOIN stats_owners o ON o.user_id = l.user_id
  GROUP BY 1, 3, 4;
INSERT INTO stats_day (scope, dim, t, value, clicks, scans)
  SELECT -o.num, 12, e.at / 86400000, coalesce(e.utm_term, ''), sum(e.n), sum(e.n * e.scan) FROM click_events e JOIN links l ON l.seq = e.link_seq JOIN stats_owners o ON o.user_id = l.user_id
  GROUP BY 1, 3, 4;
INSERT INTO stats_day (scope, dim, t, value, clicks, scans)
  SELECT -o.num, 13, e.at / 86400000, coalesce(e.utm_content, ''), sum(e.n), sum(e.n * e.scan) FROM click_events e JOIN links l ON l.seq = e.link_seq JOIN stats_owners o ON o.user_id = l.user_id
  GROUP BY 1, 3, 4;
INSERT INTO stats_day (scope, dim, t, value, clicks, scans)
  SELECT e.link_seq, 0, e.at / 86400000, '', sum(e.n), sum(e.n * e.scan) FROM click_events e 
  GROUP BY 1, 3, 4;
INSERT INTO stats_week (scope, dim, t, value, clicks, scans)
  SELECT e.link_seq, 0, e.at / 604800000, '', sum(e.n), sum(e.n * e.scan) FROM click_events e 
  GROUP BY 1, 3, 4;
`,
}
