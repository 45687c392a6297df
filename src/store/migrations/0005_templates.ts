import type { Migration } from './index'

/** QR templates: shared designs (qrOptions as JSON) with a name and comment. */
export const templates: Migration = {
  id: 5,
  name: '0005_templates',
  sql: `
CREATE TABLE qr_templates (
  id TEXT PRIMARY KEY,
  user_id TEXT NOT NULL REFERENCES users(id),
  name TEXT NOT NULL,
  name_key TEXT NOT NULL,
  comment TEXT NOT NULL DEFAULT '',
  qr_options TEXT NOT NULL,
  archived INTEGER NOT NULL DEFAULT 0,
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL
);
CREATE INDEX qr_templates_created ON qr_templates (created_at);
CREATE INDEX qr_templates_name ON qr_templates (name_key);
`,
}
