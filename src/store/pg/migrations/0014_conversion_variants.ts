import type { PgMigration } from './index'

/**
 * As SQLite migration 0019: the A/B variant of a tracked click (written with the click by every
 * node's click writer) and of each conversion (copied from its click), for the tests' conversions
 * per variant. It needs `tracked_clicks` and `conversions` (0013), so it comes after it, not in 0012.
 */
export const conversionVariants: PgMigration = {
  id: 14,
  name: '0014_conversion_variants',
  sql: `
ALTER TABLE tracked_clicks ADD COLUMN variant smallint;
ALTER TABLE conversions ADD COLUMN variant smallint;
CREATE INDEX conversions_link_variant ON conversions (link_seq, click_at) WHERE variant IS NOT NULL;
`,
}
