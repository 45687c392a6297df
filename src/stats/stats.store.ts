/**
 * The statistics' reads of the store: link and tag lookups for the filters, the facts the
 * planner asks (stats.plan.ts), and the statements stats.sql.ts builds — rollup rows
 * (stats_hour/stats_day/…) and raw click_events.
 */
import type { Database, SQLQueryBindings } from 'bun:sqlite'
import type { LinkRow } from '../links'
import type { LinkSet, PlanFacts, PlanFactsPort, Scope, SqlArg } from './stats.plan'
import { HOUR } from './stats.rollup'
import { countLinksSql, type Dialect, firstClickHourSql, linksOfSeqsSql, type Statement } from './stats.sql'

export interface ReadRow {
  /** Unit number (time reads only): the unit starts at u × unitMs. */
  u: number
  k: string | number | null
  c: number
  s: number
}

/** A per-link read joined with its link (or grouped by link_type/destination: then only k, c, s). */
export interface PerLinkRow {
  k: string | number
  c: number
  s: number
  id?: string
  domain?: string
  key?: string
  link_type?: string
  destination?: string
}

/** The link columns statistics read. */
export type LinkInfo = Pick<LinkRow, 'seq' | 'id' | 'user_id' | 'domain' | 'key' | 'link_type' | 'destination' | 'deleted_at'>

export function createStatsStore(db: Database) {
  const all = <T>({ sql, args }: Statement) => db.query<T, SQLQueryBindings[]>(sql).all(...(args as SQLQueryBindings[]))
  const byId = db.query<LinkInfo, [string]>('SELECT seq, id, user_id, domain, key, link_type, destination, deleted_at FROM links WHERE id = ?')
  const liveByDomainKey = db.query<LinkInfo, [string, string]>(
    'SELECT seq, id, user_id, domain, key, link_type, destination, deleted_at FROM links WHERE domain = ? AND key = ? AND deleted_at IS NULL',
  )
  const groupNum = db.query<{ num: number }, [string]>('SELECT num FROM stats_groups WHERE name = ?')

  const facts: PlanFacts = {
    groupNum: (name: string) => groupNum.get(name)?.num ?? null,
    countLinks: (links: LinkSet) => all<{ n: number }>(countLinksSql(links))[0]!.n,
    firstClickHour(scope: Scope): number | null {
      if (scope.kind === 'group' && scope.num === null) return null
      const t = all<{ t: number | null }>(firstClickHourSql(scope))[0]?.t
      return t == null ? null : t * HOUR
    },
  }

  const reader = {
    /** Which SQL stats.sql.ts writes for this store. */
    dialect: 'sqlite' as Dialect,
    facts,
    linkById: (id: string) => byId.get(id),
    liveLinkAt: (domain: string, key: string) => liveByDomainKey.get(domain, key),
    tagOwners: (ids: string[]) =>
      all<{ id: string; user_id: string }>({ sql: `SELECT id, user_id FROM tags WHERE id IN (${ids.map(() => '?').join(',')})`, args: ids as SqlArg[] }),
    /** Rows of rollup or raw reads (rollupSql/rawSql), one list per statement. */
    readRows: (statements: Statement[]) => statements.map((s) => all<ReadRow>(s)),
    /** Rows of a per-link read (perLinkSql). */
    readPerLink: (statement: Statement | null) => (statement ? all<PerLinkRow>(statement) : []),
    readConversions: (statement: Statement) => all<ConversionSumRow>(statement),
    linksOfSeqs: (seqs: number[]) => (seqs.length ? all<LinkOfSeq>(linksOfSeqsSql(seqs, 'sqlite')) : []),
  }
  return {
    ...reader,
    /** Every statistics read of one request in one snapshot (the writer commits between statements), through `r`. */
    snapshot: <T>(read: (r: StatsReader) => T): T => db.transaction(() => read(reader))(),
  }
}
export type StatsStore = ReturnType<typeof createStatsStore>

/** The reads of one snapshot, from either adapter: any of them may answer with a promise. */
export interface StatsReader {
  dialect: Dialect
  facts: PlanFactsPort
  linkById(id: string): LinkInfo | null | Promise<LinkInfo | null>
  liveLinkAt(domain: string, key: string): LinkInfo | null | Promise<LinkInfo | null>
  tagOwners(ids: string[]): { id: string; user_id: string }[] | Promise<{ id: string; user_id: string }[]>
  readRows(statements: Statement[]): ReadRow[][] | Promise<ReadRow[][]>
  readPerLink(statement: Statement | null): PerLinkRow[] | Promise<PerLinkRow[]>
  /** Rows of conversionsSql. */
  readConversions(statement: Statement): ConversionSumRow[] | Promise<ConversionSumRow[]>
  /** The links of these seqs (seq, id, domain, key, link_type, destination). */
  linksOfSeqs(seqs: number[]): LinkOfSeq[] | Promise<LinkOfSeq[]>
}

/** A row of conversionsSql: time unit, key, kind, currency, count and amount. */
export interface ConversionSumRow {
  u: number
  k: string | number | null
  kind: 'lead' | 'sale'
  cur: string | null
  n: number
  a: number
}
export interface LinkOfSeq {
  seq: number
  id: string
  domain: string
  key: string
  link_type: string
  destination: string
}

/**
 * The statistics store port (docs/adr/0010): the SQLite store (synchronous) or the PostgreSQL
 * one (stats.store.pg.ts). `snapshot` runs `read` in one consistent view of the store; on
 * SQLite `read` must not wait (the service's steps stay synchronous there, stats.steps.ts).
 */
export interface StatsStorePort extends StatsReader {
  snapshot<T>(read: (r: StatsReader) => T | Promise<T>): T | Promise<T>
}
