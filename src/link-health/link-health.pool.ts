/**
 * Where checks wait for their turn: at most `perHost` requests at a time to one host (every
 * hop of a check takes its host's turn) and at most `concurrency` checks at once. URLs wait
 * in one queue per host, and hosts take turns, so a host with thousands of URLs (or one that
 * hangs until every deadline) holds back only its own URLs. Urgent checks (a user asked)
 * skip the queues and the global cap, never the per-host limit.
 */

export interface CheckPool<T> {
  /** Runs `check(url, release)` when the URL's host and the pool have room; `release` frees the first hop's turn. */
  submit(url: string, opts?: { urgent?: boolean }): Promise<T>
  /** A hop's turn on a host (waits while the host has `perHost` requests in flight). */
  turn(host: string): Promise<() => void>
  /** Checks queued or running. */
  readonly pending: number
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
  resolve: (release: () => void) => void
}

export function createCheckPool<T>(opts: {
  concurrency: number
  perHost: number
  check: (url: string, release: () => void) => Promise<T>
  hostOf?: (url: string) => string
}): CheckPool<T> {
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
      q.resolve(releaser(name))
    }
  }

  const settleBelow = () => {
    for (let i = belowWaiters.length - 1; i >= 0; i--)
      if (pending < belowWaiters[i]!.n) {
        belowWaiters[i]!.resolve()
        belowWaiters.splice(i, 1)
      }
  }

  async function submit(url: string, { urgent = false } = {}): Promise<T> {
    const name = hostOf(url)
    pending++
    let counted = false
    try {
      const release = await new Promise<() => void>((resolve) => {
        const h = hostState(name)
        if (urgent) {
          // Past the queue and the global cap: the user waits for the answer.
          if (h.active < opts.perHost) {
            h.active++
            resolve(releaser(name))
          } else h.waiters.push(() => resolve(releaser(name)))
          return
        }
        counted = true
        if (h.queue.length === 0) ready.push(name)
        h.queue.push({ url, resolve })
        pump()
      })
      return await opts.check(url, release)
    } finally {
      pending--
      if (counted) running--
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
    below(n: number) {
      if (pending < n) return Promise.resolve()
      return new Promise((resolve) => belowWaiters.push({ n, resolve }))
    },
  }
}
