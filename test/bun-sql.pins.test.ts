/**
 * What Bun.SQL does on the pinned Bun (1.4.5) that its documentation denies or leaves out,
 * pinned against a real PostgreSQL: the scale-out design (docs/adr/0010) rests on
 * LISTEN/NOTIFY delivered at commit, a listener that re-subscribes after PostgreSQL
 * restarts, and COPY in both directions. A Bun upgrade that changes any of it fails here.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { SQL } from 'bun'
import { startPostgres, type TestPostgres } from './helpers/postgres'

let pg: TestPostgres
beforeAll(async () => {
  pg = await startPostgres()
})
afterAll(async () => {
  await pg?.destroy()
})

/** Resolves with the payloads once `n` have arrived on `channel`. */
function collector() {
  const payloads: string[] = []
  const waiters: { n: number; resolve: () => void }[] = []
  return {
    payloads,
    onNotify(payload: string) {
      payloads.push(payload)
      for (const w of waiters.filter((w) => payloads.length >= w.n)) w.resolve()
    },
    arrived(n: number) {
      return payloads.length >= n ? Promise.resolve() : new Promise<void>((resolve) => waiters.push({ n, resolve }))
    },
  }
}

describe('Bun.SQL on PostgreSQL', () => {
  test('listen/notify: a notify inside a transaction arrives at commit, never after a rollback', async () => {
    const sql = new SQL(pg.url)
    const listener = new SQL(pg.url)
    const got = collector()
    await listener.listen('links_changed', got.onNotify)
    await sql
      .begin(async (tx) => {
        await tx`SELECT pg_notify('links_changed', 'rolled-back')`
        throw new Error('roll back')
      })
      .catch(() => {})
    await sql.begin(async (tx) => {
      await tx`SELECT pg_notify('links_changed', ${'example.com/summer'})`
    })
    await sql.notify('links_changed', 'direct')
    await got.arrived(2)
    expect(got.payloads).toEqual(['example.com/summer', 'direct'])
    await listener.close()
    await sql.close()
  })

  test('a listener re-subscribes by itself after PostgreSQL restarts', async () => {
    const listener = new SQL(pg.url)
    const got = collector()
    await listener.listen('epoch', got.onNotify)
    const before = new SQL(pg.url)
    await before.notify('epoch', 'before')
    await got.arrived(1)
    await before.close()

    await pg.stop()
    await pg.start()

    // Notifications sent before the listener is back are lost (by design of LISTEN): send
    // until one arrives, then check that later ones keep arriving in order.
    const after = new SQL(pg.url)
    let sent = 0
    const deadline = Date.now() + 20_000
    while (got.payloads.length < 2) {
      if (Date.now() > deadline) throw new Error(`no notification after the restart; got ${JSON.stringify(got.payloads)}`)
      await after.notify('epoch', `after-${++sent}`)
      await Promise.race([got.arrived(2), Bun.sleep(100)]) // a poll interval while the listener reconnects
    }
    const count = got.payloads.length
    await after.notify('epoch', 'last')
    await got.arrived(count + 1)
    expect(got.payloads[0]).toBe('before')
    expect(got.payloads.at(-1)).toBe('last')
    await after.close()
    await listener.close()
  })

  test('COPY FROM STDIN through writable() stores the rows; COPY TO STDOUT through readable() returns them', async () => {
    const sql = new SQL(pg.url)
    await sql`CREATE TABLE copy_pin (link_id text, at bigint, country text)`
    const rows = Array.from({ length: 10_000 }, (_, i) => `lnk_${i % 7}\t${1_700_000_000_000 + i}\t${i % 2 ? 'FR' : '\\N'}\n`)
    const writer = sql`COPY copy_pin (link_id, at, country) FROM STDIN`.writable().getWriter()
    for (let i = 0; i < rows.length; i += 1000) await writer.write(rows.slice(i, i + 1000).join(''))
    await writer.close()
    const [{ n, nulls }] = await sql`SELECT count(*)::int AS n, count(*) FILTER (WHERE country IS NULL)::int AS nulls FROM copy_pin`
    expect({ n, nulls }).toEqual({ n: 10_000, nulls: 5_000 })

    let text = ''
    for await (const chunk of sql`COPY (SELECT link_id, at FROM copy_pin ORDER BY at LIMIT 3) TO STDOUT`.readable())
      text += typeof chunk === 'string' ? chunk : new TextDecoder().decode(chunk as Uint8Array)
    expect(text).toBe('lnk_0\t1700000000000\nlnk_1\t1700000000001\nlnk_2\t1700000000002\n')
    await sql.close()
  })
})
