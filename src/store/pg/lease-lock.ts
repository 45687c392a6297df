/**
 * Named locks shared by every node, with a lease: CertMagic's storage lock (one ACME
 * order per domain however many nodes see the request) in one PostgreSQL table.
 *
 * - Taking a lock is one statement: insert the row, or take it over if its lease ran
 *   out. Otherwise the caller polls (jittered, so waiting nodes do not retry in step)
 *   until it gets the lock or its wait ends.
 * - While held, the lease is renewed every leaseMs/3. A lock is stale once its lease ran
 *   out, i.e. two renewals in a row were missed and a third interval passed: a crashed
 *   or frozen holder is taken over after at most one lease.
 * - Expiries are on the database's clock, so nodes' clocks need not agree. The holder
 *   counts its own deadline from the moment it sent its last successful renewal, which
 *   is never later than the database's expiry.
 * - `lost` is aborted when the holder can no longer be sure it holds the lock: a renewal
 *   found another holder (or no row), or no renewal succeeded before the lease ran out
 *   (PostgreSQL down or unreachable for a whole lease). A short outage inside the lease
 *   is ridden out: the next renewal succeeds and the lock is kept.
 * - Like any lease, exclusion is only as good as the holder's reaction to `lost`: work
 *   must check the signal before each step that must not run twice (CertMagic's caveat).
 */
import type { SQL } from 'bun'
import { ensureClusterTable } from './cluster-tables'

export interface LeaseLockOptions {
  /** Who holds it (node name), shown in the row; a random suffix makes each acquisition unique. */
  holder: string
  /** How long a lock stays valid without renewal. */
  leaseMs: number
  /** How long `acquire` waits for a held lock; 0 tries once. */
  waitMs: number
  /** Mean interval between attempts while waiting (jittered ±50%). */
  pollMs: number
  /** Stops waiting early (the acquire rejects with the signal's reason). */
  signal?: AbortSignal
}

/** CertMagic renews every 5 s and calls a lock stale after 10 s; a 15 s lease renewed every 5 s is the same rhythm. */
export const LEASE_LOCK_DEFAULTS: LeaseLockOptions = {
  holder: `${process.env.HOSTNAME ?? 'node'}:${process.pid}`,
  leaseMs: 15_000,
  waitMs: 120_000,
  pollMs: 1_000,
}

export interface HeldLock {
  key: string
  /** The value stored in `locks.holder` for this acquisition. */
  holder: string
  /** Aborted (reason: LockLostError) when the lock may be held by someone else now. */
  lost: AbortSignal
  /** Stops renewing and deletes the row if it is still ours; true if it was. Safe to call twice. */
  release(): Promise<boolean>
}

export class LockTimeoutError extends Error {
  override name = 'LockTimeoutError'
}
export class LockLostError extends Error {
  override name = 'LockLostError'
}

export function createLeaseLocks(sql: SQL, defaults: Partial<LeaseLockOptions> = {}) {
  const base = { ...LEASE_LOCK_DEFAULTS, ...defaults }

  /** One attempt: the row is inserted, or taken over if its lease ran out. True if it is ours now. */
  async function tryTake(key: string, holder: string, leaseMs: number): Promise<boolean> {
    const rows = await sql`
      INSERT INTO locks AS l (key, holder, expires_at)
      VALUES (${key}, ${holder}, (extract(epoch FROM statement_timestamp()) * 1000)::bigint + ${leaseMs})
      ON CONFLICT (key) DO UPDATE SET holder = excluded.holder, expires_at = excluded.expires_at
        WHERE l.expires_at < (extract(epoch FROM statement_timestamp()) * 1000)::bigint
      RETURNING holder`
    return rows.length === 1
  }

  async function acquire(key: string, options: Partial<LeaseLockOptions> = {}): Promise<HeldLock> {
    const o = { ...base, ...options }
    if (!(o.leaseMs >= 3)) throw new RangeError('leaseMs must be at least 3')
    await ensureClusterTable(sql, 'locks')
    const holder = `${o.holder}#${crypto.randomUUID()}`
    const giveUpAt = Date.now() + o.waitMs
    for (;;) {
      o.signal?.throwIfAborted()
      const sentAt = Date.now()
      if (await tryTake(key, holder, o.leaseMs)) return hold(key, holder, o.leaseMs, sentAt)
      const left = giveUpAt - Date.now()
      if (left <= 0) throw new LockTimeoutError(`lock ${key} is held by another node (waited ${o.waitMs} ms)`)
      await pause(Math.min(left, o.pollMs * (0.5 + Math.random())), o.signal)
    }
  }

  function hold(key: string, holder: string, leaseMs: number, takenAt: number): HeldLock {
    const lostController = new AbortController()
    let released = false
    let renewTimer: ReturnType<typeof setTimeout> | undefined
    let deadlineTimer: ReturnType<typeof setTimeout> | undefined

    const stop = () => {
      clearTimeout(renewTimer)
      clearTimeout(deadlineTimer)
    }
    const lose = (why: string) => {
      if (released || lostController.signal.aborted) return
      stop()
      lostController.abort(new LockLostError(`lock ${key}: ${why}`))
    }
    /** Our lease ends leaseMs after the send time of the last statement that set it (the database stamped it later). */
    const armDeadline = (from: number) => {
      clearTimeout(deadlineTimer)
      deadlineTimer = setTimeout(() => lose(`no renewal succeeded within the ${leaseMs} ms lease`), from + leaseMs - Date.now())
    }
    const scheduleRenewal = () => {
      renewTimer = setTimeout(renew, leaseMs / 3)
    }
    const renew = async () => {
      const sentAt = Date.now()
      try {
        const rows = await sql`
          UPDATE locks SET expires_at = (extract(epoch FROM statement_timestamp()) * 1000)::bigint + ${leaseMs}
          WHERE key = ${key} AND holder = ${holder}
          RETURNING holder`
        if (released || lostController.signal.aborted) return
        if (rows.length === 0) return lose('taken over by another holder (our lease ran out)')
        armDeadline(sentAt)
      } catch {
        // Database unreachable: keep trying until the lease runs out; the deadline decides.
        if (released || lostController.signal.aborted) return
      }
      scheduleRenewal()
    }

    armDeadline(takenAt)
    scheduleRenewal()

    let releasing: Promise<boolean> | undefined
    return {
      key,
      holder,
      lost: lostController.signal,
      release() {
        released = true
        stop()
        releasing ??= sql`DELETE FROM locks WHERE key = ${key} AND holder = ${holder}`.then(
          (r) => r.count === 1,
          (e) => {
            releasing = undefined // may be retried; left alone, the lease runs out by itself
            throw e
          },
        )
        return releasing
      },
    }
  }

  return {
    acquire,
    /**
     * Runs `fn` while holding `key`, and releases it after (also when fn throws). `fn`
     * gets the held lock: check `lock.lost` before each step that must not run twice.
     */
    async withLock<T>(key: string, fn: (lock: HeldLock) => Promise<T>, options: Partial<LeaseLockOptions> = {}): Promise<T> {
      const lock = await acquire(key, options)
      try {
        return await fn(lock)
      } finally {
        await lock.release().catch(() => false) // unreachable database: the lease runs out by itself
      }
    },
    /** The current holder of `key` if its lease has not run out (for operators and tests). */
    async holderOf(key: string): Promise<string | null> {
      await ensureClusterTable(sql, 'locks')
      const rows = await sql`
        SELECT holder FROM locks
        WHERE key = ${key} AND expires_at >= (extract(epoch FROM statement_timestamp()) * 1000)::bigint`
      return (rows[0]?.holder as string | undefined) ?? null
    },
  }
}
export type LeaseLocks = ReturnType<typeof createLeaseLocks>

function pause(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    const onAbort = () => {
      clearTimeout(timer)
      reject(signal?.reason)
    }
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort)
      resolve()
    }, ms)
    signal?.addEventListener('abort', onAbort, { once: true })
  })
}
