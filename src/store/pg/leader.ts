/**
 * One node at a time does the cluster's leader work (click rollups, renewals): the node
 * whose reserved connection holds `pg_try_advisory_lock(key)`. Session advisory locks
 * belong to a connection, so the lock lives exactly as long as that connection: when it
 * drops (PostgreSQL restarted, the backend terminated, the network gone) the lock is gone
 * and the leader is told at once (the client's `onclose`) or at the next check (every
 * `retryMs`, the backend pid must not have changed). The others try again every `retryMs`.
 */
import { type ReservedSQL, SQL } from 'bun'
import type { Logger } from '../../shared'

/** Handed to `onLead`: the connection that holds the lock, and a signal that aborts when it is lost. */
export interface Leadership {
  /**
   * The lock-holding connection. Leader work written through it cannot outlive the lock:
   * once the connection is gone, its queries fail. Keep its transactions short: the lock
   * check runs on it too.
   */
  sql: ReservedSQL
  signal: AbortSignal
}

export interface LeaderOptions {
  url: string
  /** A name (hashed by PostgreSQL to the lock's bigint) or the bigint itself. */
  key: string | bigint
  /** Called when this node becomes the leader. A promise it returns is not awaited; errors are logged. */
  onLead: (leadership: Leadership) => void | Promise<void>
  /** Called when it stops being the leader: the connection dropped, the check failed, or close(). */
  onLose?: (reason: string) => void
  /** How often a follower tries for the lock and the leader checks its connection. */
  retryMs?: number
  log: Logger
}

export interface Leader {
  readonly leading: boolean
  /** Tries for the lock so far (for health and tests). */
  readonly attempts: number
  /** Gives the lock up (onLose runs if this node led) and closes the connection. */
  close(): Promise<void>
}

export function createLeader(options: LeaderOptions): Leader {
  const { url, key, onLead, onLose, retryMs = 1000, log } = options
  // A client of its own with one connection: while leading, that connection is the reserved
  // one, so any close this client reports is the lock's.
  const client = new SQL(url, {
    max: 1,
    onclose: (err) => {
      if (current) lose(`connection closed: ${err?.message ?? 'unknown'}`)
    },
  })
  const lockKey = typeof key === 'bigint' ? key.toString() : key
  const lockExpression = typeof key === 'bigint' ? 'CAST($1 AS bigint)' : 'hashtextextended($1, 0)'
  let current: { conn: ReservedSQL; pid: number; abort: AbortController } | null = null
  let attempts = 0
  let closed = false
  let timer: ReturnType<typeof setTimeout> | undefined
  let running: Promise<void> = Promise.resolve()

  const schedule = (ms: number) => {
    if (closed) return
    timer = setTimeout(() => {
      running = (current ? check() : attempt()).finally(() => schedule(retryMs))
    }, ms)
  }

  async function attempt() {
    attempts++
    let conn: ReservedSQL | undefined
    try {
      conn = await client.reserve()
      const [row] = await conn.unsafe(`SELECT pg_try_advisory_lock(${lockExpression}) AS ok, pg_backend_pid() AS pid`, [lockKey])
      if (!row?.ok || closed) {
        // Closing the connection releases a lock won just as close() was called.
        await (row?.ok ? conn.close() : conn.release())
        return
      }
      current = { conn, pid: row.pid, abort: new AbortController() }
      log.info('leader: this node leads', { key: lockKey })
      const leadership = { sql: conn, signal: current.abort.signal }
      try {
        Promise.resolve(onLead(leadership)).catch((err) => log.error('leader work failed', { key: lockKey, error: String(err) }))
      } catch (err) {
        log.error('leader work failed', { key: lockKey, error: String(err) })
      }
    } catch (err) {
      // PostgreSQL unreachable or the connection dropped mid-attempt: try again later.
      await conn?.close().catch(() => {})
      log.warn('leader: could not try for the lock', { key: lockKey, error: String(err) })
    }
  }

  /** The lock is held while the connection that took it is alive: same backend, answering. */
  async function check() {
    const held = current
    if (!held) return
    const answer = held.conn`SELECT pg_backend_pid() AS pid`.then(([row]) => (row?.pid === held.pid ? null : 'the connection changed'))
    let timeout: ReturnType<typeof setTimeout> | undefined
    const deadline = new Promise<string>((resolve) => {
      timeout = setTimeout(() => resolve('the connection stopped answering'), Math.max(2 * retryMs, 2000))
    })
    const problem = await Promise.race([answer.catch((err) => `the connection failed: ${String(err)}`), deadline])
    clearTimeout(timeout)
    if (problem && current === held) lose(problem)
  }

  function lose(reason: string) {
    const held = current
    if (!held) return
    current = null
    held.abort.abort(new Error(reason))
    // Closing the connection makes sure the server releases the lock if it still holds it.
    held.conn.close().catch(() => {})
    if (!closed) log.warn('leader: lost the lock', { key: lockKey, reason })
    try {
      onLose?.(reason)
    } catch (err) {
      log.error('leader onLose failed', { key: lockKey, error: String(err) })
    }
  }

  schedule(0)

  return {
    get leading() {
      return current !== null
    },
    get attempts() {
      return attempts
    },
    async close() {
      if (closed) return
      closed = true
      clearTimeout(timer)
      await running.catch(() => {})
      lose('closed')
      await client.close({ timeout: 0 })
    },
  }
}
