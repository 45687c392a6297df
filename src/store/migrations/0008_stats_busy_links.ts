import type { Migration } from './index'

/**
 * Statistics round 3 (measured in src/stats/STORAGE.md): link types become rollup groups
 * beside owners (`type:<linkType>` in stats_owners); region and city rollup values become
 * country/region paths; links with BUSY_LINK_CLICKS clicks get per-day dimension rows.
 * Each part is rebuilt from the events already stored.
 *
 * The rebuilds are the text rebuildSql(['all', 'owner'], [2, 3]), rebuildSql(['type']) and
 * rebuildSql(['busy']) produced when this shipped (BUSY_LINK_CLICKS = 5000), frozen here: a
 * later change to the rollups must not change what this migration does.
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
INSERT INTO stats_hour (scope, dim, t, value, clicks, scans)
  SELECT 0, 2, e.at / 3600000, (CASE WHEN length(e.country) = 2 THEN e.country ELSE '--' END) || coalesce(e.region, ''), sum(e.n), sum(e.n * e.scan) FROM click_events e 
  GROUP BY 1, 3, 4;
INSERT INTO stats_hour (scope, dim, t, value, clicks, scans)
  SELECT 0, 3, e.at / 3600000, (CASE WHEN length(e.country) = 2 THEN e.country ELSE '--' END) || coalesce(e.region, '') || char(31) || coalesce(e.city, ''), sum(e.n), sum(e.n * e.scan) FROM click_events e 
  GROUP BY 1, 3, 4;
INSERT INTO stats_day (scope, dim, t, value, clicks, scans)
  SELECT 0, 2, e.at / 86400000, (CASE WHEN length(e.country) = 2 THEN e.country ELSE '--' END) || coalesce(e.region, ''), sum(e.n), sum(e.n * e.scan) FROM click_events e 
  GROUP BY 1, 3, 4;
INSERT INTO stats_day (scope, dim, t, value, clicks, scans)
  SELECT 0, 3, e.at / 86400000, (CASE WHEN length(e.country) = 2 THEN e.country ELSE '--' END) || coalesce(e.region, '') || char(31) || coalesce(e.city, ''), sum(e.n), sum(e.n * e.scan) FROM click_events e 
  GROUP BY 1, 3, 4;
INSERT INTO stats_day (scope, dim, t, value, clicks, scans)
  SELECT -o.num, 2, e.at / 86400000, (CASE WHEN length(e.country) = 2 THEN e.country ELSE '--' END) || coalesce(e.region, ''), sum(e.n), sum(e.n * e.scan) FROM click_events e JOIN links l ON l.seq = e.link_seq JOIN stats_owners o ON o.user_id = l.user_id
  GROUP BY 1, 3, 4;
INSERT INTO stats_day (scope, dim, t, value, clicks, scans)
  SELECT -o.num, 3, e.at / 86400000, (CASE WHEN length(e.country) = 2 THEN e.country ELSE '--' END) || coalesce(e.region, '') || char(31) || coalesce(e.city, ''), sum(e.n), sum(e.n * e.scan) FROM click_events e JOIN links l ON l.seq = e.link_seq JOIN stats_owners o ON o.user_id = l.user_id
  GROUP BY 1, 3, 4;
INSERT INTO stats_quarter (scope, dim, t, value, clicks, scans)
  SELECT -o.num, 0, e.at / 900000, '', sum(e.n), sum(e.n * e.scan) FROM click_events e JOIN links l ON l.seq = e.link_seq JOIN stats_owners o ON o.user_id = 'type:' || l.link_type
  GROUP BY 1, 3, 4;
INSERT INTO stats_hour (scope, dim, t, value, clicks, scans)
  SELECT -o.num, 0, e.at / 3600000, '', sum(e.n), sum(e.n * e.scan) FROM click_events e JOIN links l ON l.seq = e.link_seq JOIN stats_owners o ON o.user_id = 'type:' || l.link_type
  GROUP BY 1, 3, 4;
INSERT INTO stats_day (scope, dim, t, value, clicks, scans)
  SELECT -o.num, 0, e.at / 86400000, '', sum(e.n), sum(e.n * e.scan) FROM click_events e JOIN links l ON l.seq = e.link_seq JOIN stats_owners o ON o.user_id = 'type:' || l.link_type
  GROUP BY 1, 3, 4;
INSERT INTO stats_day (scope, dim, t, value, clicks, scans)
  SELECT -o.num, 1, e.at / 86400000, coalesce(e.country, ''), sum(e.n), sum(e.n * e.scan) FROM click_events e JOIN links l ON l.seq = e.link_seq JOIN stats_owners o ON o.user_id = 'type:' || l.link_type
  GROUP BY 1, 3, 4;
INSERT INTO stats_day (scope, dim, t, value, clicks, scans)
  SELECT -o.num, 2, e.at / 86400000, (CASE WHEN length(e.country) = 2 THEN e.country ELSE '--' END) || coalesce(e.region, ''), sum(e.n), sum(e.n * e.scan) FROM click_events e JOIN links l ON l.seq = e.link_seq JOIN stats_owners o ON o.user_id = 'type:' || l.link_type
  GROUP BY 1, 3, 4;
INSERT INTO stats_day (scope, dim, t, value, clicks, scans)
  SELECT -o.num, 3, e.at / 86400000, (CASE WHEN length(e.country) = 2 THEN e.country ELSE '--' END) || coalesce(e.region, '') || char(31) || coalesce(e.city, ''), sum(e.n), sum(e.n * e.scan) FROM click_events e JOIN links l ON l.seq = e.link_seq JOIN stats_owners o ON o.user_id = 'type:' || l.link_type
  GROUP BY 1, 3, 4;
INSERT INTO stats_day (scope, dim, t, value, clicks, scans)
  SELECT -o.num, 4, e.at / 86400000, coalesce(e.os, ''), sum(e.n), sum(e.n * e.scan) FROM click_events e JOIN links l ON l.seq = e.link_seq JOIN stats_owners o ON o.user_id = 'type:' || l.link_type
  GROUP BY 1, 3, 4;
INSERT INTO stats_day (scope, dim, t, value, clicks, scans)
  SELECT -o.num, 5, e.at / 86400000, coalesce(e.browser, ''), sum(e.n), sum(e.n * e.scan) FROM click_events e JOIN links l ON l.seq = e.link_seq JOIN stats_owners o ON o.user_id = 'type:' || l.link_type
  GROUP BY 1, 3, 4;
INSERT INTO stats_day (scope, dim, t, value, clicks, scans)
  SELECT -o.num, 6, e.at / 86400000, coalesce(e.device, ''), sum(e.n), sum(e.n * e.scan) FROM click_events e JOIN links l ON l.seq = e.link_seq JOIN stats_owners o ON o.user_id = 'type:' || l.link_type
  GROUP BY 1, 3, 4;
INSERT INTO stats_day (scope, dim, t, value, clicks, scans)
  SELECT -o.num, 7, e.at / 86400000, coalesce(e.referer, ''), sum(e.n), sum(e.n * e.scan) FROM click_events e JOIN links l ON l.seq = e.link_seq JOIN stats_owners o ON o.user_id = 'type:' || l.link_type
  GROUP BY 1, 3, 4;
INSERT INTO stats_day (scope, dim, t, value, clicks, scans)
  SELECT -o.num, 8, e.at / 86400000, coalesce(e.referer_url, ''), sum(e.n), sum(e.n * e.scan) FROM click_events e JOIN links l ON l.seq = e.link_seq JOIN stats_owners o ON o.user_id = 'type:' || l.link_type
  GROUP BY 1, 3, 4;
INSERT INTO stats_day (scope, dim, t, value, clicks, scans)
  SELECT -o.num, 9, e.at / 86400000, coalesce(e.utm_source, ''), sum(e.n), sum(e.n * e.scan) FROM click_events e JOIN links l ON l.seq = e.link_seq JOIN stats_owners o ON o.user_id = 'type:' || l.link_type
  GROUP BY 1, 3, 4;
INSERT INTO stats_day (scope, dim, t, value, clicks, scans)
  SELECT -o.num, 10, e.at / 86400000, coalesce(e.utm_medium, ''), sum(e.n), sum(e.n * e.scan) FROM click_events e JOIN links l ON l.seq = e.link_seq JOIN stats_owners o ON o.user_id = 'type:' || l.link_type
  GROUP BY 1, 3, 4;
INSERT INTO stats_day (scope, dim, t, value, clicks, scans)
  SELECT -o.num, 11, e.at / 86400000, coalesce(e.utm_campaign, ''), sum(e.n), sum(e.n * e.scan) FROM click_events e JOIN links l ON l.seq = e.link_seq JOIN stats_owners o ON o.user_id = 'type:' || l.link_type
  GROUP BY 1, 3, 4;
INSERT INTO stats_day (scope, dim, t, value, clicks, scans)
  SELECT -o.num, 12, e.at / 86400000, coalesce(e.utm_term, ''), sum(e.n), sum(e.n * e.scan) FROM click_events e JOIN links l ON l.seq = e.link_seq JOIN stats_owners o ON o.user_id = 'type:' || l.link_type
  GROUP BY 1, 3, 4;
INSERT INTO stats_day (scope, dim, t, value, clicks, scans)
  SELECT -o.num, 13, e.at / 86400000, coalesce(e.utm_content, ''), sum(e.n), sum(e.n * e.scan) FROM click_events e JOIN links l ON l.seq = e.link_seq JOIN stats_owners o ON o.user_id = 'type:' || l.link_type
  GROUP BY 1, 3, 4;
INSERT INTO stats_busy_links (seq) SELECT link_seq FROM click_events GROUP BY link_seq HAVING sum(n) >= 5000;
INSERT INTO stats_day (scope, dim, t, value, clicks, scans)
  SELECT e.link_seq, 1, e.at / 86400000, coalesce(e.country, ''), sum(e.n), sum(e.n * e.scan) FROM click_events e JOIN stats_busy_links b ON b.seq = e.link_seq
  GROUP BY 1, 3, 4;
INSERT INTO stats_day (scope, dim, t, value, clicks, scans)
  SELECT e.link_seq, 2, e.at / 86400000, (CASE WHEN length(e.country) = 2 THEN e.country ELSE '--' END) || coalesce(e.region, ''), sum(e.n), sum(e.n * e.scan) FROM click_events e JOIN stats_busy_links b ON b.seq = e.link_seq
  GROUP BY 1, 3, 4;
INSERT INTO stats_day (scope, dim, t, value, clicks, scans)
  SELECT e.link_seq, 3, e.at / 86400000, (CASE WHEN length(e.country) = 2 THEN e.country ELSE '--' END) || coalesce(e.region, '') || char(31) || coalesce(e.city, ''), sum(e.n), sum(e.n * e.scan) FROM click_events e JOIN stats_busy_links b ON b.seq = e.link_seq
  GROUP BY 1, 3, 4;
INSERT INTO stats_day (scope, dim, t, value, clicks, scans)
  SELECT e.link_seq, 4, e.at / 86400000, coalesce(e.os, ''), sum(e.n), sum(e.n * e.scan) FROM click_events e JOIN stats_busy_links b ON b.seq = e.link_seq
  GROUP BY 1, 3, 4;
INSERT INTO stats_day (scope, dim, t, value, clicks, scans)
  SELECT e.link_seq, 5, e.at / 86400000, coalesce(e.browser, ''), sum(e.n), sum(e.n * e.scan) FROM click_events e JOIN stats_busy_links b ON b.seq = e.link_seq
  GROUP BY 1, 3, 4;
INSERT INTO stats_day (scope, dim, t, value, clicks, scans)
  SELECT e.link_seq, 6, e.at / 86400000, coalesce(e.device, ''), sum(e.n), sum(e.n * e.scan) FROM click_events e JOIN stats_busy_links b ON b.seq = e.link_seq
  GROUP BY 1, 3, 4;
INSERT INTO stats_day (scope, dim, t, value, clicks, scans)
  SELECT e.link_seq, 7, e.at / 86400000, coalesce(e.referer, ''), sum(e.n), sum(e.n * e.scan) FROM click_events e JOIN stats_busy_links b ON b.seq = e.link_seq
  GROUP BY 1, 3, 4;
INSERT INTO stats_day (scope, dim, t, value, clicks, scans)
  SELECT e.link_seq, 8, e.at / 86400000, coalesce(e.referer_url, ''), sum(e.n), sum(e.n * e.scan) FROM click_events e JOIN stats_busy_links b ON b.seq = e.link_seq
  GROUP BY 1, 3, 4;
INSERT INTO stats_day (scope, dim, t, value, clicks, scans)
  SELECT e.link_seq, 9, e.at / 86400000, coalesce(e.utm_source, ''), sum(e.n), sum(e.n * e.scan) FROM click_events e JOIN stats_busy_links b ON b.seq = e.link_seq
  GROUP BY 1, 3, 4;
INSERT INTO stats_day (scope, dim, t, value, clicks, scans)
  SELECT e.link_seq, 10, e.at / 86400000, coalesce(e.utm_medium, ''), sum(e.n), sum(e.n * e.scan) FROM click_events e JOIN stats_busy_links b ON b.seq = e.link_seq
  GROUP BY 1, 3, 4;
INSERT INTO stats_day (scope, dim, t, value, clicks, scans)
  SELECT e.link_seq, 11, e.at / 86400000, coalesce(e.utm_campaign, ''), sum(e.n), sum(e.n * e.scan) FROM click_events e JOIN stats_busy_links b ON b.seq = e.link_seq
  GROUP BY 1, 3, 4;
INSERT INTO stats_day (scope, dim, t, value, clicks, scans)
  SELECT e.link_seq, 12, e.at / 86400000, coalesce(e.utm_term, ''), sum(e.n), sum(e.n * e.scan) FROM click_events e JOIN stats_busy_links b ON b.seq = e.link_seq
  GROUP BY 1, 3, 4;
INSERT INTO stats_day (scope, dim, t, value, clicks, scans)
  SELECT e.link_seq, 13, e.at / 86400000, coalesce(e.utm_content, ''), sum(e.n), sum(e.n * e.scan) FROM click_events e JOIN stats_busy_links b ON b.seq = e.link_seq
  GROUP BY 1, 3, 4;
`,
}
