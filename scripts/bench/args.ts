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

/**
 * A seeded pseudo-random source in [0, 1) (mulberry32): successive values are
 * independent (an LCG's low bits correlated link types with clicks), and runs repeat.
 */
export function seededRandom(seed: number): () => number {
  let state = seed >>> 0
  return () => {
    state = (state + 0x6d2b79f5) >>> 0
    let x = state
    x = Math.imul(x ^ (x >>> 15), x | 1)
    x ^= x + Math.imul(x ^ (x >>> 7), x | 61)
    return ((x ^ (x >>> 14)) >>> 0) / 2 ** 32
  }
}
