/** GET /backups/status: what a node knows of its backups. Plain TypeBox (the dashboard imports its type). */
import { Type as t } from '@sinclair/typebox'

const Timestamp = t.String({ format: 'date-time' })

export const BackupStatus = t.Object({
  store: t.Union([t.Literal('sqlite'), t.Literal('postgres')], {
    description: "`postgres`: backups are PostgreSQL's own (pg_dump); nothing below is kept.",
  }),
  lastSuccess: t.Union([
    t.Object({
      at: Timestamp,
      file: t.String({ description: "Where the archive was written (the server's path, or the path given to `shortlink backup`)." }),
      bytes: t.Integer(),
      sha256: t.String(),
      durationMs: t.Integer(),
      trigger: t.Union([t.Literal('schedule'), t.Literal('command')]),
      uploadedTo: t.Union([t.String({ description: 's3://bucket/key of the uploaded copy' }), t.Null()]),
    }),
    t.Null(),
  ]),
  lastFailure: t.Union([t.Object({ at: Timestamp, error: t.String(), trigger: t.Union([t.Literal('schedule'), t.Literal('command')]) }), t.Null()]),
  running: t.Boolean(),
  schedule: t.Union([
    t.Object({
      dir: t.String(),
      everyMs: t.Integer(),
      keep: t.Integer(),
      nextAt: t.Union([Timestamp, t.Null()]),
      s3: t.Union([t.Object({ endpoint: t.String(), bucket: t.String(), prefix: t.String() }), t.Null()]),
    }),
    t.Null(),
  ]),
})
