/**
 * Leader election against a real PostgreSQL, three candidates on one database: exactly one
 * leads; closing it, terminating its backend or restarting PostgreSQL hands the lead on,
 * and there is never more than one leader.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { SQL } from 'bun'
import { startPostgres, type TestPostgres } from '../../../test/helpers/postgres'
import { createLeader, type Leader, type Leadership } from './leader'

const quiet = { info() {}, warn() {}, error() {} }
const RETRY_MS = 200

let pg: TestPostgres
let url: string

beforeAll(async () => {
  pg = await startPostgres()
  url = await pg.createDatabase('leader')
})
afterAll(async () => {
  await pg?.destroy()
})

interface Candidate {
  leader: Leader
  leads: Leadership[]
  losses: string[]
}

/** Three candidates for one key, and a way to wait (with a deadline) for what they report. */
function candidates(key: string, n = 3) {
  const closedSet = new Set<Candidate>()
  const waiters = new Set<() => void>()
  const changed = () => {
    for (const w of waiters) w()
  }
  const all: Candidate[] = Array.from({ length: n }, () => {
    const c = { leads: [], losses: [] } as unknown as Candidate
    c.leader = createLeader({
      url,
      key,
      retryMs: RETRY_MS,
      log: quiet,
      onLead: (l) => {
        c.leads.push(l)
        changed()
      },
      onLose: (reason) => {
        c.losses.push(reason)
        changed()
      },
    })
    return c
  })
  const leaders = () => all.filter((c) => c.leader.leading)
  return {
    all,
    leaders,
    until(done: () => boolean, ms: number, what: string): Promise<void> {
      if (done()) return Promise.resolve()
      return new Promise((resolve, reject) => {
        const check = () => {
          if (!done()) return
          waiters.delete(check)
          clearTimeout(timer)
          resolve()
        }
        const timer = setTimeout(() => {
          waiters.delete(check)
          reject(new Error(`${what} not within ${ms} ms; leading: ${all.map((c) => c.leader.leading)}`))
        }, ms)
        waiters.add(check)
      })
    },
    /** Every candidate still running tries (or checks) twice more: long enough for a second leader to show. */
    async twoMoreRounds() {
      const running = all.filter((c) => !closedSet.has(c))
      const start = running.map((c) => c.leader.attempts)
      const deadline = Date.now() + 20 * RETRY_MS
      const followers = () => running.filter((c) => !c.leader.leading)
      while (followers().some((c) => c.leader.attempts < start[running.indexOf(c)]! + 2)) {
        if (Date.now() > deadline) throw new Error('the followers stopped trying for the lock')
        await Bun.sleep(20) // attempts have no event; a short poll interval
      }
    },
    async close(c: Candidate) {
      closedSet.add(c)
      await c.leader.close()
    },
    async closeAll() {
      for (const c of all) await c.leader.close()
    },
  }
}

const holdsLock = async (l: Leadership) => {
  const [row] = await l.sql`SELECT count(*)::int AS n FROM pg_locks WHERE locktype = 'advisory' AND granted AND pid = pg_backend_pid()`
  return row.n
}

describe('leader election', () => {
  test('of three candidates exactly one leads, on the connection that holds the lock', async () => {
    const group = candidates('rollups')
    try {
      await group.until(() => group.leaders().length === 1, 5000, 'a leader')
      await group.twoMoreRounds()
      expect(group.leaders()).toHaveLength(1)
      expect(group.all.map((c) => c.leads.length).sort()).toEqual([0, 0, 1])
      const leader = group.leaders()[0]!
      expect(await holdsLock(leader.leads[0]!)).toBe(1)
      expect(leader.leads[0]!.signal.aborted).toBe(false)
    } finally {
      await group.closeAll()
    }
  })

  test('closing the leader hands the lead to another within retryMs and a little', async () => {
    const group = candidates('renewals')
    try {
      await group.until(() => group.leaders().length === 1, 5000, 'a leader')
      const first = group.leaders()[0]!
      await group.close(first)
      expect(first.losses).toEqual(['closed'])
      expect(first.leads[0]!.signal.aborted).toBe(true)
      await group.until(() => group.leaders().length === 1, RETRY_MS + 1000, 'a new leader')
      await group.twoMoreRounds()
      expect(group.leaders()).toHaveLength(1)
      expect(group.leaders()[0]).not.toBe(first)
    } finally {
      await group.closeAll()
    }
  })

  test("the leader's backend terminated: it is told at once, and one candidate leads again", async () => {
    const group = candidates('terminated')
    const admin = new SQL(url)
    try {
      await group.until(() => group.leaders().length === 1, 5000, 'a leader')
      const first = group.leaders()[0]!
      await admin`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE pid = ${await leaderPid(first)}`
      await group.until(() => first.losses.length === 1, 2000, 'the loss')
      expect(first.leads[0]!.signal.aborted).toBe(true)
      await group.until(() => group.leaders().length === 1, RETRY_MS + 1000, 'a new leader')
      await group.twoMoreRounds()
      expect(group.leaders()).toHaveLength(1)
      expect(await holdsLock(group.leaders()[0]!.leads.at(-1)!)).toBe(1)
    } finally {
      await admin.close()
      await group.closeAll()
    }
  })

  test('PostgreSQL stopped: the leader loses the lead and nobody leads; started again: exactly one leads', async () => {
    const group = candidates('restart')
    try {
      await group.until(() => group.leaders().length === 1, 5000, 'a leader')
      const first = group.leaders()[0]!
      await pg.stop()
      try {
        await group.until(() => first.losses.length === 1, 5000, 'the loss')
        await group.twoMoreRounds()
        expect(group.leaders()).toHaveLength(0)
      } finally {
        await pg.start()
      }
      await group.until(() => group.leaders().length === 1, 10_000, 'a leader after the restart')
      await group.twoMoreRounds()
      expect(group.leaders()).toHaveLength(1)
      expect(await holdsLock(group.leaders()[0]!.leads.at(-1)!)).toBe(1)
    } finally {
      await group.closeAll()
    }
  })
})

async function leaderPid(c: Candidate): Promise<number> {
  const [row] = await c.leads.at(-1)!.sql`SELECT pg_backend_pid() AS pid`
  return row.pid
}
