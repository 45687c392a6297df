/**
 * The HTTPS listener with one certificate per host name (SNI), fed by the certificate
 * manager. Bun.serve takes its certificates only at start (`server.reload` ignores
 * `tls`) and has no SNI callback, so a new or renewed certificate starts a NEW listener
 * on the same port (reusePort) with the full list and then stops the old one, which
 * finishes its in-flight requests. Swaps are debounced so a burst of certificates
 * costs one swap. Closing a listening socket resets the connections still in its accept
 * queue; closing the old one on the next turn of the event loop, after it accepted what
 * queued up while the new one was being built, measured 0.6 resets per swap under load
 * instead of 1.6, and none at all when the kernel migrates them to the new socket
 * (`sysctl net.ipv4.tcp_migrate_req=1`, Linux 5.14+). Longer overlaps would serve the
 * old certificate list to some new connections for longer. The canonical certificate is first: clients without SNI, or naming a
 * host we have no certificate for, get it.
 *
 * The listener keeps no per-host cache: each swap reads every certificate from the store
 * again, so "no certificate for this host" is never remembered either. On a shared store
 * (PostgreSQL) another node's new certificate arrives through `invalidate(host)` (the
 * `certificates` invalidation channel) and costs one debounced swap; the first listener
 * starts with the configured certificate and swaps in the stored ones once read (`ready`).
 */

import { readFileSync } from 'node:fs'
import type { ErrorLike, Server, TLSOptions } from 'bun'
import type { StoredCertificate } from './cert-store'
import { type CertificateManager, createCertificateManager } from './certificate-manager'
import { listenExclusively } from './exclusive-port'
import type { CertPair } from './self-signed'
import type { Tls } from './tls'

export interface HttpsListenerOptions {
  /** The certificate of tls.mode (self-signed or files; in acme mode the self-signed one until ACME issued). */
  baseCert: CertPair
  maxRequestBodySize: number
  fetch(request: Request, server: Server<unknown>): Response | Promise<Response>
  error(e: ErrorLike): Response | Promise<Response>
  /** Delay that batches certificate changes into one swap. */
  swapDebounceMs?: number
}

export interface HttpsListener {
  readonly port: number
  /** The listener currently accepting connections. */
  readonly server: Server<unknown>
  /** Host names with their own certificate entry, canonical first. */
  serverNames(): string[]
  /** Re-read the certificates and swap listeners (debounced). */
  refresh(): void
  /** `host`'s certificate changed in the store (another node issued, renewed or removed it): re-read and swap (debounced). */
  invalidate(host: string): void
  /** Every certificate may have changed (the invalidation channel was flushed): re-read and swap (debounced). */
  clear(): void
  /** Settles once the stored certificates are served: at once on a synchronous store (SQLite). */
  readonly ready: Promise<void>
  readonly manager: CertificateManager
  stop(closeActiveConnections?: boolean): Promise<void>
}

/** After a failed read of the certificates, try again this much later. */
const READ_RETRY_MS = 5_000

export function startHttpsListener(parts: Tls, opts: HttpsListenerOptions): HttpsListener {
  const { config, settings, domains, log } = parts.deps
  const { certs } = parts
  const acmeMode = config.tls.mode === 'acme'
  const ownNames = new Set([settings.apiHost, ...settings.defaultDomains])

  function sniList(all: StoredCertificate[]): TLSOptions[] {
    const t = Date.now()
    // In acme mode our own names use their ACME certificates; otherwise the configured
    // certificate covers them and stored ones are only for custom domains.
    const usable = all.filter((c) => c.notAfter > t && (domains.stateOf(c.name) !== null || (acmeMode && ownNames.has(c.name))))
    const canonical = (acmeMode && usable.find((c) => c.name === settings.apiHost)) || opts.baseCert
    return [
      { serverName: settings.apiHost, cert: canonical.cert, key: canonical.key },
      ...usable.filter((c) => c.name !== settings.apiHost).map((c) => ({ serverName: c.name, cert: c.cert, key: c.key })),
    ]
  }

  const stored = certs.all()
  // A store that answers later (PostgreSQL): start with the configured certificate alone, swap at once when read.
  let tls = sniList(stored instanceof Promise ? [] : stored)
  const listen = (port: number) =>
    Bun.serve({
      port,
      hostname: config.server.hostname,
      reusePort: true,
      tls,
      maxRequestBodySize: opts.maxRequestBodySize,
      fetch: opts.fetch,
      error: opts.error,
    })
  // The first listener claims the port for this process alone (exclusive-port.ts); swaps then join it.
  let current: Server<unknown> = listenExclusively('server.httpsPort', config.server.hostname, config.server.httpsPort, listen)
  const port = current.port!

  let swapTimer: ReturnType<typeof setTimeout> | null = null
  let stopped = false
  /** A read of the store is under way (the first one too): a change heard meanwhile swaps again after it. */
  let swapping = false
  let swapAgain = false
  const retiring = new Set<Server<unknown>>()
  const RETIRE_AFTER_MS = 1
  let hinted = false
  const scheduleSwap = (ms = opts.swapDebounceMs ?? 200) => {
    if (stopped) return
    if (swapping) swapAgain = true
    else if (!swapTimer) swapTimer = setTimeout(swap, ms)
  }
  const swapped = () => {
    swapping = false
    if (swapAgain) {
      swapAgain = false
      scheduleSwap()
    }
  }
  const notRead = (e: unknown) => {
    log.error('certificates not read; keeping the current ones', { error: String((e as Error)?.message ?? e) })
    swapAgain = false
    if (!stopped && !swapTimer) swapTimer = setTimeout(swap, READ_RETRY_MS)
  }
  /** One swap at a time: a change heard while the store is read swaps again after. */
  function swap() {
    swapTimer = null
    if (stopped) return
    const all = certs.all()
    if (!(all instanceof Promise)) return swapTo(all)
    swapping = true
    all.then(swapTo, notRead).finally(swapped)
  }
  function swapTo(all: StoredCertificate[]) {
    if (stopped) return
    const t0 = performance.now()
    const previous = tls
    const wanted = sniList(all)
    // Nothing changed (a flush after a reconnect, another node's news of a certificate this node
    // already serves): no new listener, since a swap may reset connections being accepted.
    if (sameCertificates(previous, wanted)) return
    tls = wanted
    let next: Server<unknown>
    try {
      next = listen(port)
    } catch (e) {
      // A certificate Bun refuses must not take the site down: keep the old listener.
      tls = previous
      log.error('https listener swap failed; keeping the current certificates', { error: String((e as Error)?.message ?? e) })
      return
    }
    const old = current
    current = next
    retiring.add(old)
    setTimeout(() => {
      retiring.delete(old)
      void old.stop(false)
    }, RETIRE_AFTER_MS)
    log.info('https certificates reloaded', { names: tls.length, ms: Math.round((performance.now() - t0) * 10) / 10 })
    if (!hinted && readMigrateReq() === '0') {
      hinted = true
      log.info('hint: sysctl net.ipv4.tcp_migrate_req=1 keeps the connections being accepted during certificate swaps')
    }
  }

  const manager = createCertificateManager({
    deps: parts.deps,
    certs,
    issuer: parts.issuer,
    locks: parts.locks,
    onCertificates: () => scheduleSwap(),
  })
  manager.start()
  // The first read counts as a swap under way.
  swapping = stored instanceof Promise
  const ready = stored instanceof Promise ? stored.then(swapTo, notRead).finally(swapped) : Promise.resolve()
  // A domain that arrives with a certificate already stored (on a shared store another node
  // issued it, and its `certificates` news may have come first) is served by a swap.
  const unsubscribe = domains.onChange((e) => {
    if (e.type !== 'created') return
    const stored = certs.get(e.slug)
    const serve = (c: StoredCertificate | null) => c && c.notAfter > Date.now() && scheduleSwap()
    if (stored instanceof Promise) stored.then(serve, () => {})
    else serve(stored)
  })

  return {
    port,
    get server() {
      return current
    },
    serverNames: () => tls.map((e) => e.serverName!),
    refresh: () => scheduleSwap(),
    invalidate: (_host) => scheduleSwap(),
    clear: () => scheduleSwap(),
    ready,
    manager,
    async stop(closeActiveConnections = false) {
      stopped = true
      unsubscribe()
      manager.stop()
      if (swapTimer) clearTimeout(swapTimer)
      await Promise.all([current, ...retiring].map((s) => s.stop(closeActiveConnections)))
    },
  }
}

/** True when two SNI lists serve the same certificates for the same names, in the same order. */
export function sameCertificates(a: TLSOptions[], b: TLSOptions[]): boolean {
  return a.length === b.length && a.every((x, i) => x.serverName === b[i]!.serverName && x.cert === b[i]!.cert && x.key === b[i]!.key)
}

function readMigrateReq(): string | null {
  try {
    return readFileSync('/proc/sys/net/ipv4/tcp_migrate_req', 'utf8').trim()
  } catch {
    return null
  }
}
