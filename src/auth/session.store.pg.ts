/**
 * Dashboard sessions on PostgreSQL (docs/adr/0010): the SQLite store's methods and results
 * against migration 0001. Every deleted session moves the `auth` row of `cache_epochs` by
 * one in the deleting statement, as SQLite's trigger moves `auth_epoch`.
 */
import type { SQL } from 'bun'
import { MAX_SESSIONS_PER_USER, type NewSession, type SessionAuthRow, type SessionStorePort } from './session.store'

/** Runs a DELETE (without RETURNING) that moves the auth epoch by the rows it removed; returns how many. */
async function deleteSessions(db: SQL, del: string, params: unknown[]): Promise<number> {
  const [row] = await db.unsafe(
    `WITH changed AS (${del} RETURNING 1),
     bump AS (UPDATE cache_epochs SET epoch = epoch + (SELECT count(*) FROM changed) WHERE channel = 'auth' AND EXISTS (SELECT 1 FROM changed))
     SELECT count(*)::int AS n FROM changed`,
    params,
  )
  return row.n as number
}

export function createPgSessionStore(sql: SQL): SessionStorePort {
  return {
    /** Adds a session and ends the user's oldest beyond MAX_SESSIONS_PER_USER; returns how many ended. */
    insert: (s: NewSession): Promise<number> =>
      sql.begin(async (tx) => {
        await tx`INSERT INTO sessions (id, user_id, key_id, config_key_hash, method, csrf_secret, created_at, last_seen_at, expires_at)
          VALUES (${s.id}, ${s.userId}, ${s.keyId}, ${s.configKeyHash}, ${s.method}, ${s.csrfSecret}, ${s.createdAt}, ${s.createdAt}, ${s.expiresAt})`
        return deleteSessions(
          tx,
          `DELETE FROM sessions WHERE user_id = $1 AND id NOT IN
             (SELECT id FROM sessions WHERE user_id = $1 ORDER BY created_at DESC, id COLLATE "C" DESC LIMIT $2)`,
          [s.userId, MAX_SESSIONS_PER_USER],
        )
      }),
    async find(id: string): Promise<SessionAuthRow | null> {
      const [row] = await sql`
        SELECT s.id, s.user_id AS "userId", s.key_id AS "keyId", s.config_key_hash AS "configKeyHash", s.method, s.csrf_secret AS "csrfSecret",
          s.created_at::float8 AS "createdAt", s.last_seen_at::float8 AS "lastSeenAt", s.expires_at::float8 AS "expiresAt",
          u.role AS "userRole", u.disabled::int AS "userDisabled", u.deleted_at::float8 AS "userDeletedAt",
          (u.password_hash IS NOT NULL)::int AS "userHasPassword", k.role AS "keyRole", k.revoked_at::float8 AS "keyRevokedAt"
        FROM sessions s JOIN users u ON u.id = s.user_id LEFT JOIN api_keys k ON k.id = s.key_id
        WHERE s.id = ${id}`
      return (row as SessionAuthRow | undefined) ?? null
    },
    async touch(id: string, at: number): Promise<void> {
      await sql`UPDATE sessions SET last_seen_at = greatest(last_seen_at, ${at}) WHERE id = ${id}`
    },
    /** Returns true when the session existed. */
    remove: async (id: string) => (await deleteSessions(sql, 'DELETE FROM sessions WHERE id = $1', [id])) > 0,
    /** Ends a user's password sessions but the one named by `keep` (a password change). */
    removePasswordSessions: (userId: string, keep: string | null) =>
      deleteSessions(sql, "DELETE FROM sessions WHERE user_id = $1 AND method = 'password' AND id <> $2", [userId, keep ?? '']),
    /** Ends sessions past their absolute end or idle since `idleBefore`. */
    removeExpired: (now: number, idleBefore: number) =>
      deleteSessions(sql, 'DELETE FROM sessions WHERE expires_at <= $1 OR last_seen_at <= $2', [now, idleBefore]),
  }
}
