import { Database } from 'bun:sqlite'
import { expect, test } from 'bun:test'
import { condition, idIn, listRows, matches } from './list-query'

function store() {
  const db = new Database(':memory:')
  db.run('CREATE TABLE things (id TEXT PRIMARY KEY, name_key TEXT, note TEXT, created_at INTEGER)')
  const rows = [
    ['a', '50%_off', 'x', 1],
    ['b', 'plain', '50% OFF inside', 2],
    ['c', '50x_off', 'y', 2],
    ['d', 'other', 'z', 3],
  ]
  for (const r of rows) db.run('INSERT INTO things VALUES (?, ?, ?, ?)', r)
  return db
}
const page = { sortBy: 'created_at', sortOrder: 'asc', limit: 10, offset: 0 } as const
const ids = (r: { rows: unknown[] }) => (r.rows as { id: string }[]).map((x) => x.id)

test('search matches literally (% and _ are not wildcards), on any of the columns, case-insensitively', () => {
  const db = store()
  expect(ids(listRows(db, 'things', [matches('50%_', ['name_key'])], page))).toEqual(['a'])
  expect(ids(listRows(db, 'things', [matches('50% off', ['name_key', 'lower(note)'])], page))).toEqual(['b'])
})

test('conditions AND together; absent ones are skipped; the total counts matches before paging', () => {
  const db = store()
  expect(listRows(db, 'things', [], page).total).toBe(4)
  expect(ids(listRows(db, 'things', [idIn([]), idIn(undefined), matches('', ['name_key']), false, null], page))).toEqual(['a', 'b', 'c', 'd'])
  const r = listRows(db, 'things', [idIn(['a', 'b', 'c']), condition('created_at >= ?', 2)], { ...page, limit: 1, offset: 1 })
  expect([ids(r), r.total]).toEqual([['c'], 2])
})

test('ties in the sort column are broken by the tie-break column in the same direction', () => {
  const db = store()
  expect(ids(listRows(db, 'things', [], { ...page, sortOrder: 'desc' }))).toEqual(['d', 'c', 'b', 'a'])
  expect(ids(listRows(db, 'things', [], { ...page, sortBy: 'name' }))).toEqual(['a', 'c', 'd', 'b'])
})
