/** The one wiring point: config, store, services. Tests build it with an in-memory store. */
import type { Config } from './config/config.schema'
import { deriveSettings, type Settings } from './config/settings'
import { openStore, type Store } from './store/db'
import { createAuthStore } from './auth/auth.store'
import { createAuthService, type AuthService } from './auth/auth.service'
import { createRateLimiter, type RateLimiter } from './auth/rate-limit'
import { createLogger, type Logger } from './shared/log'
import { createTagService, type TagService } from './tags/tags.service'
import { createTagStore } from './tags/tags.store'

export interface Deps {
  config: Config
  settings: Settings
  db: Store
  log: Logger
  auth: AuthService
  limiter: RateLimiter
  tags: TagService
}

export function createDeps(config: Config, dbPath: string, log: Logger = createLogger()): Deps {
  const db = openStore(dbPath)
  const settings = deriveSettings(config)
  const auth = createAuthService(createAuthStore(db), { adminKey: config.auth.adminKey })
  auth.ensureAdminUser()
  return {
    config,
    settings,
    db,
    log,
    auth,
    limiter: createRateLimiter(config.limits.apiPerMinute),
    tags: createTagService(createTagStore(db)),
  }
}
