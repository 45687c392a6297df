import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { SQL } from 'bun'
import { startPostgres, type TestPostgres } from '../../../test/helpers/postgres'
import { createVisitCounter } from './visit-counter'

let pg: TestPostgres
let nodes: SQL[]
beforeAll(async () => {
  pg = await startPostgres()
  nodes = [0, 1, 2].map(() => new SQL(pg.url))
})
afterAll(async () => {
  for (const sql of nodes ?? []) await sql.close()
  await pg?.destroy()
})

describe('visit counter on PostgreSQL', () => {
  test('500 concurrent visits over 3 nodes get the ordinals 1..500, no gap and no repeat', async () => {
    const counters = nodes.map(createVisitCounter)
    const K = 500
    const ordinals = await Promise.all(Array.from({ length: K }, (_, i) => counters[i % 3]!.next('lnk_hot')))
    expect(ordinals.toSorted((a, b) => a - b)).toEqual(Array.from({ length: K }, (_, i) => i + 1))
    expect(await counters[1]!.current('lnk_hot')).toBe(K)
  })

  test('links are counted apart; a deleted link starts again at 1', async () => {
    const [a, b] = nodes.map(createVisitCounter)
    expect(await a!.next('lnk_a')).toBe(1)
    expect(await b!.next('lnk_a')).toBe(2)
    expect(await b!.next('lnk_b')).toBe(1)
    await a!.forget('lnk_a')
    expect(await b!.current('lnk_a')).toBe(0)
    expect(await b!.next('lnk_a')).toBe(1)
  })

  test('a seed starts a new count at the visits already stored, and never moves an existing count', async () => {
    const [a, b] = nodes.map(createVisitCounter)
    expect(await a!.seed('lnk_moved', 41)).toBe(41)
    expect(await b!.next('lnk_moved')).toBe(42)
    expect(await b!.seed('lnk_moved', 7)).toBe(42)
    expect(await a!.next('lnk_moved')).toBe(43)
  })
})
