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
import { createLinkStore } from './links/links.store'
import { createLinkService, type LinkService } from './links/links.service'

export interface Deps {
  config: Config
  settings: Settings
  db: Store
  log: Logger
  auth: AuthService
  limiter: RateLimiter
  tags: TagService
  links: LinkService
}

export function createDeps(config: Config, dbPath: string, log: Logger = createLogger()): Deps {
  const db = openStore(dbPath)
  const settings = deriveSettings(config)
  const auth = createAuthService(createAuthStore(db), { adminKey: config.auth.adminKey })
  auth.ensureAdminUser()
  const tagStore = createTagStore(db)
  const deps: Deps = {
    config,
    settings,
    db,
    log,
    auth,
    limiter: createRateLimiter(config.limits.apiPerMinute),
    tags: createTagService(tagStore),
    links: createLinkService({
      store: createLinkStore(db),
      tags: tagStore,
      settings,
      isUsableDomain: (slug) => settings.defaultDomains.includes(slug),
    }),
  }
  return deps
}
