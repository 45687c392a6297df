/** The one wiring point: config, store, services. Tests build it with an in-memory store. */
import type { Config } from './config/config.schema'
import { deriveSettings, type Settings } from './config/settings'
import { openStore, type Store } from './store/db'
import { createAuthStore } from './auth/auth.store'
import { createAuthService, type AuthService } from './auth/auth.service'
import { createKeyService, type KeyService } from './auth/keys.service'
import { createUserService, type UserService } from './auth/users.service'
import { createRateLimiter, type RateLimiter } from './auth/rate-limit'
import { createLogger, type Logger } from './shared/log'
import { createTagService, type TagService } from './tags/tags.service'
import { createTagStore } from './tags/tags.store'
import { createLinkStore } from './links/links.store'
import { createLinkService, type LinkService } from './links/links.service'
import { createClickRecorder, type ClickRecorder } from './stats/click-recorder'
import { createGeoIp, type GeoIp } from './geo/geoip'
import { createPasswordGate, loadOrCreateSecret, type PasswordGate } from './redirect/password-gate'
import { createFileService, type FileService } from './files/files.service'
import { createFileStore } from './files/files.store'
import { createBlobStore } from './files/files.blobs'
import { createQrService, type QrService } from './qr/qr.service'
import { createDesignFiles } from './qr/qr.files'
import { createTemplateService, type TemplateService } from './qr/qr.templates.service'
import { createTemplateStore } from './qr/qr.templates.store'
import { createDomainService, type DomainService } from './domains/domains.service'
import { createDomainStore } from './domains/domains.store'
import { createCnameChecker } from './domains/cname'
import { createStatsService, type StatsService } from './stats/stats.service'
import { createStatsStore } from './stats/stats.store'

export interface Deps {
  config: Config
  settings: Settings
  db: Store
  log: Logger
  auth: AuthService
  keys: KeyService
  users: UserService
  limiter: RateLimiter
  tags: TagService
  links: LinkService
  recorder: ClickRecorder
  geo: GeoIp
  passwords: PasswordGate
  files: FileService
  qr: QrService
  templates: TemplateService
  domains: DomainService
  stats: StatsService
}

export function createDeps(config: Config, dbPath: string, log: Logger = createLogger()): Deps {
  // Rebuilding statistics rollups over millions of stored clicks takes minutes: say what runs.
  const db = openStore(dbPath, (migration) => log.info('applying store migration', { migration }))
  const settings = deriveSettings(config)
  const authStore = createAuthStore(db)
  const auth = createAuthService(authStore, { adminKey: config.auth.adminKey, log })
  auth.ensureAdminUser()
  const tagStore = createTagStore(db)
  const linkStore = createLinkStore(db)
  const domains = createDomainService({
    store: createDomainStore(db),
    settings,
    cname: createCnameChecker({ target: config.domains.cnameTarget || settings.apiHost, dnsServers: config.domains.dnsServers }),
    retryMs: config.tls.acmeRetryMs,
    log,
  })
  const designFiles = createDesignFiles({
    files: () => deps.files,
    // An admin's designs may draw any user's files; a disabled or deleted admin's, only their own.
    isAdminUser: (id) => {
      const u = authStore.getUser(id)
      return u?.role === 'admin' && !u.disabled && u.deletedAt === null
    },
  })
  const qr = createQrService({ allowPrivateNetworks: config.scan.allowPrivateNetworks, files: designFiles })
  const deps: Deps = {
    config,
    settings,
    db,
    log,
    auth,
    keys: createKeyService(authStore, auth),
    users: createUserService(authStore, auth),
    limiter: createRateLimiter(config.limits.apiPerMinute),
    files: createFileService({ store: createFileStore(db), blobs: createBlobStore(config.server.dataDir), maxBytes: config.files.maxBytes }),
    tags: createTagService(tagStore),
    links: createLinkService({
      store: linkStore,
      tags: tagStore,
      settings,
      isUsableDomain: (slug) => domains.isUsableForLinks(slug),
      checkQrOptions: qr.validateQrOptions,
      fileUsable: (fileId, ownerId) => deps.files.get(fileId)?.userId === ownerId,
    }),
    recorder: createClickRecorder(db, dbPath, log),
    geo: createGeoIp(config.geoip.database),
    passwords: createPasswordGate(loadOrCreateSecret(db, 'password_cookie_secret')),
    qr,
    domains,
    templates: createTemplateService({ store: createTemplateStore(db), baseUrl: settings.baseUrl, assertScannable: qr.assertScannable }),
    stats: createStatsService({ store: createStatsStore(db), settings }),
  }
  // A file shown by a live link cannot be deleted.
  deps.files.setUsageChecker((fileId) => linkStore.fileInUse(fileId))
  return deps
}
