/**
 * Where checks wait for their turn: at most `perHost` requests at a time to one host (every
 * hop of a check takes its host's turn) and at most `concurrency` checks at once. URLs wait
 * in one queue per host, and hosts take turns, so a host with thousands of URLs (or one that
 * hangs until every deadline) holds back only its own URLs. Urgent checks (a user asked)
 * skip the queues and the global cap, never the per-host limit.
 *
 * A host whose check took longer than `slowMs` is slow for a while: its queue is cut to
 * `slowQueue` URLs at once (the others are answered `null`, not checked: a later round asks
 * again), and `congested` tells a round to stop queueing its URLs, so a hanging host never
 * fills the queue that every other host's URLs go through.
 */
import { LruCache } from '../shared'

/** How long a host stays slow after a slow check. */
const SLOW_FOR_MS = 10 * 60_000

export interface CheckPool<T> {
  /** Runs `check(url, release)` when the URL's host and the pool have room (`release` frees the first hop's turn); null when it was dropped unchecked. */
  submit(url: string, opts?: { urgent?: boolean }): Promise<T | null>
  /** A hop's turn on a host (waits while the host has `perHost` requests in flight). */
  turn(host: string): Promise<() => void>
  /** Checks queued or running. */
  readonly pending: number
  /** Whether this URL's host is slow and has its share of URLs waiting already. */
  congested(url: string): boolean
  /** Resolves once fewer than `n` checks are queued or running. */
  below(n: number): Promise<void>
}

interface Host {
  active: number
  /** Hops of running checks waiting for a turn here: served before new checks. */
  waiters: (() => void)[]
  queue: Queued[]
}
interface Queued {
  url: string
  /** Dispatched with its first hop's turn, or dropped (null). */
  settle: (release: (() => void) | null) => void
}

export function createCheckPool<T>(opts: {
  concurrency: number
  perHost: number
  check: (url: string, release: () => void) => Promise<T>
  hostOf?: (url: string) => string
  /** A check longer than this makes its host slow (default: never). */
  slowMs?: number
  /** URLs a slow host keeps queued (default 20). */
  slowQueue?: number
}): CheckPool<T> {
  const slowQueue = opts.slowQueue ?? 20
  const slow = new LruCache<true>({ maxEntries: 10_000, ttlMs: SLOW_FOR_MS })
  const hosts = new Map<string, Host>()
  /** Hosts with queued URLs, in turn order. */
  const ready: string[] = []
  let running = 0
  let pending = 0
  const belowWaiters: { n: number; resolve: () => void }[] = []
  const hostOf = opts.hostOf ?? ((url: string) => URL.parse(url)?.hostname ?? '')

  const hostState = (name: string): Host => {
    const known = hosts.get(name)
    if (known) return known
    const h: Host = { active: 0, waiters: [], queue: [] }
    hosts.set(name, h)
    return h
  }
  const forget = (name: string, h: Host) => {
    if (h.active === 0 && h.waiters.length === 0 && h.queue.length === 0) hosts.delete(name)
  }

  /** A turn on `name` ends: a waiting hop takes it, else the queue may move. */
  const releaser = (name: string) => {
    let done = false
    return () => {
      if (done) return
      done = true
      const h = hosts.get(name)!
      h.active--
      const waiter = h.waiters.shift()
      if (waiter) {
        h.active++
        waiter()
      } else forget(name, h)
      pump()
    }
  }

  function pump() {
    let scanned = 0
    while (running < opts.concurrency && ready.length > 0 && scanned < ready.length) {
      const name = ready.shift()!
      const h = hostState(name)
      if (h.active >= opts.perHost) {
        ready.push(name)
        scanned++
        continue
      }
      scanned = 0
      const q = h.queue.shift()!
      if (h.queue.length > 0) ready.push(name)
      h.active++
      running++
      q.settle(releaser(name))
    }
  }

  /** The host was slow: it keeps `slowQueue` URLs queued; the rest are dropped unchecked. */
  function markSlow(name: string) {
    slow.set(name, true)
    const h = hosts.get(name)
    if (!h || h.queue.length <= slowQueue) return
    for (const q of h.queue.splice(slowQueue)) q.settle(null)
  }

  const settleBelow = () => {
    for (let i = belowWaiters.length - 1; i >= 0; i--)
      if (pending < belowWaiters[i]!.n) {
        belowWaiters[i]!.resolve()
        belowWaiters.splice(i, 1)
      }
  }

  async function submit(url: string, { urgent = false } = {}): Promise<T | null> {
    const name = hostOf(url)
    pending++
    let dispatched = false
    try {
      const release = await new Promise<(() => void) | null>((settle) => {
        const h = hostState(name)
        if (urgent) {
          // Past the queue and the global cap: the user waits for the answer.
          if (h.active < opts.perHost) {
            h.active++
            settle(releaser(name))
          } else h.waiters.push(() => settle(releaser(name)))
          return
        }
        if (h.queue.length === 0) ready.push(name)
        h.queue.push({
          url,
          settle: (r) => {
            dispatched = r !== null
            settle(r)
          },
        })
        pump()
      })
      if (!release) return null
      const began = performance.now()
      const result = await opts.check(url, release)
      if (performance.now() - began > (opts.slowMs ?? Number.POSITIVE_INFINITY)) markSlow(name)
      return result
    } finally {
      pending--
      if (dispatched) running--
      const h = hosts.get(name)
      if (h) forget(name, h)
      pump()
      settleBelow()
    }
  }

  return {
    submit,
    turn(host: string) {
      const h = hostState(host)
      if (h.active < opts.perHost) {
        h.active++
        return Promise.resolve(releaser(host))
      }
      return new Promise((resolve) => h.waiters.push(() => resolve(releaser(host))))
    },
    get pending() {
      return pending
    },
    congested(url: string) {
      const name = hostOf(url)
      return slow.get(name) === true && (hosts.get(name)?.queue.length ?? 0) >= slowQueue
    },
    below(n: number) {
      if (pending < n) return Promise.resolve()
      return new Promise((resolve) => belowWaiters.push({ n, resolve }))
    },
  }
}
