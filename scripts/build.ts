/**
 * Builds the single executable `dist/shortlink`: API, redirect server, store, TLS and
 * the embedded web assets (imported `with { type: 'file' }`) in one file.
 */
import { $ } from 'bun'
import { mkdirSync } from 'node:fs'

mkdirSync('dist', { recursive: true })
const started = performance.now()
// The click-writer worker is a second entrypoint so the binary can start it.
await $`bun build --compile --minify --sourcemap src/main.ts src/stats/click-writer.worker.ts --outfile dist/shortlink`.quiet()
const size = Bun.file('dist/shortlink').size
console.log(`built dist/shortlink: ${(size / 1024 / 1024).toFixed(1)} MiB in ${((performance.now() - started) / 1000).toFixed(1)} s`)
