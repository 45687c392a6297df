import type { Migration } from './index'

/**
 * Imports (POST /imports, `shortlink import`): one row per import with its counts, moved while
 * it runs (`updated_at` is its heartbeat: a running import whose heartbeat stopped, or whose
 * `runner` (host:pid) is a process gone from this host, belongs to a process that died and is
 * marked failed), and the first row errors as JSON. `links.imported_clicks`
 * is the click total another service reported for a link, shown apart from `clicks` (visits
 * counted here), so statistics never see it.
 */
export const imports: Migration = {
  id: 13,
  name: '0013_imports',
  sql: `
CREATE TABLE imports (
  id TEXT PRIMARY KEY,
  user_id TEXT NOT NULL REFERENCES users(id),
  source TEXT NOT NULL,
  status TEXT NOT NULL CHECK (status IN ('running', 'done', 'failed')),
  dry_run INTEGER NOT NULL,
  file_name TEXT,
  domain TEXT,
  runner TEXT,
  total INTEGER NOT NULL DEFAULT 0,
  created INTEGER NOT NULL DEFAULT 0,
  updated INTEGER NOT NULL DEFAULT 0,
  skipped INTEGER NOT NULL DEFAULT 0,
  failed INTEGER NOT NULL DEFAULT 0,
  errors TEXT NOT NULL DEFAULT '[]',
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL,
  finished_at INTEGER
) WITHOUT ROWID;
CREATE INDEX imports_user ON imports (user_id, created_at);
CREATE INDEX imports_running ON imports (updated_at) WHERE status = 'running';
ALTER TABLE links ADD COLUMN imported_clicks INTEGER NOT NULL DEFAULT 0;
`,
}
