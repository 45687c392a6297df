import type { Migration } from './index'

/**
 * Uploaded files. The bytes live in `<dataDir>/files/<sha256>`, shared by every row with
 * the same content; a row is only metadata. Deleted rows stay as tombstones (`deleted_at`)
 * so their id answers 410, and the blob goes when no live row names it any more.
 */
export const files: Migration = {
  id: 6,
  name: '0006_files',
  sql: `
CREATE TABLE files (
  id TEXT PRIMARY KEY,
  user_id TEXT NOT NULL REFERENCES users(id),
  name TEXT NOT NULL,
  name_key TEXT NOT NULL,
  sha256 TEXT NOT NULL,
  size INTEGER NOT NULL,
  mime_type TEXT NOT NULL,
  extension TEXT NOT NULL,
  archived INTEGER NOT NULL DEFAULT 0,
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL,
  deleted_at INTEGER
);
CREATE INDEX files_user_created ON files (user_id, created_at) WHERE deleted_at IS NULL;
CREATE INDEX files_created ON files (created_at) WHERE deleted_at IS NULL;
CREATE INDEX files_sha256 ON files (sha256) WHERE deleted_at IS NULL;
`,
}
