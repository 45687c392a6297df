import type { PgMigration } from './index'

/**
 * Each link's `clicks` and `last_clicked` in a narrow table of their own, `link_clicks`, rather
 * than in `links`. The click writer bumps them for every link of every batch (each node, each
 * second): an UPDATE of a `links` row rewrote its stored generated `search_text`, and, the columns
 * being indexed, added a new entry to each of the table's 17 indexes, the trigram GIN among them
 * (2,000 links: ~1 s under load, against ~90 ms for the same update of a narrow table,
 * src/stats/STORAGE.md). `link_clicks` has no index but its key, so the update is HOT, and the
 * links table no longer fills with dead versions of its rows. Lists sorted by clicks or last
 * click sort the matching links (their six sort indexes go; SQLite keeps its own layout).
 */
export const linkClicks: PgMigration = {
  id: 10,
  name: '0010_link_clicks',
  sql: `
CREATE TABLE link_clicks (
  seq bigint PRIMARY KEY,
  clicks bigint NOT NULL,
  last_clicked bigint
);
INSERT INTO link_clicks (seq, clicks, last_clicked) SELECT seq, clicks, last_clicked FROM links WHERE clicks <> 0 OR last_clicked IS NOT NULL;
DROP INDEX links_clicks, links_user_clicks, links_last, links_user_last, links_last_asc, links_user_last_asc;
ALTER TABLE links DROP COLUMN clicks, DROP COLUMN last_clicked;
ANALYZE link_clicks;
`,
}
