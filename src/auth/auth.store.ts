import type { Awaitable } from '../shared'
import type { Db } from '../store'

export type Role = 'admin' | 'member' | 'readonly'
export const ROLES: Role[] = ['admin', 'member', 'readonly']

const RANK: Record<Role, number> = { readonly: 0, member: 1, admin: 2 }
/** Whether role `a` grants more than role `b`. */
export const isAbove = (a: Role, b: Role): boolean => RANK[a] > RANK[b]
/** The lower of two roles: what a key or session acts with (its own role, capped by its user's current one). */
export const lowerRole = (a: Role, b: Role): Role => (RANK[a] <= RANK[b] ? a : b)

/** What authentication needs of a key: the key and the state of its user. */
export interface KeyAuthRow {
  id: string
  userId: string
  role: Role
  /** The user's current role: the key acts with the lower of the two. */
  userRole: Role
  revokedAt: number | null
  userDisabled: number
  userDeletedAt: number | null
}

export interface KeyRow {
  id: string
  userId: string
  role: Role
  /** The user's current role (the key acts with the lower of the two). */
  userRole: Role
  name: string | null
  prefix: string
  createdAt: number
  lastUsedAt: number | null
  revokedAt: number | null
}

export interface UserRow {
  id: string
  role: Role
  createdAt: number
  disabled: number
  hasPassword: number
  deletedAt: number | null
}

export interface NewKey {
  id: string
  userId: string
  role: Role
  hash: string
  prefix: string
  name: string | null
  createdAt: number
}

export interface UserChange {
  role?: Role
  disabled?: boolean
  passwordHash?: string | null
}

const KEY_COLUMNS = `id, user_id AS userId, role, (SELECT u.role FROM users u WHERE u.id = api_keys.user_id) AS userRole, name,
  key_prefix AS prefix, created_at AS createdAt, last_used_at AS lastUsedAt, revoked_at AS revokedAt`
const USER_COLUMNS = `id, role, created_at AS createdAt, disabled, password_hash IS NOT NULL AS hasPassword, deleted_at AS deletedAt`

export function createAuthStore(db: Db) {
  const findKey = db.query<KeyAuthRow, [string]>(
    `SELECT k.id, k.user_id AS userId, k.role, u.role AS userRole, k.revoked_at AS revokedAt, u.disabled AS userDisabled, u.deleted_at AS userDeletedAt
     FROM api_keys k JOIN users u ON u.id = k.user_id WHERE k.key_hash = ?`,
  )
  const getKey = db.query<KeyRow, [string]>(`SELECT ${KEY_COLUMNS} FROM api_keys WHERE id = ?`)
  const insertKey = db.query('INSERT INTO api_keys (id, user_id, role, key_hash, key_prefix, name, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)')
  const revokeKey = db.query('UPDATE api_keys SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL')
  const revokeUserKeys = db.query('UPDATE api_keys SET revoked_at = ? WHERE user_id = ? AND revoked_at IS NULL')
  const touchKey = db.query('UPDATE api_keys SET last_used_at = max(coalesce(last_used_at, 0), ?) WHERE id = ?')
  const insertUser = db.query('INSERT INTO users (id, role, created_at) VALUES (?, ?, ?) ON CONFLICT(id) DO NOTHING')
  const getUser = db.query<UserRow, [string]>(`SELECT ${USER_COLUMNS} FROM users WHERE id = ?`)
  const passwordHash = db.query<{ hash: string | null }, [string]>('SELECT password_hash AS hash FROM users WHERE id = ?')
  const countKeys = db.query<{ n: number }, []>('SELECT count(*) AS n FROM api_keys WHERE revoked_at IS NULL')
  const epoch = db.query<{ epoch: number }, []>('SELECT epoch FROM auth_epoch WHERE id = 1')

  return {
    findKeyByHash: (hash: string) => findKey.get(hash),
    getKey: (id: string) => getKey.get(id),
    insertKey: (key: NewKey): void => {
      insertKey.run(key.id, key.userId, key.role, key.hash, key.prefix, key.name, key.createdAt)
    },
    /** Returns true when the key was active until now. */
    revokeKey: (id: string, at: number) => revokeKey.run(at, id).changes > 0,
    listKeys(q: { userIds?: string[]; includeRevoked: boolean; limit: number; offset: number }): { keys: KeyRow[]; total: number } {
      const where: string[] = []
      const args: (string | number)[] = []
      if (q.userIds) {
        where.push(`user_id IN (${q.userIds.map(() => '?').join(', ')})`)
        args.push(...q.userIds)
      }
      if (!q.includeRevoked) where.push('revoked_at IS NULL')
      const clause = where.length ? `WHERE ${where.join(' AND ')}` : ''
      const total = db.query<{ n: number }, (string | number)[]>(`SELECT count(*) AS n FROM api_keys ${clause}`).get(...args)!.n
      const keys = db
        .query<KeyRow, (string | number)[]>(`SELECT ${KEY_COLUMNS} FROM api_keys ${clause} ORDER BY created_at DESC, id DESC LIMIT ? OFFSET ?`)
        .all(...args, q.limit, q.offset)
      return { keys, total }
    },
    /** Writes last-use times gathered in memory, in one transaction. */
    touchKeys: db.transaction((uses: [string, number][]) => {
      for (const [id, at] of uses) touchKey.run(at, id)
    }),

    /** Returns true when the user was new. */
    addUser: (id: string, role: Role = 'member') => insertUser.run(id, role, Date.now()).changes > 0,
    getUser: (id: string) => getUser.get(id),
    userExists: (id: string) => getUser.get(id) !== null,
    /** The argon2id hash of a user's dashboard password; null when the user has none or does not exist. */
    passwordHashOf: (id: string) => passwordHash.get(id)?.hash ?? null,
    listUsers(q: { limit: number; offset: number }): { users: UserRow[]; total: number } {
      const total = db.query<{ n: number }, []>('SELECT count(*) AS n FROM users WHERE deleted_at IS NULL').get()!.n
      const users = db
        .query<UserRow, [number, number]>(`SELECT ${USER_COLUMNS} FROM users WHERE deleted_at IS NULL ORDER BY created_at DESC, id DESC LIMIT ? OFFSET ?`)
        .all(q.limit, q.offset)
      return { users, total }
    },
    updateUser(id: string, change: UserChange): void {
      const columns: [string, string | number | null][] = []
      if (change.role !== undefined) columns.push(['role', change.role])
      if (change.disabled !== undefined) columns.push(['disabled', change.disabled ? 1 : 0])
      if (change.passwordHash !== undefined) columns.push(['password_hash', change.passwordHash])
      if (columns.length === 0) return
      db.query(`UPDATE users SET ${columns.map(([c]) => `${c} = ?`).join(', ')} WHERE id = ?`).run(...columns.map(([, v]) => v), id)
    },
    /** Soft delete: the id stays taken; its keys are revoked and its dashboard sessions ended in the same transaction. */
    deleteUser: db.transaction((id: string, at: number) => {
      db.query('UPDATE users SET deleted_at = ?, password_hash = NULL WHERE id = ? AND deleted_at IS NULL').run(at, id)
      revokeUserKeys.run(at, id)
      db.query('DELETE FROM sessions WHERE user_id = ?').run(id)
    }),
    activeKeyCount: () => countKeys.get()!.n,
    /** Moves on every change that can end a key's access (triggers in migration 0009). */
    authEpoch: () => epoch.get()!.epoch,
  }
}
export type AuthStore = ReturnType<typeof createAuthStore>
/** What the auth services need of a store: the SQLite one above, or PostgreSQL's (auth.store.pg.ts). */
export type AuthStorePort = Awaitable<AuthStore>
