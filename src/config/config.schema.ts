/**
import '../shared' // registers the string formats (date-time, uri) the schema uses
 * The whole configuration: one TypeBox schema, every key with a default and a
 * description. The README's config table is generated from it (scripts/config-table.ts).
 */
import { type Static, Type as T } from '@sinclair/typebox'

const Str = (def: string, description: string, extra: object = {}) => T.String({ default: def, description, ...extra })
const Port = (def: number, description: string) => T.Integer({ minimum: 1, maximum: 65535, default: def, description })
const StrList = (def: string[], description: string, item: object = {}) => T.Array(T.String({ minLength: 1, ...item }), { default: def, description })

export const ServerConfig = T.Object(
  {
    baseUrl: Str(
      'https://localhost:8443/api',
      'Public URL of the API, as the world reaches it: its path is the API prefix, and its port (none when it names none) is the port of every URL handed out (short links, QR codes, redirects from plain HTTP), whatever port the server listens on.',
      {
        pattern: '^https://[^/?#]+(/[^?#]*)?$',
      },
    ),
    httpsPort: Port(8443, 'Port the HTTPS listener binds to (API, short links, hosted pages); public URLs carry the port of baseUrl instead.'),
    httpPort: Port(8080, 'Port of the plain-HTTP listener: ACME HTTP-01 challenges and 301 to https.'),
    hostname: Str('0.0.0.0', 'Address both listeners bind to.', { minLength: 1 }),
    dataDir: Str('./data', 'Directory holding the SQLite store, certificates and uploaded files.', { minLength: 1 }),
    trustProxy: StrList([], 'CIDRs whose X-Forwarded-For is honoured for the client IP.', {
      pattern: '^[0-9a-fA-F:.]+(/[0-9]{1,3})?$',
    }),
    maxBodyBytes: T.Integer({
      minimum: 1024,
      maximum: 64 * 1024 * 1024,
      default: 1024 * 1024,
      description: 'Largest JSON request body accepted; larger ones get 400 bad_request.',
    }),
  },
  { additionalProperties: false, default: {} },
)

export const TlsConfig = T.Object(
  {
    mode: T.Union([T.Literal('self-signed'), T.Literal('files'), T.Literal('acme')], {
      default: 'self-signed',
      description: 'self-signed: local CA + certificate kept in dataDir; files: certFile/keyFile; acme: certificates from acmeDirectory.',
    }),
    names: StrList([], 'Extra DNS names or IPs for the self-signed certificate (localhost, the baseUrl host and default domains are always included).'),
    certFile: Str('', 'PEM certificate chain for mode = files.'),
    keyFile: Str('', 'PEM private key for mode = files.'),
    acmeDirectory: Str('https://acme-staging-v02.api.letsencrypt.org/directory', 'ACME directory URL.', {
      pattern: '^https?://',
    }),
    acmeEmail: Str('', 'Contact e-mail for the ACME account.'),
    acmeCaFile: Str('', 'PEM CA bundle to trust when talking to the ACME server (e.g. a test CA).'),
    acmePollMs: T.Integer({
      minimum: 10,
      maximum: 60_000,
      default: 5000,
      description: 'First delay between ACME status polls during an order (grows up to 6x).',
    }),
    acmeRetryMs: T.Integer({
      minimum: 100,
      maximum: 86_400_000,
      default: 60_000,
      description: 'First delay before retrying a failed certificate order or re-checking a pending or invalid CNAME; doubles per attempt up to 6 h.',
    }),
  },
  { additionalProperties: false, default: {} },
)

export const DomainsConfig = T.Object(
  {
    defaults: StrList(['localhost'], 'Default short domains; the first one is used when a link names none.', {
      pattern: '^[a-zA-Z0-9.-]+$',
    }),
    cnameTarget: Str('', 'Host that customer domains must CNAME to (defaults to the baseUrl host).'),
    dnsServers: StrList([], 'DNS server IP addresses (ip or ip:port) for CNAME checks; empty: the system resolver.', { pattern: '^[0-9a-fA-F:.\\[\\]]+$' }),
  },
  { additionalProperties: false, default: {} },
)

export const AuthConfig = T.Object(
  {
    adminKey: Str('', 'A fixed admin API key (also SHORTLINK_ADMIN_KEY); at least 24 characters when set.', {
      pattern: '^$|^[A-Za-z0-9_-]{24,200}$',
      // Never echoed in configuration errors: logs and terminals keep what they show.
      'x-secret': true,
    }),
  },
  { additionalProperties: false, default: {} },
)

export const ScanConfig = T.Object(
  {
    allowPrivateNetworks: T.Boolean({
      default: false,
      description: 'Let POST /qr/scan fetch images from private, loopback and link-local addresses.',
    }),
  },
  { additionalProperties: false, default: {} },
)

export const WebhooksConfig = T.Object(
  {
    allowPrivateNetworks: T.Boolean({
      default: false,
      description: 'Let webhooks target private, loopback and link-local addresses (checked when a webhook is saved and again at every delivery).',
    }),
  },
  { additionalProperties: false, default: {} },
)

export const ConversionsConfig = T.Object(
  {
    attributionDays: T.Integer({
      minimum: 1,
      maximum: 3650,
      default: 90,
      description: 'POST /track/lead and /track/sale accept a click id for this many days after its visit (older: parameter_error).',
    }),
  },
  { additionalProperties: false, default: {} },
)

export const LimitsConfig = T.Object(
  {
    apiPerMinute: T.Integer({ minimum: 1, maximum: 1_000_000, default: 600, description: 'API requests per key (or per client IP without a key) per minute.' }),
  },
  { additionalProperties: false, default: {} },
)

export const FilesConfig = T.Object(
  {
    maxBytes: T.Integer({ minimum: 1024, maximum: 1024 * 1024 * 1024, default: 25 * 1024 * 1024, description: 'Largest uploaded file.' }),
  },
  { additionalProperties: false, default: {} },
)

export const ImportsConfig = T.Object(
  {
    maxBytes: T.Integer({
      minimum: 1024,
      maximum: 16 * 1024 * 1024 * 1024,
      default: 256 * 1024 * 1024,
      description: 'Largest export file POST /imports accepts (received to disk in server.dataDir, never held in memory).',
    }),
  },
  { additionalProperties: false, default: {} },
)

export const GeoipConfig = T.Object(
  {
    database: Str('', 'MMDB file for country/region/city lookups; a bundled default when empty.'),
  },
  { additionalProperties: false, default: {} },
)

export const StatsConfig = T.Object(
  {
    memoryLimit: Str('256MB', "Memory the events engine (DuckDB, single node) may use for statistics queries, e.g. '256MB' or '1GB'.", {
      pattern: '^[0-9]+(\\.[0-9]+)?\\s*(KB|MB|GB|KiB|MiB|GiB)$',
    }),
    threads: T.Integer({ minimum: 1, maximum: 64, default: 2, description: 'Threads the events engine runs a statistics query on (single node).' }),
    queryTimeoutMs: T.Integer({
      minimum: 100,
      maximum: 600_000,
      default: 10_000,
      description: 'A statistics query or export still computing after this long ends with service_unavailable (single node).',
    }),
  },
  { additionalProperties: false, default: {} },
)

export const StoreConfig = T.Object(
  {
    url: Str(
      '',
      "Empty: the embedded SQLite file in server.dataDir (one node). A postgres://user:password@host:port/database URL: PostgreSQL holds everything and any number of nodes with the same URL serve the same data (`shortlink migrate-store` copies a single node's store into it). Use a direct connection, not a pooler in transaction mode: nodes LISTEN for cache invalidations.",
      { pattern: '^$|^postgres(ql)?://' },
    ),
  },
  { additionalProperties: false, default: {} },
)

export const MetricsConfig = T.Object(
  {
    listen: Str(
      '',
      'Address (host:port) of the Prometheus metrics listener, serving /metrics in plain HTTP, e.g. "127.0.0.1:9464"; off when empty. Keep it on loopback or a private network: it is never one of the public ports.',
      { pattern: '^$|^(\\[[0-9a-fA-F:.]+\\]|[^:\\[\\]]*):[0-9]{1,5}$' },
    ),
  },
  { additionalProperties: false, default: {} },
)

export const BackupS3Config = T.Object(
  {
    endpoint: Str('', 'S3-compatible endpoint URL (e.g. https://s3.eu-central-1.amazonaws.com or a MinIO/R2 URL); empty: no uploads.', {
      pattern: '^$|^https?://',
    }),
    bucket: Str('', 'Bucket the backups are uploaded to.'),
    region: Str('us-east-1', 'Region of the bucket.'),
    prefix: Str('', 'Key prefix of the uploaded backups (e.g. "shortlink/").'),
    accessKeyId: Str('', 'Access key id for the bucket.'),
    secretAccessKey: Str('', 'Secret access key for the bucket (better set as SHORTLINK_BACKUP_S3_SECRETACCESSKEY).', { 'x-secret': true }),
  },
  { additionalProperties: false, default: {} },
)

export const BackupConfig = T.Object(
  {
    dir: Str('', 'Directory the server writes scheduled backups to (embedded store only); empty: no scheduled backups.'),
    every: Str('', 'How often the server takes a backup, e.g. "6h", "30m", "1d"; needs backup.dir.', { pattern: '^$|^([0-9]+(ms|s|m|h|d))+$' }),
    keep: T.Integer({
      minimum: 1,
      maximum: 10_000,
      default: 7,
      description: 'How many scheduled backups to keep (in backup.dir and in the bucket); older ones are deleted.',
    }),
    s3: BackupS3Config,
  },
  { additionalProperties: false, default: {} },
)

/** A duration: digits and a unit, repeated ("1h", "30s", "1h30m"). */
const DURATION = '([0-9]+(ms|s|m|h|d))+'

export const HealthConfig = T.Object(
  {
    every: Str(
      '1h',
      'How often each distinct destination URL of live links is checked (one node of a cluster checks), e.g. "1h", "30m"; at least "1s". "0" turns the scheduled checks off (POST /links/{id}/health still checks on demand).',
      { pattern: `^0$|^${DURATION}$` },
    ),
    timeout: Str('10s', 'Deadline of one check of a URL (HEAD, GET and every redirect hop together), e.g. "10s"; 100ms to 60s.', {
      pattern: `^${DURATION}$`,
    }),
    allowPrivateNetworks: T.Boolean({
      default: false,
      description: 'Let link-health checks request private, loopback and link-local addresses (refused by default, as for POST /qr/scan).',
    }),
  },
  { additionalProperties: false, default: {} },
)

export const Config = T.Object(
  {
    server: ServerConfig,
    store: StoreConfig,
    tls: TlsConfig,
    domains: DomainsConfig,
    auth: AuthConfig,
    scan: ScanConfig,
    webhooks: WebhooksConfig,
    conversions: ConversionsConfig,
    limits: LimitsConfig,
    files: FilesConfig,
    imports: ImportsConfig,
    geoip: GeoipConfig,
    metrics: MetricsConfig,
    backup: BackupConfig,
    stats: StatsConfig,
    health: HealthConfig,
  },
  { additionalProperties: false },
)

export type Config = Static<typeof Config>
