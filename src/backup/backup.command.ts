/**
 * `shortlink backup FILE`: through the running server's control socket when a server runs on
 * the data dir (it holds the stores), else directly, holding the data dir's lock so no server
 * starts meanwhile. Either way the same archive, checked against the SHA-256 the maker sent.
 */
import { createHash } from 'node:crypto'
import { existsSync, renameSync, rmSync, writeFileSync } from 'node:fs'
import { open } from 'node:fs/promises'
import { basename, resolve } from 'node:path'
import { DataDirLockedError, lockDataDir, storePath } from '../store'
import { controlSocketPath } from './backup.control'
import { type BackupResult, createBackup } from './backup.create'
import { nodeParts } from './backup.parts'
import { readBackupState, writeBackupState } from './backup.service'

export class BackupCommandError extends Error {}

export interface CommandResult extends BackupResult {
  via: 'server' | 'direct'
}

export async function backupCommand(dataDir: string, target: string): Promise<CommandResult> {
  const file = resolve(target)
  if (existsSync(file)) throw new BackupCommandError(`${target} exists; choose a new file`)
  const viaServer = await askServer(dataDir, file)
  if (viaServer) return viaServer
  if (!existsSync(storePath(dataDir))) throw new BackupCommandError(`no store in ${dataDir} (no shortlink.db): nothing to back up`)
  let unlock: () => void
  try {
    unlock = lockDataDir(dataDir)
  } catch (e) {
    if (e instanceof DataDirLockedError) throw new BackupCommandError(`${e.message} (its control socket ${controlSocketPath(dataDir)} did not answer)`)
    throw e
  }
  try {
    const result = await createBackup({ dataDir, out: file, parts: nodeParts() })
    const state = readBackupState(dataDir)
    writeBackupState(dataDir, {
      ...state,
      lastSuccess: {
        at: new Date().toISOString(),
        file,
        bytes: result.bytes,
        sha256: result.sha256,
        durationMs: result.durationMs,
        trigger: 'command',
        uploadedTo: null,
      },
    })
    return { ...result, via: 'direct' }
  } finally {
    unlock()
  }
}

/** The backup from the server on this data dir, written to `file`; null when no server answers. */
async function askServer(dataDir: string, file: string): Promise<CommandResult | null> {
  const socket = controlSocketPath(dataDir)
  if (!existsSync(socket)) return null
  let res: Response
  try {
    res = await fetch('http://shortlink/backup', { method: 'POST', unix: socket })
  } catch {
    return null // a socket left by a server that was killed
  }
  if (!res.ok)
    throw new BackupCommandError(`the server refused the backup: ${((await res.json().catch(() => ({}))) as { error?: string }).error ?? res.status}`)
  const meta = JSON.parse(res.headers.get('x-backup') ?? '{}') as Omit<BackupResult, 'file'>
  const partial = `${file}.partial`
  const tell = (path: string, body: unknown) =>
    fetch(`http://shortlink${path}`, { method: 'POST', unix: socket, body: JSON.stringify(body), headers: { 'content-type': 'application/json' } }).catch(
      () => {},
    )
  try {
    const fh = await open(partial, 'wx', 0o600)
    const hash = createHash('sha256')
    let bytes = 0
    try {
      for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
        hash.update(chunk)
        bytes += chunk.length
        await fh.write(chunk)
      }
      await fh.sync()
    } finally {
      await fh.close()
    }
    const sha256 = hash.digest('hex')
    if (sha256 !== meta.sha256 || bytes !== meta.bytes)
      throw new BackupCommandError(`the backup arrived damaged (${bytes} of ${meta.bytes} bytes, checksum ${sha256 === meta.sha256 ? 'matches' : 'differs'})`)
    renameSync(partial, file)
    writeFileSync(`${file}.sha256`, `${sha256}  ${basename(file)}\n`, { mode: 0o600 })
    const result: BackupResult = { ...meta, file }
    await tell('/backup/done', { result })
    return { ...result, via: 'server' }
  } catch (e) {
    rmSync(partial, { force: true })
    await tell('/backup/failed', { error: `writing ${file}: ${String((e as Error)?.message ?? e)}` })
    throw e
  }
}
