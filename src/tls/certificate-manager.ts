/**
 * Keeps certificates issued and fresh: re-checks pending or invalid CNAMEs when their
 * backoff expires, orders a certificate for each custom domain whose CNAME is valid
 * (sslStatus pending → issuing → active, or failed with the reason and a retry with
 * backoff), renews in the last third of a certificate's life after re-checking the
 * CNAME, and in tls.mode = "acme" does the same for the API host and default domains.
 * One order at a time; one timer set to the next thing due.
 */
import { type DomainState, toAsciiDomain } from '../domains'
import type { AcmeIssuer } from './acme'
import { type CertStore, renewAt, type StoredCertificate } from './cert-store'
import type { TlsDeps } from './tls'

const MAX_SLEEP_MS = 3600_000

export interface CertificateManager {
  start(): void
  stop(): void
}

export function createCertificateManager(opts: {
  deps: Pick<TlsDeps, 'config' | 'settings' | 'domains' | 'log'>
  certs: CertStore
  /** Made on first use, so a server without ACME work never contacts a CA. */
  issuer: () => AcmeIssuer
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

  const queue = new Set<string>()
  let running: string | null = null
  let wakeTimer: ReturnType<typeof setTimeout> | null = null
  let kickTimer: ReturnType<typeof setTimeout> | null = null
  let stopped = true
  let unsubscribe: (() => void) | null = null

  const valid = (c: StoredCertificate | null, t: number) => !!c && c.notAfter > t

  function kick() {
    if (stopped || kickTimer) return
    kickTimer = setTimeout(() => {
      kickTimer = null
      tick()
    }, 0)
  }

  /** Decides what is due now and when to look again. */
  function tick() {
    if (stopped) return
    const t = now()
    let wake = t + MAX_SLEEP_MS
    const later = (at: number) => (wake = Math.min(wake, at))

    for (const d of domains.customDomains()) {
      if (d.cnameNextAt !== null) {
        if (d.cnameNextAt <= t) void domains.checkCname(d.slug)
        else later(d.cnameNextAt)
      }
      planCustom(d, t, later)
    }
    for (const name of ownNames) {
      const cert = certs.get(name)
      const st = ownState.get(name)
      if (valid(cert, t) && t < renewAt(cert!)) {
        later(renewAt(cert!))
        continue
      }
      if (st && st.nextAt > t) later(st.nextAt)
      else if (name !== running) queue.add(name)
    }
    void drain()
    if (wakeTimer) clearTimeout(wakeTimer)
    wakeTimer = setTimeout(tick, Math.max(wake - t, 50))
    wakeTimer.unref?.()
  }

  function planCustom(d: DomainState, t: number, later: (at: number) => void) {
    const cert = certs.get(d.slug)
    const hasCert = valid(cert, t)
    if (d.cnameStatus !== 'valid') {
      // No orders without a valid CNAME; a certificate already served stays until it expires.
      if (!hasCert && (d.sslStatus === 'issuing' || d.sslStatus === 'active'))
        domains.setSsl(d.slug, {
          sslStatus: d.sslStatus === 'active' ? 'failed' : 'pending',
          sslError: d.sslStatus === 'active' ? 'certificate expired and the CNAME is no longer valid' : null,
          sslAttempts: d.sslAttempts,
          sslNextAt: d.sslNextAt,
        })
      else if (hasCert) later(cert!.notAfter)
      return
    }
    if (hasCert && t < renewAt(cert!)) {
      if (d.sslStatus !== 'active') domains.setSsl(d.slug, { sslStatus: 'active', sslError: null, sslAttempts: 0, sslNextAt: null })
      later(renewAt(cert!))
      return
    }
    if (d.sslNextAt !== null && d.sslNextAt > t) later(d.sslNextAt)
    else if (d.slug !== running) queue.add(d.slug)
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
    const t0 = now()
    let custom = domains.stateOf(name)
    const isOwn = ownNames.includes(name)
    if (!custom && !isOwn) return // deleted while queued
    const before = certs.get(name)
    const renewing = valid(before, t0)
    if (renewing && t0 < renewAt(before!)) return // renewed since it was queued
    if (custom) {
      if (renewing) {
        // Re-check the CNAME before each renewal: no certificates for names that left us.
        custom = await domains.checkCname(name)
        if (custom?.cnameStatus !== 'valid') return
      } else domains.setSsl(name, { sslStatus: 'issuing', sslError: custom.sslError, sslAttempts: custom.sslAttempts, sslNextAt: custom.sslNextAt })
    }
    try {
      const issued = await opts.issuer().issue(name)
      if (stopped) return
      if (!isOwn && !domains.stateOf(name)) return // deleted during the order
      certs.put(issued)
      if (custom) domains.setSsl(name, { sslStatus: 'active', sslError: null, sslAttempts: 0, sslNextAt: null })
      ownState.delete(name)
      log.info(renewing ? 'certificate renewed' : 'certificate issued', { name, notAfter: new Date(issued.notAfter).toISOString(), ms: now() - t0 })
      opts.onCertificates()
    } catch (e) {
      const reason = (e as Error).message
      const cur = custom ? domains.stateOf(name) : null
      const attempts = (custom ? (cur?.sslAttempts ?? 0) : (ownState.get(name)?.attempts ?? 0)) + 1
      const nextAt = now() + domains.backoffMs(attempts)
      if (custom) {
        if (!cur) return
        domains.setSsl(name, { sslStatus: renewing ? 'active' : 'failed', sslError: reason, sslAttempts: attempts, sslNextAt: nextAt })
      } else ownState.set(name, { attempts, nextAt, error: reason })
      log.warn('certificate order failed', { name, reason, attempt: attempts, retryAt: new Date(nextAt).toISOString() })
    }
  }

  return {
    start() {
      if (!stopped) return
      stopped = false
      unsubscribe = domains.onChange((e) => {
        if (e.type === 'deleted') {
          if (certs.remove(e.slug)) opts.onCertificates()
          return
        }
        if (e.type !== 'ssl') kick()
      })
      kick()
    },
    stop() {
      stopped = true
      unsubscribe?.()
      if (wakeTimer) clearTimeout(wakeTimer)
      if (kickTimer) clearTimeout(kickTimer)
      wakeTimer = kickTimer = null
    },
  }
}
