/**
 * Loads DuckDB (`@duckdb/node-api`) in this process, from source and inside the compiled binary.
 *
 * In a `bun build --compile` binary the addon (duckdb.node) is embedded and extracted by Bun,
 * but it links libduckdb.so dynamically, which is not beside the extracted addon. So the
 * binary embeds libduckdb.so too (imported as a file), writes it into the data dir when missing
 * or of another size, and loads it with bun:ffi before the addon: the addon's dependency is then
 * the library already loaded (docs/adr/0019, /work/shared/notes/analytics.md).
 */
import { existsSync, renameSync, statSync } from 'node:fs'
import { join } from 'node:path'
import libduckdbPath from '@duckdb/node-bindings-linux-x64/libduckdb.so' with { type: 'file' }

type NodeApi = typeof import('@duckdb/node-api')

let loaded: Promise<NodeApi> | null = null

/** The library file beside the data: one per DuckDB version, rewritten when its size differs. */
async function placeLibrary(dataDir: string): Promise<string> {
  const embedded = Bun.file(libduckdbPath)
  const target = join(dataDir, `libduckdb-${DUCKDB_VERSION}.so`)
  if (!existsSync(target) || statSync(target).size !== embedded.size) {
    const tmp = `${target}.${process.pid}.tmp`
    await Bun.write(tmp, embedded)
    renameSync(tmp, target)
  }
  return target
}

/** The DuckDB version of the pinned @duckdb/node-api (package.json). */
export const DUCKDB_VERSION = '1.5.6'

/** `@duckdb/node-api`, loaded once per thread; `dataDir` receives libduckdb.so in a compiled binary. */
export function loadDuckDb(dataDir: string): Promise<NodeApi> {
  loaded ??= (async () => {
    if (import.meta.url.includes('$bunfs')) {
      const { dlopen } = await import('bun:ffi')
      // dlopen needs at least one symbol; the handle stays open for the life of the process.
      dlopen(await placeLibrary(dataDir), { duckdb_library_version: { args: [], returns: 'cstring' } })
    }
    return await import('@duckdb/node-api')
  })()
  return loaded
}
