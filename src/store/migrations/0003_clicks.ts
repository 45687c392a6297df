import type { Migration } from './index'

/**
 * Click events (no raw IP), written in batches by the click recorder. Identical visits
 * (same link, dimensions and kind) within one flush window share a row with their count
 * in `n`, so a burst of scans of one poster costs one row, not thousands; `kv` holds small server secrets (e.g. the password-cookie key).
 */
export const clicks: Migration = {
  id: 3,
  name: '0003_clicks',
  sql: `
CREATE TABLE click_events (
  id INTEGER PRIMARY KEY,
  link_seq INTEGER NOT NULL REFERENCES links(seq),
  at INTEGER NOT NULL,
  scan INTEGER NOT NULL,
  continent TEXT,
  country TEXT,
  region TEXT,
  city TEXT,
  os TEXT NOT NULL,
  browser TEXT NOT NULL,
  device TEXT NOT NULL,
  referer TEXT,
  referer_url TEXT,
  utm_source TEXT,
  utm_medium TEXT,
  utm_campaign TEXT,
  utm_term TEXT,
  utm_content TEXT,
  n INTEGER NOT NULL DEFAULT 1
);
CREATE INDEX click_events_link_at ON click_events (link_seq, at);
CREATE INDEX click_events_at ON click_events (at);
CREATE TABLE kv (
  key TEXT PRIMARY KEY,
  value TEXT NOT NULL
);
`,
}
