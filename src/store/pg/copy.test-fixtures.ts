/**
 * For tests of the copy: every copied table read from both stores, row by row and value by
 * value (values as text, so SQLite integers and PostgreSQL int8 strings compare), and the
 * files' bytes by SHA-256 against the blobs of the SQLite data dir.
 */
import type { Database } from 'bun:sqlite'
import { createHash } from 'node:crypto'
import { existsSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import type { SQL } from 'bun'
import { COPIED_TABLES, type CopiedTable, sqliteSourceOf } from './copy'

const text = (v: unknown) => (v === null || v === undefined ? null : v instanceof Uint8Array ? Buffer.from(v).toString('hex') : String(v))

/** The columns of `table` both stores have (PostgreSQL keeps no event id; SQLite's link counters are columns of links). */
async function columnsOf(lite: Database, sql: SQL, table: CopiedTable): Promise<string[]> {
  const kept = new Set(
    (await sql`SELECT attname FROM pg_attribute WHERE attrelid = to_regclass(${table}) AND attnum > 0 AND NOT attisdropped`).map(
      (r: { attname: string }) => r.attname,
    ),
  )
  return lite.prepare(`SELECT * FROM ${sqliteSourceOf(table)}`).columnNames.filter((c) => kept.has(c))
}

/** Rows of `table` as sorted JSON lines, from SQLite. */
export async function liteRows(lite: Database, sql: SQL, table: CopiedTable): Promise<string[]> {
  const cols = await columnsOf(lite, sql, table)
  return lite
    .query<Record<string, unknown>, []>(`SELECT ${cols.map((c) => `"${c}"`).join(', ')} FROM ${sqliteSourceOf(table)}`)
    .all()
    .map((r) => JSON.stringify(cols.map((c) => text(r[c]))))
    .sort()
}

/** The same columns of `table`, from PostgreSQL. */
export async function pgRows(lite: Database, sql: SQL, table: CopiedTable): Promise<string[]> {
  const cols = await columnsOf(lite, sql, table)
  const rows: Record<string, unknown>[] = await sql.unsafe(`SELECT ${cols.map((c) => `"${c}"`).join(', ')} FROM ${table}`)
  return rows.map((r) => JSON.stringify(cols.map((c) => text(r[c])))).sort()
}

/** Tables whose rows differ between the stores (empty when the copy is exact), with the first difference. */
export async function tableDiffs(lite: Database, sql: SQL, skip: (table: string) => boolean = () => false): Promise<string[]> {
  const diffs: string[] = []
  for (const table of COPIED_TABLES) {
    if (skip(table)) continue
    const a = await liteRows(lite, sql, table)
    const b = await pgRows(lite, sql, table)
    if (a.length !== b.length) diffs.push(`${table}: ${a.length} rows in SQLite, ${b.length} in PostgreSQL`)
    else {
      const i = a.findIndex((row, k) => row !== b[k])
      if (i >= 0) diffs.push(`${table}: ${a[i]} != ${b[i]}`)
    }
  }
  return diffs
}

/** Files whose bytes in PostgreSQL do not hash to their blob in `dataDir/files` (or to their sha256). */
export async function fileByteDiffs(sql: SQL, dataDir: string): Promise<string[]> {
  const diffs: string[] = []
  const rows: { id: string; sha256: string; bytes: Uint8Array | null }[] = await sql`SELECT id, sha256, bytes FROM files`
  for (const r of rows) {
    const blob = join(dataDir, 'files', r.sha256)
    if (!existsSync(blob)) {
      if (r.bytes !== null) diffs.push(`${r.id}: bytes in PostgreSQL, none on disk`)
      continue
    }
    const disk = createHash('sha256').update(readFileSync(blob)).digest('hex')
    const copied = r.bytes ? createHash('sha256').update(r.bytes).digest('hex') : 'none'
    if (disk !== copied || copied !== r.sha256) diffs.push(`${r.id}: sha256 ${r.sha256}, disk ${disk}, PostgreSQL ${copied}`)
  }
  return diffs
}
