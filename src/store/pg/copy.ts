/**
 * `shortlink migrate-store`: copies a single node's SQLite store into PostgreSQL.
 *
 * - The source is opened read-only, with its data dir locked (no server may run on it during
 *   the copy, nor start), and read inside one read transaction: the copy is one consistent
 *   snapshot. File bytes come from `<dataDir>/files/<sha256>` beside the database.
 * - The target is migrated first, then must be empty (every copied table) unless `force`,
 *   which empties those tables first. Everything is written in ONE PostgreSQL transaction:
 *   a failure, or a count that does not match, rolls it all back and leaves the target as
 *   it was; a second run needs no `force`.
 * - Big tables go through `COPY … FROM STDIN` in chunks as the rows are read (memory stays
 *   bounded by one chunk, whatever the number of clicks); click events are read with their
 *   strings (SQLite's `click_events` view) into a staging table and made compact by
 *   `click_events_load` (PostgreSQL migrations 0009 and 0015: dictionary ids, month partitions, the A/B
 *   variant). Files go one row at a time (bytes bound as bytea).
 * - Nothing a user stored is lost: conversions' click ids (`tracked_clicks`, each with its visit's
 *   dimensions and variant) come from the events engine, all of them, not only those inside
 *   `[conversions] attributionDays`: the window is read at each lead (it may be raised later, and a
 *   click older than it must answer `parameter_error`, not `not_found`), and PostgreSQL keeps
 *   every tracked click as the node did. A/B verdicts (`link_tests`) are copied like any table.
 * - Identities (`links.seq`, `stats_groups.num`) move past the copied maxima.
 */
import { Database } from 'bun:sqlite'
import { existsSync, statSync } from 'node:fs'
import { dirname, join } from 'node:path'
import type { SQL } from 'bun'
import { DataDirLockedError, lockDataDir } from '../lock'
import { migrations as sqliteMigrations } from '../migrations'
import { migratePostgres } from './migrate'

/** The copy was refused before anything was written (bad source, busy source, non-empty target). */
export class CopyRefusedError extends Error {}

/** Copied in this order (foreign keys); `click_events` is read from the SQLite view of that name. */
export const COPIED_TABLES = [
  'users',
  'api_keys',
  'sessions',
  'tags',
  'links',
  'link_clicks',
  'link_tags',
  'health_urls',
  'link_health_urls',
  'link_health',
  'kv',
  'domains',
  'domain_clicks',
  'tls_certificates',
  'acme_accounts',
  'acme_challenges',
  'qr_templates',
  'files',
  'stats_groups',
  'stats_busy_links',
  'stats_quarter',
  'stats_hour',
  'stats_day',
  'stats_week',
  'click_events',
  'tracked_clicks',
  'webhooks',
  'events',
  'webhook_deliveries',
  'event_listeners',
  'customers',
  'conversions',
  'link_tests',
] as const
export type CopiedTable = (typeof COPIED_TABLES)[number]

/**
 * Cleared along with the copied tables under `force`: state derived from the old links and events,
 * and the webhook fan-out's position (a SQLite position means nothing here: PostgreSQL's fan-out
 * reads the copied events again, and the copied deliveries keep it from sending any twice).
 */
const CLEARED_TOO = ['visit_counters', 'event_cursors', 'stats_values', 'stats_pairs']
/**
 * Tables PostgreSQL keeps that SQLite derives from another: their rows as a SQLite query. Each
 * link's counters are columns of `links` there, a table of their own here (migration 0010).
 */
const SQLITE_SOURCES: Partial<Record<CopiedTable, string>> = {
  link_clicks: 'SELECT seq, clicks, last_clicked FROM links WHERE clicks <> 0 OR last_clicked IS NOT NULL',
  // Conversions' click ids live in the events engine's `tracked` (SQLite keeps none): none without an events file.
  tracked_clicks: 'SELECT NULL AS click_id WHERE 0',
}
/** The SQLite rows of a copied table, as a FROM item. */
export const sqliteSourceOf = (t: CopiedTable) => (SQLITE_SOURCES[t] ? `(${SQLITE_SOURCES[t]})` : t)

/** The table behind a copied one (`click_events` is a view of the compact events). */
const tableOf = (t: CopiedTable) => (t === 'click_events' ? 'click_events_compact' : t)

const IDENTITIES: Partial<Record<CopiedTable, string>> = { links: 'seq', stats_groups: 'num', events: 'seq', conversions: 'seq' }

/**
 * Where the events' rows go before `click_events_load` makes them compact: the columns of SQLite's
 * view, and the A/B variant (PostgreSQL migration 0015; the events engine has it, SQLite's view not).
 */
const EVENTS_STAGING = `CREATE TEMP TABLE click_events_staging (id bigint, link_seq bigint, at bigint, scan smallint,
  continent text, country text, region text, city text, os text, browser text, device text, referer text, referer_url text,
  utm_source text, utm_medium text, utm_campaign text, utm_term text, utm_content text, n integer, variant smallint) ON COMMIT DROP`

export interface SqliteSource {
  db: Database
  path: string
  filesDir: string
  /** Ends the read transaction, closes the file, unlocks the data dir. */
  close(): void
}

/** Opens the SQLite store at `path` (a file, or a data dir holding shortlink.db) for the copy. */
export function openSqliteSource(path: string): SqliteSource {
  let file = path
  if (existsSync(file) && statSync(file).isDirectory()) file = join(file, 'shortlink.db')
  if (!existsSync(file)) throw new CopyRefusedError(`no SQLite store at ${path}`)
  const dataDir = dirname(file)
  let unlock: () => void
  try {
    unlock = lockDataDir(dataDir)
  } catch (e) {
    if (e instanceof DataDirLockedError) throw new CopyRefusedError(`${e.message} (the copy must see every write)`)
    throw new CopyRefusedError(`cannot lock ${dataDir}: ${(e as Error).message}`)
  }
  let db: Database | undefined
  try {
    db = new Database(file, { readonly: true, strict: true })
    db.exec('PRAGMA busy_timeout = 5000')
    db.exec('BEGIN') // one read transaction for the whole copy: one snapshot
    const latest = sqliteMigrations.at(-1)!
    const applied = new Set(
      db
        .query<{ id: number }, []>('SELECT id FROM schema_migrations')
        .all()
        .map((r) => r.id),
    )
    const version = Math.max(0, ...applied)
    // Every migration, not the highest: one may land below another already applied (A/B tests' 0017 after 0018).
    const missing = sqliteMigrations.find((m) => !applied.has(m.id))
    if (missing)
      throw new CopyRefusedError(
        `${file} lacks SQLite migration ${missing.id} (it is at ${version}), this shortlink expects every one up to ${latest.id}: start this version's server on it once (it migrates at start), stop it, then copy`,
      )
    if (version > latest.id) throw new CopyRefusedError(`${file} was written by a newer shortlink (migration ${version}); use that version to copy it`)
  } catch (e) {
    db?.close()
    unlock()
    if (e instanceof CopyRefusedError) throw e
    throw new CopyRefusedError(`cannot read ${file} as a shortlink store: ${(e as Error).message}`)
  }
  const opened = db
  return {
    db: opened,
    path: file,
    filesDir: join(dataDir, 'files'),
    close() {
      try {
        opened.exec('COMMIT')
      } catch {}
      opened.close()
      unlock()
    },
  }
}

export interface TableCount {
  table: CopiedTable
  source: number
  target: number
}

export interface CopyProgress {
  table: CopiedTable
  copied: number
  total: number
  /** Milliseconds since this table started. */
  elapsedMs: number
  done: boolean
}

/**
 * Tables whose rows come from elsewhere than the SQLite file: a single node keeps its click events
 * and their rollups in the events engine (DuckDB, src/stats), which hands them over in the target's
 * columns. The SQLite tables of those names are then not read.
 */
export interface ExternalTables {
  tables: readonly CopiedTable[]
  count(table: CopiedTable): Promise<number>
  columns(table: CopiedTable): readonly string[]
  /** Rows in `columns` order, in chunks. */
  rows(table: CopiedTable): AsyncIterable<unknown[][]>
  /** An instant of every month holding click events (each gets its partition first). */
  clickMonths(): Promise<number[]>
}

export interface CopyOptions {
  /** Tables read from the events engine instead of SQLite. */
  external?: ExternalTables
  /** Empty the copied tables of a non-empty target first. */
  force?: boolean
  onProgress?: (p: CopyProgress) => void
  /** Hears of each PostgreSQL migration applied to the target. */
  onMigration?: (name: string) => void
  /** Rows per COPY chunk (default 5000). */
  chunkRows?: number
}

export interface CopyResult {
  counts: TableCount[]
  /** Every count matched (else nothing was kept). */
  ok: boolean
  /** Live files whose bytes were missing from the data dir (copied with no bytes). */
  missingBlobs: string[]
}

/** Rolled back on purpose: a count differed. */
class CountMismatch extends Error {
  constructor(readonly counts: TableCount[]) {
    super('counts differ')
  }
}

export async function copySqliteToPostgres(source: SqliteSource, sql: SQL, opts: CopyOptions = {}): Promise<CopyResult> {
  await migratePostgres(sql, { onMigration: opts.onMigration })
  const lite = source.db
  const totals = new Map<CopiedTable, number>()
  const external = opts.external
  const isExternal = (t: CopiedTable) => external?.tables.includes(t) ?? false
  for (const t of COPIED_TABLES)
    totals.set(t, isExternal(t) ? await external!.count(t) : lite.query<{ n: number }, []>(`SELECT count(*) AS n FROM ${sqliteSourceOf(t)}`).get()!.n)

  const nonEmpty: string[] = []
  for (const t of COPIED_TABLES) {
    const [{ n }] = await sql.unsafe(`SELECT count(*)::bigint::text AS n FROM (SELECT 1 FROM ${t} LIMIT 1) AS x`)
    if (n !== '0') nonEmpty.push(t)
  }
  if (nonEmpty.length && !opts.force) throw new CopyRefusedError(`the target database already holds data (${nonEmpty.join(', ')}); use --force to replace it`)

  const missingBlobs: string[] = []
  try {
    const counts = await sql.begin(async (tx) => {
      if (nonEmpty.length) await tx.unsafe(`TRUNCATE ${[...COPIED_TABLES.map(tableOf), ...CLEARED_TOO].join(', ')} RESTART IDENTITY CASCADE`)
      for (const table of COPIED_TABLES) {
        const total = totals.get(table)!
        const started = performance.now()
        const report = (copied: number, done = false) => opts.onProgress?.({ table, copied, total, elapsedMs: performance.now() - started, done })
        report(0)
        if (table === 'files') await copyFiles(lite, tx, source.filesDir, missingBlobs, report)
        else if (table === 'click_events') {
          // From SQLite's view or the events engine, with their strings, made compact by click_events_load.
          await tx.unsafe(EVENTS_STAGING)
          if (isExternal(table)) await copyExternal(external!, tx, table, report, 'click_events_staging')
          else await copyTable(lite, tx, table, opts.chunkRows ?? 5000, report, 'click_events_staging')
          await tx`SELECT click_events_load('click_events_staging')`
          // Pair rollups (migration 0011) start at the first copied day; the server's roll-up fills them in.
          await tx`UPDATE stats_pairs_state SET upto = coalesce((SELECT (min(at) / 86400000)::int FROM click_events_staging), upto)`
        } else if (isExternal(table)) await copyExternal(external!, tx, table, report)
        else await copyTable(lite, tx, table, opts.chunkRows ?? 5000, report)
        const id = IDENTITIES[table]
        if (id) await tx.unsafe(`SELECT setval(pg_get_serial_sequence('${table}', '${id}'), coalesce((SELECT max(${id}) FROM ${table}), 0) + 1, false)`)
      }
      const counts: TableCount[] = []
      for (const table of COPIED_TABLES) {
        const [{ n }] = await tx.unsafe(`SELECT count(*)::bigint::text AS n FROM ${table}`)
        counts.push({ table, source: totals.get(table)!, target: Number(n) })
      }
      if (counts.some((c) => c.source !== c.target)) throw new CountMismatch(counts)
      return counts
    })
    // Planner statistics, the trigram index's pending list, and the visibility map of the big
    // tables (statistics reads are index-only scans, which fetch every heap row until a vacuum).
    await sql`ANALYZE`
    await sql`VACUUM links, stats_quarter, stats_hour, stats_day, stats_week, click_events_compact`
    return { counts, ok: true, missingBlobs }
  } catch (e) {
    if (e instanceof CountMismatch) return { counts: e.counts, ok: false, missingBlobs }
    throw e
  }
}

/** COPY's text format: tab-separated, `\N` for NULL, backslash escapes. */
function copyField(v: unknown): string {
  if (v === null || v === undefined) return '\\N'
  if (typeof v === 'string') return v.replace(/[\\\n\r\t]/g, (c) => (c === '\\' ? '\\\\' : c === '\n' ? '\\n' : c === '\r' ? '\\r' : '\\t'))
  if (v instanceof Uint8Array) return `\\\\x${Buffer.from(v).toString('hex')}`
  return String(v)
}

/** The columns of a copied table's SQLite rows. */
function columnsOf(lite: Database, table: string): string[] {
  const source = SQLITE_SOURCES[table as CopiedTable]
  if (source) return lite.prepare(source).columnNames
  return lite
    .query<{ name: string }, []>(`SELECT name FROM pragma_table_info('${table}')`)
    .all()
    .map((c) => c.name)
}

async function copyTable(
  lite: Database,
  tx: SQL,
  table: CopiedTable,
  chunkRows: number,
  report: (copied: number, done?: boolean) => void,
  target: string = table,
) {
  // The columns both have (SQLite's link counters are in link_clicks here; the staging table has them all).
  const kept = new Set(
    (await tx`SELECT attname FROM pg_attribute WHERE attrelid = to_regclass(${target}) AND attnum > 0 AND NOT attisdropped`).map(
      (r: { attname: string }) => r.attname,
    ),
  )
  const cols = columnsOf(lite, table).filter((c) => kept.has(c))
  const list = cols.map((c) => `"${c}"`).join(', ')
  const writer = tx.unsafe(`COPY ${target} (${list}) FROM STDIN`).writable().getWriter()
  const stmt = lite.prepare(`SELECT ${list} FROM ${sqliteSourceOf(table)}`)
  let chunk: string[] = []
  let copied = 0
  try {
    for (const row of stmt.iterate() as IterableIterator<Record<string, unknown>>) {
      chunk.push(`${cols.map((c) => copyField(row[c])).join('\t')}\n`)
      if (chunk.length >= chunkRows) {
        await writer.write(chunk.join(''))
        copied += chunk.length
        chunk = []
        report(copied)
      }
    }
    if (chunk.length) await writer.write(chunk.join(''))
    copied += chunk.length
    await writer.close()
  } finally {
    stmt.finalize()
  }
  report(copied, true)
}

async function copyExternal(external: ExternalTables, tx: SQL, table: CopiedTable, report: (copied: number, done?: boolean) => void, target: string = table) {
  const list = external
    .columns(table)
    .map((c) => `"${c}"`)
    .join(', ')
  const writer = tx.unsafe(`COPY ${target} (${list}) FROM STDIN`).writable().getWriter()
  let copied = 0
  for await (const chunk of external.rows(table)) {
    await writer.write(chunk.map((row) => `${row.map(copyField).join('\t')}\n`).join(''))
    copied += chunk.length
    report(copied)
  }
  await writer.close()
  report(copied, true)
}

async function copyFiles(lite: Database, tx: SQL, filesDir: string, missing: string[], report: (copied: number, done?: boolean) => void) {
  const cols = columnsOf(lite, 'files')
  // In rowid order: PostgreSQL numbers the rows (files.seq) in upload order as they arrive.
  const stmt = lite.prepare(`SELECT ${cols.join(', ')} FROM files ORDER BY rowid`)
  let copied = 0
  try {
    for (const row of stmt.iterate() as IterableIterator<Record<string, unknown>>) {
      const blob = join(filesDir, String(row.sha256))
      let bytes: Uint8Array | null = null
      if (existsSync(blob)) bytes = await Bun.file(blob).bytes()
      else if (row.deleted_at === null) missing.push(String(row.id))
      await tx`INSERT INTO files ${tx({ ...row, bytes })}`
      report(++copied)
    }
  } finally {
    stmt.finalize()
  }
  report(copied, true)
}
