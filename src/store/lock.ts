/**
 * One server per data dir: an OS lock (flock, through bun:ffi) on `<dataDir>/shortlink.pid`,
 * which also holds the owner's pid for people and messages. The kernel grants the lock to
 * one process at a time and drops it when that process ends, however it ends (kill -9
 * included): no check-then-unlink, so two servers started at the same instant never both
 * get it, and a file left by a killed process is simply locked again. A clean stop removes
 * the file; a process that locked a file someone removed in between checks the path still
 * names the inode it locked, and tries again otherwise.
 */
import { dlopen, FFIType } from 'bun:ffi'
import { closeSync, constants, fstatSync, ftruncateSync, mkdirSync, openSync, readFileSync, type Stats, statSync, unlinkSync, writeSync } from 'node:fs'

export class DataDirLockedError extends Error {}

/** The data dir cannot be used: a file, owned by another user, or not creatable or writable (the message says which). */
export class DataDirError extends Error {}

const LOCK_EX = 2
const LOCK_NB = 4

let libc: { flock(fd: number, op: number): number } | null = null
function flock(fd: number, op: number): boolean {
  libc ??= dlopen(process.platform === 'darwin' ? 'libSystem.B.dylib' : 'libc.so.6', {
    flock: { args: [FFIType.i32, FFIType.i32], returns: FFIType.i32 },
  }).symbols
  return libc.flock(fd, op) === 0
}

export const lockFilePath = (dataDir: string) => `${dataDir}/shortlink.pid`

/** Locks `dataDir` for this process; the answer unlocks it (and removes the pid file). */
export function lockDataDir(dataDir: string): () => void {
  prepareDataDir(dataDir)
  const path = lockFilePath(dataDir)
  for (let attempt = 0; attempt < 10; attempt++) {
    let fd: number
    try {
      fd = openSync(path, constants.O_RDWR | constants.O_CREAT, 0o600)
    } catch (e) {
      throw new DataDirError(`cannot use the data dir ${dataDir}: ${fileProblem(e)} (${path})`)
    }
    if (!flock(fd, LOCK_EX | LOCK_NB)) {
      closeSync(fd)
      const pid = readPid(path)
      throw new DataDirLockedError(`another shortlink server${pid ? ` (pid ${pid})` : ''} is using ${dataDir}; stop it first`)
    }
    // The owner before us may have removed the file between our open and our lock.
    if (!sameFile(fd, path)) {
      closeSync(fd)
      continue
    }
    try {
      ftruncateSync(fd, 0)
      writeSync(fd, String(process.pid), 0)
    } catch (e) {
      closeSync(fd)
      throw new DataDirError(`cannot use the data dir ${dataDir}: ${fileProblem(e)} (${path})`)
    }
    let held = true
    return () => {
      if (!held) return
      held = false
      try {
        unlinkSync(path) // while still locked: a newcomer then locks a new file
      } catch {}
      closeSync(fd) // releases the lock
    }
  }
  throw new DataDirLockedError(`could not lock ${dataDir}: its lock file keeps being replaced`)
}

/** Makes `dataDir` when missing; a DataDirError when it is a file, another user's, or cannot be made. */
function prepareDataDir(dataDir: string) {
  let st: Stats | undefined
  try {
    st = statSync(dataDir, { throwIfNoEntry: false })
  } catch (e) {
    throw new DataDirError(`cannot use the data dir ${dataDir}: ${fileProblem(e)}`)
  }
  if (st && !st.isDirectory()) throw new DataDirError(`the data dir ${dataDir} is a file, not a directory (server.dataDir)`)
  const uid = process.getuid?.()
  // It holds private keys and is made 0700: another user's folder is a mistake, even where its mode would let us in. Root may use any.
  if (st && uid !== undefined && uid !== 0 && st.uid !== uid)
    throw new DataDirError(`the data dir ${dataDir} belongs to uid ${st.uid}, not to this user (uid ${uid}): chown it, or run shortlink as its owner`)
  if (st) return
  try {
    mkdirSync(dataDir, { recursive: true, mode: 0o700 })
  } catch (e) {
    throw new DataDirError(`cannot create the data dir ${dataDir}: ${fileProblem(e)}`)
  }
}

/** A file system error in words (no stack, no syscall jargon). */
export function fileProblem(e: unknown): string {
  const { code, message } = (e ?? {}) as { code?: string; message?: string }
  switch (code) {
    case 'EACCES':
    case 'EPERM':
      return 'permission denied'
    case 'EROFS':
      return 'the file system is read-only'
    case 'ENOSPC':
      return 'no space left on the device'
    case 'EDQUOT':
      return 'the disk quota is used up'
    case 'ENOTDIR':
    case 'EEXIST':
      return 'a part of the path is a file, not a directory'
    case 'ENOENT':
      return 'no such file or directory'
    case 'EISDIR':
      return 'it is a directory'
    case 'EIO':
      return 'an input/output error (a failing disk?)'
    default:
      return (message ?? String(e)).split('\n')[0]!
  }
}

function sameFile(fd: number, path: string): boolean {
  try {
    const held = fstatSync(fd)
    const named = statSync(path)
    return held.ino === named.ino && held.dev === named.dev
  } catch {
    return false
  }
}

/** The holder's pid from the file, when it names a live process (the holder may not have written it yet). */
function readPid(path: string): number | null {
  let pid: number
  try {
    pid = Number(readFileSync(path, 'utf8').trim())
  } catch {
    return null
  }
  if (!Number.isInteger(pid) || pid <= 0) return null
  try {
    process.kill(pid, 0)
    return pid
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM' ? pid : null
  }
}
