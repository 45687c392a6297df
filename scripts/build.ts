/**
 * Builds the single executable `dist/shortlink`: API, redirect server, store, TLS and
 * the embedded web assets (imported `with { type: 'file' }`) in one file.
 */

import { mkdirSync } from 'node:fs'
import { $ } from 'bun'
import { buildAssetPack, encodePack } from '../src/dashboard'
import { WORKER_ENTRYPOINTS } from '../src/shared/worker-spec'

mkdirSync('dist', { recursive: true })
const started = performance.now()
// Workers are extra entrypoints so the binary can start them (see src/shared/worker-spec.ts).
const workers = WORKER_ENTRYPOINTS.map((p) => `src/${p}`)
// The dashboard (web/app) is built first and embedded as one file the binary finds in Bun.embeddedFiles.
// `--root src` keeps src/ the bundle root although the pack lies outside it: workers are addressed from there.
await Bun.write('dist/dashboard.pack', encodePack(await buildAssetPack()))
// --bytecode: the binary carries compiled bytecode, so a start skips parsing and compiling
// the ~2 MB of bundled JavaScript (about half the start-up; scripts/bench/startup.ts).
// DuckDB's binding loader requires the addon of every platform in a switch: only this platform's is
// installed and embedded (with its libduckdb.so, src/stats/events.duckdb.ts); the others stay external.
const otherDuckDbs = ['win32-x64', 'win32-arm64', 'darwin-x64', 'darwin-arm64', 'linux-arm64', 'linux-x64-musl', 'linux-arm64-musl']
  .filter((p) => p !== `${process.platform}-${process.arch}`)
  .flatMap((p) => ['--external', `@duckdb/node-bindings-${p}/duckdb.node`])
await $`bun build --compile --bytecode --format=esm --minify --sourcemap --root src src/main.ts ${workers} dist/dashboard.pack ${otherDuckDbs} --outfile dist/shortlink`.quiet()
const size = Bun.file('dist/shortlink').size
console.log(`built dist/shortlink: ${(size / 1024 / 1024).toFixed(1)} MiB in ${((performance.now() - started) / 1000).toFixed(1)} s`)

// The bundler embeds the native resvg module (@resvg/resvg-js) of the platform it builds
// on, which the binary writes to its temp folder and loads at start-up. Without it (no
// prebuilt module installed for this platform) QR codes are drawn by resvg-wasm, slower.
const binary = Buffer.from(await Bun.file('dist/shortlink').arrayBuffer())
const at = binary.indexOf('/$bunfs/root/resvgjs.')
const embedded = at < 0 ? null : /^[^"'\s]+?\.node/.exec(binary.toString('latin1', at, at + 200))?.[0]
console.log(
  embedded
    ? `native QR rasteriser embedded: ${embedded.slice('/$bunfs/root/'.length)}`
    : 'warning: no native resvg module for this platform: QR codes will be drawn by resvg-wasm (slower)',
)
