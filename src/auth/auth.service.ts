/**
 * API keys: random, shown once, stored as SHA-256 hashes. Keys carry ~190 bits of
 * entropy, so a fast hash is enough (a slow password hash would cost every request).
 */
import { randomBytes, createHash } from 'node:crypto'
import { AppError, parameterError } from '../shared/errors'
import { newId } from '../shared/ids'
import type { AuthStore, Role } from './auth.store'
import { ROLES } from './auth.store'

export interface Caller {
  userId: string
  role: Role
  keyId: string
}

export const ADMIN_USER_ID = 'usr_admin'
const USER_ID_PATTERN = /^[A-Za-z0-9_-]{1,64}$/

export function hashKey(key: string): string {
  return createHash('sha256').update(key).digest('hex')
}

export function generateKey(): string {
  return `sk_${randomBytes(24).toString('base64url')}`
}

/** `alice` and `usr_alice` name the same user; ids always carry the prefix. */
export function normalizeUserId(id: string): string {
  if (!USER_ID_PATTERN.test(id)) throw parameterError(`user id must match ${USER_ID_PATTERN.source}`)
  return id.startsWith('usr_') ? id : `usr_${id}`
}

export function createAuthService(store: AuthStore, options: { adminKey: string }) {
  const adminKeyHash = options.adminKey ? hashKey(options.adminKey) : null
  // Positive lookups are cached briefly so the hot path skips SQLite; keys created by
  // the CLI in another process are found on the first miss.
  const cache = new Map<string, { caller: Caller; until: number }>()
  const CACHE_MS = 30_000

  function ensureAdminUser() {
    store.addUser(ADMIN_USER_ID)
  }

  return {
    addUser(id: string): { id: string; created: boolean } {
      const userId = normalizeUserId(id)
      return { id: userId, created: store.addUser(userId) }
    },

    createKey(userIdInput: string, role: string): { key: string; keyId: string; userId: string; role: Role } {
      if (!ROLES.includes(role as Role)) throw parameterError(`role must be one of ${ROLES.join(', ')}`)
      const userId = normalizeUserId(userIdInput)
      if (!store.userExists(userId)) throw new AppError('not_found', `user ${userId} not found (add it with: shortlink users add ${userIdInput})`)
      const key = generateKey()
      const keyId = newId('key')
      store.insertKey(keyId, userId, role as Role, hashKey(key), key.slice(0, 7))
      return { key, keyId, userId, role: role as Role }
    },

    /** On first start with no keys at all, create an admin key to print once. */
    bootstrapAdminKey(): string | null {
      ensureAdminUser()
      if (adminKeyHash || store.activeKeyCount() > 0) return null
      return this.createKey(ADMIN_USER_ID, 'admin').key
    },

    ensureAdminUser,

    authenticate(authorization: string | null): Caller {
      if (!authorization) throw new AppError('unauthorized', 'missing Authorization header (expected: Bearer <API key>)')
      const match = /^Bearer\s+(\S+)\s*$/i.exec(authorization)
      if (!match) throw new AppError('unauthorized', 'malformed Authorization header (expected: Bearer <API key>)')
      const hash = hashKey(match[1]!)
      const now = Date.now()
      const hit = cache.get(hash)
      if (hit && hit.until > now) return hit.caller
      let caller: Caller | null = null
      if (adminKeyHash && hash === adminKeyHash) caller = { userId: ADMIN_USER_ID, role: 'admin', keyId: 'key_config' }
      else {
        const row = store.findKeyByHash(hash)
        if (row && row.revokedAt === null) caller = { userId: row.userId, role: row.role, keyId: row.id }
      }
      if (!caller) throw new AppError('unauthorized', 'unknown or revoked API key')
      if (cache.size > 10_000) cache.clear()
      cache.set(hash, { caller, until: now + CACHE_MS })
      return caller
    },
  }
}
export type AuthService = ReturnType<typeof createAuthService>

/** Readonly keys may only read; the check is global so no write route can forget it. */
export function assertMethodAllowed(caller: Caller, method: string) {
  if (caller.role === 'readonly' && method !== 'GET' && method !== 'HEAD')
    throw new AppError('forbidden', 'this API key is read-only')
}

/** Members act on their own records; admins on everyone's. */
export function canAccessOwnedBy(caller: Caller, ownerId: string): boolean {
  return caller.role === 'admin' || caller.userId === ownerId
}
