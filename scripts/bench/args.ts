/** Shared pieces of the benchmark scripts. */
import { existsSync, rmSync } from 'node:fs'
import { createApiApp } from '../../src/app'
import { buildConfig } from '../../src/config/config.load'
import { createDeps } from '../../src/deps'
import { createLogger } from '../../src/shared/log'

/** `--name value` command-line options. */
export function arg(name: string, fallback: string): string {
  const i = process.argv.indexOf(`--${name}`)
  return i > 0 && process.argv[i + 1] !== undefined ? process.argv[i + 1]! : fallback
}

/**
 * The real app on a store file: a fresh file unless `--reuse` is given and the file
 * exists; no rate limit in the way.
 */
export function benchApp(dbPath: string) {
  const reuse = process.argv.includes('--reuse') && existsSync(dbPath)
  if (!reuse) for (const f of [dbPath, `${dbPath}-wal`, `${dbPath}-shm`]) rmSync(f, { force: true })
  const deps = createDeps(buildConfig({ limits: { apiPerMinute: 1_000_000 } }, {}), dbPath, createLogger(true))
  return { reuse, deps, app: createApiApp(deps) }
}

export { seededRandom } from '../../test/helpers/random'
