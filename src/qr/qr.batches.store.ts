/** Print runs on SQLite: rows and result chunks (migration 0013). Rows in, rows out. */
import type { Awaitable } from '../shared'
import type { Db } from '../store'

export interface BatchRow {
  id: string
  user_id: string
  status: 'queued' | 'running' | 'done' | 'failed'
  format: string
  request: string
  total: number
  done: number
  failed: number
  failures: string
  error: string | null
  size: number
  created_at: number
  finished_at: number | null
  heartbeat_at: number
}

export type BatchProgress = Pick<BatchRow, 'status' | 'done' | 'failed' | 'failures' | 'size' | 'heartbeat_at'> &
  Partial<Pick<BatchRow, 'error' | 'finished_at'>>

export const STALE_ERROR = 'the server running this batch stopped before it finished; start the batch again'

export function createBatchStore(db: Db) {
  const byId = db.query<BatchRow, [string]>('SELECT * FROM qr_batches WHERE id = ?')
  const insert = db.query(`INSERT INTO qr_batches (id, user_id, status, format, request, total, created_at, heartbeat_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`)
  const progress = db.query(
    'UPDATE qr_batches SET status = ?, done = ?, failed = ?, failures = ?, size = ?, heartbeat_at = ?, error = coalesce(?, error), finished_at = coalesce(?, finished_at) WHERE id = ?',
  )
  const addChunk = db.query('INSERT INTO qr_batch_chunks (batch_id, seq, bytes) VALUES (?, ?, ?)')
  const chunk = db.query<{ bytes: Uint8Array }, [string, number]>('SELECT bytes FROM qr_batch_chunks WHERE batch_id = ? AND seq = ?')
  const stale = db.query(`UPDATE qr_batches SET status = 'failed', error = ?, finished_at = ? WHERE status IN ('queued', 'running') AND heartbeat_at < ?`)
  const expired = db.query<{ id: string }, [number]>('SELECT id FROM qr_batches WHERE coalesce(finished_at, created_at) < ?')
  const dropChunks = db.query('DELETE FROM qr_batch_chunks WHERE batch_id = ?')
  const dropRow = db.query('DELETE FROM qr_batches WHERE id = ?')
  return {
    insert: (r: Pick<BatchRow, 'id' | 'user_id' | 'status' | 'format' | 'request' | 'total' | 'created_at' | 'heartbeat_at'>) => {
      insert.run(r.id, r.user_id, r.status, r.format, r.request, r.total, r.created_at, r.heartbeat_at)
    },
    get: (id: string) => byId.get(id),
    progress: (id: string, p: BatchProgress) => {
      progress.run(p.status, p.done, p.failed, p.failures, p.size, p.heartbeat_at, p.error ?? null, p.finished_at ?? null, id)
    },
    heartbeat: (ids: string[], now: number) => {
      if (ids.length) db.run(`UPDATE qr_batches SET heartbeat_at = ? WHERE id IN (${ids.map(() => '?').join(',')})`, [now, ...ids])
    },
    addChunk: (id: string, seq: number, bytes: Uint8Array) => {
      addChunk.run(id, seq, bytes)
    },
    chunk: (id: string, seq: number) => chunk.get(id, seq)?.bytes ?? null,
    /** Runs whose node stopped renewing them (before `before`) are failed. */
    failStale: (before: number, now: number) => {
      stale.run(STALE_ERROR, now, before)
    },
    /** Deletes runs (and results) finished before `before`. */
    sweep: (before: number) => {
      for (const { id } of expired.all(before))
        db.transaction(() => {
          dropChunks.run(id)
          dropRow.run(id)
        })()
    },
  }
}
export type BatchStore = ReturnType<typeof createBatchStore>
export type BatchStorePort = Awaitable<BatchStore>
