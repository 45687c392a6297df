/** The one wiring point: config, store, services. Tests build it with an in-memory store. */

import {
  type AuthService,
  createAuthService,
  createAuthStore,
  createKeyService,
  createRateLimiter,
  createSessionService,
  createSessionStore,
  createUserService,
  type KeyService,
  type RateLimiter,
  type SessionService,
  type UserService,
} from './auth'
import { type Config, deriveSettings, type Settings } from './config'
import { createDashboard, type Dashboard } from './dashboard'
import { createCnameChecker, createDomainService, createDomainStore, type DomainService } from './domains'
import { createBlobStore, createFileService, createFileStore, type FileService } from './files'
import { createGeoIp, type GeoIp } from './geo'
import { createLinkService, createLinkStore, type LinkService } from './links'
import { createDesignFiles, createQrService, createTemplateService, createTemplateStore, type QrService, type TemplateService } from './qr'
import { createPasswordGate, loadOrCreateSecret, type PasswordGate } from './redirect'
import { createLogger, type Logger } from './shared'
import { type ClickRecorder, createClickRecorder, createStatsService, createStatsStore, type StatsService } from './stats'
import { type Db, openStore } from './store'
import { createTagService, createTagStore, type TagService } from './tags'
import { createTls, type Tls } from './tls'

export interface Deps {
  config: Config
  settings: Settings
  db: Db
  log: Logger
  auth: AuthService
  keys: KeyService
  users: UserService
  sessions: SessionService
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
  tls: Tls
  stats: StatsService
  dashboard: Dashboard
}

/** `now` is the clock of every timestamp the services write; tests pass one that steps instead of sleeping. */
export function createDeps(config: Config, dbPath: string, log: Logger = createLogger(), { now = Date.now }: { now?: () => number } = {}): Deps {
  // Rebuilding statistics rollups over millions of stored clicks takes minutes: say what runs.
  const db = openStore(dbPath, (migration) => log.info('applying store migration', { migration }))
  const settings = deriveSettings(config)
  const authStore = createAuthStore(db)
  const auth = createAuthService(authStore, { adminKey: config.auth.adminKey, log })
  auth.ensureAdminUser()
  const sessions = createSessionService({ store: createSessionStore(db), authStore, auth, publicOrigin: new URL(settings.baseUrl).origin, now, log })
  const tagStore = createTagStore(db, now)
  const linkStore = createLinkStore(db)
  const domains = createDomainService({
    store: createDomainStore(db),
    settings,
    cname: createCnameChecker({ target: config.domains.cnameTarget || settings.apiHost, dnsServers: config.domains.dnsServers }),
    retryMs: config.tls.acmeRetryMs,
    log,
    now,
  })
  // A file shown by a live link cannot be deleted.
  const files = createFileService({
    store: createFileStore(db, now),
    blobs: createBlobStore(config.server.dataDir),
    maxBytes: config.files.maxBytes,
    isInUse: (fileId) => linkStore.fileInUse(fileId),
  })
  const designFiles = createDesignFiles({
    files: () => files,
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
    users: createUserService(authStore, auth, sessions),
    sessions,
    limiter: createRateLimiter(config.limits.apiPerMinute),
    files,
    tags: createTagService(tagStore),
    links: createLinkService({
      store: linkStore,
      tags: tagStore,
      settings,
      isUsableDomain: (slug) => domains.isUsableForLinks(slug),
      checkQrOptions: qr.validateQrOptions,
      fileUsable: (fileId, ownerId) => files.get(fileId)?.userId === ownerId,
      now,
    }),
    recorder: createClickRecorder(db, dbPath, log),
    geo: createGeoIp(config.geoip.database),
    passwords: createPasswordGate(loadOrCreateSecret(db, 'password_cookie_secret')),
    qr,
    domains,
    tls: createTls({ db, config, settings, domains, log }),
    templates: createTemplateService({ store: createTemplateStore(db, now), baseUrl: settings.baseUrl, assertScannable: qr.assertScannable }),
    stats: createStatsService({ store: createStatsStore(db), settings }),
    dashboard: createDashboard({ apiPrefix: settings.apiPrefix, log }),
  }
  return deps
}
