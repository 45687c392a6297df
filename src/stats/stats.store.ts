/**
 * SQL of the statistics: link and tag lookups for the filters, and the two kinds of
 * reads the service combines — rollup rows (stats_hour/stats_day) and raw click_events
 * for what no rollup holds (sub-hour edges, several event dimensions at once, dimension
 * breakdowns of chosen links).
 */
import type { Database, SQLQueryBindings } from 'bun:sqlite'
import { DAY, HOUR, type Level } from './stats.rollup'
import type { LinkRow } from '../links/links.store'

export type SqlArg = string | number
/**
 * Which links count: every link, a rollup group's (one owner's or one link type's: the links
 * whose `column` is `value`; `num` its rollup number), or a SELECT of link seqs.
 */
export type Scope =
  | { kind: 'all' }
  | { kind: 'group'; column: 'user_id' | 'link_type'; value: string; num: number | null }
  /** `wide`: thousands of links, read by time range rather than by a seek per link. */
  | { kind: 'link'; sql: string; args: SqlArg[]; wide: boolean; everyLink?: boolean }

/**
 * What a rollup read takes from the rows of one dim: conditions on (parts of) the stored
 * value, and the grouping key (SQL over `value`, null = unknown) when grouping by value.
 */
export interface DimRead {
  dim: number
  conds: { expr: string; values: string[] }[]
  keyExpr: string | null
}

/** What a read groups by besides time: nothing, the dimension value, or the link. */
export type KeyKind = 'none' | 'value' | 'link'

export interface ReadRow {
  /** Unit number (time reads only): the unit starts at u × unitMs. */
  u: number
  k: string | number | null
  c: number
  s: number
}

/** Raw reads group time by quarter hours: every zone offset in use is a multiple of 15 minutes. */
export const RAW_UNIT_MS = 900_000

/** A per-link read joined with its link (or grouped by link_type/destination: then only k, c, s). */
export interface PerLinkRow {
  k: string | number
  c: number
  s: number
  id?: string
  domain?: string
  key?: string
  destination?: string
}

/** The link columns statistics read. */
export type LinkInfo = Pick<LinkRow, 'seq' | 'id' | 'user_id' | 'domain' | 'key' | 'link_type' | 'destination' | 'deleted_at'>

export function createStatsStore(db: Database) {
  const q = <T>(sql: string, args: SqlArg[]) => db.query<T, SQLQueryBindings[]>(sql).all(...args)
  const byId = db.query<LinkInfo, [string]>('SELECT seq, id, user_id, domain, key, link_type, destination, deleted_at FROM links WHERE id = ?')
  const liveByDomainKey = db.query<LinkInfo, [string, string]>(
    'SELECT seq, id, user_id, domain, key, link_type, destination, deleted_at FROM links WHERE domain = ? AND key = ? AND deleted_at IS NULL',
  )
  const groupNum = db.query<{ num: number }, [string]>('SELECT num FROM stats_owners WHERE user_id = ?')

  function scopeCondition(scope: Scope, column: string): { sql: string; args: SqlArg[] } {
    if (scope.kind === 'all' || (scope.kind === 'link' && scope.everyLink)) return { sql: '', args: [] }
    if (scope.kind === 'group') return { sql: ` AND ${column} IN (SELECT seq FROM links WHERE ${scope.column} = ?)`, args: [scope.value] }
    return { sql: ` AND ${column} IN (${scope.sql})`, args: scope.args }
  }

  const api = {
    rollupSql,
    rawSql,
    linkById: (id: string) => byId.get(id),
    liveLinkAt: (domain: string, key: string) => liveByDomainKey.get(domain, key),
    tagOwners: (ids: string[]) => q<{ id: string; user_id: string }>(`SELECT id, user_id FROM tags WHERE id IN (${ids.map(() => '?').join(',')})`, ids),
    /** Rollup number of a group: an owner's user id, or `type:<linkType>`. */
    groupNum: (name: string) => groupNum.get(name)?.num ?? null,
    /** Every statistics read of one request in one snapshot: the writer commits between statements. */
    snapshot: <T>(read: () => T): T => db.transaction(read)(),
    countLinks: (sql: string, args: SqlArg[]) => q<{ n: number }>(`SELECT count(*) AS n FROM (${sql})`, args)[0]!.n,

    /** The busy links of a link scope (their day rows per dimension), or the other links (raw events). */
    busyPart(scope: Scope, busy: boolean): Scope {
      if (scope.kind !== 'link') return scope
      const sql = `SELECT seq FROM (${scope.sql}) WHERE seq ${busy ? '' : 'NOT '}IN (SELECT seq FROM stats_busy_links)`
      return { kind: 'link', sql, args: scope.args, wide: scope.wide }
    },

    /** Start (ms) of the first hour with a click in the scope, or null. */
    firstClickHour(scope: Scope): number | null {
      let row: { t: number | null } | undefined
      if (scope.kind === 'all') row = q<{ t: number | null }>('SELECT min(t) AS t FROM stats_hour WHERE scope = 0 AND dim = 0', [])[0]
      else if (scope.kind === 'group')
        row = scope.num === null ? undefined : q<{ t: number | null }>('SELECT min(t) AS t FROM stats_hour WHERE scope = ? AND dim = 0', [-scope.num])[0]
      else
        row = q<{ t: number | null }>(
          `SELECT min((SELECT t FROM stats_hour h WHERE h.scope = x.seq AND h.dim = 0 ORDER BY t LIMIT 1)) AS t FROM (${scope.sql}) x`,
          scope.args,
        )[0]
      return row?.t == null ? null : row.t * HOUR
    },

    /**
     * Sums of rollup rows of one level in units [fromUnit, toUnit), optionally per unit
     * (`byTime`) and per value or link.
     */
    readRollup(level: Level, scope: Scope, read: DimRead, fromUnit: number, toUnit: number, key: KeyKind, byTime: boolean): ReadRow[] {
      if (scope.kind === 'group' && scope.num === null) return []
      const r = rollupSql(level, scope, read, fromUnit, toUnit, key, byTime)
      return q<ReadRow>(r.sql, r.args)
    },

    readRaw(scope: Scope, from: number, to: number, filters: Map<string, string[]>, key: KeyKind, keyColumn: string | null, byTime: boolean): ReadRow[] {
      const r = rawSql(scope, from, to, filters, key, keyColumn, byTime)
      return q<ReadRow>(r.sql, r.args)
    },

    /**
     * Per-link sums of several reads (rollupSql/rawSql with key 'link', no time) joined with
     * the links in SQL: one result row per link, or per link_type/destination when `by` is set.
     */
    readPerLink(parts: { sql: string; args: SqlArg[] }[], by: 'link_type' | 'destination' | null): PerLinkRow[] {
      if (!parts.length) return []
      const union = parts.map((p) => p.sql).join(' UNION ALL ')
      const args = parts.flatMap((p) => p.args)
      const summed = `SELECT k, sum(c) AS c, sum(s) AS s FROM (${union}) GROUP BY k`
      if (by) return q<PerLinkRow>(`SELECT l.${by} AS k, sum(x.c) AS c, sum(x.s) AS s FROM (${summed}) x JOIN links l ON l.seq = x.k GROUP BY l.${by}`, args)
      return q<PerLinkRow>(`SELECT x.k, x.c, x.s, l.id, l.domain, l.key, l.destination FROM (${summed}) x JOIN links l ON l.seq = x.k`, args)
    },
  }

  return api

  function rollupSql(level: Level, scope: Scope, read: DimRead, fromUnit: number, toUnit: number, key: KeyKind, byTime: boolean): { sql: string; args: SqlArg[] } {
      const { dim } = read
      const args: SqlArg[] = []
      let from = level.table
      let where: string
      if (scope.kind === 'all') where = 'scope = 0'
      else if (scope.kind === 'group') (where = 'scope = ?'), args.push(-(scope.num ?? 0))
      else {
        // Many links: the partial index in time order, links checked against the set.
        if (scope.wide && dim === 0) from += ` INDEXED BY ${level.table}_links`
        where = scope.everyLink ? 'scope > 0' : `scope > 0 AND scope IN (${scope.sql})`
        if (!scope.everyLink) args.push(...scope.args)
      }
      // dim is inlined (a small integer of ours) so the partial indexes' `dim = 0` can be proven.
      where += ` AND dim = ${Math.trunc(dim)} AND t >= ? AND t < ?`
      args.push(fromUnit, toUnit)
      for (const c of read.conds) (where += ` AND ${c.expr} IN (${c.values.map(() => '?').join(',')})`), args.push(...c.values)
      const keyCol = key === 'value' ? read.keyExpr! : key === 'link' ? 'scope' : 'NULL'
      const group = [byTime ? 'u' : '', key !== 'none' ? 'k' : ''].filter(Boolean)
      return {
        sql: `SELECT ${byTime ? 't' : '0'} AS u, ${keyCol} AS k, sum(clicks) AS c, sum(scans) AS s FROM ${from} WHERE ${where}${group.length ? ` GROUP BY ${group.join(', ')}` : ''}`,
        args,
      }
  }

  /**
   * Sums of raw events in [from, to) ms matching `filters` (column → accepted values),
   * optionally per quarter hour and per value of `keyColumn` or per link.
   */
  function rawSql(scope: Scope, from: number, to: number, filters: Map<string, string[]>, key: KeyKind, keyColumn: string | null, byTime: boolean): { sql: string; args: SqlArg[] } {
      const sc = scopeCondition(scope, 'link_seq')
      // Every link, thousands of links, or a span of up to a day (the edges of a range): the time
      // index, links checked per event. Events sit in time order, so that reads pages in order;
      // the planner would rather skip-scan (link_seq, at) to group by link: a random row fetch per
      // event, measured 5x slower (30 days of all links' events: 1.5 s against 0.15-0.2 s).
      const timeIndex = scope.kind === 'all' || (scope.kind === 'link' && scope.wide) || to - from <= DAY
      let where = `at >= ? AND at < ?${timeIndex ? sc.sql.replace(' AND link_seq', ' AND +link_seq') : sc.sql}`
      const args: SqlArg[] = [from, to, ...sc.args]
      for (const [col, vals] of filters) (where += ` AND ${col} IN (${vals.map(() => '?').join(',')})`), args.push(...vals)
      const keyCol = key === 'value' ? keyColumn! : key === 'link' ? 'link_seq' : 'NULL'
      const unit = byTime ? `at / ${RAW_UNIT_MS}` : '0'
      const group = [byTime ? 'u' : '', key !== 'none' ? 'k' : ''].filter(Boolean)
      return {
        sql: `SELECT ${unit} AS u, ${keyCol} AS k, sum(n) AS c, sum(n * scan) AS s FROM click_events${timeIndex ? ' INDEXED BY click_events_at' : ''} WHERE ${where}${group.length ? ` GROUP BY ${group.join(', ')}` : ''}`,
        args,
      }
  }
}
export type StatsStore = ReturnType<typeof createStatsStore>
