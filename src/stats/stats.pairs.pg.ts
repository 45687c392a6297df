/**
 * The pairwise daily rollups on PostgreSQL (migration 0011: `stats_pairs`, `stats_pairs_state`):
 * the days that have ended are rolled up, one day per transaction, by one node at a time (a
 * transaction-level advisory lock; the others skip their turn). The state row is taken FOR UPDATE,
 * so the roll-up waits for batches in flight (they hold it FOR SHARE, click-writer.pg.ts) and
 * batches after it see the new limit: a day's events are then either in its rows or read raw.
 */
import type { SQL } from 'bun'
import type { Logger } from '../shared'
import { DAY } from './stats.rollup'

/** The advisory lock of the roll-up (any fixed pair no other code uses). */
const ROLL_LOCK = [7_240_514, 7] as const

export interface PairRoller {
  /** Rolls up ended days until none is left or `budgetMs` has passed; answers how many it rolled (0 when another node holds the lock). */
  roll(budgetMs?: number): Promise<number>
  start(): void
  stop(): Promise<void>
}

export function createPairRoller(sql: SQL, log: Logger, opts: { everyMs?: number; now?: () => number } = {}): PairRoller {
  const now = opts.now ?? Date.now
  let timer: ReturnType<typeof setInterval> | null = null
  let running: Promise<unknown> | null = null

  /** One day: 'rolled', 'done' (nothing ended is left), or 'busy' (another node is rolling). */
  async function rollOne(): Promise<'rolled' | 'done' | 'busy'> {
    return sql.begin(async (tx) => {
      const [{ ok }] = await tx`SELECT pg_try_advisory_xact_lock(${ROLL_LOCK[0]}, ${ROLL_LOCK[1]}) AS ok`
      if (!ok) return 'busy'
      const [{ upto }] = await tx`SELECT upto FROM stats_pairs_state FOR UPDATE`
      if ((upto + 1) * DAY > now()) return 'done'
      await tx`SELECT stats_pairs_add(${upto * DAY}, ${(upto + 1) * DAY})`
      await tx`UPDATE stats_pairs_state SET upto = ${upto + 1}`
      return 'rolled'
    })
  }

  async function roll(budgetMs = Number.POSITIVE_INFINITY): Promise<number> {
    const until = Date.now() + budgetMs
    let days = 0
    while (Date.now() < until) {
      const step = await rollOne()
      if (step !== 'rolled') break
      days++
    }
    return days
  }

  return {
    roll,
    start() {
      const tick = () => {
        if (running) return
        // At most 10 s per tick: a store copied with a year of events catches up over minutes.
        running = roll(10_000)
          .then((days) => {
            if (days) log.info('statistics: days rolled up into pair rows', { days })
          })
          .catch((e) => log.warn('statistics: pair roll-up failed; will try again', { error: String(e) }))
          .finally(() => {
            running = null
          })
      }
      timer ??= setInterval(tick, opts.everyMs ?? 60_000)
      tick()
    },
    async stop() {
      if (timer) clearInterval(timer)
      timer = null
      await running
    },
  }
}
