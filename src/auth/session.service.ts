/**
 * Dashboard sessions. The browser gets a random token in an HttpOnly `__Host-` cookie and
 * never holds an API key; the store keeps the token's SHA-256 and what the session acts
 * as. A session opened with an API key acts with that key (revoking it ends the session)
 * and with at most its user's current role; one opened with a password acts with the user's role. Every request re-checks the user
 * and the key through a cache that is dropped with the key cache (the store's auth epoch),
 * so disabling a user or revoking a key ends its sessions as fast as its keys.
 *
 * Writes authenticated by the cookie must come from the server's own origin (`Origin`, or
 * `Sec-Fetch-Site: same-origin` when a browser sends no Origin) and carry the session's
 * CSRF token (Bun.CSRF, an HMAC under a per-session secret, bound to the session id).
 */
import { createHash, randomBytes } from 'node:crypto'
import { AppError, forbidden, type Logger, LruCache, parameterError, toIso } from '../shared'
import { type AuthService, type Caller, CONFIG_KEY_ID, hashKey, normalizeUserId } from './auth.service'
import { type AuthStorePort, lowerRole, type Role } from './auth.store'
import { createSignInLimiter, type SignInLimiterPort } from './session.limiter'
import type { SessionMethod, SessionStorePort } from './session.store'

export const SESSION_COOKIE = '__Host-shortlink_session'
/** A session unused this long ends. */
export const SESSION_IDLE_MS = 12 * 3_600_000
/** A session ends this long after sign-in whatever its use. */
export const SESSION_MAX_MS = 7 * 86_400_000
/** Last-seen times are written at most this often (every request would be a write). */
export const LAST_SEEN_WRITE_MS = 60_000
/** Ended sessions are swept from the store at most this often (on a sign-in). */
const SWEEP_MS = 3_600_000
const CACHE_MAX_ENTRIES = 10_000
/** 32 random bytes, base64url. */
const TOKEN_PATTERN = /^[A-Za-z0-9_-]{43}$/
/** Longer than any token Bun.CSRF makes; bounds the work a forged header can cause. */
const CSRF_TOKEN_MAX = 256
const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS'])

const SIGN_IN_FAILED = 'sign-in failed: wrong user id or password, or an API key that does not work (unknown, revoked, or its user disabled)'
const SESSION_ENDED = 'the session has ended (signed out, expired, or its key or user no longer works); sign in again'

export interface SessionView {
  userId: string
  role: Role
  method: SessionMethod
  csrfToken: string
  expiresAt: string
}

/** A session that works, as cached. */
export interface ActiveSession {
  id: string
  caller: Caller
  method: SessionMethod
  csrfSecret: string
  lastSeenAt: number
  expiresAt: number
}

export type SignInInput = { userId?: string; password?: string; apiKey?: string }

export interface SessionOptions {
  store: SessionStorePort
  authStore: AuthStorePort
  auth: AuthService<AuthStorePort>
  /** The origin of baseUrl: the dashboard's, and the only one cookie-authenticated writes may come from. */
  publicOrigin: string
  now?: () => number
  log?: Logger
  /** Per process by default; the cluster's (PostgreSQL) is async. */
  limiter?: SignInLimiterPort
  cacheMaxEntries?: number
}

const sessionIdOf = (token: string) => createHash('sha256').update(token).digest('hex')

export function createSessionService(options: SessionOptions) {
  const { store, authStore, auth, publicOrigin, log } = options
  const now = options.now ?? Date.now
  const limiter = options.limiter ?? createSignInLimiter(now)
  // Session id → the session, least recently used evicted first; dropped with the key cache.
  const cache = new LruCache<ActiveSession>({ maxEntries: options.cacheMaxEntries ?? CACHE_MAX_ENTRIES })
  auth.trackCache(cache)
  let sweptAt = now()
  // Password checks of unknown users verify against this, so they cost what a known user's do.
  let dummyHash: Promise<string> | null = null

  /** The session as the store has it, or null when it no longer works. */
  async function load(id: string): Promise<ActiveSession | null> {
    const row = await store.find(id)
    if (!row || row.userDisabled || row.userDeletedAt !== null) return null
    let caller: Caller
    if (row.method === 'password') {
      if (!row.userHasPassword) return null
      caller = { userId: row.userId, role: row.userRole, keyId: null, sessionId: id }
    } else if (row.keyId !== null) {
      if (row.keyRole === null || row.keyRevokedAt !== null) return null
      caller = { userId: row.userId, role: lowerRole(row.keyRole, row.userRole), keyId: row.keyId, sessionId: id }
    } else {
      if (row.configKeyHash === null || !auth.isConfigKeyHash(row.configKeyHash)) return null
      caller = { userId: row.userId, role: 'admin', keyId: CONFIG_KEY_ID, sessionId: id }
    }
    return { id, caller, method: row.method, csrfSecret: row.csrfSecret, lastSeenAt: row.lastSeenAt, expiresAt: row.expiresAt }
  }

  async function end(id: string) {
    cache.delete(id)
    await store.remove(id)
  }

  /**
   * The working session `id`, its last-seen time kept (written at most once a minute). A
   * cached session is answered at once, without a promise (every dashboard request comes here).
   */
  function active(id: string): ActiveSession | Promise<ActiveSession> {
    const synced = auth.syncEpoch()
    return synced instanceof Promise ? synced.then(() => activeNow(id)) : activeNow(id)
  }

  function activeNow(id: string): ActiveSession | Promise<ActiveSession> {
    const t = now()
    const s = cache.get(id)
    // Not cached, or idle as far as this process saw (another one may have served it since): ask the store.
    if (!s || t - s.lastSeenAt >= SESSION_IDLE_MS) return loadActive(id, t)
    return stillActive(s, t)
  }

  /** Reads the session and caches it unless the caches were dropped while it was read (see auth.cacheGeneration). */
  async function loadCached(id: string): Promise<ActiveSession | null> {
    const readAt = auth.cacheGeneration()
    const s = await load(id)
    if (s && readAt === auth.cacheGeneration()) cache.set(id, s)
    return s
  }

  async function loadActive(id: string, t: number): Promise<ActiveSession> {
    const s = await loadCached(id)
    if (!s) throw new AppError('unauthorized', SESSION_ENDED)
    return stillActive(s, t)
  }

  function stillActive(s: ActiveSession, t: number): ActiveSession | Promise<never> {
    if (t >= s.expiresAt || t - s.lastSeenAt >= SESSION_IDLE_MS)
      return end(s.id).then(() => {
        throw new AppError('unauthorized', SESSION_ENDED)
      })
    if (t - s.lastSeenAt >= LAST_SEEN_WRITE_MS) {
      // A busy store must not fail the request; the next one retries. Not waited for: the request does not need it.
      const failed = (e: unknown) => log?.warn('could not record session use', { error: String(e) })
      try {
        const written = store.touch(s.id, t)
        if (written instanceof Promise) written.catch(failed)
      } catch (e) {
        failed(e)
      }
      s.lastSeenAt = t
    }
    auth.recordUse(s.caller.keyId)
    return s
  }

  function view(s: ActiveSession): SessionView {
    return {
      userId: s.caller.userId,
      role: s.caller.role,
      method: s.method,
      csrfToken: Bun.CSRF.generate(s.csrfSecret, { sessionId: s.id, expiresIn: SESSION_MAX_MS }),
      expiresAt: toIso(Math.min(s.lastSeenAt + SESSION_IDLE_MS, s.expiresAt))!,
    }
  }

  function cookie(token: string, maxAgeS: number): string {
    return new Bun.Cookie(SESSION_COOKIE, token, { path: '/', httpOnly: true, secure: true, sameSite: 'strict', maxAge: maxAgeS }).serialize()
  }

  async function checkPassword(userIdInput: string, password: string): Promise<string | null> {
    dummyHash ??= Bun.password.hash(randomBytes(16).toString('hex'), { algorithm: 'argon2id' })
    const dummy = await dummyHash
    let userId: string | null = null
    try {
      userId = normalizeUserId(userIdInput)
    } catch {
      // Not a possible id: no such user (still hashed below).
    }
    const user = userId ? await authStore.getUser(userId) : null
    const hash = (userId && (await authStore.passwordHashOf(userId))) || dummy
    // A hash that is not one (written by hand) fails like a wrong password.
    const matches = await Bun.password.verify(password, hash).catch(() => false)
    if (!matches || !user || hash === dummy || user.disabled || user.deletedAt !== null) return null
    return user.id
  }

  async function checkApiKey(apiKey: string): Promise<Caller | null> {
    try {
      return await auth.authenticate(`Bearer ${apiKey}`)
    } catch (e) {
      if (e instanceof AppError && e.code === 'unauthorized') return null
      throw e
    }
  }

  return {
    cookieName: SESSION_COOKIE,

    /** The session token a Cookie header carries, or null (checked for shape only). */
    tokenOf(cookieHeader: string | null): string | null {
      if (!cookieHeader?.includes(SESSION_COOKIE)) return null
      const token = new Bun.CookieMap(cookieHeader).get(SESSION_COOKIE)
      return token && TOKEN_PATTERN.test(token) ? token : null
    },

    /** The session a cookie names, or 401; a cached one without a promise. */
    authenticate(token: string): ActiveSession | Promise<ActiveSession> {
      return active(sessionIdOf(token))
    },

    /** Cookie-authenticated writes: the server's own origin and the session's CSRF token, or 403. */
    assertWriteAllowed(s: ActiveSession, method: string, headers: Headers) {
      if (SAFE_METHODS.has(method)) return
      const origin = headers.get('origin')
      if (origin !== null) {
        if (origin !== publicOrigin)
          throw forbidden(`origin check failed: a write with the session cookie must come from ${publicOrigin}, not ${origin.slice(0, 200)}`)
      } else if (headers.get('sec-fetch-site') !== 'same-origin')
        throw forbidden('origin check failed: a write with the session cookie needs an Origin header (or Sec-Fetch-Site: same-origin)')
      const token = headers.get('x-csrf-token')
      if (!token) throw forbidden('CSRF check failed: a write with the session cookie needs the X-CSRF-Token header (its value comes from GET /session)')
      if (token.length > CSRF_TOKEN_MAX || !Bun.CSRF.verify(token, { secret: s.csrfSecret, sessionId: s.id, maxAge: SESSION_MAX_MS }))
        throw forbidden('CSRF check failed: the X-CSRF-Token header is not valid for this session (reload the dashboard: GET /session returns the token)')
    },

    /**
     * Signs in with `{ userId, password }` or `{ apiKey }`. Failures are counted per client
     * address before the check (429 past the budget) and answered with one message.
     */
    async signIn(input: SignInInput, request: { clientIp: string; origin: string | null; previousToken: string | null }) {
      const byPassword = input.userId !== undefined || input.password !== undefined
      if (byPassword === (input.apiKey !== undefined) || (byPassword && (input.userId === undefined || input.password === undefined)))
        throw parameterError("send either 'userId' and 'password', or 'apiKey'")
      // A page elsewhere must not sign a visitor in to an account of its choosing.
      if (request.origin !== null && request.origin !== publicOrigin)
        throw forbidden(`origin check failed: sign-in must come from ${publicOrigin}, not ${request.origin.slice(0, 200)}`)
      const verdict = await limiter.attempt(request.clientIp)
      if (!verdict.allowed)
        throw new AppError('rate_limit_exceeded', `too many failed sign-ins from this address; retry in ${verdict.retryAfterS} s`, {
          'Retry-After': String(verdict.retryAfterS),
        })
      let keyCaller: Caller | null = null
      let userId: string | null
      if (byPassword) userId = await checkPassword(input.userId!, input.password!)
      else {
        keyCaller = await checkApiKey(input.apiKey!)
        userId = keyCaller?.userId ?? null
      }
      if (userId === null) throw new AppError('unauthorized', SIGN_IN_FAILED)
      await limiter.succeeded(request.clientIp)

      const t = now()
      let ended = 0
      if (t - sweptAt >= SWEEP_MS) {
        sweptAt = t
        ended += await store.removeExpired(t, t - SESSION_IDLE_MS)
      }
      if (request.previousToken) await end(sessionIdOf(request.previousToken))
      const token = randomBytes(32).toString('base64url')
      const id = sessionIdOf(token)
      const isConfigKey = keyCaller?.keyId === CONFIG_KEY_ID
      ended += await store.insert({
        id,
        userId,
        keyId: keyCaller && !isConfigKey ? keyCaller.keyId : null,
        configKeyHash: isConfigKey ? hashKey(input.apiKey!) : null,
        method: byPassword ? 'password' : 'apiKey',
        csrfSecret: randomBytes(32).toString('base64url'),
        createdAt: t,
        expiresAt: t + SESSION_MAX_MS,
      })
      // Sessions ended here must not live on in this process's cache until the next epoch check.
      if (ended > 0) await auth.invalidate()
      const s = await loadCached(id)
      if (!s) throw new AppError('unauthorized', SIGN_IN_FAILED) // changed while we checked
      return { session: view(s), cookie: cookie(token, SESSION_MAX_MS / 1000) }
    },

    /**
     * GET /session: the session a Cookie header names, or null when it names none that works (a signed-out
     * page asks without an error), with a cookie that expires a dead one.
     */
    async probe(cookieHeader: string | null): Promise<{ session: SessionView | null; cookie: string | null }> {
      const token = this.tokenOf(cookieHeader)
      const stale = cookieHeader?.includes(SESSION_COOKIE) ? cookie('', 0) : null
      if (token === null) return { session: null, cookie: stale }
      try {
        return { session: view(await active(sessionIdOf(token))), cookie: null }
      } catch (e) {
        if (e instanceof AppError && e.code === 'unauthorized') return { session: null, cookie: stale }
        throw e
      }
    },

    /** The caller's session, or 401 when the request did not come with one. */
    async current(caller: Caller): Promise<SessionView> {
      if (!caller.sessionId) throw new AppError('unauthorized', 'no session: this request was not made with the session cookie')
      return view(await active(caller.sessionId))
    },

    /** Ends the caller's session, if it came with one; the cookie returned expires the browser's. */
    async signOut(caller: Caller): Promise<{ cookie: string }> {
      if (caller.sessionId) await end(caller.sessionId)
      return { cookie: cookie('', 0) }
    },

    /** A password change: the user's other password sessions end. */
    async endPasswordSessions(userId: string, keep: string | null = null): Promise<void> {
      if ((await store.removePasswordSessions(userId, keep)) > 0) await auth.invalidate()
    },
  }
}
export type SessionService = ReturnType<typeof createSessionService>
