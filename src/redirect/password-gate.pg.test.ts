/**
 * The cookie secret on PostgreSQL: nodes that start together must sign with one secret, or a
 * visitor's cookie from one node is refused by the next. Three clients (three nodes) race
 * on an empty `kv` table.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { SQL } from 'bun'
import { startMigratedDatabase } from '../../test/helpers/postgres'
import { loadOrCreateSecretPg } from './password-gate'

let db: Awaited<ReturnType<typeof startMigratedDatabase>>
beforeAll(async () => {
  db = await startMigratedDatabase('password_secret')
})
afterAll(() => db?.close())

test('three nodes racing for the cookie secret all get the same one, stored once, and keep it', async () => {
  const nodes = [0, 1, 2].map(() => new SQL(db.url, { max: 1 }))
  try {
    // Connected first, so the three reach the database together rather than in connection order.
    await Promise.all(nodes.map((sql) => sql`SELECT 1`))
    const secrets = await Promise.all(nodes.map((sql) => loadOrCreateSecretPg(sql, 'password_cookie_secret')))
    expect(secrets[0]!.length).toBe(32)
    for (const s of secrets) expect(s.toString('hex')).toBe(secrets[0]!.toString('hex'))
    // More races, each on a fresh name: every node must answer the one stored value every time.
    for (let round = 0; round < 20; round++) {
      const name = `race_${round}`
      const got = await Promise.all(nodes.map((sql) => loadOrCreateSecretPg(sql, name)))
      const [stored] = await db.sql`SELECT value FROM kv WHERE key = ${name}`
      expect(got.map((s) => s.toString('base64'))).toEqual([stored.value, stored.value, stored.value])
    }
    const rows = await db.sql`SELECT value FROM kv WHERE key = 'password_cookie_secret'`
    expect(rows.length).toBe(1)
    // A node started later reads the same secret; another name gets its own.
    expect((await loadOrCreateSecretPg(db.sql, 'password_cookie_secret')).equals(secrets[0]!)).toBe(true)
    expect((await loadOrCreateSecretPg(db.sql, 'other_secret')).equals(secrets[0]!)).toBe(false)
  } finally {
    await Promise.all(nodes.map((sql) => sql.close()))
  }
})
