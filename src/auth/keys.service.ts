/**
 * API keys through the API: admins manage every key, members their own (and only
 * member or readonly ones), readonly keys may list their own. Revoking drops this
 * process's key cache at once; other processes see the store's auth epoch move.
 *
 * A key acts with the lower of its own role and its user's current role, so no key is
 * minted above either: above the caller's own (effective) role is the caller's lack of
 * a right (403); above the target user's role is a value that breaks a rule (422).
 * Listings show the role a key acts with now, and the one it was made with.
 */
import { AppError, forbidden, pageWindow, parameterError, toIso } from '../shared'
import { type AuthService, type Caller, normalizeUserId } from './auth.service'
import { type AuthStorePort, isAbove, type KeyRow, lowerRole, type Role } from './auth.store'

export interface KeyRecord {
  id: string
  userId: string
  /** What it acts with now: the lower of `grantedRole` and its user's current role. */
  role: Role
  /** The role it was created with; it acts with it again if its user regains that role. */
  grantedRole: Role
  name: string | null
  createdAt: string
  lastUsedAt: string | null
  prefix: string
  revokedAt: string | null
}

export function createKeyService(store: AuthStorePort, auth: AuthService<AuthStorePort>) {
  function toRecord(k: KeyRow): KeyRecord {
    const pending = auth.pendingLastUsed(k.id)
    const lastUsed = pending !== undefined && pending > (k.lastUsedAt ?? 0) ? pending : k.lastUsedAt
    return {
      id: k.id,
      userId: k.userId,
      role: lowerRole(k.role, k.userRole),
      grantedRole: k.role,
      name: k.name,
      createdAt: toIso(k.createdAt)!,
      lastUsedAt: toIso(lastUsed),
      prefix: k.prefix,
      revokedAt: toIso(k.revokedAt),
    }
  }

  return {
    async create(caller: Caller, input: { userId: string; role: Role; name?: string }) {
      const userId = normalizeUserId(input.userId)
      if (caller.role !== 'admin') {
        if (userId !== caller.userId) throw forbidden(`members create keys only for themselves (${caller.userId}), not ${userId}`)
        if (input.role === 'admin') throw forbidden('members create only member or readonly keys')
      }
      if (isAbove(input.role, caller.role)) throw forbidden(`'role' ${input.role} is above the role you act with (${caller.role})`)
      const check = (user: { role: Role; deletedAt: number | null }) => {
        if (user.deletedAt !== null) throw parameterError(`'userId' user ${userId} was deleted; user ids are never reused`)
        if (isAbove(input.role, user.role))
          throw parameterError(
            `'role' ${input.role} is above the role of user ${userId} (${user.role}): a key acts with the lower of the two; change the user's role first (PATCH /users/${userId})`,
          )
      }
      const user = await store.getUser(userId)
      if (user) check(user)
      // A user made here gets the key's role, so the key acts with the role asked for; one made meanwhile is checked.
      else if (!(await store.addUser(userId, input.role))) check((await store.getUser(userId))!)
      const made = await auth.issueKey(userId, input.role, input.name ?? null)
      return { id: made.id, key: made.key, userId, role: made.role, name: made.name, createdAt: toIso(made.createdAt)! }
    },

    async list(caller: Caller, q: { userIds?: string[]; includeRevoked?: boolean; page?: number; pageSize?: number }) {
      let userIds = q.userIds?.map(normalizeUserId)
      if (caller.role !== 'admin') {
        const other = userIds?.find((u) => u !== caller.userId)
        if (other) throw forbidden(`members list only their own keys, not ${other}'s`)
        userIds = [caller.userId]
      }
      const { limit, offset } = pageWindow(q.page, q.pageSize)
      const { keys, total } = await store.listKeys({ userIds, includeRevoked: q.includeRevoked ?? false, limit, offset })
      return { keys: keys.map(toRecord), total }
    },

    async revoke(caller: Caller, id: string): Promise<{ id: string }> {
      const key = await store.getKey(id)
      if (!key) throw new AppError('not_found', `key ${id} not found`)
      if (caller.role !== 'admin' && key.userId !== caller.userId) throw forbidden(`key ${id} belongs to another user`)
      if (!(await store.revokeKey(id, Date.now()))) throw new AppError('record_gone', `key ${id} was already revoked`)
      await auth.invalidate()
      return { id }
    },
  }
}
export type KeyService = ReturnType<typeof createKeyService>
