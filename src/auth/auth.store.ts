import type { Store } from '../store/db'

export type Role = 'admin' | 'member' | 'readonly'
export const ROLES: Role[] = ['admin', 'member', 'readonly']

export interface KeyRow {
  id: string
  userId: string
  role: Role
  revokedAt: number | null
}

export function createAuthStore(db: Store) {
  const findKey = db.query<KeyRow, [string]>(
    'SELECT id, user_id AS userId, role, revoked_at AS revokedAt FROM api_keys WHERE key_hash = ?',
  )
  const insertKey = db.query(
    'INSERT INTO api_keys (id, user_id, role, key_hash, key_prefix, created_at) VALUES (?, ?, ?, ?, ?, ?)',
  )
  const insertUser = db.query('INSERT INTO users (id, created_at) VALUES (?, ?) ON CONFLICT(id) DO NOTHING')
  const userExists = db.query<{ one: number }, [string]>('SELECT 1 AS one FROM users WHERE id = ?')
  const countKeys = db.query<{ n: number }, []>('SELECT count(*) AS n FROM api_keys WHERE revoked_at IS NULL')
  return {
    findKeyByHash: (hash: string) => findKey.get(hash),
    insertKey: (id: string, userId: string, role: Role, hash: string, prefix: string) =>
      insertKey.run(id, userId, role, hash, prefix, Date.now()),
    /** Returns true when the user was new. */
    addUser: (id: string) => insertUser.run(id, Date.now()).changes > 0,
    userExists: (id: string) => userExists.get(id) !== null,
    activeKeyCount: () => countKeys.get()!.n,
  }
}
export type AuthStore = ReturnType<typeof createAuthStore>
