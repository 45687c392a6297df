/**
 * Content-addressed bytes under `<dataDir>/files/<sha256>`. A blob is written to a temp
 * file in the same directory and renamed into place, so a reader never sees a partial
 * file and a crash leaves at most a stray `.tmp-*` (swept at start). Equal content is
 * stored once.
 */

import { createHash, randomBytes } from 'node:crypto'
import { existsSync, mkdirSync, readdirSync, renameSync, rmSync, statSync } from 'node:fs'
import { open } from 'node:fs/promises'
import { join } from 'node:path'

export function createBlobStore(dataDir: string) {
  const dir = join(dataDir, 'files')
  let ready = false
  const ensureDir = () => {
    if (ready) return
    mkdirSync(dir, { recursive: true, mode: 0o700 })
    for (const name of readdirSync(dir)) if (name.startsWith('.tmp-')) rmSync(join(dir, name), { force: true })
    ready = true
  }
  const pathOf = (sha256: string) => join(dir, sha256)

  return {
    pathOf,
    /** Hashes and writes `bytes` to a temp file; `commit` moves it into place (sync, so it can pair with a DB write). */
    async stage(bytes: Uint8Array): Promise<{ sha256: string; commit(): void; discard(): void }> {
      ensureDir()
      const sha256 = createHash('sha256').update(bytes).digest('hex')
      const tmp = join(dir, `.tmp-${randomBytes(8).toString('hex')}`)
      const fh = await open(tmp, 'wx', 0o600)
      try {
        await fh.writeFile(bytes)
        await fh.sync() // the rename must not land before the bytes do
      } catch (e) {
        rmSync(tmp, { force: true })
        throw e
      } finally {
        await fh.close()
      }
      return {
        sha256,
        commit() {
          const target = pathOf(sha256)
          if (existsSync(target) && statSync(target).size === bytes.byteLength) rmSync(tmp, { force: true })
          else renameSync(tmp, target)
        },
        discard: () => rmSync(tmp, { force: true }),
      }
    },
    remove(sha256: string) {
      rmSync(pathOf(sha256), { force: true })
    },
    exists: (sha256: string) => existsSync(pathOf(sha256)),
  }
}
export type BlobStore = ReturnType<typeof createBlobStore>
