/**
 * Builds the single executable `dist/shortlink`: API, redirect server, store, TLS and
 * the embedded web assets (imported `with { type: 'file' }`) in one file.
 */
import { $ } from 'bun'
import { mkdirSync } from 'node:fs'
import { WORKER_ENTRYPOINTS } from '../src/shared/worker-spec'

mkdirSync('dist', { recursive: true })
const started = performance.now()
// Workers are extra entrypoints so the binary can start them (see src/shared/worker-spec.ts).
const workers = WORKER_ENTRYPOINTS.map((p) => `src/${p}`)
await $`bun build --compile --minify --sourcemap src/main.ts ${workers} --outfile dist/shortlink`.quiet()
const size = Bun.file('dist/shortlink').size
console.log(`built dist/shortlink: ${(size / 1024 / 1024).toFixed(1)} MiB in ${((performance.now() - started) / 1000).toFixed(1)} s`)
