import type { Awaitable } from '../shared'
import type { Db } from '../store'
import type { Role } from './auth.store'

export type SessionMethod = 'password' | 'apiKey'

export interface NewSession {
  id: string
  userId: string
  keyId: string | null
  configKeyHash: string | null
  method: SessionMethod
  csrfSecret: string
  createdAt: number
  expiresAt: number
}

/** A session with what decides whether it still works: its user's state and its key's. */
export interface SessionAuthRow extends NewSession {
  lastSeenAt: number
  userRole: Role
  userDisabled: number
  userDeletedAt: number | null
  userHasPassword: number
  keyRole: Role | null
  keyRevokedAt: number | null
}

/** Sessions a user may hold at once; signing in again past it ends the oldest. */
export const MAX_SESSIONS_PER_USER = 50

export function createSessionStore(db: Db) {
  const insert = db.query(
    `INSERT INTO sessions (id, user_id, key_id, config_key_hash, method, csrf_secret, created_at, last_seen_at, expires_at)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
  )
  const find = db.query<SessionAuthRow, [string]>(
    `SELECT s.id, s.user_id AS userId, s.key_id AS keyId, s.config_key_hash AS configKeyHash, s.method, s.csrf_secret AS csrfSecret,
       s.created_at AS createdAt, s.last_seen_at AS lastSeenAt, s.expires_at AS expiresAt,
       u.role AS userRole, u.disabled AS userDisabled, u.deleted_at AS userDeletedAt, u.password_hash IS NOT NULL AS userHasPassword,
       k.role AS keyRole, k.revoked_at AS keyRevokedAt
     FROM sessions s JOIN users u ON u.id = s.user_id LEFT JOIN api_keys k ON k.id = s.key_id
     WHERE s.id = ?`,
  )
  const touch = db.query('UPDATE sessions SET last_seen_at = max(last_seen_at, ?) WHERE id = ?')
  const remove = db.query('DELETE FROM sessions WHERE id = ?')
  const removePasswordSessions = db.query("DELETE FROM sessions WHERE user_id = ? AND method = 'password' AND id <> ?")
  const removeExpired = db.query('DELETE FROM sessions WHERE expires_at <= ? OR last_seen_at <= ?')
  const removeOldest = db.query(
    'DELETE FROM sessions WHERE user_id = ?1 AND id NOT IN (SELECT id FROM sessions WHERE user_id = ?1 ORDER BY created_at DESC, id DESC LIMIT ?2)',
  )

  return {
    /** Adds a session and ends the user's oldest beyond MAX_SESSIONS_PER_USER; returns how many ended. */
    insert: db.transaction((s: NewSession): number => {
      insert.run(s.id, s.userId, s.keyId, s.configKeyHash, s.method, s.csrfSecret, s.createdAt, s.createdAt, s.expiresAt)
      return removeOldest.run(s.userId, MAX_SESSIONS_PER_USER).changes
    }),
    find: (id: string) => find.get(id),
    touch: (id: string, at: number): void => {
      touch.run(at, id)
    },
    /** Returns true when the session existed. */
    remove: (id: string) => remove.run(id).changes > 0,
    /** Ends a user's password sessions but the one named by `keep` (a password change). */
    removePasswordSessions: (userId: string, keep: string | null) => removePasswordSessions.run(userId, keep ?? '').changes,
    /** Ends sessions past their absolute end or idle since `idleBefore`. */
    removeExpired: (now: number, idleBefore: number) => removeExpired.run(now, idleBefore).changes,
  }
}
export type SessionStore = ReturnType<typeof createSessionStore>
/** What the session service needs of a store: the SQLite one above, or PostgreSQL's (session.store.pg.ts). */
export type SessionStorePort = Awaitable<SessionStore>
