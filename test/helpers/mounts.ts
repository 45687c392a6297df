/**
 * Small file systems made by a test: a tmpfs of a given size (a disk that fills up) or a
 * read-only one (a read-only volume). Mounting needs root, as these tests run here and in
 * CI; without it they fail with a sentence saying so, never skip. Unmounted by the test, or
 * at the end of the run if it could not (test/helpers/cleanup.ts).
 */
import { mkdirSync } from 'node:fs'
import { atRunEnd } from './cleanup'

export function requireRoot(what: string): void {
  if (process.getuid?.() !== 0)
    throw new Error(`${what} needs root (it mounts a file system or runs the binary as another user); run the suite as root, as CI does`)
}

export interface Mounted {
  path: string
  unmount(): Promise<void>
}

function run(cmd: string[]) {
  const r = Bun.spawnSync(cmd, { stdout: 'pipe', stderr: 'pipe' })
  if (r.exitCode !== 0) throw new Error(`${cmd.join(' ')} failed: ${r.stderr.toString()}`)
}

/** A tmpfs of `sizeKb` KiB at `path` (made if missing), read-only when asked. */
export function mountTmpfs(path: string, { sizeKb, readOnly = false, mode = '0755' }: { sizeKb: number; readOnly?: boolean; mode?: string }): Mounted {
  requireRoot('mounting a tmpfs')
  mkdirSync(path, { recursive: true })
  run(['mount', '-t', 'tmpfs', '-o', `size=${sizeKb}k,mode=${mode}${readOnly ? ',ro' : ''}`, 'tmpfs', path])
  const forget = atRunEnd({ name: `mount ${path}`, sync: () => Bun.spawnSync(['umount', '-l', path]) })
  return {
    path,
    async unmount() {
      forget()
      run(['umount', '-l', path])
    },
  }
}
