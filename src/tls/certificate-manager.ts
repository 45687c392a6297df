/**
 * Keeps certificates issued and fresh: re-checks pending or invalid CNAMEs when their
 * backoff expires, orders a certificate for each custom domain whose CNAME is valid
 * (sslStatus pending → issuing → active, or failed with the reason and a retry with
 * backoff), renews in the last third of a certificate's life after re-checking the
 * CNAME, and in tls.mode = "acme" does the same for the API host and default domains.
 * One order at a time; one timer set to the next thing due.
 *
 * With lease locks (PostgreSQL, several nodes on one store) an order for a name runs under
 * the lock `acme:<name>`, and only after taking it does the manager look at the store again:
 * another node may have obtained the certificate meanwhile, and then nothing is ordered
 * (CertMagic's model: one order per domain however many nodes see the trigger).
 */
import { type DomainState, toAsciiDomain } from '../domains'
import { metrics } from '../metrics'
import type { LeaseLocks } from '../store'
import type { AcmeIssuer } from './acme'
import { type CertStore, renewAt, type StoredCertificate } from './cert-store'
import type { Tls } from './tls'
import type { TlsStorePort } from './tls.store'

const acmeOrders = metrics.counter('shortlink_acme_orders_total', 'ACME certificate orders by result (issued, renewed, failed).', ['result'])

const MAX_SLEEP_MS = 3600_000
/** After the store could not be read while planning, look again this much later. */
const PLAN_RETRY_MS = 10_000

/** The lease lock a node holds while it orders a certificate for `name`. */
export const acmeLockKey = (name: string) => `acme:${name}`

export interface CertificateManager {
  start(): void
  stop(): void
  /**
   * Domains changed on another node and this node has reloaded them (a cluster's `domains`
   * invalidation): plan again, as after a change made here. Without it a node learns of a
   * domain added elsewhere only at its next timer (up to an hour), so when the node that
   * took the change stops before ordering, nobody orders nor re-checks the CNAME meanwhile.
   * The lease lock keeps it to one order however many nodes wake.
   */
  wake(): void
}

export function createCertificateManager(opts: {
  deps: Tls['deps']
  certs: CertStore<TlsStorePort>
  /** Made on first use, so a server without ACME work never contacts a CA. */
  issuer: () => AcmeIssuer
  /** Shared by the nodes of a cluster: one order per name at a time. None on one node. */
  locks?: LeaseLocks | null
  /** A certificate was added, renewed or dropped. */
  onCertificates: () => void
  now?: () => number
}): CertificateManager {
  const { config, settings, domains, log } = opts.deps
  const { certs } = opts
  const now = opts.now ?? Date.now
  const acmeMode = config.tls.mode === 'acme'
  // Our own names in acme mode; names no public CA would certify (localhost) are skipped.
  const ownNames = acmeMode
    ? [...new Set([settings.apiHost, ...settings.defaultDomains])].filter((n) => toAsciiDomain(n) !== null && !n.endsWith('.localhost'))
    : []
  const ownState = new Map<string, { attempts: number; nextAt: number; error: string | null }>()
  /** Names whose lease lock could not be taken (held too long elsewhere, store unreachable), until when to leave them. */
  const lockRetryAt = new Map<string, number>()
  const locks = opts.locks ?? null
  let stopping = new AbortController()

  const queue = new Set<string>()
  let running: string | null = null
  let wakeTimer: ReturnType<typeof setTimeout> | null = null
  let kickTimer: ReturnType<typeof setTimeout> | null = null
  let stopped = true
  let unsubscribe: (() => void) | null = null
  let planning = false
  let planAgain = false

  const valid = (c: StoredCertificate | null, t: number) => !!c && c.notAfter > t

  function kick() {
    if (stopped || kickTimer) return
    kickTimer = setTimeout(() => {
      kickTimer = null
      tick()
    }, 0)
  }

  /** Decides what is due now and when to look again; one planning at a time (the store may answer with promises). */
  function tick() {
    if (stopped) return
    if (planning) {
      planAgain = true
      return
    }
    planning = true
    const t = now()
    let wake = t + MAX_SLEEP_MS
    const later = (at: number) => (wake = Math.min(wake, at))
    plan(t, later)
      .catch((e) => {
        later(now() + PLAN_RETRY_MS)
        log.error('certificate planning failed', { error: String((e as Error)?.message ?? e) })
      })
      .finally(() => {
        planning = false
        if (stopped) return
        if (wakeTimer) clearTimeout(wakeTimer)
        wakeTimer = setTimeout(tick, Math.max(wake - t, 50))
        wakeTimer.unref?.()
        if (planAgain) {
          planAgain = false
          tick()
        }
      })
  }

  async function plan(t: number, later: (at: number) => void) {
    // One read of the store per planning, not one per name.
    const stored = new Map((await certs.all()).map((c) => [c.name, c]))
    for (const [name, at] of lockRetryAt) if (at <= t) lockRetryAt.delete(name)
    for (const d of domains.customDomains()) {
      if (d.cnameNextAt !== null) {
        if (d.cnameNextAt <= t)
          void Promise.resolve(domains.checkCname(d.slug)).catch((e) => log.warn('cname check failed', { name: d.slug, error: String(e) }))
        else later(d.cnameNextAt)
      }
      await planCustom(d, stored.get(d.slug) ?? null, t, later)
    }
    for (const name of ownNames) {
      const cert = stored.get(name) ?? null
      const st = ownState.get(name)
      if (valid(cert, t) && t < renewAt(cert!)) {
        later(renewAt(cert!))
        continue
      }
      if (st && st.nextAt > t) later(st.nextAt)
      else enqueue(name, later)
    }
    void drain()
  }

  function enqueue(name: string, later: (at: number) => void) {
    const heldOff = lockRetryAt.get(name)
    if (heldOff !== undefined) later(heldOff)
    else if (name !== running) queue.add(name)
  }

  async function planCustom(d: DomainState, cert: StoredCertificate | null, t: number, later: (at: number) => void) {
    const hasCert = valid(cert, t)
    if (d.cnameStatus !== 'valid') {
      // No orders without a valid CNAME; a certificate already served stays until it expires.
      if (!hasCert && (d.sslStatus === 'issuing' || d.sslStatus === 'active'))
        await domains.setSsl(d.slug, {
          sslStatus: d.sslStatus === 'active' ? 'failed' : 'pending',
          sslError: d.sslStatus === 'active' ? 'certificate expired and the CNAME is no longer valid' : null,
          sslAttempts: d.sslAttempts,
          sslNextAt: d.sslNextAt,
        })
      else if (hasCert) later(cert!.notAfter)
      return
    }
    if (hasCert && t < renewAt(cert!)) {
      if (d.sslStatus !== 'active') await domains.setSsl(d.slug, { sslStatus: 'active', sslError: null, sslAttempts: 0, sslNextAt: null })
      later(renewAt(cert!))
      return
    }
    if (d.sslNextAt !== null && d.sslNextAt > t) later(d.sslNextAt)
    else enqueue(d.slug, later)
  }

  async function drain() {
    if (running !== null) return
    // Re-plan only after work was done: an unconditional kick made an idle server spin
    // tick → drain → kick on setTimeout(0) forever.
    let ran = false
    for (const name of queue) {
      if (stopped) return
      queue.delete(name)
      running = name
      ran = true
      try {
        await order(name)
      } catch (e) {
        log.error('certificate job failed', { name, error: String((e as Error)?.stack ?? e) })
      } finally {
        running = null
      }
    }
    if (ran) kick()
  }

  async function order(name: string) {
    if (!domains.stateOf(name) && !ownNames.includes(name)) return // deleted while queued
    if (!locks) return orderNow(name, null)
    let taken = false
    try {
      await locks.withLock(
        acmeLockKey(name),
        (lock) => {
          taken = true
          return orderNow(name, lock.lost)
        },
        { signal: stopping.signal },
      )
    } catch (e) {
      if (taken || stopped) throw e
      // Not taken: another node holds it for too long, or the store is unreachable. Not an
      // order that failed (the domain's state stays), just a later try.
      const at = now() + domains.backoffMs(1)
      lockRetryAt.set(name, at)
      log.warn('certificate lock not taken', { name, reason: String((e as Error)?.message ?? e), retryAt: new Date(at).toISOString() })
    }
  }

  /** Orders `name` unless the store has a fresh certificate (read now: with locks, after taking the lock). */
  async function orderNow(name: string, lost: AbortSignal | null) {
    const t0 = now()
    let custom = domains.stateOf(name)
    const isOwn = ownNames.includes(name)
    if (!custom && !isOwn) return // deleted while queued
    // An order failed since this was queued (on a shared store, another node's): its retry time holds.
    if (custom && custom.sslNextAt !== null && custom.sslNextAt > t0) return
    const before = await certs.get(name)
    const renewing = valid(before, t0)
    if (renewing && t0 < renewAt(before!)) {
      // Renewed since it was queued, here or (on a shared store) by another node: serve it.
      if (custom && custom.sslStatus !== 'active') await domains.setSsl(name, { sslStatus: 'active', sslError: null, sslAttempts: 0, sslNextAt: null })
      ownState.delete(name)
      opts.onCertificates()
      return
    }
    if (custom) {
      if (renewing) {
        // Re-check the CNAME before each renewal: no certificates for names that left us.
        custom = await domains.checkCname(name)
        if (custom?.cnameStatus !== 'valid') return
      } else await domains.setSsl(name, { sslStatus: 'issuing', sslError: custom.sslError, sslAttempts: custom.sslAttempts, sslNextAt: custom.sslNextAt })
    }
    try {
      // The lease must still be ours when the CA is asked (the lock's own caveat).
      lost?.throwIfAborted()
      const issued = await opts.issuer().issue(name)
      if (stopped) return
      if (!isOwn && !domains.stateOf(name)) return // deleted during the order
      await certs.put(issued)
      if (custom) await domains.setSsl(name, { sslStatus: 'active', sslError: null, sslAttempts: 0, sslNextAt: null })
      ownState.delete(name)
      acmeOrders.labels(renewing ? 'renewed' : 'issued').inc()
      log.info(renewing ? 'certificate renewed' : 'certificate issued', { name, notAfter: new Date(issued.notAfter).toISOString(), ms: now() - t0 })
      opts.onCertificates()
    } catch (e) {
      const reason = (e as Error).message
      acmeOrders.labels('failed').inc()
      const cur = custom ? domains.stateOf(name) : null
      const attempts = (custom ? (cur?.sslAttempts ?? 0) : (ownState.get(name)?.attempts ?? 0)) + 1
      const nextAt = now() + domains.backoffMs(attempts)
      if (custom) {
        if (!cur) return
        await domains.setSsl(name, { sslStatus: renewing ? 'active' : 'failed', sslError: reason, sslAttempts: attempts, sslNextAt: nextAt })
      } else ownState.set(name, { attempts, nextAt, error: reason })
      log.warn('certificate order failed', { name, reason, attempt: attempts, retryAt: new Date(nextAt).toISOString() })
    }
  }

  return {
    start() {
      if (!stopped) return
      stopped = false
      stopping = new AbortController()
      unsubscribe = domains.onChange((e) => {
        if (e.type === 'deleted') {
          const removed = certs.remove(e.slug)
          if (!(removed instanceof Promise)) {
            if (removed) opts.onCertificates()
          } else
            removed.then(
              (r) => r && opts.onCertificates(),
              (err) => log.warn('certificate of a deleted domain not removed', { name: e.slug, error: String((err as Error)?.message ?? err) }),
            )
          return
        }
        if (e.type !== 'ssl') kick()
      })
      kick()
    },
    wake: () => kick(),
    stop() {
      stopped = true
      stopping.abort(new Error('certificate manager stopped'))
      unsubscribe?.()
      if (wakeTimer) clearTimeout(wakeTimer)
      if (kickTimer) clearTimeout(kickTimer)
      wakeTimer = kickTimer = null
    },
  }
}
