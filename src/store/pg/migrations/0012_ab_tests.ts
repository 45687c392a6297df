import { DIMENSIONS } from './0009_compact_click_events'
import type { PgMigration } from './index'

const strings = DIMENSIONS.map((c, i) => `v${i}.value AS ${c}`).join(', ')
const stringJoins = DIMENSIONS.map((c, i) => `LEFT JOIN stats_values v${i} ON v${i}.id = c.${c}`).join('\n  ')

/**
 * A/B tests, as SQLite migration 0017 (read its notes), plus the variant of each click event
 * (`click_events_compact.variant`, the index in the link's `testVariants`; null outside a test).
 * The `click_events` view of migration 0009 is made again with the variant as its last column.
 * `click_events_load` (migrate-store) is left as it was: a store moved to PostgreSQL keeps its
 * events without their variants (SQLite has none; DuckDB's copy source reads named columns).
 */
export const abTests: PgMigration = {
  id: 12,
  name: '0012_ab_tests',
  sql: `
ALTER TABLE click_events_compact ADD COLUMN variant smallint;
DROP VIEW click_events;
CREATE VIEW click_events AS
  SELECT c.link_seq, c.at, c.scan, ${strings}, c.n, c.variant
  FROM click_events_compact c
  ${stringJoins};
CREATE TABLE link_tests (
  link_seq bigint NOT NULL REFERENCES links(seq) ON DELETE CASCADE,
  started_at bigint NOT NULL,
  status text NOT NULL CHECK (status IN ('completed', 'inconclusive')),
  winner integer,
  p_value double precision,
  variants text NOT NULL,
  judged_at bigint NOT NULL,
  PRIMARY KEY (link_seq, started_at)
);
CREATE INDEX links_test_ends ON links ((options::jsonb ->> 'testCompletedAt')) WHERE deleted_at IS NULL AND (options::jsonb ? 'testCompletedAt');
`,
}
