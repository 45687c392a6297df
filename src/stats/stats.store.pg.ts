/**
 * The statistics reads on PostgreSQL (docs/adr/0010): the SQLite store's methods and rows,
 * against migration 0001 (the same rollup tables; `click_events` with plain string columns,
 * partitioned by month). stats.sql.ts writes the statements in the `pg` dialect (numbers
 * cast to float8/int, since Bun.SQL returns int8 and numeric as strings); this adapter only
 * numbers their `?` placeholders and runs them. A request's reads share one REPEATABLE READ,
 * read-only transaction: the click writer commits between them.
 */
import type { SQL } from 'bun'
import type { LinkSet, Scope } from './stats.plan'
import { HOUR } from './stats.rollup'
import { countLinksSql, firstClickHourSql, linksOfSeqsSql, type Statement } from './stats.sql'
import type { ConversionSumRow, LinkInfo, LinkOfSeq, PerLinkRow, ReadRow, StatsReader, StatsStorePort } from './stats.store'

const LINK_COLUMNS = 'seq::float8 AS seq, id, user_id, domain, key, link_type, destination, deleted_at::float8 AS deleted_at'

/** `?` placeholders as `$1…` (no statement of stats.sql.ts holds a literal `?`). */
const numbered = (text: string) => {
  let n = 0
  return text.replace(/\?/g, () => `$${++n}`)
}

/**
 * For this transaction only. No JIT: the rollups' cost estimates started JIT compilation
 * (~90 ms) for queries of a few ms. No parallel workers: a read sums at most ~150k index rows,
 * and on a node's few cores, shared with other requests, starting workers and merging their
 * sorted partial sums took longer than summing alone (admin groupBy=link, 30 days at 10M
 * events: ~100 → ~80 ms). No sequential scans: every rollup read has its index (the key's
 * (scope, dim, t) prefix), and the planner's estimate for `scope = 0 AND dim = 0` (8,760 rows of
 * stats_hour in a year, 0.1 % of the table) depends on whether that pair lands in the sampled
 * (scope, dim) statistics of migration 0002: after a VACUUM ANALYZE of the 10M bench copy it did
 * not, the planner expected 2M rows and scanned the table (a daily year in Europe/Paris: 9 ms →
 * 844 ms). Raw reads with no usable index still scan; the setting only prices it. Per-link
 * reads turn scans back on for their statement (readPerLink).
 */
const PLANNER_SETTINGS =
  "SELECT set_config('jit', 'off', true), set_config('max_parallel_workers_per_gather', '0', true), set_config('enable_seqscan', 'off', true)"

const SEQSCAN_ON = "SELECT set_config('enable_seqscan', 'on', true)"
const SEQSCAN_OFF = "SELECT set_config('enable_seqscan', 'off', true)"
/**
 * A raw read over every link (a filter on one event dimension grouped by another, over months):
 * millions of events, read by a sequential scan of their partitions with two parallel workers
 * (device=Mobile by os over a year at 10M events, under a load average of ~15 on 2 cores: 8-11 s
 * through the time BRIN alone, 7-8 s by a sequential scan, 4.1-4.3 s with two workers), or a few
 * hundred thousand pair rows (stats.pairs.pg.ts); hashed, never sorted, into their groups (a few
 * hundred at most: continent=Europe by referer URL over a year sorted 316k pair rows, 1.4 → 0.6 s).
 */
const SCAN_ON =
  "SELECT set_config('enable_seqscan', 'on', true), set_config('max_parallel_workers_per_gather', '2', true), set_config('enable_sort', 'off', true)"
const SCAN_OFF =
  "SELECT set_config('enable_seqscan', 'off', true), set_config('max_parallel_workers_per_gather', '0', true), set_config('enable_sort', 'on', true)"

function readerOf(sql: SQL): StatsReader {
  const all = async <T>({ sql: text, args }: Statement): Promise<T[]> => (await sql.unsafe(numbered(text), args)) as T[]
  const oneLink = async (where: string, args: string[]): Promise<LinkInfo | null> => {
    const [row] = await sql.unsafe(`SELECT ${LINK_COLUMNS} FROM links WHERE ${where}`, args)
    return (row as LinkInfo | undefined) ?? null
  }
  return {
    dialect: 'pg',
    facts: {
      groupNum: async (name: string) => ((await sql`SELECT num::float8 AS num FROM stats_groups WHERE name = ${name}`)[0]?.num as number | undefined) ?? null,
      countLinks: async (links: LinkSet) => (await all<{ n: number }>(countLinksSql(links, 'pg')))[0]!.n,
      async firstClickHour(scope: Scope) {
        if (scope.kind === 'group' && scope.num === null) return null
        const t = (await all<{ t: number | null }>(firstClickHourSql(scope, 'pg')))[0]?.t
        return t == null ? null : t * HOUR
      },
    },
    linkById: (id: string) => oneLink('id = $1', [id]),
    liveLinkAt: (domain: string, key: string) => oneLink('domain = $1 AND key = $2 AND deleted_at IS NULL', [domain, key]),
    tagOwners: async (ids: string[]) =>
      (await sql.unsafe(`SELECT id, user_id FROM tags WHERE id IN (${ids.map((_, i) => `$${i + 1}`).join(',')})`, ids)) as {
        id: string
        user_id: string
      }[],
    async readRows(statements: Statement[]) {
      const lists: ReadRow[][] = []
      for (const statement of statements) {
        if (!statement.scan) {
          lists.push(await all<ReadRow>(statement))
          continue
        }
        await sql.unsafe(SCAN_ON)
        try {
          lists.push(await all<ReadRow>(statement))
        } finally {
          await sql.unsafe(SCAN_OFF)
        }
      }
      return lists
    },
    readConversions: (statement: Statement) => all<ConversionSumRow>(statement),
    linksOfSeqs: async (seqs: number[]) => (seqs.length ? all<LinkOfSeq>(linksOfSeqsSql(seqs, 'pg')) : []),
    async readPerLink(statement: Statement | null) {
      if (!statement) return []
      // A per-link answer over thousands of links hashes the links in one scan rather than seeking
      // each (groupBy=link over every link at 10M events: ~137 → ~97 ms): scans allowed for it alone.
      await sql.unsafe(SEQSCAN_ON)
      try {
        return await all<PerLinkRow>(statement)
      } finally {
        await sql.unsafe(SEQSCAN_OFF)
      }
    },
  }
}

export function createPgStatsStore(sql: SQL): StatsStorePort {
  return {
    ...readerOf(sql),
    snapshot: <T>(read: (r: StatsReader) => T | Promise<T>): Promise<T> =>
      sql.begin('ISOLATION LEVEL REPEATABLE READ READ ONLY', async (tx) => {
        await tx.unsafe(PLANNER_SETTINGS)
        return read(readerOf(tx))
      }) as Promise<T>,
  }
}
