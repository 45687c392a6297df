/**
 * GET /statistics/events: the visits behind the statistics, one row per recorded visit (merged
 * visits carry `count`), oldest first, as CSV (header row), NDJSON or Parquet, in bounded memory.
 *
 * Single node: DuckDB writes the file itself (`COPY (…) TO`, its own threads, spilling a big
 * sort to disk), joined with a temporary table of the links in scope (id, domain, key come from
 * SQLite), then the file is streamed and removed. PostgreSQL: pages of 10,000 rows in (at, id)
 * order, written as they are read; Parquet there goes through a CSV file DuckDB converts.
 */
import type { Database, SQLQueryBindings } from 'bun:sqlite'
import { unlinkSync } from 'node:fs'
import type { SQL } from 'bun'
import { EVENT_STRINGS } from './click-event'
import type { LinkSet, SqlArg } from './stats.plan'
import { linkSetSql } from './stats.sql'

export const EXPORT_FORMATS = ['csv', 'ndjson', 'parquet'] as const
export type ExportFormat = (typeof EXPORT_FORMATS)[number]

/** What to export: the links (null: every link), event filters (column → accepted values), the range and qr. */
export interface ExportSpec {
  links: LinkSet | null
  filters: [string, string[]][]
  start: number
  end: number
  qr: boolean | undefined
  format: ExportFormat
  /** clicks (the visits), or the conversions (contract: "Conversions"): leads, sales. */
  event?: ExportEvent
  /** Append the A/B variant (beyond the contract's fields, so asked for: the default rows are exactly the contract's). */
  variant?: boolean
}
export type ExportEvent = 'clicks' | 'leads' | 'sales'

/** The same, with the links as seqs (resolved where the links live). */
export interface ResolvedExportSpec extends Omit<ExportSpec, 'links'> {
  seqs: number[] | null
}

const camel = (c: string) => c.replace(/_([a-z])/g, (_, x: string) => x.toUpperCase())
/** The contract's fields in order. */
export const EXPORT_FIELDS = ['at', 'linkId', 'domain', 'key', 'scan', 'count', ...EVENT_STRINGS.map(([c]) => camel(c))]

/** Fields of a lead or a sale after those of its click (`count`: a lead's quantity, 1 for a sale). */
const CONVERSION_FIELDS = {
  leads: ['clickId', 'eventName', 'customerExternalId'],
  sales: ['clickId', 'eventName', 'customerExternalId', 'amount', 'currency', 'invoiceId'],
}
/** Their columns (DuckDB's and PostgreSQL's conversions tables). */
const CONVERSION_SOURCES: Record<string, { duck: string; pg: string }> = {
  clickId: { duck: 'e.click_id', pg: 'e.click_id' },
  eventName: { duck: 'e.event_name', pg: 'e.event_name' },
  customerExternalId: { duck: 'e.customer_external_id', pg: 'cu.external_id' },
  amount: { duck: 'e.amount', pg: 'e.amount::float8' },
  currency: { duck: 'e.currency', pg: 'e.currency' },
  invoiceId: { duck: 'e.invoice_id', pg: 'e.invoice_id' },
}
/** The fields of an export: the contract's, those of a conversion, then `variant` when asked for. */
export const exportFieldsOf = (event: ExportEvent = 'clicks', variant = false): string[] => [
  ...EXPORT_FIELDS,
  ...(event === 'clicks' ? [] : CONVERSION_FIELDS[event]),
  ...(variant ? ['variant'] : []),
]

export const CONTENT_TYPES: Record<ExportFormat, string> = {
  csv: 'text/csv; charset=utf-8',
  ndjson: 'application/x-ndjson',
  parquet: 'application/vnd.apache.parquet',
}

const quote = (s: string) => `'${s.replaceAll("'", "''")}'`

/** DuckDB: the SELECT of an export over `events e` joined with the links table `l` (seq, id, domain, key). */
export function duckExportSelect(spec: ResolvedExportSpec, linksTable: string): string {
  const where = [`e."at" >= ${Math.trunc(spec.start)}`, `e."at" < ${Math.trunc(spec.end)}`]
  for (const [col, values] of spec.filters) where.push(values.length ? `e.${col} IN (${values.map(quote).join(', ')})` : 'FALSE')
  if (spec.qr !== undefined) where.push(spec.qr ? 'e.scan' : 'NOT e.scan')
  const at = spec.format === 'parquet' ? 'epoch_ms(e."at")' : `strftime(epoch_ms(e."at"), '%Y-%m-%dT%H:%M:%S.%gZ')`
  const event = spec.event ?? 'clicks'
  // An events row keeps an unknown value as '' (events.engine.ts SCHEMA); a conversion, as null.
  const strings = EVENT_STRINGS.map(([c]) => `${event === 'clicks' ? `nullif(e.${c}, '')` : `e.${c}`} AS "${camel(c)}"`).join(', ')
  const variant = spec.variant ? ', e.variant::INTEGER AS "variant"' : ''
  if (event !== 'clicks') {
    where.push(`e.kind = '${event === 'leads' ? 'lead' : 'sale'}'`)
    const extra = CONVERSION_FIELDS[event].map((f) => `${CONVERSION_SOURCES[f]!.duck} AS "${f}"`).join(', ')
    return `SELECT ${at} AS "at", l.id AS "linkId", l.domain AS "domain", l.key AS "key", e.scan AS "scan", e.quantity AS "count", ${strings}, ${extra}${variant}
    FROM conversions e JOIN ${linksTable} l ON l.seq = e.link_seq WHERE ${where.join(' AND ')} ORDER BY e."at", e.seq`
  }
  return `SELECT ${at} AS "at", l.id AS "linkId", l.domain AS "domain", l.key AS "key", e.scan AS "scan", e.n AS "count", ${strings}${variant}
    FROM events e JOIN ${linksTable} l ON l.seq = e.link_seq WHERE ${where.join(' AND ')} ORDER BY e."at"`
}

/** DuckDB's COPY options of a format. */
export const duckCopyOptions = (format: ExportFormat) =>
  format === 'csv' ? '(FORMAT csv, HEADER true)' : format === 'ndjson' ? '(FORMAT json)' : '(FORMAT parquet, COMPRESSION zstd)'

/** The links of an export as SQLite rows (seq, id, domain, key): every link, or the seqs given. */
export function exportLinks(db: Database, seqs: number[] | null): { seq: number; id: string; domain: string; key: string }[] {
  if (seqs === null) return db.query<{ seq: number; id: string; domain: string; key: string }, []>('SELECT seq, id, domain, key FROM links').all()
  return db
    .query<{ seq: number; id: string; domain: string; key: string }, [string]>(
      'SELECT seq, id, domain, key FROM links WHERE seq IN (SELECT value FROM json_each(?))',
    )
    .all(JSON.stringify(seqs))
}

/** The seqs of a link set in SQLite (null: every link). */
export function resolveLinks(db: Database, links: LinkSet | null): number[] | null {
  if (!links) return null
  const { sql, args } = linkSetSql(links)
  return db
    .query<{ seq: number }, SQLQueryBindings[]>(sql)
    .all(...(args as SQLQueryBindings[]))
    .map((r) => r.seq)
}

/** A file streamed out and removed once read (or abandoned). */
export function streamAndRemove(path: string): ReadableStream<Uint8Array> {
  const reader = Bun.file(path).stream().getReader()
  const remove = () => {
    try {
      unlinkSync(path)
    } catch {}
  }
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      const { done, value } = await reader.read()
      if (done) {
        remove()
        controller.close()
      } else controller.enqueue(value)
    },
    cancel() {
      void reader.cancel()
      remove()
    },
  })
}

/** COPY text fields for CSV: quoted when needed. */
const csvField = (v: unknown) => {
  if (v === null || v === undefined) return ''
  const s = String(v)
  return /[",\n\r]/.test(s) ? `"${s.replaceAll('"', '""')}"` : s
}

/**
 * PostgreSQL: the export as pages of rows in (at, ctid) order, each page one query (bounded
 * memory). Events are compact rows of dictionary ids (PostgreSQL migration 0009: no event id;
 * `at` is the partition key, so rows of one instant share a partition and ctid orders them).
 */
export function pgExportStream(sql: SQL, spec: ExportSpec & { format: 'csv' | 'ndjson' }): ReadableStream<Uint8Array> {
  const event = spec.event ?? 'clicks'
  // Clicks are compact rows of dictionary ids; conversions keep their strings (migration 0013).
  const compact = event === 'clicks'
  const args: SqlArg[] = [spec.start, spec.end]
  let where = 'e.at >= ? AND e.at < ?'
  if (spec.links) {
    const set = linkSetSql(spec.links)
    where += ` AND e.link_seq IN (${set.sql})`
    args.push(...set.args)
  }
  for (const [col, values] of spec.filters) {
    const list = values.map(() => '?').join(', ')
    where += !values.length ? ' AND FALSE' : compact ? ` AND e.${col} IN (SELECT id FROM stats_values WHERE value IN (${list}))` : ` AND e.${col} IN (${list})`
    args.push(...values)
  }
  if (spec.qr !== undefined) where += spec.qr ? ' AND e.scan = 1' : ' AND e.scan = 0'
  const strings = EVENT_STRINGS.map(([c], i) => (compact ? `v${i}.value AS ${c}` : `e.${c}`)).join(', ')
  const joins = compact ? EVENT_STRINGS.map(([c], i) => `LEFT JOIN stats_values v${i} ON v${i}.id = e.${c}`).join(' ') : ''
  const page = 10_000
  const fields = exportFieldsOf(event, spec.variant)
  const extra = event === 'clicks' ? [] : CONVERSION_FIELDS[event]
  // Clicks paged by (at, ctid); conversions from their table, joined with the customers (the external id), paged by (at, seq).
  const from = compact
    ? 'click_events_compact e JOIN links l ON l.seq = e.link_seq'
    : 'conversions e JOIN customers cu ON cu.id = e.customer_id JOIN links l ON l.seq = e.link_seq'
  if (!compact) where += ` AND e.kind = '${event === 'leads' ? 'lead' : 'sale'}'`
  const id = compact ? 'e.ctid' : 'e.seq'
  const idType = compact ? 'tid' : 'bigint'
  const n = compact ? 'e.n' : 'e.quantity'
  // The variant: click_events_compact's (migration 0012) or conversions' (0014).
  const extraSql = `${extra.map((f, i) => `, ${CONVERSION_SOURCES[f]!.pg} AS x${i}`).join('')}${spec.variant ? ', e.variant' : ''}`
  const text = (after: boolean) => {
    let k = 0
    const numbered = `SELECT ${id}::text AS eid, e.at::float8 AS at, l.id AS link_id, l.domain, l.key, e.scan, ${n} AS n, ${strings}${extraSql}
      FROM ${from} ${joins}
      WHERE ${where}${after ? ` AND (e.at, ${id}) > (?, ?::${idType})` : ''} ORDER BY e.at, ${id} LIMIT ${page}`
    return numbered.replace(/\?/g, () => `$${++k}`)
  }
  const encoder = new TextEncoder()
  let cursor: [number, string] | null = null
  let started = false
  let finished = false
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      if (finished) return controller.close()
      let out = ''
      if (!started && spec.format === 'csv') out += `${fields.join(',')}\n`
      started = true
      const rows = (await sql.unsafe(text(cursor !== null), cursor ? [...args, ...cursor] : args)) as Record<string, unknown>[]
      for (const r of rows) {
        const values = [
          new Date(r.at as number).toISOString(),
          r.link_id,
          r.domain,
          r.key,
          Number(r.scan) === 1,
          Number(r.n),
          ...EVENT_STRINGS.map(([c]) => r[c] ?? null),
          ...extra.map((_, i) => r[`x${i}`] ?? null),
          ...(spec.variant ? [r.variant ?? null] : []),
        ]
        if (spec.format === 'csv') out += `${values.map(csvField).join(',')}\n`
        else out += `${JSON.stringify(Object.fromEntries(fields.map((f, i) => [f, values[i]])))}\n`
      }
      if (rows.length < page) finished = true
      else {
        const last = rows[rows.length - 1]!
        cursor = [last.at as number, last.eid as string]
      }
      if (out) controller.enqueue(encoder.encode(out))
      if (finished) controller.close()
    },
  })
}

/** Streams the export of a spec: where the events live. */
export interface EventsExporter {
  exportEvents(spec: ExportSpec): Promise<ReadableStream<Uint8Array>>
}

/** Single node: DuckDB writes the file beside the events (`dir`), then it streams out. */
export function createEventsExporter(
  db: Database,
  events: { exportTo(spec: ResolvedExportSpec, dest: string): Promise<void> },
  filePrefix: string,
): EventsExporter {
  return {
    async exportEvents(spec) {
      const dest = `${filePrefix}.export-${Date.now()}-${Math.random().toString(36).slice(2)}.${spec.format}`
      try {
        await events.exportTo({ ...spec, seqs: resolveLinks(db, spec.links) }, dest)
      } catch (e) {
        try {
          unlinkSync(dest)
        } catch {}
        throw e
      }
      return streamAndRemove(dest)
    },
  }
}

/** PostgreSQL: CSV and NDJSON page by page; Parquet through a CSV file DuckDB (in this process, in memory) converts. */
export function createPgEventsExporter(sql: SQL, tmpDir: string): EventsExporter {
  return {
    async exportEvents(spec) {
      if (spec.format !== 'parquet') return pgExportStream(sql, { ...spec, format: spec.format })
      const base = `${tmpDir}/shortlink-export-${process.pid}-${Date.now()}-${Math.random().toString(36).slice(2)}`
      const csvPath = `${base}.csv`
      const dest = `${base}.parquet`
      try {
        await Bun.write(csvPath, new Response(pgExportStream(sql, { ...spec, format: 'csv' })))
        const { loadDuckDb } = await import('./events.duckdb')
        const api = await loadDuckDb(tmpDir)
        const instance = await api.DuckDBInstance.create(':memory:', { threads: '1', memory_limit: '128MB', temp_directory: `${base}.tmp` })
        try {
          const c = await instance.connect()
          const types = exportFieldsOf(spec.event, spec.variant)
            .map((f) => `'${f}': '${f === 'scan' ? 'BOOLEAN' : f === 'count' || f === 'variant' ? 'INTEGER' : f === 'amount' ? 'BIGINT' : 'VARCHAR'}'`)
            .join(', ')
          await c.run(
            `COPY (SELECT strptime("at", '%Y-%m-%dT%H:%M:%S.%gZ') AS "at", * EXCLUDE ("at") FROM read_csv(${quote(csvPath)}, header = true, auto_detect = false, columns = {${types}}, quote = '"', escape = '"'))
             TO ${quote(dest)} ${duckCopyOptions('parquet')}`,
          )
          c.closeSync()
        } finally {
          instance.closeSync()
        }
      } finally {
        try {
          unlinkSync(csvPath)
        } catch {}
      }
      return streamAndRemove(dest)
    },
  }
}
