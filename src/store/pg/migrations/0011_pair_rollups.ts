import { DIMENSIONS } from './0009_compact_click_events'
import type { PgMigration } from './index'

/**
 * Pairwise daily rollups of all links' events: for each pair of the 13 event dimensions, per UTC
 * day, the clicks and scans of each pair of values (stats_values ids, 0 for none). A filter on one
 * event dimension grouped by another ("phones only, by country") over a year read 10M raw events
 * (seconds, src/stats/STORAGE.md); from these rows it reads a few thousand. Written for whole days
 * once they have ended (`stats_pairs_add`, by one node at a time: src/stats/stats.pairs.pg.ts),
 * so the writer's batches do not carry them; `stats_pairs_state.upto` is the first day not rolled
 * up. A batch with events of an earlier day (a journal written back late) adds their rows itself
 * (`stats_pairs_add_rows`) under a share lock of the state row, which the roll-up takes
 * exclusively: a day's events are either in its rows or read raw, never both, never neither.
 * The key carries the sums (INCLUDE), so a question reads one pair's rows from the index alone: its
 * rows are spread over every page of the table, a day's 78 pairs being rolled up together (the
 * country × referer URL rows of a year, 316k, through the heap: 3.2 s under load).
 * Frozen text: the codes are the order of migration 0009's columns (stats.rollup.ts DIMENSIONS when this shipped).
 */
const COLUMNS = DIMENSIONS.filter((c) => c !== 'continent')
/** (a, b, value of a, value of b) for every pair of dimension codes a < b, over events `e`. */
const PAIRS: string[] = []
for (let i = 0; i < COLUMNS.length; i++)
  for (let j = i + 1; j < COLUMNS.length; j++) PAIRS.push(`(${i + 1}, ${j + 1}, coalesce(e.${COLUMNS[i]}, 0), coalesce(e.${COLUMNS[j]}, 0))`)
/**
 * The upsert of the pair rows of events `e`. In key order when batches may add rows at once (a
 * batch's late events: two batches then wait on each other in one order, never in a cycle); the
 * roll-up holds the state row alone and hashes without sorting (a day of ~13k events is ~1M pair
 * tuples: sorted, 7 of the statement's 15 s under load).
 */
const upsert = (source: string, where: string, ordered: boolean) => `INSERT INTO stats_pairs AS p (a, b, day, va, vb, clicks, scans)
  SELECT x.a, x.b, (e.at / 86400000)::int, x.va, x.vb, sum(e.n), sum(e.n * e.scan)
  FROM ${source} CROSS JOIN LATERAL (VALUES ${PAIRS.join(', ')}) AS x(a, b, va, vb)${where}
  GROUP BY 1, 2, 3, 4, 5${ordered ? ' ORDER BY 1, 2, 3, 4, 5' : ''}
  ON CONFLICT (a, b, day, va, vb) DO UPDATE SET clicks = p.clicks + excluded.clicks, scans = p.scans + excluded.scans`

export const pairRollups: PgMigration = {
  id: 11,
  name: '0011_pair_rollups',
  sql: `
CREATE TABLE stats_pairs (
  a smallint NOT NULL,
  b smallint NOT NULL,
  day integer NOT NULL,
  va integer NOT NULL,
  vb integer NOT NULL,
  clicks bigint NOT NULL,
  scans bigint NOT NULL,
  PRIMARY KEY (a, b, day, va, vb) INCLUDE (clicks, scans)
);
CREATE TABLE stats_pairs_state (
  one boolean PRIMARY KEY DEFAULT true CHECK (one),
  upto integer NOT NULL
);
-- Days before the first event need no rows: roll-ups start there (today on an empty store; a
-- batch with older events adds their rows itself, and migrate-store moves it back to its first event).
INSERT INTO stats_pairs_state (upto)
  SELECT coalesce((min(at) / 86400000)::int, floor(extract(epoch FROM now()) / 86400)::int) FROM click_events_compact;

-- The pair rows of every event in [from_ms, to_ms), added.
CREATE FUNCTION stats_pairs_add(from_ms bigint, to_ms bigint) RETURNS void LANGUAGE sql SET enable_sort = off SET jit = off AS $fn$
${upsert('click_events_compact e', ' WHERE e.at >= from_ms AND e.at < to_ms', false)};
$fn$;

-- The pair rows of events given as columns (a batch's events of days already rolled up), added.
CREATE FUNCTION stats_pairs_add_rows(ats bigint[], ns integer[], scan_flags smallint[], ${COLUMNS.map((c) => `${c}s integer[]`).join(', ')}) RETURNS void LANGUAGE sql SET jit = off AS $fn$
${upsert(`unnest(ats, ns, scan_flags, ${COLUMNS.map((c) => `${c}s`).join(', ')}) AS e(at, n, scan, ${COLUMNS.join(', ')})`, '', true)};
$fn$;
`,
}
