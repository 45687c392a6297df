/** Authentication and users: API keys (hashed, cached, revoked at once), users and passwords, roles, the request context (who is calling), API rate limits. Other modules import this file only. */
export { authRoutes } from './auth.routes'
export { ADMIN_USER_ID, type AuthService, assertMethodAllowed, type Caller, canAccessOwnedBy, createAuthService } from './auth.service'
export { createAuthStore } from './auth.store'
export { createKeyService, type KeyRecord, type KeyService } from './keys.service'
export { createRateLimiter, type RateLimiter, rateLimitHeaders } from './rate-limit'
export { callerOf, type RequestContext, requestContextOf, setRequestContext } from './request-context'
export { createUserService, type UserService } from './users.service'
