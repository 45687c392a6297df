import type { Migration } from './index'

/**
 * Events and webhooks (contract: "Webhooks and live events").
 *
 * - `events` is the outbox: each row is written in the same transaction as the change it
 *   tells of (links, domains; visits with their click batch) and kept 24 hours (longer
 *   while a delivery of it waits). `seq` orders them: SQLite has one writer at a time, so
 *   commit order is seq order and a reader after `seq > n` never misses a row.
 *   AUTOINCREMENT: a purged seq is never handed out again. `user_id` is whose scope the
 *   event is in (the link's owner; NULL for admins only), `link_id` and `tag_ids` (a JSON
 *   array, written when some webhook filters by tags) serve webhook filters without
 *   parsing `data`; `webhook_id` marks a test event meant for that webhook only.
 * - `event_cursors`: how far the fan-out (events → deliveries) has read.
 * - `event_listeners`: live streams that asked for link.clicked (kept 24 hours after they
 *   were last connected, so a resumed stream finds the visits it missed); with enabled
 *   webhooks subscribed to link.clicked they decide which visits become events at all.
 * - `webhook_deliveries`: one row per webhook and event, the retry schedule's state and the
 *   lease of the node sending it.
 */
export const eventsWebhooks: Migration = {
  id: 15,
  name: '0015_events_webhooks',
  sql: `
CREATE TABLE events (
  seq INTEGER PRIMARY KEY AUTOINCREMENT,
  id TEXT NOT NULL UNIQUE,
  type TEXT NOT NULL,
  user_id TEXT,
  link_id TEXT,
  tag_ids TEXT,
  webhook_id TEXT,
  data TEXT NOT NULL,
  created_at INTEGER NOT NULL
);
CREATE INDEX events_created ON events (created_at);
CREATE INDEX events_user ON events (user_id, seq);

CREATE TABLE event_cursors (
  name TEXT PRIMARY KEY,
  position TEXT NOT NULL
) WITHOUT ROWID;

CREATE TABLE event_listeners (
  scope TEXT PRIMARY KEY,
  user_id TEXT,
  expires_at INTEGER NOT NULL
) WITHOUT ROWID;

CREATE TABLE webhooks (
  id TEXT PRIMARY KEY,
  user_id TEXT NOT NULL REFERENCES users(id),
  url TEXT NOT NULL,
  name TEXT,
  events TEXT NOT NULL,
  link_ids TEXT NOT NULL DEFAULT '[]',
  tag_ids TEXT NOT NULL DEFAULT '[]',
  secret TEXT NOT NULL,
  disabled INTEGER NOT NULL DEFAULT 0,
  disabled_reason TEXT,
  failing_since INTEGER,
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL
);
CREATE INDEX webhooks_user ON webhooks (user_id, created_at);
CREATE INDEX webhooks_created ON webhooks (created_at);

CREATE TABLE webhook_deliveries (
  webhook_id TEXT NOT NULL,
  event_seq INTEGER NOT NULL,
  event_id TEXT NOT NULL,
  event_type TEXT NOT NULL,
  status TEXT NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'delivered', 'failed')),
  attempts INTEGER NOT NULL DEFAULT 0,
  response_status INTEGER,
  last_attempt_at INTEGER,
  next_attempt_at INTEGER,
  lease_owner TEXT,
  lease_until INTEGER,
  created_at INTEGER NOT NULL,
  PRIMARY KEY (webhook_id, event_seq)
) WITHOUT ROWID;
CREATE INDEX webhook_deliveries_due ON webhook_deliveries (webhook_id, next_attempt_at) WHERE status = 'pending';
CREATE INDEX webhook_deliveries_event ON webhook_deliveries (event_seq);
`,
}
