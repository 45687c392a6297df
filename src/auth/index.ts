/** Authentication and users: API keys (hashed, cached, revoked at once), users and passwords, roles, the request context (who is calling), API rate limits. Other modules import this file only. */
export { authRoutes } from './auth.routes'
export { ADMIN_USER_ID, assertMethodAllowed, canAccessOwnedBy, createAuthService, type AuthService, type Caller } from './auth.service'
export { createAuthStore } from './auth.store'
export { createKeyService, type KeyRecord, type KeyService } from './keys.service'
export { createRateLimiter, rateLimitHeaders, type RateLimiter } from './rate-limit'
export { callerOf, requestContextOf, setRequestContext, type RequestContext } from './request-context'
export { createUserService, type UserService } from './users.service'
