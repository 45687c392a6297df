import type { PgMigration } from './index'

/**
 * The whole schema of the SQLite store as its migrations 0001–0012 left it, in PostgreSQL
 * terms, plus what a cluster needs. Kept as in SQLite so rows copy without conversion:
 * the table and column names, timestamps as epoch milliseconds (bigint), flags as 0/1
 * (smallint), JSON as text (jsonb would reorder keys and change what clients read back).
 *
 * Differences, and why:
 * - Search: SQLite's contentless FTS5 trigram table `links_search` becomes a generated
 *   column `links.search_text` (slug, destination and every string of the link's data, as
 *   the link service indexes them) with a pg_trgm GIN index: `search_text ILIKE '%…%'`
 *   uses it, and no writer can forget to keep it current.
 * - Click events: one plain-column table with the strings (SQLite's dictionary
 *   `stats_values` + `click_events_compact` is a storage trick of one file), partitioned by
 *   month on `at`. `click_events_month(at)` creates a month's partition on demand (moving
 *   any of its rows out of the default partition); the default partition takes whatever
 *   has no partition yet, so an insert never fails. No foreign key to links: links are
 *   never deleted (tombstones), and a key check per event would slow ingest.
 * - Files keep their bytes in `files.bytes` (SQLite keeps them under `<dataDir>/files`);
 *   NULL only for a tombstone whose bytes are gone.
 * - SQLite's `auth_epoch` (moved by triggers) becomes the `auth` row of `cache_epochs`, one
 *   row per cache family (links, domains, auth, certificates), moved by the writer that
 *   publishes the invalidation (src/store/pg/invalidation.ts), not by triggers: a trigger's
 *   bump would be an epoch no notification announces, and flush every node's whole cache.
 * - New for the cluster, the same DDL as src/store/pg/cluster-tables.ts (which creates them
 *   on a bare database): `visit_counters` (exact n-th visit across nodes, a row only for
 *   links that use number targeting, seeded from `links.clicks` on first use), `locks`
 *   (ACME lease per domain, CertMagic's model: key, holder, expiry) and `rate_windows`
 *   (API and password-attempt limits for the cluster).
 * - Identities (`links.seq`, `stats_groups.num`, click ids) are sequences; a copy that
 *   inserts explicit values moves them past the copied maximum.
 */
export const schema: PgMigration = {
  id: 1,
  name: '0001_schema',
  sql: `
CREATE EXTENSION IF NOT EXISTS pg_trgm;

CREATE TABLE users (
  id text PRIMARY KEY,
  created_at bigint NOT NULL,
  role text NOT NULL DEFAULT 'member' CHECK (role IN ('admin', 'member', 'readonly')),
  password_hash text,
  disabled smallint NOT NULL DEFAULT 0,
  deleted_at bigint
);
CREATE INDEX users_created ON users (created_at, id) WHERE deleted_at IS NULL;

CREATE TABLE api_keys (
  id text PRIMARY KEY,
  user_id text NOT NULL REFERENCES users(id),
  role text NOT NULL CHECK (role IN ('admin', 'member', 'readonly')),
  key_hash text NOT NULL UNIQUE,
  key_prefix text NOT NULL,
  created_at bigint NOT NULL,
  revoked_at bigint,
  name text,
  last_used_at bigint
);
CREATE INDEX api_keys_user ON api_keys (user_id, created_at);
CREATE INDEX api_keys_created ON api_keys (created_at, id);

CREATE TABLE sessions (
  id text PRIMARY KEY,
  user_id text NOT NULL REFERENCES users(id) ON DELETE CASCADE,
  key_id text REFERENCES api_keys(id) ON DELETE CASCADE,
  config_key_hash text,
  method text NOT NULL CHECK (method IN ('password', 'apiKey')),
  csrf_secret text NOT NULL,
  created_at bigint NOT NULL,
  last_seen_at bigint NOT NULL,
  expires_at bigint NOT NULL,
  CHECK (CASE method WHEN 'password' THEN key_id IS NULL AND config_key_hash IS NULL ELSE (key_id IS NULL) <> (config_key_hash IS NULL) END)
);
CREATE INDEX sessions_user ON sessions (user_id, created_at);
CREATE INDEX sessions_key ON sessions (key_id) WHERE key_id IS NOT NULL;
CREATE INDEX sessions_expires ON sessions (expires_at);
CREATE INDEX sessions_last_seen ON sessions (last_seen_at);

-- One epoch row per cache family, moved with every invalidation (src/store/pg/invalidation.ts
-- publish: epoch + 1 and pg_notify in one statement); nodes poll it as a safety net.
CREATE TABLE cache_epochs (
  channel text PRIMARY KEY,
  epoch bigint NOT NULL
);
INSERT INTO cache_epochs (channel, epoch) VALUES ('links', 0), ('domains', 0), ('auth', 0), ('certificates', 0);

CREATE TABLE tags (
  id text PRIMARY KEY,
  user_id text NOT NULL REFERENCES users(id),
  name text NOT NULL,
  name_key text NOT NULL,
  color text NOT NULL,
  created_at bigint NOT NULL,
  updated_at bigint NOT NULL
);
CREATE UNIQUE INDEX tags_user_name ON tags (user_id, name_key);
CREATE INDEX tags_user_created ON tags (user_id, created_at);

-- The text the link service indexes for search: slug, destination and every string in the
-- link's data (links.content searchTextOf).
CREATE FUNCTION link_search_text(key text, destination text, data text) RETURNS text
  LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $fn$
  SELECT key || ' ' || destination || coalesce(' ' || (
    SELECT string_agg(v #>> '{}', ' ') FROM jsonb_path_query(data::jsonb, 'strict $.**') AS v WHERE jsonb_typeof(v) = 'string'
  ), '')
$fn$;

CREATE TABLE links (
  seq bigint GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
  id text NOT NULL UNIQUE,
  user_id text NOT NULL REFERENCES users(id),
  domain text NOT NULL,
  key text NOT NULL,
  link_type text NOT NULL,
  destination text NOT NULL,
  match_key text NOT NULL,
  data text NOT NULL,
  options text NOT NULL DEFAULT '{}',
  qr_options text,
  password_hash text,
  expires_at bigint,
  archived smallint NOT NULL DEFAULT 0,
  clicks bigint NOT NULL DEFAULT 0,
  last_clicked bigint,
  created_at bigint NOT NULL,
  updated_at bigint NOT NULL,
  deleted_at bigint,
  search_text text GENERATED ALWAYS AS (link_search_text(key, destination, data)) STORED
);
CREATE UNIQUE INDEX links_domain_key ON links (domain, key) WHERE deleted_at IS NULL;
CREATE INDEX links_live ON links (archived) WHERE deleted_at IS NULL;
CREATE INDEX links_domain ON links (domain, archived) WHERE deleted_at IS NULL;
CREATE INDEX links_user ON links (user_id) WHERE deleted_at IS NULL;
CREATE INDEX links_user_archived ON links (user_id, archived) WHERE deleted_at IS NULL;
CREATE INDEX links_type ON links (link_type) WHERE deleted_at IS NULL;
CREATE INDEX links_type_archived ON links (link_type, archived) WHERE deleted_at IS NULL;
CREATE INDEX links_user_type ON links (user_id, link_type, archived) WHERE deleted_at IS NULL;
CREATE INDEX links_clicks ON links (clicks) WHERE deleted_at IS NULL;
CREATE INDEX links_user_clicks ON links (user_id, clicks) WHERE deleted_at IS NULL;
-- Never-clicked links last in both directions, as SQLite's links_last / links_last_asc serve.
CREATE INDEX links_last ON links (last_clicked DESC NULLS LAST) WHERE deleted_at IS NULL;
CREATE INDEX links_user_last ON links (user_id, last_clicked DESC NULLS LAST) WHERE deleted_at IS NULL;
CREATE INDEX links_last_asc ON links (last_clicked ASC NULLS LAST) WHERE deleted_at IS NULL;
CREATE INDEX links_user_last_asc ON links (user_id, last_clicked ASC NULLS LAST) WHERE deleted_at IS NULL;
CREATE INDEX links_upsert ON links (user_id, link_type, match_key) WHERE deleted_at IS NULL;
CREATE INDEX links_file ON links ((data::jsonb ->> 'fileId')) WHERE deleted_at IS NULL AND (data::jsonb ->> 'fileId') IS NOT NULL;
CREATE INDEX links_search ON links USING gin (search_text gin_trgm_ops) WHERE deleted_at IS NULL;

CREATE TABLE link_tags (
  tag_id text NOT NULL REFERENCES tags(id) ON DELETE CASCADE,
  link_seq bigint NOT NULL REFERENCES links(seq) ON DELETE CASCADE,
  pos integer NOT NULL,
  PRIMARY KEY (tag_id, link_seq)
);
CREATE INDEX link_tags_link ON link_tags (link_seq, pos);

-- The n-th visit across nodes (number targeting): UPDATE … RETURNING n on the link's row.
-- Keyed by the link's public id, as the counters (src/store/pg/cluster-tables.ts) use it.
CREATE TABLE visit_counters (
  link_id text PRIMARY KEY,
  n bigint NOT NULL
);
-- Cluster-wide rate limits: hits per bucket (a key, a user, an address) and window.
CREATE TABLE rate_windows (
  bucket text NOT NULL,
  window_start bigint NOT NULL,
  hits int NOT NULL,
  PRIMARY KEY (bucket, window_start)
);

CREATE TABLE kv (
  key text PRIMARY KEY,
  value text NOT NULL
);

CREATE TABLE domains (
  slug text PRIMARY KEY,
  destination text,
  not_found_url text,
  expired_url text,
  asset_links text,
  apple_app_site_association text,
  archived smallint NOT NULL DEFAULT 0,
  cname_status text NOT NULL DEFAULT 'pending' CHECK (cname_status IN ('pending', 'valid', 'invalid')),
  cname_detail text,
  cname_checked_at bigint,
  cname_attempts integer NOT NULL DEFAULT 0,
  cname_next_at bigint,
  ssl_status text NOT NULL DEFAULT 'pending' CHECK (ssl_status IN ('pending', 'issuing', 'active', 'failed')),
  ssl_error text,
  ssl_attempts integer NOT NULL DEFAULT 0,
  ssl_next_at bigint,
  created_by text NOT NULL,
  created_at bigint NOT NULL,
  updated_at bigint NOT NULL
);
CREATE TABLE domain_clicks (
  slug text PRIMARY KEY,
  clicks bigint NOT NULL
);
CREATE TABLE tls_certificates (
  name text PRIMARY KEY,
  cert text NOT NULL,
  key text NOT NULL,
  not_before bigint NOT NULL,
  not_after bigint NOT NULL,
  issued_at bigint NOT NULL
);
CREATE TABLE acme_accounts (
  directory text PRIMARY KEY,
  account_key text NOT NULL,
  account_url text,
  created_at bigint NOT NULL
);
CREATE TABLE acme_challenges (
  token text PRIMARY KEY,
  key_authorization text NOT NULL,
  created_at bigint NOT NULL
);
-- Lease locks (ACME orders per domain): taken by INSERT … ON CONFLICT … WHERE expires_at < now,
-- renewed by the holder while it works.
CREATE TABLE locks (
  key text PRIMARY KEY,
  holder text NOT NULL,
  expires_at bigint NOT NULL
);

CREATE TABLE qr_templates (
  id text PRIMARY KEY,
  user_id text NOT NULL REFERENCES users(id),
  name text NOT NULL,
  name_key text NOT NULL,
  comment text NOT NULL DEFAULT '',
  qr_options text NOT NULL,
  archived smallint NOT NULL DEFAULT 0,
  created_at bigint NOT NULL,
  updated_at bigint NOT NULL
);
CREATE INDEX qr_templates_created ON qr_templates (created_at);
CREATE INDEX qr_templates_name ON qr_templates (name_key);

CREATE TABLE files (
  id text PRIMARY KEY,
  user_id text NOT NULL REFERENCES users(id),
  name text NOT NULL,
  name_key text NOT NULL,
  sha256 text NOT NULL,
  size bigint NOT NULL,
  mime_type text NOT NULL,
  extension text NOT NULL,
  archived smallint NOT NULL DEFAULT 0,
  created_at bigint NOT NULL,
  updated_at bigint NOT NULL,
  deleted_at bigint,
  bytes bytea
);
CREATE INDEX files_user_created ON files (user_id, created_at) WHERE deleted_at IS NULL;
CREATE INDEX files_created ON files (created_at) WHERE deleted_at IS NULL;
CREATE INDEX files_sha256 ON files (sha256) WHERE deleted_at IS NULL;

-- Statistics rollups: the layout of src/stats/stats.rollup.ts (scope: 0 all links, -group num, +link seq).
CREATE TABLE stats_groups (
  num bigint GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
  name text NOT NULL UNIQUE
);
CREATE TABLE stats_busy_links (
  seq bigint PRIMARY KEY
);
CREATE TABLE stats_quarter (scope bigint NOT NULL, dim integer NOT NULL, t bigint NOT NULL, value text NOT NULL,
  clicks bigint NOT NULL, scans bigint NOT NULL, PRIMARY KEY (scope, dim, t, value));
CREATE TABLE stats_hour (scope bigint NOT NULL, dim integer NOT NULL, t bigint NOT NULL, value text NOT NULL,
  clicks bigint NOT NULL, scans bigint NOT NULL, PRIMARY KEY (scope, dim, t, value));
CREATE TABLE stats_day (scope bigint NOT NULL, dim integer NOT NULL, t bigint NOT NULL, value text NOT NULL,
  clicks bigint NOT NULL, scans bigint NOT NULL, PRIMARY KEY (scope, dim, t, value));
CREATE TABLE stats_week (scope bigint NOT NULL, dim integer NOT NULL, t bigint NOT NULL, value text NOT NULL,
  clicks bigint NOT NULL, scans bigint NOT NULL, PRIMARY KEY (scope, dim, t, value));
CREATE INDEX stats_hour_links ON stats_hour (t, scope) INCLUDE (clicks, scans) WHERE scope > 0 AND dim = 0;
CREATE INDEX stats_day_links ON stats_day (t, scope) INCLUDE (clicks, scans) WHERE scope > 0 AND dim = 0;
CREATE INDEX stats_week_links ON stats_week (t, scope) INCLUDE (clicks, scans) WHERE scope > 0 AND dim = 0;

CREATE SEQUENCE click_events_id_seq AS bigint;
CREATE TABLE click_events (
  id bigint NOT NULL DEFAULT nextval('click_events_id_seq'),
  link_seq bigint NOT NULL,
  at bigint NOT NULL,
  scan smallint NOT NULL,
  continent text,
  country text,
  region text,
  city text,
  os text NOT NULL,
  browser text NOT NULL,
  device text NOT NULL,
  referer text,
  referer_url text,
  utm_source text,
  utm_medium text,
  utm_campaign text,
  utm_term text,
  utm_content text,
  n integer NOT NULL DEFAULT 1,
  PRIMARY KEY (id, at)
) PARTITION BY RANGE (at);
ALTER SEQUENCE click_events_id_seq OWNED BY click_events.id;
CREATE TABLE click_events_default PARTITION OF click_events DEFAULT;
CREATE INDEX click_events_at ON click_events (at);
CREATE INDEX click_events_link_at ON click_events (link_seq, at) INCLUDE (country, n, scan);
CREATE INDEX click_events_country_at ON click_events (country, at) INCLUDE (link_seq, n, scan);

-- The partition of the (UTC) month holding at_ms, created when missing: click_events_YYYYMM.
-- Rows of that month already in the default partition move into it, so it can attach. Serialised
-- by a transaction-level advisory lock, so nodes creating the same month do it once.
CREATE FUNCTION click_events_month(at_ms bigint) RETURNS text LANGUAGE plpgsql AS $fn$
DECLARE
  first_day timestamp := date_trunc('month', to_timestamp(at_ms / 1000.0) AT TIME ZONE 'UTC');
  lo bigint := (extract(epoch FROM first_day) * 1000)::bigint;
  hi bigint := (extract(epoch FROM first_day + interval '1 month') * 1000)::bigint;
  part text := 'click_events_' || to_char(first_day, 'YYYYMM');
BEGIN
  PERFORM pg_advisory_xact_lock(7240514, 2);
  IF to_regclass(part) IS NOT NULL THEN
    RETURN part;
  END IF;
  EXECUTE format('CREATE TABLE %I (LIKE click_events INCLUDING DEFAULTS INCLUDING CONSTRAINTS)', part);
  EXECUTE format('WITH moved AS (DELETE FROM click_events_default WHERE at >= %s AND at < %s RETURNING *) INSERT INTO %I SELECT * FROM moved', lo, hi, part);
  EXECUTE format('ALTER TABLE click_events ATTACH PARTITION %I FOR VALUES FROM (%s) TO (%s)', part, lo, hi);
  RETURN part;
END
$fn$;
`,
}
