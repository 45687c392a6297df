import type { Migration } from './index'

/**
 * Users and keys managed through the API. Users gain a role (for dashboard password
 * sign-in), an argon2id password hash, a disabled flag and a soft delete (ids are never
 * reused; links and files keep naming their owner). Keys gain a name and lastUsedAt.
 *
 * `auth_epoch` is one counter that moves on every change that can end a key's access,
 * bumped by triggers so that a change from any process (the CLI, or SQL typed by hand)
 * is seen: each server compares it a few times a second and drops its key cache when it
 * moved. `last_used_at` is not among the watched columns (it is written once a minute).
 */
export const usersKeys: Migration = {
  id: 9,
  name: '0009_users_keys',
  sql: `
ALTER TABLE users ADD COLUMN role TEXT NOT NULL DEFAULT 'member' CHECK (role IN ('admin', 'member', 'readonly'));
ALTER TABLE users ADD COLUMN password_hash TEXT;
ALTER TABLE users ADD COLUMN disabled INTEGER NOT NULL DEFAULT 0;
ALTER TABLE users ADD COLUMN deleted_at INTEGER;
UPDATE users SET role = 'admin' WHERE id = 'usr_admin';
CREATE INDEX users_created ON users (created_at, id) WHERE deleted_at IS NULL;

ALTER TABLE api_keys ADD COLUMN name TEXT;
ALTER TABLE api_keys ADD COLUMN last_used_at INTEGER;
CREATE INDEX api_keys_user ON api_keys (user_id, created_at);
CREATE INDEX api_keys_created ON api_keys (created_at, id);

CREATE TABLE auth_epoch (
  id INTEGER PRIMARY KEY CHECK (id = 1),
  epoch INTEGER NOT NULL
);
INSERT INTO auth_epoch (id, epoch) VALUES (1, 0);
CREATE TRIGGER api_keys_changed AFTER UPDATE OF user_id, role, key_hash, revoked_at ON api_keys
BEGIN UPDATE auth_epoch SET epoch = epoch + 1 WHERE id = 1; END;
CREATE TRIGGER api_keys_deleted AFTER DELETE ON api_keys
BEGIN UPDATE auth_epoch SET epoch = epoch + 1 WHERE id = 1; END;
CREATE TRIGGER users_changed AFTER UPDATE OF role, password_hash, disabled, deleted_at ON users
BEGIN UPDATE auth_epoch SET epoch = epoch + 1 WHERE id = 1; END;
CREATE TRIGGER users_deleted AFTER DELETE ON users
BEGIN UPDATE auth_epoch SET epoch = epoch + 1 WHERE id = 1; END;
`,
}
