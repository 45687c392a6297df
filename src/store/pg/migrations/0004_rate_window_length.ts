import type { PgMigration } from './index'

/**
 * Each rate window row carries its length, so a sweep of ended windows deletes each by its own
 * length. Before, a node swept by the longest window it had counted itself: one that only saw
 * the API's one-minute windows deleted the sign-in and link-password windows (15 minutes) of
 * every node two minutes into them, and their budgets started again. Rows from before this
 * (length 0) are swept as ended.
 */
export const rateWindowLength: PgMigration = {
  id: 4,
  name: '0004_rate_window_length',
  sql: 'ALTER TABLE rate_windows ADD COLUMN window_ms bigint NOT NULL DEFAULT 0;',
}
