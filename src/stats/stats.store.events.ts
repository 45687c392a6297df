/**
 * The statistics store of a single node over the events engine (events.engine.ts): link and
 * tag lookups in SQLite (records stay there), every count in DuckDB, each request's reads in
 * one DuckDB snapshot. Link sets in the statements (`{ seqsOf }`, stats.sql.ts duckdb dialect)
 * are resolved here into their seqs, and per-link sums are joined with the links here.
 */
import type { Database, SQLQueryBindings } from 'bun:sqlite'
import { AppError } from '../shared'
import { QueryTimeoutError, type ReadTx } from './events.engine'
import type { LinkSet, PlanFacts, Scope, SqlArg } from './stats.plan'
import { HOUR } from './stats.rollup'
import { countLinksSql, firstClickHourSql, linkSetSql, linksOfSeqsSql, type Statement } from './stats.sql'
import {
  type ConversionSumRow,
  createStatsStore,
  type LinkInfo,
  type LinkOfSeq,
  type PerLinkRow,
  type ReadRow,
  type StatsReader,
  type StatsStorePort,
} from './stats.store'

/** Where the events are: the engine in this thread, or its worker (click-recorder.ts). */
export interface EventsReadPort {
  snapshot<T>(read: (tx: ReadTx) => Promise<T>, timeoutMs?: number): Promise<T>
}

/** The answer to a statistics query past its deadline (contract error shape, 503). */
export const queryTimedOut = (ms: number) =>
  new AppError('service_unavailable', `the statistics query took longer than ${ms} ms and was stopped; narrow the range or the filters`, {
    'Retry-After': '5',
  })

export function createEventsStatsStore(db: Database, events: EventsReadPort, opts: { timeoutMs?: number } = {}): StatsStorePort {
  const all = <T>({ sql, args }: Statement) => db.query<T, SQLQueryBindings[]>(sql).all(...(args as SQLQueryBindings[]))
  const cols = 'seq, id, user_id, domain, key, link_type, destination, deleted_at'
  const byId = db.query<LinkInfo, [string]>(`SELECT ${cols} FROM links WHERE id = ?`)
  const liveByDomainKey = db.query<LinkInfo, [string, string]>(`SELECT ${cols} FROM links WHERE domain = ? AND key = ? AND deleted_at IS NULL`)
  const groupNum = db.query<{ num: number }, [string]>('SELECT num FROM stats_groups WHERE name = ?')
  const linksOfSeqs = db.query<{ seq: number; id: string; domain: string; key: string; destination: string; link_type: string }, [string]>(
    'SELECT seq, id, domain, key, destination, link_type FROM links WHERE seq IN (SELECT value FROM json_each(?))',
  )

  function readerOver(tx: ReadTx): StatsReader {
    // A request names few link sets; each is read from SQLite once, and the busy links once.
    const seqLists = new Map<LinkSet, number[]>()
    let busy: Promise<Set<number>> | null = null
    const busyLinks = () => {
      busy ??= tx
        .run([{ sql: 'SELECT DISTINCT seq::DOUBLE AS seq FROM stats_busy_links', args: [] }])
        .then((rows) => new Set(rows[0]!.map((r) => r.seq as number)))
      return busy
    }
    const seqsOf = (links: LinkSet) => {
      let seqs = seqLists.get(links)
      if (!seqs) {
        seqs = all<{ seq: number }>(linkSetSql(links)).map((r) => r.seq)
        seqLists.set(links, seqs)
      }
      return seqs
    }
    const resolve = async (args: readonly SqlArg[]): Promise<unknown[]> => {
      const out: unknown[] = []
      for (const a of args) {
        if (typeof a !== 'object' || Array.isArray(a)) out.push(a)
        else if (a.busy === undefined) out.push(seqsOf(a.seqsOf))
        else {
          const b = await busyLinks()
          out.push(seqsOf(a.seqsOf).filter((s) => b.has(s) === a.busy))
        }
      }
      return out
    }
    /** A statement whose link list is empty has no rows (the list is one of its conjuncts): not run. Not so a per-link union of parts. */
    const run = async (statements: Statement[]) => {
      const resolved = await Promise.all(statements.map(async (s) => ({ sql: s.sql, args: await resolve(s.args) })))
      const live = resolved.map((s, i) => ({
        s,
        i,
        empty:
          !statements[i]!.perLink &&
          s.args.some((a, j) => Array.isArray(a) && a.length === 0 && typeof statements[i]!.args[j] === 'object' && !Array.isArray(statements[i]!.args[j])),
      }))
      const rows = await tx.run(live.filter((x) => !x.empty).map((x) => x.s))
      let next = 0
      return live.map((x) => (x.empty ? [] : rows[next++]!))
    }
    const facts: PlanFacts = {
      groupNum: (name) => groupNum.get(name)?.num ?? null,
      countLinks: (links) => all<{ n: number }>(countLinksSql(links))[0]!.n,
      firstClickHour: (() => null) as PlanFacts['firstClickHour'],
      rolledUp: () => tx.rolled,
    }
    const firstClickHour = async (scope: Scope) => {
      if (scope.kind === 'group' && scope.num === null) return null
      const t = (await run([firstClickHourSql(scope, 'duckdb', tx.rolled.hour)]))[0]![0]?.t as number | null | undefined
      return t == null ? null : t * HOUR
    }
    return {
      dialect: 'duckdb',
      facts: { ...facts, firstClickHour } as StatsReader['facts'],
      linkById: (id) => byId.get(id),
      liveLinkAt: (domain, key) => liveByDomainKey.get(domain, key),
      tagOwners: (ids) =>
        all<{ id: string; user_id: string }>({ sql: `SELECT id, user_id FROM tags WHERE id IN (${ids.map(() => '?').join(',')})`, args: ids }),
      readRows: async (statements) => (await run(statements)) as unknown as ReadRow[][],
      readConversions: async (statement) => (await run([statement]))[0] as unknown as ConversionSumRow[],
      linksOfSeqs: (seqs) => (seqs.length ? all<LinkOfSeq>(linksOfSeqsSql(seqs, 'sqlite')) : []),
      async readPerLink(statement): Promise<PerLinkRow[]> {
        if (!statement) return []
        const sums = (await run([statement]))[0] as unknown as { k: number; c: number; s: number }[]
        const info = new Map(linksOfSeqs.all(JSON.stringify(sums.map((r) => r.k))).map((l) => [l.seq, l]))
        if (statement.perLink === 'link')
          return sums.flatMap((r) => {
            const l = info.get(r.k)
            return l ? [{ k: r.k, c: r.c, s: r.s, id: l.id, domain: l.domain, key: l.key, link_type: l.link_type, destination: l.destination }] : []
          })
        const by = statement.perLink === 'link_type' ? 'link_type' : 'destination'
        const grouped = new Map<string, PerLinkRow>()
        for (const r of sums) {
          const l = info.get(r.k)
          if (!l) continue
          const g = grouped.get(l[by])
          if (g) {
            g.c += r.c
            g.s += r.s
          } else grouped.set(l[by], { k: l[by], c: r.c, s: r.s })
        }
        return [...grouped.values()]
      },
    }
  }

  const legacy = createStatsStore(db)
  // Outside a snapshot (the port's plain methods): SQLite lookups only.
  const outside = readerOver({
    rolled: { hour: 0, day: 0, week: 0 },
    interrupt: () => {},
    run: () => Promise.reject(new Error('statistics reads run inside a snapshot')),
  })
  return {
    ...outside,
    snapshot: async <T>(read: (r: StatsReader) => T | Promise<T>): Promise<T> => {
      try {
        // While an upgrade moves the events here, the SQLite rollups answer (they stay exact meanwhile).
        return await events.snapshot(async (tx) => (tx.legacy ? legacy.snapshot(read) : read(readerOver(tx))), opts.timeoutMs ?? 0)
      } catch (e) {
        if (e instanceof QueryTimeoutError) throw queryTimedOut(e.ms)
        throw e
      }
    },
  }
}
