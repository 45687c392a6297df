/**
 * The auth store on PostgreSQL (docs/adr/0010): the SQLite store's methods and results, in
 * PostgreSQL's SQL against migration 0001. bigint columns are cast to float8 (epoch ms fit
 * exactly) and counts to int, because Bun.SQL returns int8 as strings.
 *
 * SQLite moves `auth_epoch` with triggers, by one per changed row. Here the `auth` row of
 * `cache_epochs` moves by the same amount in the statement that makes the change (a
 * data-modifying CTE), so it commits or rolls back with it.
 */
import type { SQL } from 'bun'
import type { AuthStorePort, KeyAuthRow, KeyRow, NewKey, Role, UserChange, UserRow } from './auth.store'

const KEY_COLUMNS = `id, user_id AS "userId", role, (SELECT u.role FROM users u WHERE u.id = api_keys.user_id) AS "userRole", name, key_prefix AS prefix, created_at::float8 AS "createdAt",
  last_used_at::float8 AS "lastUsedAt", revoked_at::float8 AS "revokedAt"`
const USER_COLUMNS = `id, role, created_at::float8 AS "createdAt", disabled::int AS disabled,
  (password_hash IS NOT NULL)::int AS "hasPassword", deleted_at::float8 AS "deletedAt"`
/** The last CTE of a write: moves the auth epoch by the rows the CTE `changed` returned. */
const BUMP = `bump AS (UPDATE cache_epochs SET epoch = epoch + (SELECT count(*) FROM changed)
  WHERE channel = 'auth' AND EXISTS (SELECT 1 FROM changed))`

export function createPgAuthStore(sql: SQL): AuthStorePort {
  /** Runs a write whose CTE `changed` returns one row per changed row; returns how many. */
  async function changedRows(db: SQL, changed: string, params: unknown[]): Promise<number> {
    const [row] = await db.unsafe(`WITH changed AS (${changed} RETURNING 1), ${BUMP} SELECT count(*)::int AS n FROM changed`, params)
    return row.n as number
  }

  async function getUser(id: string): Promise<UserRow | null> {
    const [row] = await sql.unsafe(`SELECT ${USER_COLUMNS} FROM users WHERE id = $1`, [id])
    return (row as UserRow | undefined) ?? null
  }

  return {
    async findKeyByHash(hash: string): Promise<KeyAuthRow | null> {
      const [row] = await sql`
        SELECT k.id, k.user_id AS "userId", k.role, u.role AS "userRole", k.revoked_at::float8 AS "revokedAt", u.disabled::int AS "userDisabled",
          u.deleted_at::float8 AS "userDeletedAt"
        FROM api_keys k JOIN users u ON u.id = k.user_id WHERE k.key_hash = ${hash}`
      return (row as KeyAuthRow | undefined) ?? null
    },
    async getKey(id: string): Promise<KeyRow | null> {
      const [row] = await sql.unsafe(`SELECT ${KEY_COLUMNS} FROM api_keys WHERE id = $1`, [id])
      return (row as KeyRow | undefined) ?? null
    },
    async insertKey(key: NewKey): Promise<void> {
      await sql`INSERT INTO api_keys (id, user_id, role, key_hash, key_prefix, name, created_at)
        VALUES (${key.id}, ${key.userId}, ${key.role}, ${key.hash}, ${key.prefix}, ${key.name}, ${key.createdAt})`
    },
    revokeKey: async (id: string, at: number) =>
      (await changedRows(sql, 'UPDATE api_keys SET revoked_at = $1 WHERE id = $2 AND revoked_at IS NULL', [at, id])) > 0,
    async listKeys(q: { userIds?: string[]; includeRevoked: boolean; limit: number; offset: number }): Promise<{ keys: KeyRow[]; total: number }> {
      // The user filter travels as one JSON array (NULL for none), so the SQL stays one text.
      const where = `WHERE ($1::text IS NULL OR user_id IN (SELECT json_array_elements_text($1::text::json))) AND ($2 OR revoked_at IS NULL)`
      const args = [q.userIds ? JSON.stringify(q.userIds) : null, q.includeRevoked]
      const [count] = await sql.unsafe(`SELECT count(*)::int AS n FROM api_keys ${where}`, args)
      const keys = await sql.unsafe(`SELECT ${KEY_COLUMNS} FROM api_keys ${where} ORDER BY created_at DESC, id COLLATE "C" DESC LIMIT $3 OFFSET $4`, [
        ...args,
        q.limit,
        q.offset,
      ])
      return { keys: [...keys] as KeyRow[], total: count.n as number }
    },
    /** Writes last-use times gathered in memory, in one statement. */
    async touchKeys(uses: [string, number][]): Promise<void> {
      if (uses.length === 0) return
      await sql`
        UPDATE api_keys k SET last_used_at = greatest(coalesce(k.last_used_at, 0), u.at)
        FROM json_to_recordset(${JSON.stringify(uses.map(([id, at]) => ({ id, at })))}::text::json) AS u(id text, at bigint)
        WHERE k.id = u.id`
    },

    async addUser(id: string, role: Role = 'member'): Promise<boolean> {
      const rows = await sql`INSERT INTO users (id, role, created_at) VALUES (${id}, ${role}, ${Date.now()}) ON CONFLICT (id) DO NOTHING RETURNING 1`
      return rows.length > 0
    },
    getUser,
    userExists: async (id: string) => (await getUser(id)) !== null,
    async passwordHashOf(id: string): Promise<string | null> {
      const [row] = await sql`SELECT password_hash AS hash FROM users WHERE id = ${id}`
      return row?.hash ?? null
    },
    async listUsers(q: { limit: number; offset: number }): Promise<{ users: UserRow[]; total: number }> {
      const [count] = await sql`SELECT count(*)::int AS n FROM users WHERE deleted_at IS NULL`
      const users = await sql.unsafe(
        `SELECT ${USER_COLUMNS} FROM users WHERE deleted_at IS NULL ORDER BY created_at DESC, id COLLATE "C" DESC LIMIT $1 OFFSET $2`,
        [q.limit, q.offset],
      )
      return { users: [...users] as UserRow[], total: count.n as number }
    },
    async updateUser(id: string, change: UserChange): Promise<void> {
      const columns: [string, string | number | null][] = []
      if (change.role !== undefined) columns.push(['role', change.role])
      if (change.disabled !== undefined) columns.push(['disabled', change.disabled ? 1 : 0])
      if (change.passwordHash !== undefined) columns.push(['password_hash', change.passwordHash])
      if (columns.length === 0) return
      const set = columns.map(([c], i) => `${c} = $${i + 2}`).join(', ')
      await changedRows(sql, `UPDATE users SET ${set} WHERE id = $1`, [id, ...columns.map(([, v]) => v)])
    },
    /** Soft delete: the id stays taken; its keys are revoked and its dashboard sessions ended in the same transaction. */
    async deleteUser(id: string, at: number): Promise<void> {
      await sql.begin(async (tx) => {
        await changedRows(tx, 'UPDATE users SET deleted_at = $1, password_hash = NULL WHERE id = $2 AND deleted_at IS NULL', [at, id])
        await changedRows(tx, 'UPDATE api_keys SET revoked_at = $1 WHERE user_id = $2 AND revoked_at IS NULL', [at, id])
        await changedRows(tx, 'DELETE FROM sessions WHERE user_id = $1', [id])
      })
    },
    async activeKeyCount(): Promise<number> {
      const [row] = await sql`SELECT count(*)::int AS n FROM api_keys WHERE revoked_at IS NULL`
      return row.n
    },
    /** Moves on every change that can end a key's access (see above). */
    async authEpoch(): Promise<number> {
      const [row] = await sql`SELECT epoch::float8 AS epoch FROM cache_epochs WHERE channel = 'auth'`
      return row.epoch
    },
  }
}
