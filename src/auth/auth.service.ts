/**
 * API keys: random, shown once, stored as SHA-256 hashes. Keys carry ~190 bits of
 * entropy, so a fast hash is enough (a slow password hash would cost every request).
 *
 * Authentication keeps a bounded cache of known keys so the hot path skips SQLite. It is
 * never trusted for long: every change to keys or users bumps `auth_epoch` in the store
 * (triggers, migration 0009), and the cache is dropped when the epoch has moved. A change
 * made through this process drops it at once; one made by another process (the CLI, a
 * second node, SQL by hand) within EPOCH_CHECK_MS.
 */
import { createHash, randomBytes } from 'node:crypto'
import { AppError, forbidden, type Logger, LruCache, newId, parameterError } from '../shared'
import { type AuthStore, ROLES, type Role } from './auth.store'

export interface Caller {
  userId: string
  role: Role
  /** The API key acted with; null for a dashboard session opened with a password. */
  keyId: string | null
  /** Set when the request came with the dashboard's session cookie. */
  sessionId?: string
}

export const ADMIN_USER_ID = 'usr_admin'
/** The key id the config's `auth.adminKey` acts with; it is not a stored key. */
export const CONFIG_KEY_ID = 'key_config'
const USER_ID_PATTERN = /^[A-Za-z0-9_-]{1,64}$/
/** How often the store's auth epoch is compared (a one-row read); bounds revocation delay across processes. */
const EPOCH_CHECK_MS = 250
/** Last-use times are written at most this often (every request would be a write on the hot path). */
export const LAST_USED_FLUSH_MS = 60_000
const CACHE_MAX_ENTRIES = 10_000

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

export interface AuthOptions {
  adminKey: string
  log?: Logger
  /** Tests set 0 to compare the epoch on every request. */
  epochCheckMs?: number
  cacheMaxEntries?: number
}

export function createAuthService(store: AuthStore, options: AuthOptions) {
  const adminKeyHash = options.adminKey ? hashKey(options.adminKey) : null
  const epochCheckMs = options.epochCheckMs ?? EPOCH_CHECK_MS
  const cacheMax = options.cacheMaxEntries ?? CACHE_MAX_ENTRIES
  // Key hash → caller, least recently used evicted first, at most CACHE_MAX_ENTRIES.
  const cache = new LruCache<Caller>({ maxEntries: cacheMax })
  /** Caches of what the store says about credentials (this one, and the sessions'), dropped together. */
  const caches: { clear(): void }[] = [cache]
  const clearCaches = () => {
    for (const c of caches) c.clear()
  }
  let knownEpoch = store.authEpoch()
  let epochCheckedAt = Date.now()
  const pendingUses = new Map<string, number>()
  let usesFlushedAt = 0

  /** Forget every cached key; the epoch is read first so no change older than the read survives. */
  function invalidate() {
    knownEpoch = store.authEpoch()
    epochCheckedAt = Date.now()
    clearCaches()
  }

  function checkEpoch(now: number) {
    if (now - epochCheckedAt < epochCheckMs) return
    epochCheckedAt = now
    const epoch = store.authEpoch()
    if (epoch !== knownEpoch) {
      knownEpoch = epoch
      clearCaches()
    }
  }

  function flushLastUsed() {
    usesFlushedAt = Date.now()
    if (pendingUses.size === 0) return
    const uses = [...pendingUses]
    pendingUses.clear()
    try {
      store.touchKeys(uses)
    } catch (e) {
      // A busy store must not fail the request that happened to trigger the flush; retry next time.
      for (const [id, at] of uses) if (!pendingUses.has(id)) pendingUses.set(id, at)
      options.log?.warn('could not record API key use', { error: String(e) })
    }
  }

  function recordUse(keyId: string | null, now: number) {
    if (keyId === null || keyId === CONFIG_KEY_ID) return
    pendingUses.set(keyId, now)
    if (now - usesFlushedAt >= LAST_USED_FLUSH_MS) flushLastUsed()
  }

  function issueKey(userId: string, role: Role, name: string | null) {
    const key = generateKey()
    const id = newId('key')
    const createdAt = Date.now()
    store.insertKey({ id, userId, role, hash: hashKey(key), prefix: key.slice(0, 7), name, createdAt })
    return { id, key, userId, role, name, createdAt }
  }

  function ensureAdminUser() {
    store.addUser(ADMIN_USER_ID, 'admin')
  }

  return {
    /** The operator's path (CLI): the user must exist and not be deleted. */
    addUser(id: string): { id: string; created: boolean } {
      const userId = normalizeUserId(id)
      if (store.getUser(userId)?.deletedAt != null) throw parameterError(`user ${userId} was deleted; user ids are never reused`)
      return { id: userId, created: store.addUser(userId) }
    },

    createKey(userIdInput: string, role: string, name: string | null = null): { key: string; keyId: string; userId: string; role: Role } {
      if (!ROLES.includes(role as Role)) throw parameterError(`role must be one of ${ROLES.join(', ')}`)
      const userId = normalizeUserId(userIdInput)
      const user = store.getUser(userId)
      if (!user) throw new AppError('not_found', `user ${userId} not found (add it with: shortlink users add ${userIdInput})`)
      if (user.deletedAt !== null) throw parameterError(`user ${userId} was deleted`)
      const made = issueKey(userId, role as Role, name)
      return { key: made.key, keyId: made.id, userId, role: made.role }
    },

    issueKey,

    /** On first start with no keys at all, create an admin key to print once. */
    bootstrapAdminKey(): string | null {
      ensureAdminUser()
      if (adminKeyHash || store.activeKeyCount() > 0) return null
      return this.createKey(ADMIN_USER_ID, 'admin').key
    },

    ensureAdminUser,
    invalidate,
    /** Another cache of credentials (the sessions'), to be dropped whenever the key cache is. */
    trackCache(c: { clear(): void }) {
      caches.push(c)
    },
    /** Compares the store's auth epoch when due; drops every tracked cache when it moved. */
    syncEpoch: () => checkEpoch(Date.now()),
    /** Whether a key hash is the config file's adminKey (it is not a stored key). */
    isConfigKeyHash: (hash: string) => adminKeyHash !== null && hash === adminKeyHash,
    flushLastUsed,
    /** Uses seen since the last flush, for listings to show before they are written. */
    pendingLastUsed: (keyId: string) => pendingUses.get(keyId),
    /** A request a key's dashboard session made counts as the key's use. */
    recordUse: (keyId: string | null) => recordUse(keyId, Date.now()),
    cacheSize: () => cache.size,

    authenticate(authorization: string | null): Caller {
      if (!authorization) throw new AppError('unauthorized', 'missing Authorization header (expected: Bearer <API key>)')
      const match = /^Bearer\s+(\S+)\s*$/i.exec(authorization)
      if (!match) throw new AppError('unauthorized', 'malformed Authorization header (expected: Bearer <API key>)')
      const hash = hashKey(match[1]!)
      const now = Date.now()
      checkEpoch(now)
      let caller = cache.get(hash) ?? null
      if (!caller) {
        if (adminKeyHash && hash === adminKeyHash) caller = { userId: ADMIN_USER_ID, role: 'admin', keyId: CONFIG_KEY_ID }
        else {
          const row = store.findKeyByHash(hash)
          if (!row || row.revokedAt !== null || row.userDeletedAt !== null) throw new AppError('unauthorized', 'unknown or revoked API key')
          if (row.userDisabled) throw new AppError('unauthorized', `the user of this API key (${row.userId}) is disabled`)
          caller = { userId: row.userId, role: row.role, keyId: row.id }
        }
        cache.set(hash, caller)
      }
      recordUse(caller.keyId, now)
      return caller
    },
  }
}
export type AuthService = ReturnType<typeof createAuthService>

/** Readonly keys and sessions may only read; the check is global so no write route can forget it. */
export function assertMethodAllowed(caller: Caller, method: string) {
  if (caller.role === 'readonly' && method !== 'GET' && method !== 'HEAD')
    throw forbidden(caller.sessionId ? 'this session is read-only (its role is readonly)' : 'this API key is read-only')
}

/** Members act on their own records; admins on everyone's. */
export function canAccessOwnedBy(caller: Caller, ownerId: string): boolean {
  return caller.role === 'admin' || caller.userId === ownerId
}
