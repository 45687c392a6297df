import type { Migration } from './index'

/**
 * The table numbering rollup groups was named for the first kind of group, link owners;
 * since 0008 it also holds link types (`type:<linkType>`). Renamed for what it holds:
 * `stats_groups (num, name)`, a name being an owner's user id or `type:<linkType>`. The
 * numbers, and so every rollup row's scope, stay as they are. (The UNIQUE index on the
 * name is SQLite's own and follows the table.)
 */
export const statsGroups: Migration = {
  id: 10,
  name: '0010_stats_groups',
  sql: `
ALTER TABLE stats_owners RENAME TO stats_groups;
ALTER TABLE stats_groups RENAME COLUMN user_id TO name;
`,
}
