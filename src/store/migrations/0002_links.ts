import type { Migration } from './index'

/**
 * Links. `seq` is the rowid (compact joins from tags, clicks and the search index);
 * `id` is the public identifier. Deleted links stay as tombstones (`deleted_at`) and
 * free their key. `seq` grows with creation, so "newest" is rowid order. Partial indexes over
 * live rows serve each sort and count (with `archived`, counts never read the table), per
 * owner and for admins; `links_search` is a trigram FTS index over slug, destination and content.
 */
export const links: Migration = {
  id: 2,
  name: '0002_links',
  sql: `
CREATE TABLE links (
  seq INTEGER PRIMARY KEY,
  id TEXT NOT NULL UNIQUE,
  user_id TEXT NOT NULL REFERENCES users(id),
  domain TEXT NOT NULL,
  key TEXT NOT NULL,
  link_type TEXT NOT NULL,
  destination TEXT NOT NULL,
  match_key TEXT NOT NULL,
  data TEXT NOT NULL,
  options TEXT NOT NULL DEFAULT '{}',
  qr_options TEXT,
  password_hash TEXT,
  expires_at INTEGER,
  archived INTEGER NOT NULL DEFAULT 0,
  clicks INTEGER NOT NULL DEFAULT 0,
  last_clicked INTEGER,
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL,
  deleted_at INTEGER
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
CREATE INDEX links_last ON links (last_clicked) WHERE deleted_at IS NULL;
CREATE INDEX links_user_last ON links (user_id, last_clicked) WHERE deleted_at IS NULL;
CREATE INDEX links_last_asc ON links ((last_clicked IS NULL), last_clicked) WHERE deleted_at IS NULL;
CREATE INDEX links_user_last_asc ON links (user_id, (last_clicked IS NULL), last_clicked) WHERE deleted_at IS NULL;
CREATE INDEX links_upsert ON links (user_id, link_type, match_key) WHERE deleted_at IS NULL;
CREATE INDEX links_file ON links (json_extract(data, '$.fileId')) WHERE deleted_at IS NULL AND json_extract(data, '$.fileId') IS NOT NULL;
CREATE TABLE link_tags (
  tag_id TEXT NOT NULL REFERENCES tags(id) ON DELETE CASCADE,
  link_seq INTEGER NOT NULL REFERENCES links(seq) ON DELETE CASCADE,
  pos INTEGER NOT NULL,
  PRIMARY KEY (tag_id, link_seq)
) WITHOUT ROWID;
CREATE INDEX link_tags_link ON link_tags (link_seq, pos);
CREATE VIRTUAL TABLE links_search USING fts5(body, tokenize = 'trigram', content = '', contentless_delete = 1);
`,
}
