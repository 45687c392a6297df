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
import { open } from 'node:fs/promises'
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
    if (!(await copyFromExecutable(embedded, tmp))) await Bun.write(tmp, embedded)
    renameSync(tmp, target)
  }
  return target
}

/**
 * Writes the embedded library to `dest` from the executable file, not from the embedded copy:
 * that copy is read through the binary's memory mapping, and copying from it left its 70 MB
 * resident in the server's RSS for good (a fresh server idled at 250 MB instead of 175).
 * Reading the file goes through the page cache, which the process does not hold. Found by
 * its first 64 KiB (ELF and program headers, unique to it), checked by its last 64 KiB; one
 * read of the executable on the first start of a data dir. False when not found. (Bun.write of
 * a file slice copies the whole file in Bun 1.4.5, hence the copy by hand.)
 */
async function copyFromExecutable(embedded: Blob, dest: string): Promise<boolean> {
  const probe = 64 * 1024
  const size = embedded.size
  if (size < 2 * probe) return false
  const head = Buffer.from(await embedded.slice(0, probe).arrayBuffer())
  const tail = Buffer.from(await embedded.slice(size - probe).arrayBuffer())
  const exe = await open(process.execPath, 'r')
  const dst = await open(dest, 'w')
  try {
    const exeSize = (await exe.stat()).size
    const buf = Buffer.alloc(4 * 2 ** 20)
    const read = async (at: number, n: number) => buf.subarray(0, (await exe.read(buf, 0, Math.min(n, buf.length), at)).bytesRead)
    let found = -1
    for (let at = 0; at < exeSize && found < 0; at += buf.length - probe) {
      const bytes = await read(at, buf.length)
      for (let i = bytes.indexOf(head); i >= 0 && found < 0; i = bytes.indexOf(head, i + 1)) {
        const start = at + i
        if (start + size > exeSize) break
        if (Buffer.compare(tail, Buffer.from(await read(start + size - probe, probe))) === 0) found = start
        else await read(at, buf.length) // the tail read reused the buffer: read the chunk again
      }
    }
    if (found < 0) return false
    for (let done = 0; done < size; ) {
      const chunk = await read(found + done, size - done)
      await dst.write(chunk, 0, chunk.length, done)
      done += chunk.length
    }
    return true
  } finally {
    await exe.close()
    await dst.close()
  }
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
