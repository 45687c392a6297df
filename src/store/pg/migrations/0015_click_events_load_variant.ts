import { DIMENSIONS } from './0009_compact_click_events'
import type { PgMigration } from './index'

const ids = DIMENSIONS.map((_, i) => `v${i}.id`).join(', ')
const joins = DIMENSIONS.map((c, i) => `LEFT JOIN stats_values v${i} ON v${i}.value = e.${c}`).join(' ')

/**
 * `click_events_load(source)` (migration 0009) carries the A/B variant of each event (0012) into
 * `click_events_compact.variant`: `migrate-store` moves a single node's events with their variants,
 * so a running test keeps its visits per variant after the move. The source (the copy's staging
 * table) now needs a `variant` column (null outside a test). Otherwise as 0009: dictionary first,
 * the month partitions, then one INSERT … SELECT.
 */
export const clickEventsLoadVariant: PgMigration = {
  id: 15,
  name: '0015_click_events_load_variant',
  sql: `
CREATE OR REPLACE FUNCTION click_events_load(source regclass) RETURNS bigint LANGUAGE plpgsql AS $fn$
DECLARE
  moved bigint;
BEGIN
  EXECUTE format('INSERT INTO stats_values (value) SELECT x.v FROM %s e CROSS JOIN LATERAL (VALUES ${DIMENSIONS.map((c) => `(e.${c})`).join(', ')}) AS x(v)
    WHERE x.v IS NOT NULL GROUP BY x.v ORDER BY count(*) DESC, x.v ON CONFLICT (value) DO NOTHING', source);
  EXECUTE format('SELECT count(click_events_month(m)) FROM (SELECT min(at) AS m FROM %s GROUP BY at / 86400000) d', source);
  EXECUTE format('INSERT INTO click_events_compact (link_seq, at, n, ${DIMENSIONS.join(', ')}, scan, variant)
    SELECT e.link_seq, e.at, e.n, ${ids}, e.scan, e.variant FROM %s e ${joins}', source);
  GET DIAGNOSTICS moved = ROW_COUNT;
  RETURN moved;
END
$fn$;
`,
}
