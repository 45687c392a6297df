import type { Migration } from './index'

/**
 * A/B tests (contract: "A/B tests"; src/ab-tests). A test is in the link's options
 * (`testVariants`, `testCompletedAt`, `testGoal`, and `testStartedAt`: when its variants were
 * set). `link_tests` holds verdicts: one per test (link and start), the key that makes it once.
 * `links_test_ends` finds the tests whose end has come without a scan of every link.
 * The click events' variant column is in the events engine (DuckDB), not here.
 */
export const abTests: Migration = {
  id: 17,
  name: '0017_ab_tests',
  sql: `
CREATE TABLE link_tests (
  link_seq INTEGER NOT NULL REFERENCES links(seq) ON DELETE CASCADE,
  started_at INTEGER NOT NULL,
  status TEXT NOT NULL CHECK (status IN ('completed', 'inconclusive')),
  winner INTEGER,
  p_value REAL,
  variants TEXT NOT NULL,
  judged_at INTEGER NOT NULL,
  PRIMARY KEY (link_seq, started_at)
) WITHOUT ROWID;
CREATE INDEX links_test_ends ON links (json_extract(options, '$.testCompletedAt')) WHERE json_extract(options, '$.testCompletedAt') IS NOT NULL;
`,
}
