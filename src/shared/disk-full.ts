/**
 * A full disk (or a used-up quota) is an outage, not a bug: writes answer 503
 * `service_unavailable` with Retry-After and write nothing (a SQLite statement or transaction
 * that hits it is rolled back; a file's bytes go to a temp file first), while redirects go on
 * and clicks wait in memory. It is logged when a kind of write (the API's, the clicks') first
 * fails, then once a minute with what failed meanwhile, never once a request; nothing needs a
 * restart once there is room again.
 */
import type { Logger } from './log'

/** Minimum time between two log lines about a full disk. */
export const DISK_FULL_LOG_MS = 60_000

export interface DiskFullLog {
  /** A write failed for want of space (`what`: which kind of write); logged when a kind first fails, then at most once a minute. */
  report(what: string, error: unknown): void
  /** Writes succeed again: said once, if a full disk was reported. */
  recovered(what: string): void
}

export function createDiskFullLog(log: Logger, { everyMs = DISK_FULL_LOG_MS, now = Date.now }: { everyMs?: number; now?: () => number } = {}): DiskFullLog {
  let loggedAt = Number.NEGATIVE_INFINITY
  /** Kinds of write that failed in this outage, each said at once the first time. */
  const kinds = new Set<string>()
  /** Failures since the last line, by kind of write. */
  let failures = new Map<string, number>()
  return {
    report(what, error) {
      failures.set(what, (failures.get(what) ?? 0) + 1)
      const t = now()
      if (t - loggedAt < everyMs && kinds.has(what)) return
      kinds.add(what)
      loggedAt = t
      log.error('the disk is full: writes answer 503 until there is room; redirects go on and clicks wait in memory', {
        failedWrites: Object.fromEntries(failures),
        error: String((error as Error)?.message ?? error),
      })
      failures = new Map()
    },
    recovered(what) {
      if (kinds.size === 0) return
      kinds.clear()
      failures = new Map()
      loggedAt = Number.NEGATIVE_INFINITY
      log.info('there is room on the disk again: writes succeed', { write: what })
    },
  }
}

/** One per process: the API, the redirect server and the click recorder report to the same minute. */
const shared = new WeakMap<Logger, DiskFullLog>()
export function diskFullLogOf(log: Logger): DiskFullLog {
  let d = shared.get(log)
  if (!d) {
    d = createDiskFullLog(log)
    shared.set(log, d)
  }
  return d
}
