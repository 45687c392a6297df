import type { PgMigration } from './index'

/** Print runs and their results in chunks: SQLite migration 0014's tables. */
export const qrBatches: PgMigration = {
  id: 6,
  name: '0006_qr_batches',
  sql: `
CREATE TABLE qr_batches (
  id text PRIMARY KEY,
  user_id text NOT NULL,
  status text NOT NULL,
  format text NOT NULL,
  request text NOT NULL,
  total integer NOT NULL,
  done integer NOT NULL DEFAULT 0,
  failed integer NOT NULL DEFAULT 0,
  failures text NOT NULL DEFAULT '[]',
  error text,
  size bigint NOT NULL DEFAULT 0,
  created_at bigint NOT NULL,
  finished_at bigint,
  heartbeat_at bigint NOT NULL
);
CREATE INDEX qr_batches_status ON qr_batches (status, heartbeat_at);
CREATE TABLE qr_batch_chunks (
  batch_id text NOT NULL,
  seq integer NOT NULL,
  bytes bytea NOT NULL,
  PRIMARY KEY (batch_id, seq)
);
`,
}
