/**
 * Takes one backup of a data dir: the pending clicks written first (`drain`, in a running
 * server), every part's pin, then every part's snapshot into a staging folder inside the data
 * dir, then the worker packs them into FILE (tar + zstd) with a manifest of every member's
 * SHA-256 and the facts the parts recorded, and FILE.sha256 beside it (sha256sum's format).
 */
import { mkdtempSync, readdirSync, renameSync, rmSync, writeFileSync } from 'node:fs'
import { open } from 'node:fs/promises'
import { basename, join } from 'node:path'
import pkg from '../../package.json'
import { workerSpec } from '../shared'
import { type BackupPart, isScratch, NOT_BACKED_UP, type SnapshotContext } from './backup.parts'
import type { WorkerJob } from './backup.worker'

export const BACKUP_FORMAT = 'shortlink-backup'
export const BACKUP_VERSION = 1

export interface BackupResult {
  file: string
  bytes: number
  sha256: string
  createdAt: string
  durationMs: number
  members: number
  /** Data-dir entries no part covers, and blobs a record named that were gone (each also in the manifest). */
  warnings: string[]
}

export interface CreateOptions {
  dataDir: string
  /** The archive to write (a new file; written under a temporary name, then renamed). */
  out: string
  parts: BackupPart[]
  /** Writes every click recorded so far (the server's recorder): the backup then holds each one. */
  drain?: () => Promise<void>
}

/** One worker per backup, ended with it. */
function backupWorker() {
  const worker = new Worker(workerSpec('backup/backup.worker.ts'))
  let queue: Promise<unknown> = Promise.resolve()
  const run = <T>(job: WorkerJob): Promise<T> => {
    const next = queue.then(
      () =>
        new Promise<T>((resolve, reject) => {
          worker.onmessage = (ev: MessageEvent<{ ok: boolean; result?: T; error?: string }>) =>
            ev.data.ok ? resolve(ev.data.result as T) : reject(new Error(ev.data.error))
          worker.onerror = (e) => reject(new Error(e.message))
          worker.postMessage(job)
        }),
    )
    queue = next.catch(() => {})
    return next
  }
  return { run, end: () => worker.terminate() }
}

export async function createBackup(opts: CreateOptions): Promise<BackupResult> {
  const started = performance.now()
  const createdAt = new Date().toISOString()
  const staging = mkdtempSync(join(opts.dataDir, '.backup-'))
  const worker = backupWorker()
  const tmp = `${opts.out}.partial`
  try {
    await opts.drain?.()
    const ctx: SnapshotContext = {
      dataDir: opts.dataDir,
      staging,
      shared: {},
      vacuumInto: (source, target) => worker.run({ type: 'vacuum', source, target }),
    }
    for (const part of opts.parts) await part.pin?.(ctx)
    const members: { path: string; source: string }[] = []
    const parts: Record<string, Record<string, unknown>> = {}
    for (const part of opts.parts) {
      const snap = await part.snapshot(ctx)
      members.push(...snap.members)
      parts[part.name] = snap.facts
    }
    const covered = new Set(opts.parts.flatMap((p) => p.covers))
    const uncovered = readdirSync(opts.dataDir).filter((name) => !covered.has(name) && !NOT_BACKED_UP.has(name) && !isScratch(name))
    const missing = ((parts.files?.missing ?? []) as string[]).map((sha) => `file bytes ${sha} were deleted before they could be copied`)
    const warnings = [...uncovered.map((name) => `${name} in the data dir is not covered by any backup part`), ...missing]
    const manifest = { format: BACKUP_FORMAT, version: BACKUP_VERSION, shortlink: pkg.version, createdAt, parts, uncovered }
    const packed = await worker.run<{ sha256: string; bytes: number; members: unknown[] }>({ type: 'pack', members, manifest, out: tmp })
    const fh = await open(tmp, 'r+')
    await fh.sync()
    await fh.close()
    renameSync(tmp, opts.out)
    writeFileSync(`${opts.out}.sha256`, `${packed.sha256}  ${basename(opts.out)}\n`, { mode: 0o600 })
    return {
      file: opts.out,
      bytes: packed.bytes,
      sha256: packed.sha256,
      createdAt,
      durationMs: Math.round(performance.now() - started),
      members: packed.members.length,
      warnings,
    }
  } finally {
    worker.end()
    rmSync(staging, { recursive: true, force: true })
    rmSync(tmp, { force: true })
  }
}
