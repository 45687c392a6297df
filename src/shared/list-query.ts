/**
 * The list query of the tags, files and templates stores: filters ANDed into one WHERE,
 * ordered by name or creation time with a tie-break column, one page of rows plus the number
 * of matches before paging.
 */
import type { Database, SQLQueryBindings } from 'bun:sqlite'
import { escapeLike } from './sql'

/** One WHERE condition and the values of its `?`s. */
export interface Condition {
  sql: string
  args: SQLQueryBindings[]
}

export const condition = (sql: string, ...args: SQLQueryBindings[]): Condition => ({ sql, args })

/** `id IN (…)`; no condition for an absent or empty list. */
export function idIn(ids: readonly string[] | undefined): Condition | null {
  return ids?.length ? condition(`id IN (${ids.map(() => '?').join(',')})`, ...ids) : null
}

/** A case-insensitive substring match of `term` on any of `columns` (each already lower-case). */
export function matches(term: string | undefined, columns: readonly string[]): Condition | null {
  if (!term) return null
  const like = `%${escapeLike(term.toLowerCase())}%`
  const each = columns.map((c) => `${c} LIKE ? ESCAPE '\\'`)
  return condition(each.length === 1 ? each[0]! : `(${each.join(' OR ')})`, ...columns.map(() => like))
}

export interface ListPage {
  sortBy: 'name' | 'created_at'
  sortOrder: 'asc' | 'desc'
  limit: number
  offset: number
}

/**
 * One page of `table`'s rows matching every condition (falsy entries are skipped), ordered by
 * `name_key` or `created_at`, then `tieBreak` in the same direction; and the number of matches.
 */
export function listRows<Row>(
  db: Database,
  table: string,
  conditions: readonly (Condition | null | undefined | false | '')[],
  page: ListPage,
  tieBreak: 'id' | 'rowid' = 'id',
): { rows: Row[]; total: number } {
  const kept = conditions.filter((c): c is Condition => !!c)
  const args = kept.flatMap((c) => c.args)
  const clause = kept.length ? `WHERE ${kept.map((c) => c.sql).join(' AND ')}` : ''
  const order = page.sortBy === 'name' ? 'name_key' : 'created_at'
  const dir = page.sortOrder === 'asc' ? 'ASC' : 'DESC'
  const rows = db
    .query<Row, SQLQueryBindings[]>(`SELECT * FROM ${table} ${clause} ORDER BY ${order} ${dir}, ${tieBreak} ${dir} LIMIT ? OFFSET ?`)
    .all(...args, page.limit, page.offset)
  const total = db.query<{ n: number }, SQLQueryBindings[]>(`SELECT count(*) AS n FROM ${table} ${clause}`).get(...args)!.n
  return { rows, total }
}
