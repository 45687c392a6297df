import { Elysia } from 'elysia'
import { callerOf } from '../auth'
import { errorResponses } from '../docs'
import { forbidden } from '../shared'
import { BackupStatus } from './backup.schema'
import type { BackupService } from './backup.service'

const errors = errorResponses(401, 403, 429)
export function backupRoutes({ backups }: { backups: BackupService | null }) {
  return new Elysia({ name: 'backups', normalize: false }).get(
    '/backups/status',
    ({ request }) => {
      if (callerOf(request).role !== 'admin') throw forbidden('only admins see the backups')
      if (!backups) return { store: 'postgres' as const, lastSuccess: null, lastFailure: null, running: false, schedule: null }
      const s = backups.schedule
      const next = backups.nextAt()
      return {
        store: 'sqlite' as const,
        ...backups.state(),
        running: backups.running(),
        schedule: s
          ? {
              dir: s.dir,
              everyMs: s.everyMs,
              keep: s.keep,
              nextAt: next === null ? null : new Date(next).toISOString(),
              s3: s.s3 ? { endpoint: s.s3.endpoint, bucket: s.s3.bucket, prefix: s.s3.prefix } : null,
            }
          : null,
      }
    },
    {
      response: { 200: BackupStatus, ...errors },
      detail: {
        tags: ['Operation'],
        summary: 'Backups: the last success and failure, the schedule (admins)',
        description:
          "What the node knows of its backups: the last successful one (scheduled, or taken by `shortlink backup`), the last failure, and the schedule of `[backup]`. On PostgreSQL backups are PostgreSQL's own (pg_dump) and `store` says so.",
      },
    },
  )
}
