import type { PgMigration } from './index'

/** Imports and the click totals other services reported (SQLite migration 0013, which says why). */
export const imports: PgMigration = {
  id: 5,
  name: '0005_imports',
  sql: `
CREATE TABLE imports (
  id text PRIMARY KEY,
  user_id text NOT NULL REFERENCES users(id),
  source text NOT NULL,
  status text NOT NULL CHECK (status IN ('running', 'done', 'failed')),
  dry_run smallint NOT NULL,
  file_name text,
  domain text,
  runner text,
  total bigint NOT NULL DEFAULT 0,
  created bigint NOT NULL DEFAULT 0,
  updated bigint NOT NULL DEFAULT 0,
  skipped bigint NOT NULL DEFAULT 0,
  failed bigint NOT NULL DEFAULT 0,
  errors text NOT NULL DEFAULT '[]',
  created_at bigint NOT NULL,
  updated_at bigint NOT NULL,
  finished_at bigint
);
CREATE INDEX imports_user ON imports (user_id, created_at);
CREATE INDEX imports_running ON imports (updated_at) WHERE status = 'running';
ALTER TABLE links ADD COLUMN imported_clicks bigint NOT NULL DEFAULT 0;
`,
}
