import type { Migration } from './index'

/**
 * Dashboard sessions, kept server-side. The cookie holds a random token; the row's id is
 * its SHA-256 (a copy of the table does not sign anyone in). A session opened with an API
 * key names the key (`key_id`) and lives only while the key does; one opened with the
 * config file's adminKey, which is not a stored key, keeps that key's hash instead.
 * `expires_at` is the absolute end; idleness is measured from `last_seen_at`, written at
 * most once a minute and therefore not watched by the epoch.
 *
 * Deleting a session (sign-out, a password change, expiry) bumps `auth_epoch` (0009) so
 * other processes drop the session from their caches.
 */
export const sessions: Migration = {
  id: 12,
  name: '0012_sessions',
  sql: `
CREATE TABLE sessions (
  id TEXT PRIMARY KEY,
  user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
  key_id TEXT REFERENCES api_keys(id) ON DELETE CASCADE,
  config_key_hash TEXT,
  method TEXT NOT NULL CHECK (method IN ('password', 'apiKey')),
  csrf_secret TEXT NOT NULL,
  created_at INTEGER NOT NULL,
  last_seen_at INTEGER NOT NULL,
  expires_at INTEGER NOT NULL,
  CHECK (CASE method WHEN 'password' THEN key_id IS NULL AND config_key_hash IS NULL ELSE (key_id IS NULL) <> (config_key_hash IS NULL) END)
) WITHOUT ROWID;
CREATE INDEX sessions_user ON sessions (user_id, created_at);
CREATE INDEX sessions_key ON sessions (key_id) WHERE key_id IS NOT NULL;
CREATE INDEX sessions_expires ON sessions (expires_at);
CREATE INDEX sessions_last_seen ON sessions (last_seen_at);
CREATE TRIGGER sessions_deleted AFTER DELETE ON sessions
BEGIN UPDATE auth_epoch SET epoch = epoch + 1 WHERE id = 1; END;
`,
}
