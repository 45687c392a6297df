/**
 * The one wiring point: config, stores, services. A node serves from one bundle of stores
 * (`StoreBundle`): the embedded SQLite file (`sqliteStores`; tests use an in-memory one) or
 * PostgreSQL (`postgresStores`, `[store] url`: a node of a cluster, with the invalidation bus
 * that keeps every node's caches true and the limits counted across nodes). `assemble` builds
 * the services once over either bundle, so a new service is wired in one place and both modes
 * get it.
 */

import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import type { SQL } from 'bun'
import { type AbTestStorePort, type AbTests, createAbTestStore, createAbTests, createPgAbTestStore } from './ab-tests'
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
  type SessionStorePort,
  type UserService,
} from './auth'
import { type BackupService, createBackupService, nodeParts, scheduleOf } from './backup'
import { type Config, deriveSettings, parseDuration, type Settings } from './config'
import { type ConversionService, type ConversionStoreAsync, createConversionService, createConversionStore, createPgConversionStore } from './conversions'
import { createDashboard, type Dashboard } from './dashboard'
import {
  createCnameChecker,
  createDomainService,
  createDomainStore,
  createPgDomainStore,
  type DomainService,
  type DomainStore,
  type DomainStorePort,
} from './domains'
import { createBlobStore, createFileService, createFileStore, createPgFileStore, type FileService, type FileStorePort } from './files'
import { createGeoIp, type GeoIp } from './geo'
import { createReadiness, type Readiness, storeCheck } from './health'
import { createImportService, createImportStore, createPgImportStore, type ImportService, type ImportStorePort } from './imports'
import { createHealthStore, createLinkHealth, createPgHealthStore, type HealthStorePort, type LinkHealthService, leaseLeadership } from './link-health'
import { createLinkService, createLinkStore, createPgLinkStore, type LinkRecord, type LinkService, type LinkStore, type LinkStorePort } from './links'
import {
  type BatchService,
  type BatchStorePort,
  createBatchService,
  createBatchStore,
  createDesignFiles,
  createPgBatchStore,
  createPgTemplateStore,
  createQrService,
  createTemplateService,
  createTemplateStore,
  type QrService,
  type TemplateService,
  type TemplateStorePort,
} from './qr'
import { createClusterPasswordLimits, createPasswordGate, loadOrCreateSecret, loadOrCreateSecretPg, type PasswordGate, visitOrdinalFrom } from './redirect'
import { createLogger, type Logger } from './shared'
import {
  type ClickRecorder,
  createClickRecorder,
  createEventsExporter,
  createEventsHandle,
  createEventsStatsStore,
  createPgClickRecorder,
  createPgEventsExporter,
  createPgStatsStore,
  createStatsService,
  type EventsHandle,
  eventsPathOf,
  type StatsService,
  type StatsStorePort,
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
  type LeaseLocks,
  migratePostgres,
  openStore,
  withAdvisoryLock,
} from './store'
import { createPgTagStore, createTagService, createTagStore, type TagService, type TagStorePort } from './tags'
import { createPgTlsStore, createTls, createTlsStore, type Tls, type TlsStorePort } from './tls'
import { createPgWebhookStore, createWebhookStore, createWebhooks, type Webhooks, type WebhooksOptions } from './webhooks'

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

/** The store ports whose services answer synchronously over SQLite: the bundle says which of the two. */
interface Ports {
  auth: AuthStorePort
  links: LinkStorePort
  domains: DomainStorePort
}
type SqlitePorts = { auth: ReturnType<typeof createAuthStore>; links: LinkStore; domains: DomainStore }

type SignInLimiter = NonNullable<Parameters<typeof createSessionService>[0]['limiter']>
type PasswordLimits = NonNullable<Parameters<typeof createPasswordGate>[2]>

/**
 * What differs between the two modes: the stores, the limits (per process, or counted across
 * nodes), and how nodes starting together agree. Everything else is `assemble`'s.
 */
export interface StoreBundle<P extends Ports = Ports> {
  handle: StoreHandle
  auth: P['auth']
  sessions: SessionStorePort
  tags: TagStorePort
  links: P['links']
  domains: P['domains']
  files: FileStorePort
  /** The file bytes on disk (SQLite); PostgreSQL's file store carries its bytes. */
  blobs?: ReturnType<typeof createBlobStore>
  templates: TemplateStorePort
  stats: StatsStorePort
  /** Leads, sales, their customers and the tracked clicks. */
  conversions: ConversionStoreAsync
  /** After a conversion is recorded (SQLite: copied into the events engine). */
  conversionsRecorded?: () => Promise<void>
  /** GET /statistics/events: the raw events, streamed (through a temporary file). */
  statsExporter: NonNullable<Parameters<typeof createStatsService>[0]['exporter']>
  tls: TlsStorePort
  health: HealthStorePort
  abTests: AbTestStorePort
  imports: ImportStorePort
  batches: BatchStorePort
  /** One ACME order per domain across nodes (PostgreSQL); none on one node. */
  locks?: LeaseLocks
  /** Other nodes' writes (PostgreSQL); none on one node. */
  bus?: InvalidationBus
  /** Webhooks' store, and where their deliveries run: a worker thread over its own connection (null: this thread, an in-memory store). */
  webhooks: Pick<WebhooksOptions, 'store' | 'deliveryStore' | 'soleNode'>
  recorder: ClickRecorder
  /** The events engine beside the SQLite file (its backups go through it); PostgreSQL keeps events in its own tables. */
  events?: EventsHandle
  apiLimiter(perMinute: number): RateLimiter
  /** Absent: counted in this process. */
  signInLimiter?: SignInLimiter
  passwordLimits?: PasswordLimits
  passwordSecret: Buffer
  /** Number targeting's n-th visit counted over every node (PostgreSQL); absent, this process counts (SQLite, one node). */
  visitCounter?: Parameters<typeof visitOrdinalFrom>[0]
  /** Runs `fn` alone among nodes starting together (PostgreSQL's advisory lock); on one node, just runs it. */
  alone<T>(lockKey: bigint, fn: () => Promise<T>): Promise<T>
  close(): Promise<void>
}

export interface Deps<P extends Ports = Ports> {
  config: Config
  settings: Settings
  store: StoreHandle
  invalidations: Invalidations
  log: Logger
  auth: AuthService<P['auth']>
  keys: KeyService
  users: UserService
  sessions: SessionService
  limiter: RateLimiter
  tags: TagService
  links: LinkService<P['links']>
  recorder: ClickRecorder
  /** Number targeting's n-th visit over every node (PostgreSQL); absent, this process counts (SQLite, one node). */
  visitOrdinal?: (link: { id: string; seq: number }) => Promise<number>
  geo: GeoIp
  passwords: PasswordGate
  files: FileService<FileStorePort>
  qr: QrService
  templates: TemplateService
  /** QR print runs (POST /qr/batches). */
  batches: BatchService
  domains: DomainService<P['domains']>
  tls: Tls
  stats: StatsService
  conversions: ConversionService
  imports: ImportService
  dashboard: Dashboard
  /** Destination checks (started and stopped with the server), the record's `health`, the redirect's fallback lookup. */
  linkHealth: LinkHealthService
  /** A/B tests: results, and the verdicts (started and stopped with the server). */
  abTests: AbTests
  webhooks: Webhooks
  /** GET /readyz: the store's check here; the server adds its listeners', other parts their own. */
  readiness: Readiness
  /** Backups of the embedded store (null on PostgreSQL: pg_dump's). */
  backups: BackupService | null
  /** Settles once the node holds what it must before it answers (the admin user, the domains); at once on SQLite. */
  ready: Promise<void>
  /** Closes the store (after the server stopped and the recorder flushed). */
  close(): Promise<void>
  /** A first admin key when the store has no active key and the config none (printed once); on a cluster, made by one node only. */
  firstAdminKey(): Promise<string | null>
}

/** One node on the embedded SQLite file: `db` is open to the CLI (backup) and tests; auth, links and domains answer synchronously. */
export interface SqliteDeps extends Deps<SqlitePorts> {
  db: Db
  /** The events engine (DuckDB beside the SQLite file): the recorder's batches and the statistics' reads. */
  events: EventsHandle
}

/** `busyLinkClicks`: tests lower the threshold of per-link dimension rollups. */
type Clock = { now?: () => number; busyLinkClicks?: number }

/** `now` is the clock of every timestamp the services write; tests pass one that steps instead of sleeping. */
export function createDeps(config: Config, dbPath: string, log: Logger = createLogger(), { now = Date.now, busyLinkClicks }: Clock = {}): SqliteDeps {
  const stores = sqliteStores(config, dbPath, log, now, busyLinkClicks)
  return { ...assemble(config, stores, log, now), db: stores.db, events: stores.events }
}

/**
 * One node of a cluster on PostgreSQL (`[store] url`). Migrates under the advisory lock (nodes
 * starting together migrate once), subscribes to the invalidation bus before anything is
 * cached, and loads the domains before it answers.
 */
export async function createClusterDeps(config: Config, log: Logger = createLogger(), { now = Date.now }: Clock = {}): Promise<Deps> {
  const stores = await postgresStores(config, log, now)
  const deps = assemble(config, stores, log, now)
  try {
    await deps.ready
  } catch (e) {
    await deps.close().catch(() => {})
    throw e
  }
  return deps
}

/** The embedded SQLite file (or `:memory:`): its stores, and limits counted in this process. */
function sqliteStores(
  config: Config,
  dbPath: string,
  log: Logger,
  now: () => number,
  busyLinkClicks?: number,
): StoreBundle<SqlitePorts> & { db: Db; events: EventsHandle } {
  // Rebuilding statistics rollups over millions of stored clicks takes minutes: say what runs.
  const db = openStore(dbPath, (migration) => log.info('applying store migration', { migration }))
  const events = createEventsHandle(db, dbPath, log, { memoryLimit: config.stats.memoryLimit, threads: config.stats.threads, busyLinkClicks })
  return {
    db,
    events,
    handle: { kind: 'sqlite', db },
    auth: createAuthStore(db),
    sessions: createSessionStore(db),
    tags: createTagStore(db, now),
    links: createLinkStore(db),
    domains: createDomainStore(db),
    files: createFileStore(db, now),
    blobs: createBlobStore(config.server.dataDir),
    templates: createTemplateStore(db, now),
    stats: createEventsStatsStore(db, events, { timeoutMs: config.stats.queryTimeoutMs }),
    conversions: createConversionStore(db, events),
    conversionsRecorded: () => events.syncConversions(),
    statsExporter: createEventsExporter(db, events, dbPath === ':memory:' ? join(tmpdir(), `shortlink-${process.pid}`) : eventsPathOf(dbPath)),
    tls: createTlsStore(db),
    health: createHealthStore(db),
    abTests: createAbTestStore(db, events),
    imports: createImportStore(db),
    batches: createBatchStore(db),
    // Its journal beside the store file: visits the events engine cannot take yet wait there (click-journal.ts).
    recorder: createClickRecorder(events, log, { journalDir: dbPath === ':memory:' ? undefined : dirname(dbPath) }),
    // Deliveries run on a thread of their own over the same file; an in-memory store can only be used here.
    webhooks: { store: createWebhookStore(db), soleNode: true, deliveryStore: dbPath === ':memory:' ? null : { sqlite: dbPath } },
    apiLimiter: (perMinute) => createRateLimiter(perMinute),
    passwordSecret: loadOrCreateSecret(db, 'password_cookie_secret'),
    alone: (_lockKey, fn) => fn(),
    close: async () => {
      await events.close()
      db.close()
    },
  }
}

/** Channels of the invalidation bus: what each node caches. Auth has its epoch poll (auth.service.ts). */
const CHANNELS = ['links', 'domains', 'certificates'] as const

/** Connections per node: requests, the click writer and the lease renewals share them (LISTEN has its own). */
const PG_POOL_SIZE = 16

/**
 * PostgreSQL, migrated under the advisory lock and subscribed to the invalidation bus; each
 * adapter that caches elsewhere announces its writes on the bus inside its own transaction.
 */
async function postgresStores(config: Config, log: Logger, now: () => number): Promise<StoreBundle> {
  const sql = connectPostgres(config.store.url, { max: PG_POOL_SIZE })
  let bus: InvalidationBus | null = null
  try {
    await migratePostgres(sql, { onMigration: (migration) => log.info('applying store migration', { migration }) })
    bus = await createInvalidationBus({ url: config.store.url, channels: CHANNELS, log })
    const { publish } = bus
    // One exact limiter (and one sweeper of ended windows) for the API, sign-in and link-password limits.
    const limits = createClusterRateLimiter(sql, { mode: 'exact' })
    const channels = bus
    return {
      handle: { kind: 'postgres', sql, bus },
      bus,
      auth: createPgAuthStore(sql),
      sessions: createPgSessionStore(sql),
      tags: createPgTagStore(sql, now),
      links: createPgLinkStore(sql, { publish }),
      domains: createPgDomainStore(sql, { publish }),
      files: createPgFileStore(sql, now),
      templates: createPgTemplateStore(sql, now),
      stats: createPgStatsStore(sql),
      conversions: createPgConversionStore(sql),
      statsExporter: createPgEventsExporter(sql, tmpdir()),
      tls: createPgTlsStore(sql, { publish }),
      health: createPgHealthStore(sql, { publish }),
      abTests: createPgAbTestStore(sql),
      imports: createPgImportStore(sql),
      batches: createPgBatchStore(sql),
      locks: createLeaseLocks(sql),
      // Its journal in this node's data dir: visits the store cannot take yet wait there (click-journal.ts).
      recorder: createPgClickRecorder(sql, log, { journalDir: config.server.dataDir }),
      webhooks: { store: createPgWebhookStore(sql), soleNode: false, deliveryStore: { postgres: config.store.url } },
      apiLimiter: (perMinute) => createClusterApiLimiter(limits, perMinute, now),
      signInLimiter: createClusterSignInLimiter(limits, now),
      passwordLimits: createClusterPasswordLimits(limits),
      passwordSecret: await loadOrCreateSecretPg(sql, 'password_cookie_secret'),
      visitCounter: createVisitCounter(sql),
      alone: (lockKey, fn) => withAdvisoryLock(sql, lockKey, fn),
      async close() {
        await channels.close()
        await sql.close({ timeout: 5 })
      },
    }
  } catch (e) {
    await bus?.close().catch(() => {})
    await sql.close({ timeout: 0 }).catch(() => {})
    throw e
  }
}

/** The advisory lock key of the first admin key (any fixed number no other code uses). */
const BOOTSTRAP_LOCK_KEY = 7_240_514_002n

/** The lease (locks table) of the node that runs the scheduled link-health checks. */
const HEALTH_LEASE = 'link-health-checks'

/** The lease of the node that judges A/B tests at their end. */
const AB_TEST_LEASE = 'ab-test-verdicts'

/** The services, built once over either bundle of stores. */
function assemble<P extends Ports>(config: Config, stores: StoreBundle<P>, log: Logger, now: () => number): Deps<P> {
  const settings = deriveSettings(config)
  const auth = createAuthService(stores.auth, { adminKey: config.auth.adminKey, log })
  const adminUser = auth.ensureAdminUser()
  const sessions = createSessionService({
    store: stores.sessions,
    authStore: stores.auth,
    auth,
    publicOrigin: new URL(settings.baseUrl).origin,
    now,
    log,
    limiter: stores.signInLimiter,
  })
  const domains = createDomainService({
    store: stores.domains,
    settings,
    cname: createCnameChecker({ target: config.domains.cnameTarget || settings.apiHost, dnsServers: config.domains.dnsServers }),
    retryMs: config.tls.acmeRetryMs,
    log,
    now,
  })
  // A file shown by a live link cannot be deleted.
  const files = createFileService({
    store: stores.files,
    blobs: stores.blobs,
    maxBytes: config.files.maxBytes,
    isInUse: (fileId) => stores.links.fileInUse(fileId),
  })
  const qr = createQrService({
    allowPrivateNetworks: config.scan.allowPrivateNetworks,
    files: createDesignFiles({
      files: () => files,
      // An admin's designs may draw any user's files; a disabled or deleted admin's, only their own.
      isAdminUser: (id) => then(stores.auth.getUser(id), (u) => u?.role === 'admin' && !u.disabled && u.deletedAt === null),
    }),
  })
  const locks = stores.locks
  const linkHealth = createLinkHealth({
    store: stores.health,
    settings,
    everyMs: config.health.every === '0' ? 0 : parseDuration(config.health.every),
    timeoutMs: parseDuration(config.health.timeout),
    allowPrivateNetworks: config.health.allowPrivateNetworks,
    log,
    now,
    // On PostgreSQL the node holding the lease checks; on SQLite the only node does.
    lead: locks ? (work, stop) => leaseLeadership(locks, HEALTH_LEASE, work, stop, log) : undefined,
    // link.broken / link.recovered (contract), once per change: the health store appends them in the transaction of the change.
    eventsOf: (changes) =>
      changes.map((c) => ({ type: c.type, userId: c.row.user_id, linkId: c.row.id, tagIds: c.tags, data: links.recordWith(c.row, c.tags, c.health) })),
    recordOf: async (ref) => {
      const row = await links.findLiveRow(ref.domain, ref.key)
      return row?.id === ref.id ? ((await links.toRecord(row)) as LinkRecord) : null
    },
  })
  const links = createLinkService({
    store: stores.links,
    tags: stores.tags,
    settings,
    isUsableDomain: (slug) => domains.isUsableForLinks(slug),
    checkQrOptions: qr.validateQrOptions,
    fileUsable: (fileId, ownerId) => then(files.get(fileId), (f) => f?.userId === ownerId),
    healthOf: linkHealth.healthOf,
    now,
  })
  // A written link's URLs and status follow at once (a deleted one is forgotten).
  links.onChange((c) => linkHealth.linkChanged(c.id))
  const webhooks = createWebhooks({ ...stores.webhooks, config, log, now })

  // A/B test verdicts: one node (the lease holder on PostgreSQL) judges; winners are written through the links service.
  const abTests = createAbTests({
    store: stores.abTests,
    links,
    // link.test_completed (contract), once per verdict: the A/B store appends it in the verdict's transaction.
    eventsOf: ({ link, test }) => [{ type: 'link.test_completed', userId: link.userId, linkId: link.id, tagIds: link.tags, data: { link, test } }],
    lead: locks ? (work, stop) => leaseLeadership(locks, AB_TEST_LEASE, work, stop, log) : undefined,
    log,
    now,
  })

  const tags = createTagService(stores.tags)
  // Imports write through the link and tag services, so an imported link is checked, cached and announced as any other.
  const imports = createImportService({
    store: stores.imports,
    links,
    findTag: (userId, name) => stores.tags.findByName(userId, name),
    createTag: (caller, name) => tags.create(caller, { name }),
    isUsableDomain: (slug) => domains.isUsableForLinks(slug),
    defaultDomain: settings.defaultDomains[0]!,
    spoolDir: join(config.server.dataDir, 'imports'),
    log,
    now,
  })
  const templates = createTemplateService({ store: stores.templates, baseUrl: settings.baseUrl, assertScannable: qr.assertScannable })
  const batches = createBatchService({ store: stores.batches, links, templates, renderQr: qr.renderQr, log, now })
  return {
    config,
    settings,
    store: stores.handle,
    invalidations: stores.bus ? invalidationsFrom(stores.bus, domains, log) : NO_INVALIDATIONS,
    log,
    auth,
    keys: createKeyService(stores.auth, auth),
    users: createUserService(stores.auth, auth, sessions),
    sessions,
    limiter: stores.apiLimiter(config.limits.apiPerMinute),
    files,
    tags,
    links,
    visitOrdinal: stores.visitCounter ? visitOrdinalFrom(stores.visitCounter, links.storedClicks) : undefined,
    recorder: stores.recorder,
    geo: createGeoIp(config.geoip.database),
    passwords: createPasswordGate(stores.passwordSecret, Date.now, stores.passwordLimits),
    qr,
    domains,
    tls: createTls({ store: stores.tls, locks: stores.locks, config, settings, domains, log }),
    templates,
    batches,
    stats: createStatsService({ store: stores.stats, settings, exporter: stores.statsExporter }),
    conversions: createConversionService({
      store: stores.conversions,
      settings,
      attributionDays: config.conversions.attributionDays,
      // This node's held clicks written now; on a cluster, then a flush window for the clicks other nodes hold.
      settleClicks: () => stores.recorder.drain(),
      otherNodesFlushMs: stores.handle.kind === 'postgres' ? stores.recorder.flushMs + 500 : undefined,
      afterRecord: stores.conversionsRecorded,
      log,
      now,
    }),
    imports,
    dashboard: createDashboard({ apiPrefix: settings.apiPrefix, log }),
    linkHealth,
    abTests,
    webhooks,
    readiness: readinessOf(stores.handle),
    backups:
      stores.handle.kind === 'sqlite'
        ? createBackupService({
            dataDir: config.server.dataDir,
            parts: () => nodeParts(stores.events),
            drain: () => stores.recorder.drain(),
            schedule: scheduleOf(config),
            log,
          })
        : null,
    ready: Promise.all([adminUser, domains.ready]).then(() => {}),
    // A clean stop ends this node's imports as failed (they can be run again) before the store closes.
    close: async () => {
      batches.stop()
      await imports.stop()
      await stores.close()
    },
    // Nodes starting together on an empty store: one makes the key, the others then see it.
    firstAdminKey: () => stores.alone(BOOTSTRAP_LOCK_KEY, async (): Promise<string | null> => await auth.bootstrapAdminKey()),
  }
}

const NO_INVALIDATIONS: Invalidations = { on: () => () => {} }

/** Readiness with the store's check (SELECT 1); the server adds the listeners'. */
function readinessOf(handle: StoreHandle): Readiness {
  const readiness = createReadiness()
  readiness.add('store', storeCheck(handle.kind === 'sqlite' ? () => handle.db.query('SELECT 1').get() : () => handle.sql`SELECT 1`))
  return readiness
}

/**
 * The bus's channels, except that a domain is announced once this node has re-read it (its
 * subscribers, the link cache and the certificate manager, then see the new state).
 */
function invalidationsFrom(bus: InvalidationBus, domains: DomainService<DomainStorePort>, log: Logger): Invalidations {
  const domainReloaded = new Set<(slug: string) => void>()
  bus.on('domains', (slug) => {
    Promise.resolve(slug === FLUSH ? domains.reloadAll() : domains.reload(slug)).then(
      () => {
        for (const fn of domainReloaded) fn(slug)
      },
      (err) => log.warn('domain reload failed', { slug, error: String(err) }),
    )
  })
  return {
    on(channel, fn) {
      if (channel !== 'domains') return bus.on(channel, fn)
      domainReloaded.add(fn)
      return () => domainReloaded.delete(fn)
    },
  }
}

/** `f` of a value now or of a promise's value later: SQLite adapters answer at once, PostgreSQL ones with promises. */
function then<T, R>(value: T | Promise<T>, f: (v: T) => R): R | Promise<R> {
  return value instanceof Promise ? value.then(f) : f(value)
}
