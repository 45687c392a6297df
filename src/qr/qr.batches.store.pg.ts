/** Print runs on PostgreSQL (migration 0005): the SQLite store's methods and answers; bigint columns read as float8 (Bun.SQL gives int8 as strings). */
import type { SQL } from 'bun'
import { type BatchProgress, type BatchRow, type BatchStorePort, STALE_ERROR } from './qr.batches.store'

const COLUMNS =
  'id, user_id, status, format, request, total, done, failed, failures, error, size::float8 AS size, created_at::float8 AS created_at, finished_at::float8 AS finished_at, heartbeat_at::float8 AS heartbeat_at'

export function createPgBatchStore(sql: SQL): BatchStorePort {
  return {
    async insert(r) {
      await sql`INSERT INTO qr_batches (id, user_id, status, format, request, total, created_at, heartbeat_at)
        VALUES (${r.id}, ${r.user_id}, ${r.status}, ${r.format}, ${r.request}, ${r.total}, ${r.created_at}, ${r.heartbeat_at})`
    },
    async get(id: string) {
      const [row] = await sql.unsafe(`SELECT ${COLUMNS} FROM qr_batches WHERE id = $1`, [id])
      return (row as BatchRow | undefined) ?? null
    },
    async progress(id: string, p: BatchProgress) {
      await sql`UPDATE qr_batches SET status = ${p.status}, done = ${p.done}, failed = ${p.failed}, failures = ${p.failures}, size = ${p.size},
        heartbeat_at = ${p.heartbeat_at}, error = coalesce(${p.error ?? null}, error), finished_at = coalesce(${p.finished_at ?? null}::bigint, finished_at) WHERE id = ${id}`
    },
    async heartbeat(ids: string[], now: number) {
      if (ids.length) await sql.unsafe(`UPDATE qr_batches SET heartbeat_at = $1 WHERE id IN (${ids.map((_, i) => `$${i + 2}`).join(',')})`, [now, ...ids])
    },
    async addChunk(id: string, seq: number, bytes: Uint8Array) {
      await sql`INSERT INTO qr_batch_chunks (batch_id, seq, bytes) VALUES (${id}, ${seq}, ${bytes})`
    },
    async chunk(id: string, seq: number) {
      const [row] = await sql`SELECT bytes FROM qr_batch_chunks WHERE batch_id = ${id} AND seq = ${seq}`
      return (row?.bytes as Uint8Array | undefined) ?? null
    },
    async failStale(before: number, now: number) {
      await sql`UPDATE qr_batches SET status = 'failed', error = ${STALE_ERROR}, finished_at = ${now} WHERE status IN ('queued', 'running') AND heartbeat_at < ${before}`
    },
    async sweep(before: number) {
      await sql.begin(async (tx) => {
        const gone = await tx`DELETE FROM qr_batches WHERE coalesce(finished_at, created_at) < ${before} RETURNING id`
        for (const { id } of gone as { id: string }[]) await tx`DELETE FROM qr_batch_chunks WHERE batch_id = ${id}`
      })
    },
  }
}
