import type { Migration } from './index'

/**
 * Click events hold dictionary ids instead of their strings (measured in src/stats/STORAGE.md:
 * the 13 text columns were ~67 of a row's ~100 bytes). `stats_values` numbers every distinct
 * string once (common ones first, so they take one byte); `click_events_compact` is the table
 * the writer fills and statistics read; `click_events` stays as a view with the strings, for
 * the rollup rebuilds and anyone reading events by name.
 *
 * Two covering indexes replace the (link_seq, at) one: (link_seq, at, country, n, scan) so a
 * breakdown by country of chosen links reads no rows, and (country, at, link_seq, n, scan) so
 * a country filter over every link (groupBy=link&country=DE) reads only that country's events.
 *
 * The existing events are converted in place (ids assigned per column, most frequent first).
 */
const TEXT_COLUMNS = [
  'os',
  'browser',
  'device',
  'continent',
  'country',
  'region',
  'city',
  'referer',
  'utm_source',
  'utm_medium',
  'utm_term',
  'utm_content',
  'utm_campaign',
  'referer_url',
]
// Frozen text: the statements are generated once here from the constant list above, which
// never changes (a later layout needs a new migration).
const dictionary = TEXT_COLUMNS.map(
  (c) => `INSERT OR IGNORE INTO stats_values (value) SELECT ${c} FROM click_events WHERE ${c} IS NOT NULL GROUP BY ${c} ORDER BY count(*) DESC, ${c};`,
).join('\n')
const EVENT_COLUMNS = [
  'continent',
  'country',
  'region',
  'city',
  'os',
  'browser',
  'device',
  'referer',
  'referer_url',
  'utm_source',
  'utm_medium',
  'utm_campaign',
  'utm_term',
  'utm_content',
]
const idOf = (c: string) => `(SELECT v.id FROM stats_values v WHERE v.value = e.${c})`
const stringOf = (c: string) => `(SELECT v.value FROM stats_values v WHERE v.id = c.${c}) AS ${c}`

export const clickValues: Migration = {
  id: 11,
  name: '0011_click_values',
  sql: `
CREATE TABLE stats_values (
  id INTEGER PRIMARY KEY,
  value TEXT NOT NULL UNIQUE
);
${dictionary}
CREATE TABLE click_events_compact (
  id INTEGER PRIMARY KEY,
  link_seq INTEGER NOT NULL REFERENCES links(seq),
  at INTEGER NOT NULL,
  scan INTEGER NOT NULL,
  continent INTEGER,
  country INTEGER,
  region INTEGER,
  city INTEGER,
  os INTEGER NOT NULL,
  browser INTEGER NOT NULL,
  device INTEGER NOT NULL,
  referer INTEGER,
  referer_url INTEGER,
  utm_source INTEGER,
  utm_medium INTEGER,
  utm_campaign INTEGER,
  utm_term INTEGER,
  utm_content INTEGER,
  n INTEGER NOT NULL DEFAULT 1
);
INSERT INTO click_events_compact (id, link_seq, at, scan, ${EVENT_COLUMNS.join(', ')}, n)
  SELECT e.id, e.link_seq, e.at, e.scan, ${EVENT_COLUMNS.map(idOf).join(', ')}, e.n FROM click_events e ORDER BY e.id;
DROP TABLE click_events;
CREATE INDEX click_events_at ON click_events_compact (at);
CREATE INDEX click_events_link_at ON click_events_compact (link_seq, at, country, n, scan);
CREATE INDEX click_events_country_at ON click_events_compact (country, at, link_seq, n, scan);
CREATE VIEW click_events AS
  SELECT c.id, c.link_seq, c.at, c.scan, ${EVENT_COLUMNS.map(stringOf).join(', ')}, c.n FROM click_events_compact c;
`,
}
