import { describe, expect, test } from 'bun:test'
import { mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { buildConfig, ConfigError, loadConfig, parseDuration } from './config.load'
import { deriveSettings } from './settings'

function problems(fn: () => unknown): string[] {
  try {
    fn()
  } catch (e) {
    if (e instanceof ConfigError) return e.problems
    throw e
  }
  return []
}

describe('config: metrics and backups', () => {
  test('[backup.s3] from the file and the environment; a bad secret is never echoed', () => {
    const c = buildConfig(
      { backup: { dir: '/var/backups/shortlink', every: '6h', keep: 3, s3: { endpoint: 'https://s3.example', bucket: 'b' } } },
      { SHORTLINK_BACKUP_S3_SECRETACCESSKEY: 'from-env', SHORTLINK_BACKUP_S3_ACCESSKEYID: 'AKIA', SHORTLINK_METRICS_LISTEN: '127.0.0.1:9464' },
    )
    expect(c.backup).toEqual({
      dir: '/var/backups/shortlink',
      every: '6h',
      keep: 3,
      s3: { endpoint: 'https://s3.example', bucket: 'b', region: 'us-east-1', prefix: '', accessKeyId: 'AKIA', secretAccessKey: 'from-env' },
    })
    expect(c.metrics.listen).toBe('127.0.0.1:9464')
    const found = problems(() => buildConfig({ backup: { s3: { secretAccessKey: ['not-a-string-secret'], colour: 'red' } } }, {}))
    expect(found).toEqual([
      'backup.s3.secretAccessKey: must be a string (got a secret value of 19 characters, not shown; expected string)',
      'backup.s3.colour: unknown key (known: endpoint, bucket, region, prefix, accessKeyId, secretAccessKey)',
    ])
    expect(problems(() => buildConfig({}, { SHORTLINK_BACKUP_S3_COLOUR: 'x' }))).toEqual(['SHORTLINK_BACKUP_S3_COLOUR: unknown key backup.s3.colour'])
  })

  test('rules between keys: the public ports, dir with every, uploads with a schedule, none on PostgreSQL', () => {
    expect(problems(() => buildConfig({ metrics: { listen: '127.0.0.1:8443' } }, {}))).toEqual([
      'metrics.listen: must not be one of the public ports (server.httpsPort, server.httpPort): metrics are served on their own listener',
    ])
    expect(problems(() => buildConfig({ metrics: { listen: 'localhost' } }, {}))[0]).toStartWith('metrics.listen: ')
    expect(problems(() => buildConfig({ backup: { every: '6h' } }, {}))).toEqual([
      'backup.dir: required when backup.every is set (where the server writes its backups)',
    ])
    expect(problems(() => buildConfig({ backup: { dir: '/b', every: '10ms' } }, {}))).toEqual(['backup.every: at least 1s (got "10ms")'])
    expect(problems(() => buildConfig({ server: { dataDir: '/srv/data' }, backup: { dir: '/srv/data/backups', every: '1h' } }, {}))).toEqual([
      'backup.dir: must be outside server.dataDir (each backup would hold the ones before it)',
    ])
    expect(problems(() => buildConfig({ server: { dataDir: '/srv/data' }, backup: { dir: '/srv/data-backups', every: '1h' } }, {}))).toEqual([])
    expect(problems(() => buildConfig({ backup: { dir: '/b', every: '1h', s3: { endpoint: 'https://s3.example' } } }, {}))).toEqual([
      'backup.s3.bucket: required when backup.s3.endpoint is set',
    ])
    expect(problems(() => buildConfig({ store: { url: 'postgres://u:p@db/x' }, backup: { dir: '/b', every: '1h' } }, {}))[0]).toContain('pg_dump')
  })

  test('durations', () => {
    expect(parseDuration('6h')).toBe(6 * 3_600_000)
    expect(parseDuration('1h30m')).toBe(5_400_000)
    expect(parseDuration('30s')).toBe(30_000)
    expect(parseDuration('2d')).toBe(172_800_000)
    expect(parseDuration('6 hours')).toBeNaN()
  })
})

describe('config', () => {
  test('[health]: defaults as the contract says; "0" turns the checker off; out-of-range durations are named', () => {
    expect(buildConfig({}, {}).health).toEqual({ every: '1h', timeout: '10s', allowPrivateNetworks: false })
    expect(buildConfig({ health: { every: '0' } }, {}).health.every).toBe('0')
    expect(buildConfig({}, { SHORTLINK_HEALTH_EVERY: '90s', SHORTLINK_HEALTH_ALLOWPRIVATENETWORKS: 'true' }).health).toMatchObject({
      every: '90s',
      allowPrivateNetworks: true,
    })
    expect(parseDuration('1h30m')).toBe(5_400_000)
    expect(problems(() => buildConfig({ health: { every: '500ms' } }, {}))).toEqual(['health.every: at least 1s, or "0" for off (got "500ms")'])
    expect(problems(() => buildConfig({ health: { timeout: '2m' } }, {}))).toEqual(['health.timeout: 100ms to 60s (got "2m")'])
    expect(problems(() => buildConfig({ health: { every: 'hourly' } }, {}))[0]).toStartWith('health.every: ')
  })

  test('an invalid admin key is refused without being echoed', () => {
    const secret = 'short!key'
    const fromFile = problems(() => buildConfig({ auth: { adminKey: secret } }, {}))
    const fromEnv = problems(() => buildConfig({}, { SHORTLINK_AUTH_ADMINKEY: secret }))
    for (const found of [fromFile, fromEnv]) {
      expect(found).toHaveLength(1)
      expect(found[0]).toStartWith('auth.adminKey: ')
      expect(found[0]).toContain('a secret value of 9 characters, not shown')
      expect(found[0]).not.toContain(secret)
    }
  })

  test('public URLs carry the port of baseUrl, never the listening port', () => {
    const origin = (baseUrl: string) => deriveSettings(buildConfig({ server: { baseUrl, httpsPort: 9443 } }, {})).shortOrigin('s.test')
    expect(origin('https://api.example.test:8443/api')).toBe('https://s.test:8443')
    expect(origin('https://api.example.test/api')).toBe('https://s.test')
    expect(origin('https://api.example.test:443/api')).toBe('https://s.test')
  })

  test('the embedded default matches the contract', () => {
    const c = buildConfig({}, {})
    expect(c.server).toMatchObject({ baseUrl: 'https://localhost:8443/api', httpsPort: 8443, httpPort: 8080, dataDir: './data' })
    expect(c.tls.mode).toBe('self-signed')
    expect(c.domains.defaults).toEqual(['localhost'])
  })

  test('file values override defaults, env overrides the file, typed by the schema', () => {
    const c = buildConfig(
      { server: { httpsPort: 9443 }, limits: { apiPerMinute: 10 } },
      { SHORTLINK_SERVER_HTTPSPORT: '10443', SHORTLINK_DOMAINS_DEFAULTS: 'a.test, b.test', SHORTLINK_SCAN_ALLOWPRIVATENETWORKS: 'true' },
    )
    expect(c.server.httpsPort).toBe(10443)
    expect(c.limits.apiPerMinute).toBe(10)
    expect(c.domains.defaults).toEqual(['a.test', 'b.test'])
    expect(c.scan.allowPrivateNetworks).toBe(true)
  })

  test('SHORTLINK_ADMIN_KEY sets auth.adminKey', () => {
    expect(buildConfig({}, { SHORTLINK_ADMIN_KEY: 'k'.repeat(30) }).auth.adminKey).toBe('k'.repeat(30))
  })

  test('every bad key is listed with its rule, not just the first', () => {
    const p = problems(() =>
      buildConfig(
        { server: { httpsPort: 'eighty', trustProxy: 'x' }, tls: { mode: 'magic' }, nosuch: {}, limits: { apiPerMinut: 1 } },
        { SHORTLINK_LIMITS_APIPERMINUTE: '0' },
      ),
    )
    expect(p.some((m) => m.startsWith('server.httpsPort:') && m.includes('integer'))).toBe(true)
    expect(p.some((m) => m.startsWith('server.trustProxy:'))).toBe(true)
    expect(p.some((m) => m.startsWith('tls.mode:') && m.includes('self-signed'))).toBe(true)
    expect(p.some((m) => m.startsWith('[nosuch]'))).toBe(true)
    expect(p.some((m) => m.startsWith('limits.apiPerMinut:') && m.includes('unknown key'))).toBe(true)
    expect(p.some((m) => m.startsWith('limits.apiPerMinute:') && m.includes('between 1'))).toBe(true)
  })

  test('DNS servers are IP addresses, checked with the rest of the config', () => {
    expect(buildConfig({ domains: { dnsServers: ['127.0.0.1:8053', '[::1]:53', '9.9.9.9'] } }, {}).domains.dnsServers).toHaveLength(3)
    expect(problems(() => buildConfig({ domains: { dnsServers: ['dns.example.com'] } }, {}))[0]).toStartWith('domains.dnsServers:')
  })

  test('[store] url: empty is the embedded SQLite store; a PostgreSQL URL from the file or SHORTLINK_STORE_URL is taken; a URL without a host or of another scheme is refused', () => {
    expect(buildConfig({ store: { url: '' } }, {}).store.url).toBe('')
    expect(buildConfig({}, {}).store.url).toBe('')
    expect(buildConfig({ store: { url: 'postgres://u:p@db:5432/links' } }, {}).store.url).toBe('postgres://u:p@db:5432/links')
    expect(buildConfig({}, { SHORTLINK_STORE_URL: 'postgresql://db/links' }).store.url).toBe('postgresql://db/links')
    expect(problems(() => buildConfig({ store: { url: 'postgres:///links' } }, {}))).toEqual([expect.stringMatching(/^store\.url: expected postgres:\/\/user/)])
    expect(problems(() => buildConfig({ store: { url: 'mysql://db/links' } }, {}))[0]).toStartWith('store.url: must match')
  })

  test('cross-field rules', () => {
    expect(problems(() => buildConfig({ server: { httpPort: 8443 } }, {}))[0]).toContain('server.httpPort')
    expect(problems(() => buildConfig({ tls: { mode: 'files' } }, {}))[0]).toContain('tls.certFile')
  })

  test('loadConfig reads TOML, reports bad TOML and a missing explicit file', () => {
    const dir = mkdtempSync(join(tmpdir(), 'cfg-'))
    writeFileSync(join(dir, 'ok.toml'), '[server]\nhttpsPort = 9000\n')
    expect(loadConfig(join(dir, 'ok.toml'), {}).config.server.httpsPort).toBe(9000)
    writeFileSync(join(dir, 'bad.toml'), '[server\nx = ')
    expect(problems(() => loadConfig(join(dir, 'bad.toml'), {}))[0]).toContain('not valid TOML')
    expect(problems(() => loadConfig(join(dir, 'missing.toml'), {}))[0]).toContain('no such file')
    expect(loadConfig(undefined, { SHORTLINK_CONFIG: join(dir, 'ok.toml') }).file).toBe(join(dir, 'ok.toml'))
  })
})
