import type { Migration } from './index'

/**
 * Custom short domains and their certificates. `domains.slug` is the punycode host
 * name. CNAME and certificate state carry their own attempt counters and next-try
 * times so background retries back off across restarts. `tls_certificates` holds
 * every ACME certificate by host name (custom domains, and in acme mode the API host
 * and default domains); `acme_accounts` the account key per ACME directory.
 */
export const domains: Migration = {
  id: 4,
  name: '0004_domains',
  sql: `
CREATE TABLE domains (
  slug TEXT PRIMARY KEY,
  destination TEXT,
  not_found_url TEXT,
  expired_url TEXT,
  asset_links TEXT,
  apple_app_site_association TEXT,
  archived INTEGER NOT NULL DEFAULT 0,
  cname_status TEXT NOT NULL DEFAULT 'pending' CHECK (cname_status IN ('pending', 'valid', 'invalid')),
  cname_detail TEXT,
  cname_checked_at INTEGER,
  cname_attempts INTEGER NOT NULL DEFAULT 0,
  cname_next_at INTEGER,
  ssl_status TEXT NOT NULL DEFAULT 'pending' CHECK (ssl_status IN ('pending', 'issuing', 'active', 'failed')),
  ssl_error TEXT,
  ssl_attempts INTEGER NOT NULL DEFAULT 0,
  ssl_next_at INTEGER,
  created_by TEXT NOT NULL,
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL
);
-- Clicks per domain (default domains too), added once per click flush.
CREATE TABLE domain_clicks (
  slug TEXT PRIMARY KEY,
  clicks INTEGER NOT NULL
) WITHOUT ROWID;
CREATE TABLE tls_certificates (
  name TEXT PRIMARY KEY,
  cert TEXT NOT NULL,
  key TEXT NOT NULL,
  not_before INTEGER NOT NULL,
  not_after INTEGER NOT NULL,
  issued_at INTEGER NOT NULL
);
CREATE TABLE acme_accounts (
  directory TEXT PRIMARY KEY,
  account_key TEXT NOT NULL,
  account_url TEXT,
  created_at INTEGER NOT NULL
);
`,
}
