import type { Migration } from './index'

/**
 * Link health (src/link-health). `health_urls`: one row per distinct destination URL, keyed by
 * 128 bits of its SHA-256 (URLs run to thousands of bytes), with its status, the failed checks
 * in a row and its last answer. `link_health_urls`: which URLs each link sends visitors to
 * (refreshed by the checker's walk and on each write to the link), so a URL's change reaches
 * every link that uses it. `link_health`: each link's status and since when (absent: unknown
 * since its creation); the list filter `health` reads it.
 */
export const linkHealth: Migration = {
  id: 16,
  name: '0016_link_health',
  sql: `
CREATE TABLE health_urls (
  url_key TEXT PRIMARY KEY,
  url TEXT NOT NULL,
  status TEXT NOT NULL DEFAULT 'unknown' CHECK (status IN ('unknown', 'ok', 'broken')),
  fails INTEGER NOT NULL DEFAULT 0,
  http_status INTEGER,
  error TEXT,
  checked_at INTEGER
) WITHOUT ROWID;
CREATE TABLE link_health_urls (
  link_seq INTEGER NOT NULL REFERENCES links(seq) ON DELETE CASCADE,
  url_key TEXT NOT NULL,
  PRIMARY KEY (link_seq, url_key)
) WITHOUT ROWID;
CREATE INDEX link_health_urls_url ON link_health_urls (url_key, link_seq);
CREATE TABLE link_health (
  link_seq INTEGER PRIMARY KEY REFERENCES links(seq) ON DELETE CASCADE,
  status TEXT NOT NULL CHECK (status IN ('unknown', 'ok', 'broken')),
  since INTEGER NOT NULL
);
CREATE INDEX link_health_status ON link_health (status, link_seq);
`,
}
