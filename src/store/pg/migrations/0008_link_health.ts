import type { PgMigration } from './index'

/** Link health: SQLite migration 0016's tables (see there), in PostgreSQL's types. */
export const linkHealth: PgMigration = {
  id: 8,
  name: '0008_link_health',
  sql: `
CREATE TABLE health_urls (
  url_key text PRIMARY KEY,
  url text NOT NULL,
  status text NOT NULL DEFAULT 'unknown' CHECK (status IN ('unknown', 'ok', 'broken')),
  fails integer NOT NULL DEFAULT 0,
  http_status integer,
  error text,
  checked_at bigint
);
CREATE TABLE link_health_urls (
  link_seq bigint NOT NULL REFERENCES links(seq) ON DELETE CASCADE,
  url_key text NOT NULL,
  PRIMARY KEY (link_seq, url_key)
);
CREATE INDEX link_health_urls_url ON link_health_urls (url_key, link_seq);
CREATE TABLE link_health (
  link_seq bigint PRIMARY KEY REFERENCES links(seq) ON DELETE CASCADE,
  status text NOT NULL CHECK (status IN ('unknown', 'ok', 'broken')),
  since bigint NOT NULL
);
CREATE INDEX link_health_status ON link_health (status, link_seq);
`,
}
