import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { SQL } from 'bun'
import { startPostgres, type TestPostgres } from '../../../test/helpers/postgres'
import { createLeaseLocks, LockLostError, LockTimeoutError } from './lease-lock'

let pg: TestPostgres
let nodes: SQL[]
beforeAll(async () => {
  pg = await startPostgres()
  nodes = [0, 1, 2].map(() => new SQL(pg.url, { max: 4 }))
})
afterAll(async () => {
  for (const sql of nodes ?? []) await sql.close()
  await pg?.destroy()
})

const expiresAt = async (key: string) => Number((await nodes[0]!`SELECT expires_at FROM locks WHERE key = ${key}`)[0]?.expires_at)

/** Polls `check` every 20 ms (the lease runs out in real time) until it is true, or fails after `ms`. */
async function until(check: () => boolean | Promise<boolean>, ms: number, what: string) {
  const giveUp = Date.now() + ms
  while (!(await check())) {
    if (Date.now() > giveUp) throw new Error(`timed out waiting for ${what}`)
    await Bun.sleep(20)
  }
}

/** A holder in its own process (lease-lock.test-fixtures.ts), and the lines it prints. */
function spawnHolder(key: string, leaseMs: number) {
  const proc = Bun.spawn(['bun', `${import.meta.dir}/lease-lock.test-fixtures.ts`, pg.url, key, String(leaseMs)], { stdout: 'pipe', stderr: 'inherit' })
  const lines: string[] = []
  void (async () => {
    let rest = ''
    for await (const chunk of proc.stdout.pipeThrough(new TextDecoderStream())) {
      const parts = (rest + chunk).split('\n')
      rest = parts.pop()!
      lines.push(...parts)
    }
  })()
  const line = async (prefix: string) => {
    await until(() => lines.some((l) => l.startsWith(prefix)), 15_000, `"${prefix}" from the holder process`)
    return lines.find((l) => l.startsWith(prefix))!.slice(prefix.length + 1)
  }
  return { proc, line }
}

describe('lease locks on PostgreSQL', () => {
  test('20 acquirers on 3 nodes: one at a time, and every one gets the lock', async () => {
    await nodes[0]!`CREATE TABLE probe (id int PRIMARY KEY, v int NOT NULL)`
    await nodes[0]!`INSERT INTO probe VALUES (1, 0)`
    const locks = nodes.map((sql, i) => createLeaseLocks(sql, { holder: `node-${i}`, leaseMs: 5_000, waitMs: 30_000, pollMs: 10 }))
    let inside = 0
    let mostInside = 0
    const holders = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        locks[i % 3]!.withLock('domain:example.com', async (lock) => {
          mostInside = Math.max(mostInside, ++inside)
          // A read-modify-write that loses updates unless the lock serialises it across nodes.
          const sql = nodes[i % 3]!
          const [{ v }] = await sql`SELECT v FROM probe WHERE id = 1`
          await sql`UPDATE probe SET v = ${v + 1} WHERE id = 1`
          inside--
          return lock.holder
        }),
      ),
    )
    expect(mostInside).toBe(1)
    expect(new Set(holders).size).toBe(20)
    expect((await nodes[0]!`SELECT v FROM probe WHERE id = 1`)[0].v).toBe(20)
    expect(await locks[0]!.holderOf('domain:example.com')).toBeNull()
  })

  test('a held lock is refused to others until released; waiting gives up with LockTimeoutError', async () => {
    const [a, b] = nodes.map((sql, i) => createLeaseLocks(sql, { holder: `node-${i}`, leaseMs: 5_000, pollMs: 10 }))
    const lock = await a!.acquire('held')
    await expect(b!.acquire('held', { waitMs: 100 })).rejects.toBeInstanceOf(LockTimeoutError)
    expect(await lock.release()).toBe(true)
    const next = await b!.acquire('held', { waitMs: 0 })
    expect(await b!.holderOf('held')).toBe(next.holder)
    await next.release()
  })

  test('a crashed holder (killed: no release, no renewal) is taken over once its lease ran out', async () => {
    const crashed = spawnHolder('crash', 1_500)
    const crashedHolder = await crashed.line('acquired')
    const locks = createLeaseLocks(nodes[1]!, { holder: 'survivor', leaseMs: 1_500, pollMs: 20 })
    await expect(locks.acquire('crash', { waitMs: 0 })).rejects.toBeInstanceOf(LockTimeoutError)
    crashed.proc.kill('SIGKILL')
    await crashed.proc.exited
    const leaseEnd = await expiresAt('crash')
    expect(await locks.holderOf('crash')).toBe(crashedHolder)

    const lock = await locks.acquire('crash', { waitMs: 10_000 })
    // Taken at (its expiry - lease) on the database clock: after the crashed holder's lease ended.
    expect((await expiresAt('crash')) - 1_500).toBeGreaterThan(leaseEnd)
    expect(lock.lost.aborted).toBe(false)
    await lock.release()
  })

  test('a frozen holder is taken over; when it wakes it learns it lost the lock, and its release leaves the new holder alone', async () => {
    const frozen = spawnHolder('freeze', 1_500)
    await frozen.line('acquired')
    frozen.proc.kill('SIGSTOP')
    const locks = createLeaseLocks(nodes[2]!, { holder: 'other', leaseMs: 5_000, pollMs: 20 })
    const lock = await locks.acquire('freeze', { waitMs: 10_000 })

    frozen.proc.kill('SIGCONT')
    expect(await frozen.line('lost')).toContain('lock freeze')
    expect(await frozen.line('released')).toBe('false')
    expect(await frozen.proc.exited).toBe(0)
    expect(await locks.holderOf('freeze')).toBe(lock.holder)
    expect(lock.lost.aborted).toBe(false)
    await lock.release()
  })

  test('a renewal that finds the row taken by someone else reports lost before the lease would run out', async () => {
    const locks = createLeaseLocks(nodes[0]!, { holder: 'node-0', leaseMs: 3_000, pollMs: 10 })
    const lock = await locks.acquire('overwritten')
    // An operator (or a node whose clock or lease settings differ) takes the row.
    await nodes[1]!`UPDATE locks SET holder = 'intruder' WHERE key = 'overwritten'`
    await until(() => lock.lost.aborted, 5_000, 'the next renewal to notice')
    expect((lock.lost.reason as Error).message).toContain('taken over by another holder')
    expect(await lock.release()).toBe(false)
    expect(await locks.holderOf('overwritten')).toBe('intruder')
  })

  test('renewal keeps a critical section three times as long as the lease exclusive', async () => {
    const [a, b] = nodes.map((sql, i) => createLeaseLocks(sql, { holder: `node-${i}`, leaseMs: 1_200, pollMs: 10 }))
    const lock = await a!.acquire('long')
    const end = Date.now() + 3 * 1_200
    let refused = 0
    while (Date.now() < end) {
      await expect(b!.acquire('long', { waitMs: 0 })).rejects.toBeInstanceOf(LockTimeoutError)
      refused++
      await Bun.sleep(50) // the critical section's work
    }
    expect(refused).toBeGreaterThan(20)
    expect(lock.lost.aborted).toBe(false)
    expect(await b!.holderOf('long')).toBe(lock.holder)
    expect(await lock.release()).toBe(true)
  })

  test('PostgreSQL down for less than the lease: the holder keeps the lock (the next renewal succeeds)', async () => {
    const [a, b] = nodes.map((sql, i) => createLeaseLocks(sql, { holder: `node-${i}`, leaseMs: 4_000, pollMs: 10 }))
    const lock = await a!.acquire('outage')
    const before = await expiresAt('outage')
    await pg.stop()
    await Bun.sleep(1_600) // the outage spans at least one renewal (every 1.33 s)
    await pg.start()
    await until(async () => (await expiresAt('outage')) > before, 10_000, 'a renewal after the restart')
    expect(lock.lost.aborted).toBe(false)
    await expect(b!.acquire('outage', { waitMs: 0 })).rejects.toBeInstanceOf(LockTimeoutError)
    expect(await lock.release()).toBe(true)
  })

  test('PostgreSQL down for longer than the lease: the holder reports lost, and another node takes the lock once it is back', async () => {
    const [a, b] = nodes.map((sql, i) => createLeaseLocks(sql, { holder: `node-${i}`, leaseMs: 900, pollMs: 10 }))
    const lock = await a!.acquire('long-outage')
    await pg.stop()
    await until(() => lock.lost.aborted, 10_000, 'the lock to be reported lost')
    expect(lock.lost.reason).toBeInstanceOf(LockLostError)
    expect((lock.lost.reason as Error).message).toContain('no renewal succeeded')
    await pg.start()
    const taken = await b!.acquire('long-outage', { waitMs: 5_000 })
    expect(await lock.release()).toBe(false)
    expect(await b!.holderOf('long-outage')).toBe(taken.holder)
    await taken.release()
  })
})
