import type { Migration } from './index'

/**
 * Print runs (POST /qr/batches): the run and its progress, and its result in chunks of about a
 * megabyte, written as the codes are made and read back one chunk at a time. Rows go 24 hours after
 * the run finished. `heartbeat_at` is renewed by the node running it: a run whose node stopped is
 * marked failed a minute later.
 */
export const qrBatches: Migration = {
  id: 14,
  name: '0014_qr_batches',
  sql: `
CREATE TABLE qr_batches (
  id TEXT PRIMARY KEY,
  user_id TEXT NOT NULL,
  status TEXT NOT NULL,
  format TEXT NOT NULL,
  request TEXT NOT NULL,
  total INTEGER NOT NULL,
  done INTEGER NOT NULL DEFAULT 0,
  failed INTEGER NOT NULL DEFAULT 0,
  failures TEXT NOT NULL DEFAULT '[]',
  error TEXT,
  size INTEGER NOT NULL DEFAULT 0,
  created_at INTEGER NOT NULL,
  finished_at INTEGER,
  heartbeat_at INTEGER NOT NULL
);
CREATE INDEX qr_batches_status ON qr_batches (status, heartbeat_at);
CREATE TABLE qr_batch_chunks (
  batch_id TEXT NOT NULL,
  seq INTEGER NOT NULL,
  bytes BLOB NOT NULL,
  PRIMARY KEY (batch_id, seq)
) WITHOUT ROWID;
`,
}
