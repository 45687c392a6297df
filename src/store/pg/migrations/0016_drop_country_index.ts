import type { PgMigration } from './index'

/**
 * Drops `click_events_country_at` (0009): every click paid for it at ingest (~60 ms of a
 * 50,000-visit batch, the recorder's bound on PostgreSQL) while the questions it served are
 * answered in time without it: a country filter with an event dimension grouped reads the
 * pair rollups, and over all links the (link_seq, at) index, which includes the country
 * (the slowest, all links by link in DE over 30 days, 60 → 213 ms at 10M clicks; src/stats/STORAGE.md).
 */
export const dropCountryIndex: PgMigration = {
  id: 16,
  name: '0016_drop_country_index',
  sql: `DROP INDEX IF EXISTS click_events_country_at;`,
}
