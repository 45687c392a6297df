/**
 * Link health (contract: "Link health"): the checks (scheduled on one node, on demand, and a
 * first check of a URL no one checked yet when a link starts using it), what the record shows,
 * the redirect's question "which of this link's URLs are broken" (asked once, when a link
 * enters the redirect cache), and the hooks a change of a link's health calls.
 *
 * Nothing here waits on a destination while a redirect or an API request waits: checks run
 * in a pool (at most 2 requests at a time per host, a deadline per check, no body read), and
 * their results are written in batches.
 */
import type { Settings } from '../config'
import { type HealthStatus, hasHealth, healthUrlsOf, type LinkHealth, type LinkRecord, type LinkRow, unknownHealth } from '../links'
import { metrics } from '../metrics'
import type { AddressRules, Logger } from '../shared'
import { checkUrl } from './link-health.check'
import { createCheckPool } from './link-health.pool'
import { mappedLink, pause, runRounds } from './link-health.rounds'
import { type CheckResult, type LinkRef, linkHealthOf, type Outcome, type Settled, urlKey } from './link-health.rules'
import type { HealthEventsOf, HealthLinkRow, HealthStorePort } from './link-health.store'

export interface LinkHealthDeps {
  store: HealthStorePort
  settings: Pick<Settings, 'baseUrl'>
  /** `[health] every` in ms; 0: no scheduled checks. */
  everyMs: number
  timeoutMs: number
  allowPrivateNetworks: boolean
  log: Logger
  now?: () => number
  /**
   * Runs the scheduled checks while this node should (PostgreSQL: while it holds the lease,
   * `leaseLeadership`); absent: always (one node).
   */
  lead?: (work: (signal: AbortSignal) => Promise<void>, stop: AbortSignal) => Promise<void>
  /** Checks running at once on this node (each host still gets at most 2 requests at a time). */
  concurrency?: number
  /**
   * The `link.broken` / `link.recovered` events of changes (records built by the links service):
   * the store appends them in the transaction that writes the change, so none is lost to a crash.
   */
  eventsOf?: HealthEventsOf
  /** A link's record as the API shows it now (the change hook hands it on); null when it is gone. */
  recordOf?: (link: LinkRef) => Promise<LinkRecord | null>
  /** Tests: the DNS lookup. */
  resolveHost?: AddressRules['resolveHost']
  /** Rounds: links per page, queue bound, share of the interval a walk is spread over. */
  rounds?: { pageSize?: number; maxQueued?: number; spread?: number }
  /** URLs a slow host keeps queued (default 20). */
  slowHostQueue?: number
}

/** A change hook: a link's record after a change of its health, and the change. */
export type OnHealthChange = (link: LinkRecord, from: HealthStatus, to: HealthStatus) => void | Promise<void>

const checksDone = metrics.counter('shortlink_link_health_checks_total', 'Destination checks made by this node, by result (pass, fail, refused).', ['result'])
const checksBy = { pass: checksDone.labels('pass'), fail: checksDone.labels('fail'), refused: checksDone.labels('refused') }
const checksPending = metrics.gauge('shortlink_link_health_checks_pending', 'Destination checks queued or running on this node.')
const changes = metrics.counter('shortlink_link_health_changes_total', "Changes of a link's health written by this node, by the status it entered.", ['to'])
const changesTo = { ok: changes.labels('ok'), broken: changes.labels('broken'), unknown: changes.labels('unknown') }
const checking = metrics.gauge(
  'shortlink_link_health_scheduled',
  '1 while this node runs the scheduled destination checks (the lease holder of a cluster), else 0.',
)

/** Requests per host at a time (contract). */
const PER_HOST = 2
/** Results written per batch, and the longest a result waits for its batch. */
const BATCH = 200
const BATCH_MS = 250

type Sync<T> = T | Promise<T>
function then<T, R>(value: Sync<T>, f: (v: T) => R): Sync<R> {
  return value instanceof Promise ? value.then(f) : f(value)
}

export function createLinkHealth(deps: LinkHealthDeps) {
  const { store, log } = deps
  const clock = deps.now ?? Date.now
  const userAgent = `shortlink-health/1 (+${deps.settings.baseUrl})`
  const stopping = new AbortController()
  const invalidateListeners: ((link: LinkRef) => void)[] = []
  const changeListeners: OnHealthChange[] = []

  // `at`: when the check began (its first request), which is what `checkedAt` shows.
  const pool = createCheckPool<{ outcome: Outcome; at: number }>({
    concurrency: deps.concurrency ?? 64,
    perHost: PER_HOST,
    // A host that takes half the deadline to answer is slow.
    slowMs: deps.timeoutMs / 2,
    slowQueue: deps.slowHostQueue,
    check: async (url, release) => {
      const at = clock()
      const outcome = await checkUrl(url, {
        timeoutMs: deps.timeoutMs,
        allowPrivateNetworks: deps.allowPrivateNetworks,
        userAgent,
        turn: (host) => pool.turn(host),
        firstTurnHeld: release,
        signal: stopping.signal,
        resolveHost: deps.resolveHost,
      })
      checksBy[outcome.result].inc()
      return { outcome, at }
    },
  })

  /** What settling did, told to whoever listens: caches to drop, then the once-per-change hook. */
  function settled(s: Settled) {
    const dropped = new Set<string>()
    for (const link of [...s.touched, ...s.transitions.map((t) => t.link)]) {
      const k = `${link.domain}/${link.key}`
      if (dropped.has(k)) continue
      dropped.add(k)
      for (const fn of invalidateListeners) fn(link)
    }
    for (const t of s.transitions) {
      changesTo[t.to].inc()
      log.info('link health changed', { linkId: t.link.id, from: t.from, to: t.to })
      if (changeListeners.length === 0 || !deps.recordOf) continue
      deps
        .recordOf(t.link)
        .then(async (record) => {
          if (record) for (const fn of changeListeners) await fn(record, t.from, t.to)
        })
        .catch((e) => log.error('link health change hook failed', { linkId: t.link.id, error: String(e) }))
    }
  }

  // Results are written in batches, one batch at a time; `record` settles once its batch is written.
  let batch: { result: CheckResult; done: () => void; failed: (e: unknown) => void }[] = []
  let batchTimer: ReturnType<typeof setTimeout> | undefined
  let writing: Promise<void> = Promise.resolve()
  function writeBatch() {
    clearTimeout(batchTimer)
    batchTimer = undefined
    const taken = batch
    batch = []
    if (taken.length === 0) return writing
    writing = writing.then(async () => {
      try {
        settled(
          await store.recordResults(
            taken.map((t) => t.result),
            clock(),
            deps.eventsOf,
          ),
        )
        for (const t of taken) t.done()
      } catch (e) {
        log.warn('link health: could not record check results', { count: taken.length, error: String(e) })
        for (const t of taken) t.failed(e)
      }
    })
    return writing
  }
  /** `now`: someone waits for it (a check on demand): its batch is written at once. */
  function record(result: CheckResult, now: boolean): Promise<void> {
    return new Promise((done, failed) => {
      batch.push({ result, done, failed })
      if (now || batch.length >= BATCH) void writeBatch()
      else batchTimer ??= setTimeout(writeBatch, BATCH_MS)
    })
  }

  /**
   * Checks under way by URL key: a URL is never checked twice at once, whoever asks. A check on
   * demand does not take the answer of a scheduled check already under way, though: that one
   * began before the user asked (maybe before they fixed the destination), so the check on
   * demand waits for it to end and then asks the URL itself.
   */
  const inflight = new Map<string, { done: Promise<void>; urgent: boolean }>()
  function check(url: string, key: string, urgent = false): Promise<void> {
    const running = inflight.get(key)
    if (running && (running.urgent || !urgent)) return running.done
    if (running) return running.done.then(() => check(url, key, true))
    const done = pool
      .submit(url, { urgent })
      // Dropped unchecked (its host is slow), or stopped: nothing to record.
      .then((done) => (done === null || stopping.signal.aborted ? undefined : record({ url, key, outcome: done.outcome, at: done.at }, urgent)))
      .catch((e) => log.warn('link health: check failed', { error: String(e) }))
      .finally(() => inflight.delete(key))
    inflight.set(key, { done, urgent })
    return done
  }

  /** The record's `health` for these rows (synchronous over SQLite); null for types without health. */
  function healthOf(rows: LinkRow[]): Sync<Map<number, LinkHealth | null>> {
    const withHealth = rows.filter((r) => hasHealth(r.link_type))
    const out = new Map<number, LinkHealth | null>(rows.filter((r) => !hasHealth(r.link_type)).map((r) => [r.seq, null]))
    if (withHealth.length === 0) return out
    const urls = new Map(withHealth.map((r) => [r.seq, healthUrlsOf(r)]))
    const keys = [...new Set([...urls.values()].flat().map(urlKey))]
    return then(
      store.recordRows(
        keys,
        withHealth.map((r) => r.seq),
      ),
      (rows) => {
        for (const r of withHealth) out.set(r.seq, linkHealthOf(urls.get(r.seq)!, rows.urls, rows.links.get(r.seq), r.created_at))
        return out
      },
    )
  }

  /** Which of the link's URLs are broken, when it has a fallback for them; else null (no lookup). */
  function brokenUrlsOf(row: LinkRow, fallback: string | null): Sync<ReadonlySet<string> | null> {
    if (!fallback) return null
    const urls = healthUrlsOf(row)
    if (urls.length === 0) return null
    return then(store.brokenAmong(urls.map(urlKey)), (broken) => (broken.length ? new Set(broken) : null))
  }

  /** Records the link's URLs as they are now and settles it; then checks its never-checked URLs. */
  async function refresh(row: HealthLinkRow, checkNew: boolean): Promise<void> {
    const mapped = mappedLink(row)
    settled(await store.mapLinks([mapped], clock(), deps.eventsOf))
    if (!checkNew) return
    const rows = await store.urlRows(mapped.urls.map((u) => u.key))
    for (const u of mapped.urls) if (rows.get(u.key)?.checked_at == null) void check(u.url, u.key)
  }

  let rounds: Promise<void> | null = null
  let stopCollecting: (() => void) | null = null

  return {
    healthOf,
    brokenUrlsOf,

    /**
     * A link was written (this node's links service tells): its URLs are recorded and its
     * status settled; a deleted or expired link is forgotten. URLs nobody checked yet are
     * checked now, once this node checks at all (`start`, `[health] every` not "0"), so a new
     * link shows its health in seconds rather than after the next round.
     */
    linkChanged(id: string): void {
      void (async () => {
        const row = await store.linkById(id)
        if (!row || !hasHealth(row.link_type)) return
        const gone = row.deleted_at !== null || (row.expires_at !== null && row.expires_at <= clock())
        if (gone) await store.forget([row.seq])
        else await refresh(row, rounds !== null && !stopping.signal.aborted)
      })().catch((e) => log.warn('link health: could not follow a link change', { linkId: id, error: String(e) }))
    },

    /**
     * Checks the link's URLs now (`POST /links/{id}/health`; the caller's right to the link is
     * checked before) and answers its health. A URL whose check is already under way is not
     * asked twice. Answers within twice the check deadline, whatever the destinations do;
     * checks still running then are recorded when they end.
     */
    async checkNow(row: LinkRow): Promise<LinkHealth | null> {
      if (!hasHealth(row.link_type)) return null
      await refresh(row, false)
      const checks = mappedLink(row).urls.map((u) => check(u.url, u.key, true))
      const limit = new AbortController()
      await Promise.race([Promise.all(checks), pause(2 * deps.timeoutMs, limit.signal)])
      limit.abort()
      return (await healthOf([row])).get(row.seq) ?? unknownHealth(row)
    },

    /** Starts the scheduled checks (when `[health] every` is not "0"). */
    start(): void {
      if (deps.everyMs <= 0 || rounds) return
      stopCollecting = metrics.onCollect(() => checksPending.set(pool.pending))
      const work = async (signal: AbortSignal) => {
        checking.set(1)
        try {
          await runRounds(
            {
              store,
              everyMs: deps.everyMs,
              now: clock,
              log,
              check: (url, key) => {
                // A slow or hanging host's URLs beyond a few wait for a later round (the walk starts elsewhere each round),
                // instead of filling the queue every host's URLs go through.
                if (!pool.congested(url)) void check(url, key)
              },
              queueBelow: (n) => pool.below(n),
              onSettled: settled,
              eventsOf: deps.eventsOf,
              ...deps.rounds,
            },
            signal,
          )
        } finally {
          checking.set(0)
        }
      }
      rounds = (deps.lead ? deps.lead(work, stopping.signal) : work(stopping.signal)).catch((e) =>
        log.error('link health: the scheduled checks stopped', { error: String(e) }),
      )
    },

    /** Stops checking: running checks end at once and are not recorded; written results stay. */
    async stop(): Promise<void> {
      stopping.abort()
      stopCollecting?.()
      await rounds
      await Promise.allSettled([...inflight.values()].map((c) => c.done))
      await writeBatch()
    },

    /** Called with each link whose cached redirect must go (this node; other nodes hear the store's announcement). */
    onInvalidate(fn: (link: LinkRef) => void): void {
      invalidateListeners.push(fn)
    },

    /**
     * Called once per change of a link's status, on the node that wrote it, after the write
     * (tests). The webhook events are not sent from here: the store appends them in the
     * write's transaction (`eventsOf`).
     */
    onHealthChange(fn: OnHealthChange): void {
      changeListeners.push(fn)
    },

    /** Checks queued or running on this node (for tests and metrics). */
    pending: () => pool.pending,
  }
}
export type LinkHealthService = ReturnType<typeof createLinkHealth>
