/**
 * The scheduled checks: rounds, one every `[health] every`, on the node that leads (a lease in
 * the store on PostgreSQL, see `leaseLeadership`; the only node on SQLite). A round walks the
 * live links of types with health in pages (memory stays one page and the queue, whatever the
 * number of links), records each link's URLs, and queues the URLs due: those not checked in
 * this round yet nor in the last half interval. So each URL is checked once per interval
 * however many links share it (and never twice within half an interval), and a URL checked on
 * demand or when its link was created is not checked again at once. The walk is spread over half the interval so a large set of links
 * makes a steady trickle, not a burst. When the round began is kept in the store: a restart, or
 * another node taking over, resumes the round instead of starting one.
 */
import { healthUrlsOf } from '../links'
import type { Logger } from '../shared'
import type { LeaseLocks } from '../store'
import { type MappedLink, type Settled, urlKey } from './link-health.rules'
import type { HealthEventsOf, HealthStorePort } from './link-health.store'

export interface RoundOptions {
  store: HealthStorePort
  everyMs: number
  now: () => number
  log: Logger
  /** Checks the URL unless a check of it is under way; its result is recorded by the caller. */
  check(url: string, key: string): void
  /** Resolves once the queue of checks is below `n`. */
  queueBelow(n: number): Promise<void>
  onSettled(settled: Settled): void
  /** The events of the changes settling makes, appended in its transaction. */
  eventsOf?: HealthEventsOf
  /** Links per page of the walk. */
  pageSize?: number
  /** Checks queued at most before the walk waits. */
  maxQueued?: number
  /** The share of the interval a round's walk is spread over. */
  spread?: number
}

/** Waits `ms` or until the signal ends it (answers false then). */
export function pause(ms: number, signal: AbortSignal): Promise<boolean> {
  if (signal.aborted) return Promise.resolve(false)
  if (ms <= 0) return Promise.resolve(true)
  return new Promise((resolve) => {
    const done = (v: boolean) => {
      clearTimeout(timer)
      signal.removeEventListener('abort', stop)
      resolve(v)
    }
    const stop = () => done(false)
    const timer = setTimeout(() => done(true), ms)
    signal.addEventListener('abort', stop, { once: true })
  })
}

/** Lets the event loop answer what waits (redirects, API calls) between two slices of store work, which is synchronous on SQLite. */
const turn = () => new Promise<void>((resolve) => setImmediate(resolve))

/** A link's URLs with their keys. */
export const mappedLink = (row: Parameters<typeof healthUrlsOf>[0] & { seq: number }): MappedLink => ({
  seq: row.seq,
  urls: healthUrlsOf(row).map((url) => ({ url, key: urlKey(url) })),
})

/** Rounds until the signal ends them (this node stopped, or lost the lead). */
export async function runRounds(o: RoundOptions, signal: AbortSignal): Promise<void> {
  while (!signal.aborted) {
    let started: number
    try {
      started = await roundStart(o)
      await walk(o, started, signal)
      if (!signal.aborted) await sweep(o, signal)
    } catch (e) {
      if (signal.aborted) return
      // The store may be unreachable for a while (PostgreSQL restarting): try again soon.
      o.log.warn('link health: a round of checks failed; retrying', { error: String(e) })
      await pause(Math.min(o.everyMs, 10_000), signal)
      continue
    }
    await pause(started + o.everyMs - o.now(), signal)
  }
}

/** When this round began: the stored one while its interval runs (a restart resumes it), else now. */
async function roundStart(o: RoundOptions): Promise<number> {
  const now = o.now()
  const last = await o.store.roundStartedAt()
  if (last !== null && last <= now && now < last + o.everyMs) return last
  await o.store.setRoundStartedAt(now)
  return now
}

async function walk(o: RoundOptions, started: number, signal: AbortSignal): Promise<void> {
  const pageSize = o.pageSize ?? 100
  const maxQueued = o.maxQueued ?? 1000
  const spreadMs = o.everyMs * (o.spread ?? 0.5)
  const last = Math.max(1, await o.store.lastLinkSeq())
  // Each round starts somewhere else and wraps around: the URLs a slow host could not take in one
  // round (see `check`) get their turn in another.
  const start = Math.floor(Math.random() * last)
  const segments: [number, number][] = [
    [start, Number.POSITIVE_INFINITY],
    [0, start],
  ]
  for (const [from, to] of segments) {
    let after = from
    while (!signal.aborted) {
      const page = (await o.store.liveLinks(after, pageSize, o.now())).filter((r) => r.seq <= to)
      if (page.length === 0) break
      after = page.at(-1)!.seq
      const mapped = page.map(mappedLink)
      o.onSettled(await o.store.mapLinks(mapped, o.now(), o.eventsOf))
      const urls = new Map<string, string>()
      for (const m of mapped) for (const u of m.urls) urls.set(u.key, u.url)
      // Due: not checked in this round yet, nor in the last half interval (on demand, or when its link was new).
      const dueBefore = Math.min(started, o.now() - o.everyMs / 2)
      for (const key of await o.store.dueUrls([...urls.keys()], dueBefore)) o.check(urls.get(key)!, key)
      await o.queueBelow(maxQueued)
      await turn()
      // Progress by seq: links are numbered in creation order, so seqs spread the walk evenly enough.
      const done = to === start ? Math.max(0, last - start) + after : Math.min(after, last) - start
      if (!(await pause(started + (spreadMs * done) / last - o.now(), signal))) return
    }
  }
}

/** Slices of links (by seq) and of URLs (by key) per statement, so no statement holds the store, or this thread, for long. */
const SWEEP_SLICE = 2000

/** After a round: the URLs of links no longer live, then URLs no link uses, a slice at a time. */
async function sweep(o: RoundOptions, signal: AbortSignal): Promise<void> {
  const last = await o.store.lastLinkSeq()
  for (let seq = 0; seq < last && !signal.aborted; seq += SWEEP_SLICE) {
    await o.store.sweepLinks(seq, SWEEP_SLICE, o.now())
    await turn()
  }
  for (let key: string | null = ''; key !== null && !signal.aborted; ) {
    key = await o.store.sweepUrls(key, SWEEP_SLICE)
    await turn()
  }
}

/**
 * Runs `work` while this node holds the cluster's lease `key` (PostgreSQL's `locks` table,
 * renewed while held; a node that dies loses it within one lease), trying for it every
 * `retryMs` while another node holds it. `work`'s signal aborts when the lease is lost or
 * `stop` aborts.
 */
export async function leaseLeadership(
  locks: LeaseLocks,
  key: string,
  work: (signal: AbortSignal) => Promise<void>,
  stop: AbortSignal,
  log: Logger,
  retryMs = 5000,
): Promise<void> {
  while (!stop.aborted) {
    let lock: Awaited<ReturnType<LeaseLocks['acquire']>> | null = null
    try {
      lock = await locks.acquire(key, { waitMs: 0, signal: stop })
    } catch (e) {
      if ((e as Error)?.name !== 'LockTimeoutError' && !stop.aborted) log.warn('link health: could not try for the lease', { error: String(e) })
    }
    if (lock) {
      log.info('link health: this node runs the scheduled checks')
      try {
        await work(AbortSignal.any([lock.lost, stop]))
      } finally {
        await lock.release().catch(() => false)
      }
      if (!stop.aborted) log.warn('link health: lost the lease; another node takes over the checks')
    }
    await pause(retryMs, stop)
  }
}
