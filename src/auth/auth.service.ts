/**
 * API keys: random, shown once, stored as SHA-256 hashes. Keys carry ~190 bits of
 * entropy, so a fast hash is enough (a slow password hash would cost every request).
 *
 * Authentication keeps a bounded cache of known keys so the hot path skips SQLite. It is
 * never trusted for long: every change to keys or users bumps `auth_epoch` in the store
 * (triggers, migration 0009), and the cache is dropped when the epoch has moved. A change
 * made through this process drops it at once; one made by another process (the CLI, a
 * second node, SQL by hand) within EPOCH_CHECK_MS. A key acts with the lower of its own
 * role and its user's current role, so demoting a user (an epoch move) demotes its keys.
 *
 * The store is a port (docs/adr/0010): SQLite answers at once, PostgreSQL with promises.
 * `authenticate` stays synchronous on a cache hit (no promise on the hot path), and the
 * operator's paths (`addUser`, `createKey`, ...) stay synchronous on a synchronous store,
 * so the CLI, test harness and benchmarks built on SQLite call them as before.
 */
import { createHash, randomBytes } from 'node:crypto'
import { AppError, forbidden, type Logger, LruCache, newId, parameterError } from '../shared'
import { type AuthStore, type AuthStorePort, isAbove, lowerRole, ROLES, type Role } from './auth.store'

export interface Caller {
  userId: string
  /** The role it acts with: the lower of the key's (or session's) own role and its user's current role. */
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

/** A result that is synchronous when the store `S` is (the SQLite one), else maybe a promise. */
export type StoreResult<S, T> = S extends AuthStore ? T : T | Promise<T>

/** `f(value)`, at once when `value` is not a promise: keeps a synchronous store's path free of promises. */
export function then<T, R>(value: T | Promise<T>, f: (v: T) => R | Promise<R>): R | Promise<R> {
  return value instanceof Promise ? value.then(f) : f(value)
}

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

export function createAuthService<S extends AuthStorePort = AuthStore>(store: S, options: AuthOptions) {
  const adminKeyHash = options.adminKey ? hashKey(options.adminKey) : null
  const epochCheckMs = options.epochCheckMs ?? EPOCH_CHECK_MS
  const cacheMax = options.cacheMaxEntries ?? CACHE_MAX_ENTRIES
  // Key hash → caller, least recently used evicted first, at most CACHE_MAX_ENTRIES.
  const cache = new LruCache<Caller>({ maxEntries: cacheMax })
  /** Caches of what the store says about credentials (this one, and the sessions'), dropped together. */
  const caches: { clear(): void }[] = [cache]
  /**
   * Moves whenever the caches are dropped. A store read that began before a drop may hold what
   * the drop was for (over PostgreSQL a read can span a change and its invalidation): its
   * answer serves the request but is cached only when no drop happened meanwhile.
   */
  let generation = 0
  const clearCaches = () => {
    generation++
    for (const c of caches) c.clear()
  }
  let knownEpoch = Number.NaN
  let epochCheckedAt = 0
  const knowEpoch = (epoch: number) => {
    knownEpoch = epoch
    epochCheckedAt = Date.now()
  }
  // Known from the start on a synchronous store, else from when it answers; until then (or after a failed read) the first check reads it.
  const initialEpoch = store.authEpoch()
  if (initialEpoch instanceof Promise) initialEpoch.then(knowEpoch, () => {})
  else knowEpoch(initialEpoch)
  const pendingUses = new Map<string, number>()
  let usesFlushedAt = 0

  /** Forget every cached key; the epoch is read first so no change older than the read survives. */
  function invalidate(): StoreResult<S, void> {
    return then(store.authEpoch(), (epoch) => {
      knowEpoch(epoch)
      clearCaches()
    }) as StoreResult<S, void>
  }

  /** Synchronous on a synchronous store; a promise only when the epoch is due and the store answers with one. */
  function checkEpoch(now: number): void | Promise<void> {
    if (now - epochCheckedAt < epochCheckMs) return
    epochCheckedAt = now
    return then(store.authEpoch(), (epoch) => {
      if (epoch !== knownEpoch) {
        knownEpoch = epoch
        clearCaches()
      }
    })
  }

  /** Writes the gathered last-use times; a promise only when the store answers with one (awaited at shutdown). */
  function flushLastUsed(): void | Promise<void> {
    usesFlushedAt = Date.now()
    if (pendingUses.size === 0) return
    const uses = [...pendingUses]
    pendingUses.clear()
    // A busy store must not fail the request that happened to trigger the flush; retry next time.
    const retry = (e: unknown) => {
      for (const [id, at] of uses) if (!pendingUses.has(id)) pendingUses.set(id, at)
      options.log?.warn('could not record API key use', { error: String(e) })
    }
    try {
      const written = store.touchKeys(uses)
      if (written instanceof Promise) return written.catch(retry)
    } catch (e) {
      retry(e)
    }
  }

  function recordUse(keyId: string | null, now: number) {
    if (keyId === null || keyId === CONFIG_KEY_ID) return
    pendingUses.set(keyId, now)
    if (now - usesFlushedAt >= LAST_USED_FLUSH_MS) flushLastUsed()
  }

  function issueKey(userId: string, role: Role, name: string | null): StoreResult<S, IssuedKey> {
    const key = generateKey()
    const id = newId('key')
    const createdAt = Date.now()
    const made: IssuedKey = { id, key, userId, role, name, createdAt }
    return then(store.insertKey({ id, userId, role, hash: hashKey(key), prefix: key.slice(0, 7), name, createdAt }), () => made) as StoreResult<S, IssuedKey>
  }

  function ensureAdminUser(): StoreResult<S, void> {
    return then(store.addUser(ADMIN_USER_ID, 'admin'), () => {}) as StoreResult<S, void>
  }

  function createKey(userIdInput: string, role: string, name: string | null = null): StoreResult<S, CreatedKey> {
    if (!ROLES.includes(role as Role)) throw parameterError(`role must be one of ${ROLES.join(', ')}`)
    const userId = normalizeUserId(userIdInput)
    return then(store.getUser(userId), (user) => {
      if (!user) throw new AppError('not_found', `user ${userId} not found (add it with: shortlink users add ${userIdInput})`)
      if (user.deletedAt !== null) throw parameterError(`user ${userId} was deleted`)
      if (isAbove(role as Role, user.role))
        throw parameterError(
          `'role' ${role} is above the role of ${userId} (${user.role}); a key acts with the lower of the two, so give the user the role first (shortlink users add ${userIdInput} --role ${role})`,
        )
      return then(issueKey(userId, role as Role, name), (made) => ({ key: made.key, keyId: made.id, userId, role: made.role }))
    }) as StoreResult<S, CreatedKey>
  }

  function callerOf(hash: string, now: number): Caller | Promise<Caller> {
    const cached = cache.get(hash)
    if (cached) {
      recordUse(cached.keyId, now)
      return cached
    }
    // The config file's key is the operator's own: admin whatever the store says (usr_admin cannot be demoted through the API).
    if (adminKeyHash && hash === adminKeyHash) return remember(hash, { userId: ADMIN_USER_ID, role: 'admin', keyId: CONFIG_KEY_ID }, now, generation)
    const readAt = generation
    return then(store.findKeyByHash(hash), (row) => {
      if (!row || row.revokedAt !== null || row.userDeletedAt !== null) throw new AppError('unauthorized', 'unknown or revoked API key')
      if (row.userDisabled) throw new AppError('unauthorized', `the user of this API key (${row.userId}) is disabled`)
      return remember(hash, { userId: row.userId, role: lowerRole(row.role, row.userRole), keyId: row.id }, now, readAt)
    })
  }

  function remember(hash: string, caller: Caller, now: number, readAt: number): Caller {
    if (readAt === generation) cache.set(hash, caller)
    recordUse(caller.keyId, now)
    return caller
  }

  return {
    /**
     * The operator's path (CLI): adds the user (a deleted id is refused), with `role` (default
     * member); for an existing user a `role` given sets it, and its keys and sessions act with
     * at most that role from the next request (an epoch move for other processes).
     */
    addUser(id: string, role?: string): StoreResult<S, { id: string; created: boolean; role: Role }> {
      if (role !== undefined && !ROLES.includes(role as Role)) throw parameterError(`role must be one of ${ROLES.join(', ')}`)
      const userId = normalizeUserId(id)
      return then(store.getUser(userId), (user) => {
        if (user?.deletedAt != null) throw parameterError(`user ${userId} was deleted; user ids are never reused`)
        if (user && role !== undefined && role !== user.role)
          return then(store.updateUser(userId, { role: role as Role }), () => then(invalidate(), () => ({ id: userId, created: false, role: role as Role })))
        if (user) return { id: userId, created: false, role: user.role }
        return then(store.addUser(userId, (role as Role | undefined) ?? 'member'), (created) => ({
          id: userId,
          created,
          role: (role as Role | undefined) ?? 'member',
        }))
      }) as StoreResult<S, { id: string; created: boolean; role: Role }>
    },

    createKey,
    issueKey,

    /** On first start with no keys at all, create an admin key to print once. */
    bootstrapAdminKey(): StoreResult<S, string | null> {
      return then(ensureAdminUser(), () => {
        if (adminKeyHash) return null
        return then(store.activeKeyCount(), (active) => (active > 0 ? null : then(createKey(ADMIN_USER_ID, 'admin'), (made) => made.key)))
      }) as StoreResult<S, string | null>
    },

    ensureAdminUser,
    invalidate,
    /** Another cache of credentials (the sessions'), to be dropped whenever the key cache is. */
    trackCache(c: { clear(): void }) {
      caches.push(c)
    },
    /** Moves on every drop of the caches: a tracked cache keeps a store read only if it has not moved since the read began. */
    cacheGeneration: () => generation,
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

    /**
     * The caller a Bearer key names, or 401. A cached key is answered at once, without a
     * promise (the hot path); a promise comes only when the store is read and answers with one.
     */
    authenticate(authorization: string | null): Caller | Promise<Caller> {
      if (!authorization) throw new AppError('unauthorized', 'missing Authorization header (expected: Bearer <API key>)')
      const match = /^Bearer\s+(\S+)\s*$/i.exec(authorization)
      if (!match) throw new AppError('unauthorized', 'malformed Authorization header (expected: Bearer <API key>)')
      const hash = hashKey(match[1]!)
      const now = Date.now()
      const checked = checkEpoch(now)
      return checked instanceof Promise ? checked.then(() => callerOf(hash, now)) : callerOf(hash, now)
    },
  }
}
/** The service over the SQLite store (the default), or over any store port (`AuthService<AuthStorePort>`). */
export type AuthService<S extends AuthStorePort = AuthStore> = ReturnType<typeof createAuthService<S>>

export interface IssuedKey {
  id: string
  key: string
  userId: string
  role: Role
  name: string | null
  createdAt: number
}

export interface CreatedKey {
  key: string
  keyId: string
  userId: string
  role: Role
}

/** Readonly keys and sessions may only read; the check is global so no write route can forget it. */
export function assertMethodAllowed(caller: Caller, method: string) {
  if (caller.role === 'readonly' && method !== 'GET' && method !== 'HEAD')
    throw forbidden(caller.sessionId ? 'this session is read-only (its role is readonly)' : 'this API key is read-only')
}

/** Members act on their own records; admins on everyone's. */
export function canAccessOwnedBy(caller: Caller, ownerId: string): boolean {
  return caller.role === 'admin' || caller.userId === ownerId
}
