/**
 * One server per data dir. The listeners use SO_REUSEPORT (needed to swap TLS
 * certificates without downtime), so a second process would otherwise bind the same
 * port silently and share the traffic. A pid file created exclusively prevents that;
 * a stale file left by a killed process is taken over.
 */
import { closeSync, mkdirSync, openSync, readFileSync, unlinkSync, writeSync } from 'node:fs'

export class DataDirLockedError extends Error {}

export function lockDataDir(dataDir: string): () => void {
  mkdirSync(dataDir, { recursive: true, mode: 0o700 })
  const path = `${dataDir}/shortlink.pid`
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      const fd = openSync(path, 'wx')
      writeSync(fd, String(process.pid))
      closeSync(fd)
      return () => {
        try {
          if (readFileSync(path, 'utf8').trim() === String(process.pid)) unlinkSync(path)
        } catch {}
      }
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e
      const pid = Number(readFileSync(path, 'utf8').trim())
      if (Number.isInteger(pid) && pid > 0 && pid !== process.pid && isAlive(pid))
        throw new DataDirLockedError(`another shortlink server (pid ${pid}) is using ${dataDir}; stop it first`)
      unlinkSync(path) // stale: its process is gone
    }
  }
  throw new DataDirLockedError(`could not lock ${dataDir}`)
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0)
    return true
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM'
  }
}
