import type { PgMigration } from './index'

/**
 * A/B tests, as SQLite migration 0017 (read its notes), plus the variant of each click event
 * (`click_events.variant`, the index in the link's `testVariants`; null outside a test).
 */
export const abTests: PgMigration = {
  id: 9,
  name: '0009_ab_tests',
  sql: `
ALTER TABLE click_events ADD COLUMN variant smallint;
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
