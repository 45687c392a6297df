import type { Migration } from './index'

/**
 * Conversions (contract: "Conversions, A/B tests and link health").
 *
 * - Click ids (`sl_id`) are not kept here: a visit's click id and time go into the events engine
 *   with the visit (DuckDB's `events.tracked`), and the id carries its visit's time, so a lead
 *   finds its click among that moment's events (docs/adr/0025). PostgreSQL keeps them in
 *   `tracked_clicks` (its migration 0013).
 * - `customers`: a site's customer (`customerExternalId`), per owner of the links (the user
 *   whose site reports them); unique per owner and external id.
 * - `conversions`: leads and sales, each carrying its click's link and dimensions (so
 *   statistics filter and group them like visits). The idempotency keys are unique indexes,
 *   kept for ever: a lead per customer and event name, a sale per owner and invoice id.
 *   `body_hash` is the fingerprint of a sale's request (the same invoice with another body is a
 *   conflict). `seq` orders them for the events engine, which copies them into DuckDB.
 */
export const conversions: Migration = {
  id: 18,
  name: '0018_conversions',
  sql: `
CREATE TABLE customers (
  id TEXT PRIMARY KEY,
  user_id TEXT NOT NULL,
  external_id TEXT NOT NULL,
  name TEXT,
  email TEXT,
  avatar TEXT,
  created_at INTEGER NOT NULL,
  UNIQUE (user_id, external_id)
);

CREATE TABLE conversions (
  seq INTEGER PRIMARY KEY AUTOINCREMENT,
  id TEXT NOT NULL UNIQUE,
  kind TEXT NOT NULL CHECK (kind IN ('lead', 'sale')),
  user_id TEXT NOT NULL,
  customer_id TEXT NOT NULL REFERENCES customers(id),
  click_id TEXT NOT NULL,
  link_seq INTEGER NOT NULL,
  event_name TEXT NOT NULL,
  quantity INTEGER NOT NULL DEFAULT 1,
  amount INTEGER,
  currency TEXT,
  payment_processor TEXT,
  invoice_id TEXT,
  metadata TEXT,
  body_hash TEXT,
  at INTEGER NOT NULL,
  click_at INTEGER NOT NULL,
  scan INTEGER NOT NULL,
  continent TEXT, country TEXT, region TEXT, city TEXT,
  os TEXT NOT NULL, browser TEXT NOT NULL, device TEXT NOT NULL,
  referer TEXT, referer_url TEXT,
  utm_source TEXT, utm_medium TEXT, utm_campaign TEXT, utm_term TEXT, utm_content TEXT
);
CREATE UNIQUE INDEX conversions_lead_once ON conversions (customer_id, event_name) WHERE kind = 'lead';
CREATE UNIQUE INDEX conversions_invoice_once ON conversions (user_id, invoice_id) WHERE kind = 'sale' AND invoice_id IS NOT NULL;
CREATE INDEX conversions_customer ON conversions (customer_id, kind, at);
CREATE INDEX conversions_link_at ON conversions (link_seq, at);
CREATE INDEX conversions_at ON conversions (at);
`,
}
