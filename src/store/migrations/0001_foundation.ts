import type { Migration } from './index'

export const foundation: Migration = {
  id: 1,
  name: '0001_foundation',
  sql: `
CREATE TABLE users (
  id TEXT PRIMARY KEY,
  created_at INTEGER NOT NULL
);
CREATE TABLE api_keys (
  id TEXT PRIMARY KEY,
  user_id TEXT NOT NULL REFERENCES users(id),
  role TEXT NOT NULL CHECK (role IN ('admin', 'member', 'readonly')),
  key_hash TEXT NOT NULL UNIQUE,
  key_prefix TEXT NOT NULL,
  created_at INTEGER NOT NULL,
  revoked_at INTEGER
);
CREATE TABLE tags (
  id TEXT PRIMARY KEY,
  user_id TEXT NOT NULL REFERENCES users(id),
  name TEXT NOT NULL,
  name_key TEXT NOT NULL,
  color TEXT NOT NULL,
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL
);
CREATE UNIQUE INDEX tags_user_name ON tags (user_id, name_key);
CREATE INDEX tags_user_created ON tags (user_id, created_at);
CREATE TABLE acme_challenges (
  token TEXT PRIMARY KEY,
  key_authorization TEXT NOT NULL,
  created_at INTEGER NOT NULL
);
`,
}
