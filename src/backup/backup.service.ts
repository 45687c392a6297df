/**
 * Backups of a running node: one at a time, taken for `shortlink backup` (through the control
 * socket) or on the schedule of `[backup] dir / every / keep`, each scheduled one uploaded to
 * `[backup.s3]` when set (Bun's own S3 client) and the oldest beyond `keep` deleted, here and
 * in the bucket. The last success and failure are kept in the data dir (backup-state.json),
 * so the metric and the dashboard survive a restart.
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { S3Client } from 'bun'
import { type Config, parseDuration } from '../config'
import { metrics } from '../metrics'
import type { Logger } from '../shared'
import { type BackupResult, createBackup } from './backup.create'
import type { BackupPart } from './backup.parts'

export interface BackupSchedule {
  dir: string
  everyMs: number
  keep: number
  s3: { endpoint: string; bucket: string; region: string; prefix: string; accessKeyId: string; secretAccessKey: string } | null
}

/** The schedule `[backup]` asks for, or null when it asks for none. */
export function scheduleOf(config: Config): BackupSchedule | null {
  const b = config.backup
  if (!b.dir || !b.every) return null
  return { dir: b.dir, everyMs: parseDuration(b.every), keep: b.keep, s3: b.s3.endpoint ? { ...b.s3 } : null }
}

export interface BackupState {
  lastSuccess: {
    at: string
    file: string
    bytes: number
    sha256: string
    durationMs: number
    trigger: 'schedule' | 'command'
    uploadedTo: string | null
  } | null
  lastFailure: { at: string; error: string; trigger: 'schedule' | 'command' } | null
}

const STATE_FILE = 'backup-state.json'
/** Scheduled backups' names: sortable by time. */
const SCHEDULED = /^shortlink-\d{8}T\d{6}Z\.tar\.zst$/
export const scheduledName = (at: Date) =>
  `shortlink-${at
    .toISOString()
    .replace(/[-:]/g, '')
    .replace(/\.\d{3}/, '')}.tar.zst`

const lastSuccess = metrics.gauge(
  'shortlink_backup_last_success_timestamp_seconds',
  'When the last successful backup finished, in seconds since the Unix epoch (0: none yet).',
)
const lastBytes = metrics.gauge('shortlink_backup_last_size_bytes', 'Size of the last successful backup, in bytes.')
const lastDuration = metrics.gauge('shortlink_backup_last_duration_seconds', 'How long the last successful backup took, in seconds.')
const backups = metrics.counter('shortlink_backups_total', 'Backups taken by this process, by result (ok, failed).', ['result'])
const uploads = metrics.counter('shortlink_backup_uploads_total', 'Uploads of scheduled backups to S3-compatible storage, by result (ok, failed).', ['result'])

export function readBackupState(dataDir: string): BackupState {
  try {
    return JSON.parse(readFileSync(join(dataDir, STATE_FILE), 'utf8')) as BackupState
  } catch {
    return { lastSuccess: null, lastFailure: null }
  }
}

export function writeBackupState(dataDir: string, state: BackupState) {
  const tmp = join(dataDir, `.backup-state-${process.pid}.json`)
  writeFileSync(tmp, `${JSON.stringify(state, null, 2)}\n`, { mode: 0o600 })
  renameSync(tmp, join(dataDir, STATE_FILE))
}

export interface BackupService {
  /** Takes a backup into `out` (one at a time: a second call while one runs is refused). */
  take(out: string, trigger: 'schedule' | 'command'): Promise<BackupResult>
  /** A backup made elsewhere (streamed to the CLI) was written whole: it counts as the last success. */
  succeeded(result: BackupResult, trigger: 'schedule' | 'command', uploadedTo?: string | null): void
  failed(error: string, trigger: 'schedule' | 'command'): void
  running(): boolean
  state(): BackupState
  schedule: BackupSchedule | null
  /** When the next scheduled backup is due (epoch ms), or null. */
  nextAt(): number | null
  /** Starts the schedule (the server does; a command that opens the store does not). */
  start(): void
  stop(): void
}

export class BackupBusyError extends Error {}

export function createBackupService(opts: {
  dataDir: string
  parts: () => BackupPart[]
  drain?: () => Promise<void>
  schedule: BackupSchedule | null
  log: Logger
  now?: () => number
}): BackupService {
  const { dataDir, schedule, log } = opts
  const now = opts.now ?? Date.now
  let state = readBackupState(dataDir)
  let busy = false
  let timer: ReturnType<typeof setTimeout> | null = null
  let due: number | null = null
  let stopped = true
  const show = () => {
    const s = state.lastSuccess
    lastSuccess.set(s ? Date.parse(s.at) / 1000 : 0)
    lastBytes.set(s?.bytes ?? 0)
    lastDuration.set(s ? s.durationMs / 1000 : 0)
  }
  show()

  const service: BackupService = {
    schedule,
    running: () => busy,
    state: () => state,
    nextAt: () => due,
    async take(out, trigger) {
      if (busy) throw new BackupBusyError('a backup is already running; try again when it has finished')
      busy = true
      try {
        return await createBackup({ dataDir, out, parts: opts.parts(), drain: opts.drain })
      } catch (e) {
        service.failed(String((e as Error)?.message ?? e), trigger)
        throw e
      } finally {
        busy = false
      }
    },
    succeeded(result, trigger, uploadedTo = null) {
      backups.labels('ok').inc()
      state = {
        ...state,
        lastSuccess: {
          at: new Date(now()).toISOString(),
          file: result.file,
          bytes: result.bytes,
          sha256: result.sha256,
          durationMs: result.durationMs,
          trigger,
          uploadedTo,
        },
      }
      writeBackupState(dataDir, state)
      show()
      log.info('backup written', { file: result.file, bytes: result.bytes, sha256: result.sha256, ms: result.durationMs, trigger, uploadedTo })
      for (const w of result.warnings) log.warn('backup warning', { warning: w })
    },
    failed(error, trigger) {
      backups.labels('failed').inc()
      noteFailure(error, trigger)
    },
    start() {
      // Staging left by a backup that was killed (the server holds the data dir's lock: none runs now).
      for (const name of readdirSync(dataDir)) if (name.startsWith('.backup-')) rmSync(join(dataDir, name), { recursive: true, force: true })
      if (!schedule || timer) return
      stopped = false
      if (!existsSync(schedule.dir)) mkdirSync(schedule.dir, { recursive: true, mode: 0o700 })
      plan()
    },
    stop() {
      stopped = true
      if (timer) clearTimeout(timer)
      timer = null
    },
  }

  function noteFailure(error: string, trigger: 'schedule' | 'command') {
    state = { ...state, lastFailure: { at: new Date(now()).toISOString(), error, trigger } }
    writeBackupState(dataDir, state)
    log.error('backup failed', { error, trigger })
  }

  async function scheduled() {
    const s = schedule!
    mkdirSync(s.dir, { recursive: true, mode: 0o700 })
    const out = join(s.dir, scheduledName(new Date(now())))
    let result: BackupResult
    try {
      result = await service.take(out, 'schedule')
    } catch {
      return // recorded as failed by take(), or another backup was running
    }
    let uploadedTo: string | null = null
    if (s.s3) {
      try {
        uploadedTo = await upload(s.s3, result.file)
        uploads.labels('ok').inc()
      } catch (e) {
        uploads.labels('failed').inc()
        // The local backup stands; the failed upload is the failure to see.
        noteFailure(`upload to s3://${s.s3.bucket}/${s.s3.prefix} failed: ${String((e as Error)?.message ?? e)}`, 'schedule')
      }
    }
    service.succeeded(result, 'schedule', uploadedTo)
    pruneLocal(s)
    if (s.s3 && uploadedTo) await pruneBucket(s.s3, s.keep).catch((e) => log.warn('old backups not deleted from the bucket', { error: String(e) }))
  }

  function pruneLocal(s: BackupSchedule) {
    const names = readdirSync(s.dir)
      .filter((n) => SCHEDULED.test(n))
      .sort()
    for (const old of names.slice(0, Math.max(0, names.length - s.keep))) {
      rmSync(join(s.dir, old), { force: true })
      rmSync(join(s.dir, `${old}.sha256`), { force: true })
    }
  }

  function plan() {
    if (!schedule || stopped) return
    const last = state.lastSuccess ? Date.parse(state.lastSuccess.at) : null
    const t = now()
    due = last !== null ? Math.max(t + 1000, last + schedule.everyMs) : t + schedule.everyMs
    timer = setTimeout(
      () => {
        void scheduled().finally(() => {
          if (!stopped) plan()
        })
      },
      Math.min(due - t, 2 ** 31 - 1),
    )
    timer.unref?.()
  }

  return service
}

function s3Client(s3: NonNullable<BackupSchedule['s3']>) {
  return new S3Client({ endpoint: s3.endpoint, bucket: s3.bucket, region: s3.region, accessKeyId: s3.accessKeyId, secretAccessKey: s3.secretAccessKey })
}

/** Uploads the archive and its checksum; answers the archive's key. */
async function upload(s3: NonNullable<BackupSchedule['s3']>, file: string): Promise<string> {
  const client = s3Client(s3)
  const name = file.slice(file.lastIndexOf('/') + 1)
  const key = `${s3.prefix}${name}`
  await client.write(key, Bun.file(file), { type: 'application/zstd' })
  await client.write(`${key}.sha256`, Bun.file(`${file}.sha256`), { type: 'text/plain' })
  // A size check of what arrived: the store answered for every part of a multipart upload.
  const stored = await client.size(key)
  if (stored !== Bun.file(file).size) throw new Error(`the bucket holds ${stored} bytes of ${key}, ${Bun.file(file).size} were sent`)
  return `s3://${s3.bucket}/${key}`
}

async function pruneBucket(s3: NonNullable<BackupSchedule['s3']>, keep: number) {
  const client = s3Client(s3)
  const keys: string[] = []
  let startAfter: string | undefined
  for (;;) {
    const page = await client.list({ prefix: s3.prefix, startAfter, maxKeys: 1000 })
    const got = (page.contents ?? []).map((c) => c.key)
    keys.push(...got.filter((k) => SCHEDULED.test(k.slice(s3.prefix.length))))
    if (!page.isTruncated || got.length === 0) break
    startAfter = got[got.length - 1]
  }
  keys.sort()
  for (const old of keys.slice(0, Math.max(0, keys.length - keep))) {
    await client.delete(old)
    await client.delete(`${old}.sha256`)
  }
}
