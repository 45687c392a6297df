/** Admins: when the node was last backed up, whether the last attempt failed, and the schedule ([backup] in the config). */
import type { Static } from '@sinclair/typebox'
import type { BackupStatus } from '../../../../src/backup/backup.schema'
import { api } from '../../api'
import { ErrorBox, Loading, useResource } from '../../ui'
import { when } from './records'

type Status = Static<typeof BackupStatus>

const bytes = (n: number) => (n < 1024 * 1024 ? `${(n / 1024).toFixed(1)} KB` : `${(n / 1024 / 1024).toFixed(1)} MB`)

function every(ms: number): string {
  for (const [unit, size] of [
    ['day', 86_400_000],
    ['hour', 3_600_000],
    ['minute', 60_000],
  ] as const)
    if (ms >= size && ms % size === 0) return `every ${ms / size === 1 ? unit : `${ms / size} ${unit}s`}`
  return `every ${ms / 1000} s`
}

export function BackupsSection() {
  const status = useResource((signal) => api<Status>('GET', '/backups/status', { signal }).then((r) => r.data), [])
  return (
    <section class="card settings-section" aria-labelledby="backups-title">
      <div class="settings-section-head">
        <h2 id="backups-title">Backups</h2>
      </div>
      {status.error ? <ErrorBox error={status.error} /> : !status.data ? <Loading /> : <BackupFacts status={status.data} />}
    </section>
  )
}

function BackupFacts({ status }: { status: Status }) {
  if (status.store === 'postgres') return <p class="muted">This node stores everything in PostgreSQL: back it up with pg_dump (or your provider’s backups).</p>
  const last = status.lastSuccess
  const failure = status.lastFailure
  const failedSince = failure && (!last || failure.at > last.at)
  return (
    <dl class="settings-facts">
      <div>
        <dt>Last successful backup</dt>
        <dd>
          {last ? (
            <>
              <strong>{when(last.at)}</strong>{' '}
              <span class="muted">
                {last.trigger === 'schedule' ? 'scheduled' : 'by shortlink backup'}, {bytes(last.bytes)}
                {last.uploadedTo ? `, uploaded to ${last.uploadedTo}` : ''}
              </span>
            </>
          ) : (
            <strong>None yet</strong>
          )}
        </dd>
      </div>
      {failedSince && (
        <div>
          <dt>Last attempt failed</dt>
          <dd>
            <span role="alert">
              {when(failure.at)}: {failure.error}
            </span>
          </dd>
        </div>
      )}
      <div>
        <dt>Schedule</dt>
        <dd>
          {status.schedule ? (
            <>
              {every(status.schedule.everyMs)}, keeping {status.schedule.keep} in {status.schedule.dir}
              {status.schedule.s3 ? ` and in s3://${status.schedule.s3.bucket}/${status.schedule.s3.prefix}` : ''}
              {status.schedule.nextAt && <span class="muted"> (next {when(status.schedule.nextAt)})</span>}
            </>
          ) : (
            <span class="muted">None: set [backup] dir and every in the configuration, or run shortlink backup FILE.</span>
          )}
        </dd>
      </div>
    </dl>
  )
}
