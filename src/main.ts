#!/usr/bin/env bun
/**
 * CLI entry: serve | keys create | users add | backup | check.
 * `bun src/main.ts` and the compiled `shortlink` binary behave the same.
 */
import { existsSync } from 'node:fs'
import { ConfigError, loadConfig } from './config/config.load'
import type { Config } from './config/config.schema'
import { storePath } from './store/db'
import { createDeps } from './deps'
import { createLogger } from './shared/log'
import { AppError } from './shared/errors'
import { lockDataDir, DataDirLockedError } from './store/lock'
import { loadServerCertificate } from './tls/certificates'
import { startServer } from './server'
import pkg from '../package.json'

const REQUIRED_BUN = pkg.packageManager.replace(/^bun@/, '')

const USAGE = `shortlink ${pkg.version}: short links, QR codes and statistics in one binary

Usage:
  shortlink serve [--config FILE]                 start the server (default ./shortlink.toml, or SHORTLINK_CONFIG;
                                                  with no file: the embedded default on https://localhost:8443)
  shortlink keys create --user ID --role ROLE     create an API key (admin | member | readonly); printed once
  shortlink users add ID                          add a user
  shortlink backup FILE                           consistent copy of the live database into FILE
  shortlink check [--config FILE]                 validate the configuration and exit
`

function versionAtLeast(actual: string, wanted: string): boolean {
  const a = actual.split('.').map(Number)
  const w = wanted.split('.').map(Number)
  for (let i = 0; i < 3; i++) if ((a[i] ?? 0) !== (w[i] ?? 0)) return (a[i] ?? 0) > (w[i] ?? 0)
  return true
}

function parseFlags(args: string[]): { positional: string[]; flags: Record<string, string> } {
  const positional: string[] = []
  const flags: Record<string, string> = {}
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!
    if (a.startsWith('--')) {
      const eq = a.indexOf('=')
      if (eq > 0) flags[a.slice(2, eq)] = a.slice(eq + 1)
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
    if (e instanceof ConfigError) die(e.message, 2)
    throw e
  }
}

async function serve(flags: Record<string, string>) {
  const { config, file } = readConfig(flags)
  const log = createLogger()
  let unlock: () => void
  try {
    unlock = lockDataDir(config.server.dataDir)
  } catch (e) {
    if (e instanceof DataDirLockedError) die(e.message, 1)
    throw e
  }
  const deps = createDeps(config, storePath(config.server.dataDir), log)
  const firstKey = deps.auth.bootstrapAdminKey()
  const cert = await loadServerCertificate(config, deps.settings)
  // Loaded before listening, so the first visits get their country like every other.
  await deps.geo.warm()
  let server
  try {
    server = startServer(deps, cert)
  } catch (e) {
    unlock()
    die(`cannot listen: ${(e as Error).message}`)
  }
  if (firstKey) {
    process.stdout.write(
      `\nFirst admin API key (shown once, store it now):\n\n  ${firstKey}\n\n` +
        `Try: curl -k ${deps.settings.baseUrl}/tags -H 'Authorization: Bearer ${firstKey}'\n\n`,
    )
  }

  // In the background: the first QR renders are then as quick as later ones (see warmUpChecks).
  deps.qr.warmUp().catch((e) => log.warn('qr warm-up failed', { error: String(e) }))

  // Logged last: tests and scripts wait for this line, the key above is already out.
  log.info('started', { config: file ?? '(embedded default)', dataDir: config.server.dataDir, tls: config.tls.mode })

  let stopping = false
  const shutdown = async (signal: string) => {
    if (stopping) return
    stopping = true
    log.info('shutting down', { signal })
    await server.stop()
    deps.db.close()
    unlock()
    log.info('stopped')
    process.exit(0)
  }
  process.on('SIGTERM', () => void shutdown('SIGTERM'))
  process.on('SIGINT', () => void shutdown('SIGINT'))
}

function withStore<T>(flags: Record<string, string>, fn: (deps: ReturnType<typeof createDeps>) => T): T {
  const { config } = readConfig(flags)
  const deps = createDeps(config, storePath(config.server.dataDir), createLogger(true))
  try {
    return fn(deps)
  } catch (e) {
    if (e instanceof AppError) die(e.message)
    throw e
  } finally {
    deps.db.close()
  }
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
      return
    }
    case 'keys': {
      if (positional[0] !== 'create') die(`usage: shortlink keys create --user ID --role admin|member|readonly`)
      if (!flags.user || !flags.role) die('keys create needs --user ID and --role admin|member|readonly')
      const made = withStore(flags, (d) => d.auth.createKey(flags.user!, flags.role!))
      process.stdout.write(`${made.key}\n`)
      process.stderr.write(`created ${made.role} key ${made.keyId} for ${made.userId}; it is shown only this once\n`)
      return
    }
    case 'users': {
      if (positional[0] !== 'add' || !positional[1]) die('usage: shortlink users add ID')
      const r = withStore(flags, (d) => d.auth.addUser(positional[1]!))
      process.stdout.write(`${r.id}\n`)
      process.stderr.write(r.created ? `added user ${r.id}\n` : `user ${r.id} already exists\n`)
      return
    }
    case 'backup': {
      const target = positional[0]
      if (!target) die('usage: shortlink backup FILE')
      if (existsSync(target)) die(`${target} exists; choose a new file`)
      withStore(flags, (d) => d.db.query('VACUUM INTO ?').run(target))
      process.stdout.write(`backup written to ${target}\n`)
      return
    }
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
