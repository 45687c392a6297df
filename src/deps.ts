/**
 * The one wiring point: config, store, services. `createDeps` builds one node on the embedded
 * SQLite file (tests build it with an in-memory store); `createClusterDeps` builds a node of a
 * cluster on PostgreSQL (`[store] url`): the same services over the PostgreSQL adapters, the
 * invalidation bus that keeps every node's caches true, and cluster-wide limits.
 */

import type { SQL } from 'bun'
import {
  type AuthService,
  type AuthStorePort,
  createAuthService,
  createAuthStore,
  createClusterApiLimiter,
  createClusterSignInLimiter,
  createKeyService,
  createPgAuthStore,
  createPgSessionStore,
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
import { createCnameChecker, createDomainService, createDomainStore, createPgDomainStore, type DomainService, type DomainStorePort } from './domains'
import { createBlobStore, createFileService, createFileStore, createPgFileStore, type FileService, type FileStorePort } from './files'
import { createGeoIp, type GeoIp } from './geo'
import { createLinkService, createLinkStore, createPgLinkStore, type LinkService, type LinkStorePort } from './links'
import {
  createDesignFiles,
  createPgTemplateStore,
  createQrService,
  createTemplateService,
  createTemplateStore,
  type QrService,
  type TemplateService,
} from './qr'
import { createClusterPasswordLimits, createPasswordGate, loadOrCreateSecret, loadOrCreateSecretPg, type PasswordGate, visitOrdinalFrom } from './redirect'
import { createLogger, type Logger } from './shared'
import {
  type ClickRecorder,
  createClickRecorder,
  createPgClickRecorder,
  createPgStatsStore,
  createStatsService,
  createStatsStore,
  type StatsService,
} from './stats'
import {
  connectPostgres,
  createClusterRateLimiter,
  createInvalidationBus,
  createLeaseLocks,
  createVisitCounter,
  type Db,
  FLUSH,
  type InvalidationBus,
  migratePostgres,
  openStore,
  withAdvisoryLock,
} from './store'
import { createPgTagStore, createTagService, createTagStore, type TagService } from './tags'
import { createPgTlsStore, createTls, type Tls } from './tls'

/** Which store serves this node; a cluster node also has the invalidation bus its caches listen to. */
export type StoreHandle = { kind: 'sqlite'; db: Db } | { kind: 'postgres'; sql: SQL; bus: InvalidationBus }

/**
 * Cache invalidations from other nodes (and this one) by channel; nothing ever arrives on
 * SQLite. Keys: links `<domain>/<key>`, domains and certificates a host name; `*` (FLUSH)
 * means "forget the whole channel". A domain is announced once this node has re-read it.
 */
export interface Invalidations {
  on(channel: 'links' | 'domains' | 'certificates', fn: (key: string) => void): () => void
}

export interface Deps {
  config: Config
  settings: Settings
  store: StoreHandle
  invalidations: Invalidations
  log: Logger
  auth: AuthService<AuthStorePort>
  keys: KeyService
  users: UserService
  sessions: SessionService
  limiter: RateLimiter
  tags: TagService
  links: LinkService<LinkStorePort>
  recorder: ClickRecorder
  /** Number targeting's n-th visit over every node (PostgreSQL); absent, this process counts (SQLite, one node). */
  visitOrdinal?: (link: { id: string; seq: number }) => Promise<number>
  geo: GeoIp
  passwords: PasswordGate
  files: FileService<FileStorePort>
  qr: QrService
  templates: TemplateService
  domains: DomainService<DomainStorePort>
  tls: Tls
  stats: StatsService
  dashboard: Dashboard
  /** Closes the store (after the server stopped and the recorder flushed). */
  close(): Promise<void>
  /** A first admin key when the store has no active key and the config none (printed once); on a cluster, made by one node only. */
  firstAdminKey(): Promise<string | null>
}

/** One node on the embedded SQLite file: `db` is open to the CLI (backup) and tests. */
export interface SqliteDeps extends Deps {
  db: Db
  /** Synchronous on SQLite (the types say so, for the CLI and tests). */
  auth: AuthService
  domains: DomainService
  links: LinkService
}

const NO_INVALIDATIONS: Invalidations = { on: () => () => {} }

/** `now` is the clock of every timestamp the services write; tests pass one that steps instead of sleeping. */
export function createDeps(config: Config, dbPath: string, log: Logger = createLogger(), { now = Date.now }: { now?: () => number } = {}): SqliteDeps {
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
  const deps: SqliteDeps = {
    config,
    settings,
    db,
    store: { kind: 'sqlite', db },
    invalidations: NO_INVALIDATIONS,
    close: async () => db.close(),
    firstAdminKey: async () => auth.bootstrapAdminKey(),
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

/** Channels of the invalidation bus: what each node caches. Auth has its epoch poll (auth.service.ts). */
const CHANNELS = ['links', 'domains', 'certificates'] as const

/**
 * One node of a cluster on PostgreSQL (`[store] url`). Migrates under the advisory lock (nodes
 * starting together migrate once), subscribes to the invalidation bus before anything is
 * cached, and loads the domains before it answers.
 */
export async function createClusterDeps(config: Config, log: Logger = createLogger(), { now = Date.now }: { now?: () => number } = {}): Promise<Deps> {
  const settings = deriveSettings(config)
  const sql = connectPostgres(config.store.url, { max: PG_POOL_SIZE })
  let bus: InvalidationBus | null = null
  try {
    await migratePostgres(sql, { onMigration: (migration) => log.info('applying store migration', { migration }) })
    bus = await createInvalidationBus({ url: config.store.url, channels: CHANNELS, log })
  } catch (e) {
    await sql.close({ timeout: 0 }).catch(() => {})
    throw e
  }
  const publish = bus.publish
  // One exact limiter (and one sweeper of ended windows) for the API, sign-in and link-password limits.
  const limits = createClusterRateLimiter(sql, { mode: 'exact' })
  const authStore = createPgAuthStore(sql)
  const auth = createAuthService(authStore, { adminKey: config.auth.adminKey, log })
  await auth.ensureAdminUser()
  const sessions = createSessionService({
    store: createPgSessionStore(sql),
    authStore,
    auth,
    publicOrigin: new URL(settings.baseUrl).origin,
    now,
    log,
    limiter: createClusterSignInLimiter(limits, now),
  })
  const tagStore = createPgTagStore(sql, now)
  const linkStore = createPgLinkStore(sql, { publish })
  const domains = createDomainService({
    // Each write announces its host on the bus inside its own transaction.
    store: createPgDomainStore(sql, { publish }),
    settings,
    cname: createCnameChecker({ target: config.domains.cnameTarget || settings.apiHost, dnsServers: config.domains.dnsServers }),
    retryMs: config.tls.acmeRetryMs,
    log,
    now,
  })
  await domains.ready
  // Subscribers hear of a domain once this node holds its new state.
  const domainReloaded = new Set<(slug: string) => void>()
  bus.on('domains', (slug) => {
    Promise.resolve(slug === FLUSH ? domains.reloadAll() : domains.reload(slug)).then(
      () => {
        for (const fn of domainReloaded) fn(slug)
      },
      (err) => log.warn('domain reload failed', { slug, error: String(err) }),
    )
  })
  const files = createFileService({
    store: createPgFileStore(sql, now),
    maxBytes: config.files.maxBytes,
    isInUse: (fileId) => linkStore.fileInUse(fileId),
  })
  const designFiles = createDesignFiles({
    files: () => files,
    isAdminUser: async (id) => {
      const u = await authStore.getUser(id)
      return u?.role === 'admin' && !u.disabled && u.deletedAt === null
    },
  })
  const qr = createQrService({ allowPrivateNetworks: config.scan.allowPrivateNetworks, files: designFiles })
  // Its journal in this node's data dir: visits the store cannot take yet wait there (click-journal.ts).
  const recorder = createPgClickRecorder(sql, log, { journalDir: config.server.dataDir })
  const links = createLinkService({
    store: linkStore,
    tags: tagStore,
    settings,
    isUsableDomain: (slug) => domains.isUsableForLinks(slug),
    checkQrOptions: qr.validateQrOptions,
    fileUsable: async (fileId, ownerId) => (await files.get(fileId))?.userId === ownerId,
    now,
  })
  const channels = bus
  const invalidations: Invalidations = {
    on(channel, fn) {
      if (channel !== 'domains') return channels.on(channel, fn)
      domainReloaded.add(fn)
      return () => domainReloaded.delete(fn)
    },
  }
  return {
    config,
    settings,
    store: { kind: 'postgres', sql, bus },
    invalidations,
    log,
    auth,
    keys: createKeyService(authStore, auth),
    users: createUserService(authStore, auth, sessions),
    sessions,
    limiter: createClusterApiLimiter(limits, config.limits.apiPerMinute, now),
    files,
    tags: createTagService(tagStore),
    links,
    visitOrdinal: visitOrdinalFrom(createVisitCounter(sql), links.storedClicks),
    recorder,
    geo: createGeoIp(config.geoip.database),
    passwords: createPasswordGate(await loadOrCreateSecretPg(sql, 'password_cookie_secret'), Date.now, createClusterPasswordLimits(limits)),
    qr,
    domains,
    tls: createTls({ store: createPgTlsStore(sql, { publish }), locks: createLeaseLocks(sql), config, settings, domains, log }),
    templates: createTemplateService({ store: createPgTemplateStore(sql, now), baseUrl: settings.baseUrl, assertScannable: qr.assertScannable }),
    stats: createStatsService({ store: createPgStatsStore(sql), settings }),
    dashboard: createDashboard({ apiPrefix: settings.apiPrefix, log }),
    // Nodes starting together on an empty store: the advisory lock lets one make the key, the others then see it.
    firstAdminKey: () => withAdvisoryLock(sql, BOOTSTRAP_LOCK_KEY, async () => auth.bootstrapAdminKey()),
    async close() {
      await channels.close()
      await sql.close({ timeout: 5 })
    },
  }
}

/** The advisory lock key of the first admin key (any fixed number no other code uses). */
const BOOTSTRAP_LOCK_KEY = 7_240_514_002n

/** Connections per node: requests, the click writer and the lease renewals share them (LISTEN has its own). */
const PG_POOL_SIZE = 16
