/**
 * `listRows` (list-query.ts) on PostgreSQL, for the PostgreSQL adapters of the stores that
 * use it: the same conditions (their `?`s become `$n`), the same order and the same page.
 * Text sorts by code point (COLLATE "C"), as SQLite's BINARY does, whatever the database's
 * locale; `columns` casts what Bun.SQL would return as strings (int8 as float8).
 */
import type { SQL } from 'bun'
import type { Condition, ListPage } from './list-query'

export async function listRowsPg<Row>(
  sql: SQL,
  table: string,
  columns: string,
  conditions: readonly (Condition | null | undefined | false | '')[],
  page: ListPage,
  /** The tie-break after the sort column, in the same direction: `id`, or `seq` where SQLite's is rowid (insertion order). */
  tieBreak: 'id' | 'seq' = 'id',
): Promise<{ rows: Row[]; total: number }> {
  const kept = conditions.filter((c): c is Condition => !!c)
  const args: unknown[] = kept.flatMap((c) => c.args)
  let n = 0
  const clause = kept.length ? `WHERE ${kept.map((c) => c.sql).join(' AND ')}`.replace(/\?/g, () => `$${++n}`) : ''
  const order = page.sortBy === 'name' ? 'name_key COLLATE "C"' : 'created_at'
  const dir = page.sortOrder === 'asc' ? 'ASC' : 'DESC'
  const rows = await sql.unsafe(
    `SELECT ${columns} FROM ${table} ${clause} ORDER BY ${order} ${dir}, ${tieBreak === 'id' ? 'id COLLATE "C"' : 'seq'} ${dir} LIMIT $${n + 1} OFFSET $${n + 2}`,
    [...args, page.limit, page.offset],
  )
  const [count] = await sql.unsafe(`SELECT count(*)::int AS n FROM ${table} ${clause}`, args)
  return { rows: [...rows] as Row[], total: count.n as number }
}
