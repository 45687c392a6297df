#!/usr/bin/env bun
/**
 * CLI entry: serve | keys create/list/revoke | users add/passwd | backup | migrate-store | check.
 * `bun src/main.ts` and the compiled `shortlink` binary behave the same.
 */
import { existsSync, statSync } from 'node:fs'
import { basename, dirname, resolve } from 'node:path'
import pkg from '../package.json'
import { ADMIN_USER_ID, type Caller, type KeyRecord } from './auth'
import { BackupCommandError, backupCommand, nodeParts, RestoreFailedError, RestoreRefusedError, restoreBackup } from './backup'
import { type Config, ConfigError, deriveSettings, loadConfig } from './config'
import { createClusterDeps, createDeps, type Deps } from './deps'
import { IMPORT_SOURCES, type ImportRecordValue, type ImportSourceName } from './imports'
import { metrics } from './metrics'
import { startServer } from './server'
import { AppError, createLogger, readCapped } from './shared'
import { StartError, startFailure } from './start-errors'
import { DUCKDB_VERSION, eventsPathOf, openEventsCopySource } from './stats'
import {
  COPIED_TABLES,
  type CopyProgress,
  CopyRefusedError,
  connectPostgres,
  copySqliteToPostgres,
  lockDataDir,
  openSqliteSource,
  parsePostgresUrl,
  redactUrl,
  StoreUrlError,
  storePath,
} from './store'
import { loadServerCertificate } from './tls'

/** How long a SIGTERM may take (every held click written, deliveries in flight finished) before the process gives up (systemd's default stop timeout is 90 s). */
const SHUTDOWN_DEADLINE_MS = 45_000

const unhandledRejections = metrics.counter(
  'shortlink_unhandled_rejections_total',
  'Failed promises nothing handled: each a bug, logged with its stack; the server went on.',
)

const REQUIRED_BUN = pkg.packageManager.replace(/^bun@/, '')

const USAGE = `shortlink ${pkg.version}: short links, QR codes and statistics in one binary

Usage:
  shortlink serve [--config FILE]                 start the server (default ./shortlink.toml, or SHORTLINK_CONFIG;
                                                  with no file: the embedded default on https://localhost:8443)
  shortlink keys create --user ID --role ROLE [--name NAME]
                                                  create an API key (admin | member | readonly); printed once
  shortlink keys list [--user ID]                 list API keys, revoked ones included (never the secrets)
  shortlink keys revoke ID                        revoke an API key; a running server refuses it within a second
  shortlink users add ID [--role ROLE]            add a user (role member by default); on an existing user,
                                                  --role sets its role (its keys act with at most that role)
  shortlink users passwd ID                       set a user's dashboard password (prompted, or one line on stdin)
  shortlink backup FILE                           one consistent archive of the node (records, clicks, files, certificates
                                                  and keys) into FILE, with FILE.sha256; through the running server
  shortlink restore FILE --data-dir DIR           rebuild a data dir (empty or new) from a backup and verify it
  shortlink migrate-store --from sqlite:PATH --to postgres://USER:PASS@HOST:PORT/DB [--force]
                                                  copy a single node's store (PATH: shortlink.db or its data dir,
                                                  server stopped) into PostgreSQL: one snapshot, one transaction;
                                                  refuses a target holding data unless --force (which replaces it);
                                                  checks every table's row count. Exit 0 all match, 1 failed
                                                  (nothing kept), 2 refused (bad input, unreachable, not empty)
  shortlink import --source SOURCE FILE [--user ID] [--domain DOMAIN] [--dry-run]
                                                  import links from another service's export file
                                                  (SOURCE: ${IMPORT_SOURCES.join(', ')}) into the admin
                                                  user's account, or --user ID's (acting with that user's role);
                                                  links whose domain is not served here go to DOMAIN (default: the
                                                  first default domain). Running it again creates nothing new.
                                                  Exit 0 every row imported or already there, 1 some rows failed
                                                  or the import stopped, 2 refused (arguments, file, user)
  shortlink check [--config FILE]                 validate the configuration and exit
`

function versionAtLeast(actual: string, wanted: string): boolean {
  const a = actual.split('.').map(Number)
  const w = wanted.split('.').map(Number)
  for (let i = 0; i < 3; i++) if ((a[i] ?? 0) !== (w[i] ?? 0)) return (a[i] ?? 0) > (w[i] ?? 0)
  return true
}

/** Flags that take no value. */
const SWITCHES = new Set(['force', 'dry-run'])

function parseFlags(args: string[]): { positional: string[]; flags: Record<string, string> } {
  const positional: string[] = []
  const flags: Record<string, string> = {}
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!
    if (a.startsWith('--')) {
      const eq = a.indexOf('=')
      if (eq > 0) flags[a.slice(2, eq)] = a.slice(eq + 1)
      else if (SWITCHES.has(a.slice(2))) flags[a.slice(2)] = 'true'
      else flags[a.slice(2)] = args[++i] ?? ''
    } else positional.push(a)
  }
  return { positional, flags }
}

function die(message: string, code = 1): never {
  process.stderr.write(`shortlink: ${message}\n`)
  process.exit(code)
}

function readConfig(flags: Record<string, string>): { config: Config; file: string | null } {
  try {
    return loadConfig(flags.config)
  } catch (e) {
    if (e instanceof ConfigError) die(startFailure(e), 2)
    throw e
  }
}

async function serve(flags: Record<string, string>) {
  const { config, file } = readConfig(flags)
  const log = createLogger()
  // A failed promise nothing handled is a bug; Bun (like Node) ends the process on one when nothing listens,
  // which would stop every redirect and lose the visits held in memory. Logged with its stack and counted instead.
  process.on('unhandledRejection', (reason) => {
    unhandledRejections.inc()
    log.error('unhandled rejection (a bug; the server goes on)', { error: reason instanceof Error ? (reason.stack ?? reason.message) : String(reason) })
  })
  // Checked before listening: the database itself is read in the background (below).
  if (config.geoip.database && !existsSync(config.geoip.database)) die(`geoip.database: no such file: ${config.geoip.database}`)
  // Every way a start can fail ends in one line naming the cause (src/start-errors.ts).
  let unlock: (() => void) | undefined
  let deps: Deps
  let server: ReturnType<typeof startServer>
  let firstKey: string | null
  let geoFailure: Promise<Error | null>
  try {
    unlock = lockDataDir(config.server.dataDir)
    // Before the store: a bad certificate file fails the start without migrating anything.
    const cert = await loadServerCertificate(config, deriveSettings(config))
    deps = await openDeps(config, log)
    // A configured database is loaded while the server starts and answers (a city database takes
    // 100-300 ms), so a file that cannot be read stops it now; a visit before then gets its location
    // when its click is written, location targeting waits. The bundled country database (8 MB of
    // heap) loads with the first lookup: an idle server does not hold it.
    geoFailure = config.geoip.database
      ? deps.geo.warm().then(
          () => null,
          (e: unknown) => e as Error,
        )
      : Promise.resolve(null)
    firstKey = await deps.firstAdminKey()
    server = startServer(deps, cert)
    // On PostgreSQL the listener reads the stored certificates after it starts listening: a restart
    // serves them before it says it has started (at once on SQLite).
    await server.https.ready
  } catch (e) {
    unlock?.()
    die(startFailure(e, config))
  }
  if (firstKey) {
    process.stdout.write(
      `\nFirst admin API key (shown once, store it now):\n\n  ${firstKey}\n\n` +
        `Try: curl -k ${deps.settings.baseUrl}/tags -H 'Authorization: Bearer ${firstKey}'\n\n`,
    )
  }

  // Nothing heavy loads before it is first needed (an idle server holds ≤ 100 MB, docs/bench/redirect.md):
  // the QR decoders warm up with the first render (src/qr/qr.render.ts), the events engine (DuckDB,
  // its own thread) opens with the first click batch or statistics read (src/stats/click-recorder.ts).

  // Logged last: tests and scripts wait for this line, the key above is already out.
  log.info('started', { config: file ?? '(embedded default)', dataDir: config.server.dataDir, tls: config.tls.mode })
  // TEST ONLY (test/unhandled-rejection.e2e.test.ts): a rejection nobody handles, as a bug would leave. Never set it in production.
  if (process.env.SHORTLINK_TEST_UNHANDLED_REJECTION) void Promise.reject(new Error(process.env.SHORTLINK_TEST_UNHANDLED_REJECTION))

  let stopping = false
  const shutdown = async (signal: string, exitCode = 0) => {
    if (stopping) return
    stopping = true
    log.info('shutting down', { signal })
    // A stop that hangs (a store that stopped answering, a stuck thread) must not keep the process, its ports and
    // its lock for ever: past the deadline it says what it was waiting for and exits non-zero.
    let waitingFor = 'the server (requests in flight, held clicks, webhook deliveries)'
    const deadline = setTimeout(() => {
      log.error('shutdown did not finish in time: exiting', { waitingFor, afterMs: SHUTDOWN_DEADLINE_MS })
      unlock?.()
      process.exit(1)
    }, SHUTDOWN_DEADLINE_MS)
    deadline.unref()
    await server.stop()
    // Visits the recorder could not write (a full disk, a broken store): lost, so the stop is not clean.
    const lostVisits = deps.recorder.pendingCount()
    waitingFor = 'recording API keys last used'
    await deps.auth.flushLastUsed()
    waitingFor = 'closing the store'
    await deps.close()
    clearTimeout(deadline)
    unlock?.()
    if (lostVisits > 0) process.stderr.write(`shortlink: stopped with ${lostVisits} visits it could not write (see the log above); they are lost\n`)
    log.info('stopped', lostVisits > 0 ? { lostVisits } : undefined)
    process.exit(lostVisits > 0 ? exitCode || 1 : exitCode)
  }
  process.on('SIGTERM', () => void shutdown('SIGTERM'))
  process.on('SIGINT', () => void shutdown('SIGINT'))
  // A GeoIP file that cannot be read stops the server, as it did when it was read before listening.
  void geoFailure.then((e) => {
    if (!e) return
    log.error('cannot read the GeoIP database', { file: config.geoip.database || '(bundled)', error: String(e) })
    process.stderr.write(
      `shortlink: ${startFailure(new StartError(`cannot read the GeoIP database ${config.geoip.database || '(bundled)'} (geoip.database): ${e.message}`))}\n`,
    )
    void shutdown('geoip', 1)
  })
}

/**
 * The store `config` names: the embedded SQLite file, or PostgreSQL (`[store] url`), migrated
 * and subscribed. A PostgreSQL that cannot be reached is an error naming it (password masked).
 */
async function openDeps(config: Config, log: ReturnType<typeof createLogger>): Promise<Deps> {
  if (!config.store.url) return createDeps(config, storePath(config.server.dataDir), log)
  try {
    return await createClusterDeps(config, log)
  } catch (e) {
    // Bun.SQL says "Failed to connect" for a refused connection and for an unknown host alike.
    const why = (e as { code?: string }).code === 'ERR_POSTGRES_CONNECTION_REFUSED' ? 'cannot connect (refused, or no such host)' : (e as Error).message
    throw new StartError(`cannot use the PostgreSQL store ${redactUrl(config.store.url)} (store.url): ${why}`)
  }
}

async function withStore<T>(flags: Record<string, string>, fn: (deps: Deps) => T | Promise<T>): Promise<T> {
  const { config } = readConfig(flags)
  const deps = await openDeps(config, createLogger(true)).catch((e: unknown) => die(startFailure(e, config)))
  try {
    return await fn(deps)
  } catch (e) {
    if (e instanceof AppError) die(e.message)
    throw e
  } finally {
    await deps.close()
  }
}

/** `migrate-store`: the copy itself is src/store/pg/copy.ts; here arguments, progress and the exit code. */
async function migrateStore(flags: Record<string, string>) {
  const usage = 'usage: shortlink migrate-store --from sqlite:PATH --to postgres://USER:PASS@HOST:PORT/DB [--force]'
  const from = flags.from ?? ''
  const to = flags.to ?? ''
  if (!from.startsWith('sqlite:') || from.length === 'sqlite:'.length || !to) die(usage, 2)
  try {
    parsePostgresUrl(to)
  } catch (e) {
    if (e instanceof StoreUrlError) die(`--to: ${e.message}`, 2)
    throw e
  }
  const target = redactUrl(to)
  const sql = connectPostgres(to, { max: 2 })
  try {
    await sql`SELECT 1`
  } catch (e) {
    await sql.close().catch(() => {})
    die(`cannot connect to ${target}: ${(e as Error).message}`, 2)
  }
  let source: ReturnType<typeof openSqliteSource>
  try {
    source = openSqliteSource(from.slice('sqlite:'.length).replace(/^\/\/(?=\/)/, ''))
  } catch (e) {
    await sql.close()
    if (e instanceof CopyRefusedError) die(e.message, 2)
    throw e
  }
  const out = process.stdout
  const width = Math.max(...COPIED_TABLES.map((t) => t.length))
  const rate = (p: CopyProgress) => `${Math.round(p.copied / Math.max(p.elapsedMs / 1000, 0.001)).toLocaleString('en-US')} rows/s`
  // On a terminal, one line per table redrawn in place; otherwise a line per finished table.
  const progress = (p: CopyProgress) => {
    if (out.isTTY) {
      const share = p.total ? p.copied / p.total : 1
      const bar = '#'.repeat(Math.round(share * 24)).padEnd(24, '.')
      const line = `${p.table.padEnd(width)} [${bar}] ${p.copied.toLocaleString('en-US')}/${p.total.toLocaleString('en-US')} ${rate(p)}`
      out.write(`\r${line}\x1b[K${p.done ? '\n' : ''}`)
    } else if (p.done) out.write(`${p.table}: ${p.copied} rows in ${(p.elapsedMs / 1000).toFixed(1)} s (${rate(p)})\n`)
  }
  out.write(`copying ${source.path} into ${target}\n`)
  const started = performance.now()
  let code = 0
  let events: Awaited<ReturnType<typeof openEventsCopySource>> = null
  try {
    // The click events and their rollups of a single node live in its events engine (DuckDB) beside the SQLite file.
    events = await openEventsCopySource(eventsPathOf(source.path), dirname(source.path))
    const result = await copySqliteToPostgres(source, sql, {
      external: events ?? undefined,
      force: 'force' in flags,
      onProgress: progress,
      onMigration: (name) => out.write(`applying PostgreSQL migration ${name}\n`),
    })
    out.write(`\n${'table'.padEnd(width)}  ${'sqlite'.padStart(10)}  ${'postgres'.padStart(10)}\n`)
    for (const c of result.counts)
      out.write(`${c.table.padEnd(width)}  ${String(c.source).padStart(10)}  ${String(c.target).padStart(10)}  ${c.source === c.target ? 'ok' : 'DIFFERENT'}\n`)
    for (const id of result.missingBlobs) process.stderr.write(`shortlink: warning: file ${id}: its bytes are missing from the data dir; copied without them\n`)
    const seconds = ((performance.now() - started) / 1000).toFixed(1)
    if (result.ok) out.write(`every count matches; copied in ${seconds} s\n`)
    else {
      process.stderr.write('shortlink: the counts differ; the copy was rolled back, the target is as it was\n')
      code = 1
    }
  } catch (e) {
    if (e instanceof CopyRefusedError) {
      process.stderr.write(`shortlink: ${e.message}\n`)
      code = 2
    } else {
      process.stderr.write(`shortlink: copy failed, rolled back (the target is as it was): ${(e as Error).message}\n`)
      code = 1
    }
  } finally {
    events?.close()
    source.close()
    await sql.close().catch(() => {})
  }
  process.exit(code)
}

/** `backup FILE`: src/backup does the work; here the store check, the summary and the exit code. */
async function backup(flags: Record<string, string>, target: string | undefined) {
  if (!target) die('usage: shortlink backup FILE')
  const { config } = readConfig(flags)
  if (config.store.url) die("on PostgreSQL, backups are PostgreSQL's: use pg_dump (e.g. pg_dump -Fc -f shortlink.dump DATABASE_URL) or your provider's backups")
  try {
    const r = await backupCommand(config.server.dataDir, target)
    for (const w of r.warnings) process.stderr.write(`shortlink: warning: ${w}\n`)
    const how = r.via === 'server' ? 'taken by the running server' : 'taken directly (no server runs on this data dir)'
    process.stdout.write(
      `backup written to ${r.file} (${r.bytes} bytes, ${r.members} members, ${r.durationMs} ms, ${how})\nsha256 ${r.sha256}  (also in ${r.file}.sha256)\n`,
    )
  } catch (e) {
    if (e instanceof BackupCommandError) die(e.message)
    die(`backup failed: ${(e as Error).message}`)
  }
}

/** `restore FILE --data-dir DIR`. */
async function restore(file: string | undefined, dataDir: string | undefined) {
  if (!file || !dataDir) die('usage: shortlink restore FILE --data-dir DIR   (on PostgreSQL, restore with pg_restore instead)', 2)
  try {
    const r = await restoreBackup({ file, dataDir, parts: nodeParts() })
    process.stdout.write(
      `restored ${r.members} members (${r.bytes} bytes) of the backup of ${r.createdAt} into ${dataDir}; verified: ${r.parts.join(', ')}` +
        `${r.archiveChecksum === 'matched' ? `, ${file}.sha256 matches` : `; no ${file}.sha256 beside it: each member's checksum was checked`}\n` +
        `start a server with server.dataDir = "${dataDir}" to serve it\n`,
    )
  } catch (e) {
    if (e instanceof RestoreRefusedError) die(e.message, 2)
    if (e instanceof RestoreFailedError) die(`restore failed, ${dataDir} left as it was: ${e.message}`)
    throw e
  }
}

/** The command line acts as the operator: an admin, as usr_admin. */
const OPERATOR: Caller = { userId: ADMIN_USER_ID, role: 'admin', keyId: 'key_cli' }

/** Whom `import --user ID` acts as: that user with their own role (a readonly or disabled user imports nothing). */
async function importCaller(deps: Deps, userId: string): Promise<Caller> {
  const user = await deps.users.get(OPERATOR, userId).catch((e: unknown) => die(e instanceof AppError ? e.message : String(e), 2))
  if (user.disabled) die(`user ${user.id} is disabled`, 2)
  if (user.role === 'readonly') die(`user ${user.id} is readonly; an import creates links`, 2)
  return { userId: user.id, role: user.role, keyId: null }
}

const countsOf = (r: ImportRecordValue) =>
  `${(r.created + r.updated + r.skipped + r.failed).toLocaleString('en-US')}/${r.total.toLocaleString('en-US')} rows: ${r.created} created, ${r.updated} updated, ${r.skipped} skipped, ${r.failed} failed`

/** `import`: runs in this process against the store (the server may be running: SQLite allows both), printing progress. */
async function importCommand(positional: string[], flags: Record<string, string>) {
  const usage = `usage: shortlink import --source ${IMPORT_SOURCES.join('|')} FILE [--user ID] [--domain DOMAIN] [--dry-run]`
  const file = positional[0]
  const source = flags.source
  if (!file || !source) die(usage, 2)
  if (!(IMPORT_SOURCES as readonly string[]).includes(source)) die(`--source must be one of ${IMPORT_SOURCES.join(', ')}`, 2)
  if (!statSync(file, { throwIfNoEntry: false })?.isFile()) die(`${file}: no such file`, 2)
  const code = await withStore(flags, async (deps) => {
    const caller = flags.user ? await importCaller(deps, flags.user) : OPERATOR
    let started: Awaited<ReturnType<Deps['imports']['start']>>
    try {
      started = await deps.imports.start(caller, {
        source: source as ImportSourceName,
        path: resolve(file),
        fileName: basename(file),
        domain: flags.domain,
        dryRun: 'dry-run' in flags,
        removeWhenDone: false,
      })
    } catch (e) {
      if (e instanceof AppError) die(`${file}: ${e.message}`, 2)
      throw e
    }
    const { record, done } = started
    // Ctrl-C: the import is marked failed where it stopped (running the file again finishes it).
    process.once('SIGINT', () => void deps.imports.stop())
    const out = process.stderr
    out.write(
      `import ${record.id}${record.dryRun ? ' (dry run: nothing is written)' : ''} into ${caller.userId}, links not on a domain served here go to ${record.domain}\n`,
    )
    let finished = false
    done.finally(() => {
      finished = true
    })
    while (!finished) {
      await Promise.race([done, Bun.sleep(1000)])
      if (!finished && out.isTTY) out.write(`\r${countsOf(await deps.imports.get(caller, record.id))}\x1b[K`)
    }
    const end = await deps.imports.get(caller, record.id)
    out.write(out.isTTY ? `\r${countsOf(end)}\x1b[K\n` : `${countsOf(end)}\n`)
    for (const e of end.errors.slice(0, 20)) out.write(`  row ${e.row}: ${e.message}\n`)
    if (end.failed > 20) out.write(`  … ${end.failed - 20} more: GET /imports/${end.id}\n`)
    process.stdout.write(`${end.id} ${end.status}\n`)
    return end.status === 'done' && end.failed === 0 ? 0 : 1
  })
  process.exit(code)
}

async function allKeys(deps: Deps, user: string | undefined): Promise<KeyRecord[]> {
  const out: KeyRecord[] = []
  for (let page = 1; ; page++) {
    const { keys, total } = await deps.keys.list(OPERATOR, { userIds: user ? [user] : undefined, includeRevoked: true, page, pageSize: 100 })
    out.push(...keys)
    if (out.length >= total || keys.length === 0) return out
  }
}

function keysTable(keys: KeyRecord[]): string {
  const rows = [
    ['ID', 'USER', 'ROLE', 'NAME', 'PREFIX', 'CREATED', 'LAST USED', 'STATUS'],
    ...keys.map((k) => [
      k.id,
      k.userId,
      k.role,
      k.name ?? '-',
      k.prefix,
      k.createdAt,
      k.lastUsedAt ?? 'never',
      k.revokedAt ? `revoked ${k.revokedAt}` : 'active',
    ]),
  ]
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => r[i]!.length)))
  return `${rows.map((r) => r.map((cell, i) => (i === r.length - 1 ? cell : cell.padEnd(widths[i]!))).join('  ')).join('\n')}\n`
}

/** Longest stdin accepted for a password (the rule itself is checked by the user service). */
const MAX_PASSWORD_INPUT = 4096

/** The first line of stdin when it is not a terminal; else a prompt without echo, asked twice. */
async function readNewPassword(userId: string): Promise<string> {
  if (!process.stdin.isTTY) {
    const bytes = await readCapped(Bun.stdin.stream(), MAX_PASSWORD_INPUT)
    if (!bytes) die(`password input is longer than ${MAX_PASSWORD_INPUT} bytes`)
    const line = new TextDecoder().decode(bytes).split(/\r?\n/)[0] ?? ''
    if (!line) die('no password on stdin (expected one line)')
    return line
  }
  const first = await promptHidden(`New password for ${userId}: `)
  const again = await promptHidden('Repeat it: ')
  if (first !== again) die('the passwords differ; nothing changed')
  return first
}

function promptHidden(question: string): Promise<string> {
  process.stderr.write(question)
  const stdin = process.stdin
  stdin.setRawMode(true)
  stdin.resume()
  return new Promise((resolve) => {
    let typed = ''
    const onData = (chunk: Buffer) => {
      for (const ch of chunk.toString('utf8')) {
        if (ch === '\r' || ch === '\n') {
          stdin.off('data', onData)
          stdin.setRawMode(false)
          stdin.pause()
          process.stderr.write('\n')
          return resolve(typed)
        }
        if (ch === '\u0003' || ch === '\u0004') {
          stdin.setRawMode(false)
          process.stderr.write('\n')
          die('cancelled; nothing changed', 130)
        }
        if (ch === '\u007f' || ch === '\b') typed = typed.slice(0, -1)
        else if (typed.length < MAX_PASSWORD_INPUT) typed += ch
      }
    }
    stdin.on('data', onData)
  })
}

async function main(argv: string[]) {
  if (!versionAtLeast(Bun.version, REQUIRED_BUN)) die(`Bun ${REQUIRED_BUN} or newer is required (running ${Bun.version})`)
  const [command, ...rest] = argv
  const { positional, flags } = parseFlags(rest)
  switch (command) {
    case 'serve':
      return serve(flags)
    case 'check': {
      const { config, file } = readConfig(flags)
      process.stdout.write(
        `configuration OK (${file ?? 'embedded default'}): baseUrl ${config.server.baseUrl}, tls ${config.tls.mode}, dataDir ${config.server.dataDir}\n`,
      )
      // The statistics engine this configuration runs (docs/adr/0019).
      const events = eventsPathOf(storePath(config.server.dataDir))
      process.stdout.write(
        config.store.url
          ? 'statistics: click events and rollups in PostgreSQL\n'
          : `statistics: events engine DuckDB ${DUCKDB_VERSION}, ${events}${existsSync(events) ? '' : ' (made at the first start)'}, memoryLimit ${config.stats.memoryLimit}, threads ${config.stats.threads}, queryTimeoutMs ${config.stats.queryTimeoutMs}\n`,
      )
      return
    }
    case 'keys': {
      if (positional[0] === 'create') {
        if (!flags.user || !flags.role) die('keys create needs --user ID and --role admin|member|readonly')
        const made = await withStore(flags, (d) => d.auth.createKey(flags.user!, flags.role!, flags.name || null))
        process.stdout.write(`${made.key}\n`)
        process.stderr.write(`created ${made.role} key ${made.keyId} for ${made.userId}; it is shown only this once\n`)
        return
      }
      if (positional[0] === 'list') {
        const keys = await withStore(flags, (d) => allKeys(d, flags.user))
        process.stdout.write(keysTable(keys))
        return
      }
      if (positional[0] === 'revoke' && positional[1]) {
        const r = await withStore(flags, (d) => d.keys.revoke(OPERATOR, positional[1]!))
        process.stdout.write(`revoked ${r.id}\n`)
        return
      }
      return die('usage: shortlink keys create --user ID --role admin|member|readonly [--name NAME] | keys list [--user ID] | keys revoke ID')
    }
    case 'users': {
      if (positional[0] === 'add' && positional[1]) {
        const r = await withStore(flags, (d) => d.auth.addUser(positional[1]!, flags.role || undefined))
        process.stdout.write(`${r.id}\n`)
        process.stderr.write(r.created ? `added user ${r.id} (${r.role})\n` : `user ${r.id} exists; its role is ${r.role}\n`)
        return
      }
      if (positional[0] === 'passwd' && positional[1]) {
        const id = positional[1]
        // Fail on an unknown user before asking for a password.
        const target = await withStore(flags, (d) => d.users.get(OPERATOR, id))
        const password = await readNewPassword(target.id)
        const user = await withStore(flags, (d) => d.users.update(OPERATOR, target.id, { password }))
        process.stderr.write(`password set for ${user.id}\n`)
        return
      }
      return die('usage: shortlink users add ID [--role admin|member|readonly] | users passwd ID')
    }
    case 'backup':
      return backup(flags, positional[0])
    case 'restore':
      return restore(positional[0], flags['data-dir'])
    case 'migrate-store':
      return migrateStore(flags)
    case 'import':
      return importCommand(positional, flags)
    case undefined:
    case 'help':
    case '--help':
    case '-h':
      process.stdout.write(USAGE)
      return
    case 'version':
    case '--version':
      process.stdout.write(`shortlink ${pkg.version} (bun ${Bun.version})\n`)
      return
    default:
      die(`unknown command '${command}'\n\n${USAGE}`, 2)
  }
}

await main(process.argv.slice(2))
