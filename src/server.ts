/**
 * Starts the HTTPS listener (API under baseUrl, short links on every other path and
 * host) and the plain-HTTP listener (ACME HTTP-01 challenges, 301 to https), and
 * drains on SIGTERM.
 */
import type { Server } from 'bun'
import { createApiApp } from './app'
import type { Deps } from './deps'
import { contentResponse, type StoredContent } from './files'
import { httpRequests, redirectDuration } from './metrics'
import { startOperations } from './operations'
import { createRedirectHandler, renderHostedPage } from './redirect'
import {
  AppError,
  createClientIpResolver,
  createGcPacer,
  diskFullLogOf,
  errorResponse,
  isDiskFull,
  isValidHostHeader,
  orStoreUnavailable,
  withHsts,
} from './shared'
import { FLUSH } from './store'
import { asListenError, type CertPair, type HttpsListener, startHttpsListener } from './tls'

export interface RunningServer {
  https: HttpsListener
  http: Server<unknown>
  stop(): Promise<void>
}

// Kept children: counting a redirect is an array increment, no label lookup.
const redirectRequests = httpRequests.labels('redirect')
const dashboardRequests = httpRequests.labels('dashboard')
const failedRequests = httpRequests.labels('error')

/** A short-link answer that came as a promise: timed and counted when it settles. */
function timedRedirect(res: Response, started: number): Response {
  redirectDuration.observe((performance.now() - started) / 1000)
  redirectRequests.inc(res.status)
  return res
}

export function startServer(deps: Deps, cert: CertPair): RunningServer {
  const { config, settings, log } = deps
  const api = createApiApp(deps)
  // Holds memory down under load (see src/shared/gc-pacer.ts).
  const gc = createGcPacer()
  const clientIpOf = createClientIpResolver(config.server.trustProxy)
  const redirects = createRedirectHandler({
    settings,
    findLiveRow: deps.links.findLiveRow,
    domainOf: (host) => deps.domains.lookup(host),
    storedClicks: deps.links.storedClicks,
    recorder: deps.recorder,
    visitOrdinal: deps.visitOrdinal,
    geo: deps.geo,
    passwords: deps.passwords,
    renderHosted: (row, os) => renderHostedPage(deps, row, os),
    brokenUrlsOf: deps.linkHealth.brokenUrlsOf,
    serveFile: (request, fileId) => {
      const serve = (opened: StoredContent | null) => (opened ? contentResponse(request, opened, { cacheControl: 'private, no-cache' }) : null)
      // At once over SQLite; over PostgreSQL the file's row comes as a promise.
      const opened = deps.files.open(fileId)
      return opened instanceof Promise ? opened.then(serve) : serve(opened)
    },
  })
  deps.links.onChange((c) => redirects.invalidate(c.domain, c.key))
  // A link's health changed here (other nodes hear the store's announcement on 'links').
  deps.linkHealth.onInvalidate((l) => redirects.invalidate(l.domain, l.key))
  // Domain changes are rare; dropping the whole link cache keeps fallbacks and deletions exact.
  deps.domains.onChange(() => redirects.clearCache())
  // Writes through other nodes (PostgreSQL): link keys are `<domain>/<key>`; FLUSH forgets everything.
  deps.invalidations.on('links', (k) => {
    const slash = k.indexOf('/')
    if (k === FLUSH || slash < 0) redirects.clearCache()
    else redirects.invalidate(k.slice(0, slash), k.slice(slash + 1))
  })
  deps.invalidations.on('domains', () => redirects.clearCache())
  deps.recorder.onFlush((flushed) => deps.domains.addClicks(flushed.byDomain))
  // A click batch may carry link.clicked events: deliver and stream them now.
  deps.recorder.onFlush(() => deps.webhooks.wake())
  deps.recorder.start()
  deps.linkHealth.start()
  deps.abTests.start()
  void deps.webhooks.start().catch((e) => log.error('webhook delivery could not start', { error: String(e) }))
  const prefix = settings.apiPrefix
  const eventsPath = `${prefix}/events`

  /** What a request that failed answers (made only when one fails: no closure per request). */
  const failed = (e: unknown, url: string): Response => {
    // The store cannot be reached (PostgreSQL) or the disk is full: 503 with Retry-After (a full disk logged once a minute).
    if (isDiskFull(e)) diskFullLogOf(log).report('redirect server', e)
    const known = orStoreUnavailable(e)
    if (known instanceof AppError && known.code === 'service_unavailable') return errorResponse(known.code, known.message, undefined, known.headers)
    log.error('request failed', { url, error: String((e as Error)?.stack ?? e) })
    failedRequests.inc(500)
    return errorResponse('internal_server_error', 'internal error')
  }
  const timedLater = (res: Promise<Response>, started: number, url: string): Promise<Response> =>
    res.then(
      (r) => timedRedirect(r, started),
      (e) => failed(e, url),
    )
  const hosts = createHostNames()

  const isApiRequest = (host: string, path: string) => host === settings.apiHost && (prefix === '' || path === prefix || path.startsWith(`${prefix}/`))
  // The dashboard lives at <origin of baseUrl>/app/ (`app` is a reserved key on every domain).
  const isDashboardRequest = (host: string, path: string) => host === settings.apiHost && (path === '/app' || path.startsWith('/app/'))

  // SNI certificates per domain, swapped in as ACME issues them (src/tls/https-listener.ts).
  const https = startHttpsListener(deps.tls, {
    baseCert: cert,
    // Bun's own cap answers a bare 413; every body is capped by its handler instead (the API's
    // checkBody, the password form), so this one only has to stay above them.
    maxRequestBodySize: Number.MAX_SAFE_INTEGER,
    fetch(request, server) {
      gc.served()
      const raw = request.url
      // One Host header read; a Host seen before is not validated and parsed again.
      const hostHeader = request.headers.get('host')
      const host = hostHeader === null ? null : hosts.of(hostHeader)
      if (host === null || !raw.startsWith('http')) return malformedRequest(raw, hostHeader)!
      // Split the absolute URL by hand: the redirect path needs no URL object.
      const pathStart = raw.indexOf('/', raw.indexOf('//') + 2)
      const q = raw.indexOf('?', pathStart)
      const path = pathStart < 0 ? '/' : raw.slice(pathStart, q < 0 ? undefined : q)
      const search = q < 0 ? '' : raw.slice(q + 1)
      try {
        // The client IP costs a native call per request (11% of a redirect in a profile): redirects ask for it
        // only when they need it (a counted visit's location, password attempts).
        const clientIp = () => clientIpOf(server.requestIP(request)?.address ?? '', request.headers.get('x-forwarded-for'))
        // Redirects answer synchronously when they can; only promises get a catch handler.
        if (isDashboardRequest(host, path))
          return deps.dashboard.handle(request, path).then(
            (r) => {
              dashboardRequests.inc(r.status)
              return withHsts(r)
            },
            (e) => failed(e, raw),
          )
        // The API host always answers with HSTS; short domains get it from the redirect handler, which knows the domain.
        if (isApiRequest(host, path)) {
          // A live stream is quiet between messages (a comment every 10 s at most): no idle timeout for it.
          if (path === eventsPath) server.timeout(request, 0)
          return api.handle(request, clientIp()).then(withHsts, (e) => failed(e, raw))
        }
        const started = performance.now()
        const res = redirects.handle(request, path, search, host, clientIp)
        if (res instanceof Promise) return timedLater(res, started, raw)
        return timedRedirect(res, started)
      } catch (e) {
        return failed(e, raw)
      }
    },
    error(e) {
      log.error('server error', { error: String(e?.stack ?? e) })
      return errorResponse('internal_server_error', 'internal error')
    },
  })

  // A certificate saved by another node (PostgreSQL) is swapped in here without a restart.
  deps.invalidations.on('certificates', (host) => (host === FLUSH ? https.clear() : https.invalidate(host)))
  // A domain changed on another node (reloaded here by now): this node's certificate manager plans for
  // it too (its CNAME checks and order do not wait for the node that took the change), and a certificate
  // that arrived before the domain is served (a re-read that finds nothing new makes no new listener).
  deps.invalidations.on('domains', () => {
    https.manager.wake()
    https.refresh()
  })

  // Never swapped, so never shared: a port in use is an error naming it (no reusePort).
  const http = serveOrExplain('server.httpPort', https, {
    port: config.server.httpPort,
    hostname: config.server.hostname,
    maxRequestBodySize: 64 * 1024,
    fetch(request) {
      const hostHeader = request.headers.get('host')
      const malformed = malformedRequest(request.url, hostHeader)
      if (malformed) return malformed
      const url = new URL(request.url)
      // ACME HTTP-01: this node's tokens from memory, other nodes' from the store.
      const challenge = deps.tls.answerChallenge(url.pathname)
      if (challenge) return challenge
      const host = hostnameOf(hostHeader!)
      const hostPart = host.includes(':') ? `[${host}]` : host
      return new Response(null, { status: 301, headers: { location: `${settings.shortOrigin(hostPart)}${url.pathname}${url.search}` } })
    },
  })

  // Ready while both listeners are up; a stopping server turns not-ready first, so balancers move away.
  let listening = true
  deps.readiness.add('listeners', () => listening)
  // Not ready while no click writer can take a batch: its thread was lost and is being replaced, or
  // is stuck on a batch (a first thread still opening is not a loss), or flushes keep failing.
  deps.readiness.add('clickWriter', () => {
    const h = deps.recorder.health()
    return h.ok || (h.writer?.state === 'starting' && h.writer.restarts === 0)
  })
  const operations = startOperations(deps, cert)

  log.info('listening', {
    https: `https://${config.server.hostname}:${https.port}`,
    http: `http://${config.server.hostname}:${http.port}`,
    api: settings.baseUrl,
    docs: `${settings.baseUrl}/docs`,
  })

  return {
    https,
    http,
    async stop() {
      listening = false
      operations.stop()
      gc.stop()
      await deps.linkHealth.stop()
      await deps.abTests.stop()
      http.stop(true)
      deps.webhooks.stream.closeAll() // live streams never finish by themselves: their clients resume elsewhere
      await https.stop(false) // let in-flight requests finish
      await deps.recorder.stop() // then write every buffered click
      await deps.webhooks.stop() // and the outcomes of deliveries in flight
    },
  }
}

/**
 * 400 bad_request for what Bun hands over but no URL can carry: a missing or malformed Host
 * (`127.0.0.1:1/`, two Host lines joined as `a, b`), or a request target that left the URL
 * relative (CONNECT's authority form). Null when the request is well formed.
 */
function malformedRequest(url: string, hostHeader: string | null): Response | null {
  if (hostHeader !== null && isValidHostHeader(hostHeader) && url.startsWith('http')) return null
  const why =
    hostHeader === null
      ? 'a Host header is required'
      : !isValidHostHeader(hostHeader)
        ? `the Host header ${JSON.stringify(hostHeader.slice(0, 100))} is not a valid host[:port] (one Host header, a DNS name or IP address, an optional port)`
        : 'the request target must be a path (origin form) or an absolute http(s) URL'
  return errorResponse('bad_request', why)
}

/**
 * Host headers → host names, remembered: a server sees a few host headers over and over, so
 * validating and parsing each once saves the work (and a string) per request. Bounded: anyone
 * can send new ones, so the memory is dropped when it holds too many.
 */
export function createHostNames(maxEntries = 1024) {
  const known = new Map<string, string | null>()
  return {
    /** The host name of a Host header, or null when the header is not a valid host[:port]. */
    of(hostHeader: string): string | null {
      const hit = known.get(hostHeader)
      if (hit !== undefined) return hit
      const host = isValidHostHeader(hostHeader) ? hostnameOf(hostHeader) : null
      if (known.size >= maxEntries) known.clear()
      known.set(hostHeader, host)
      return host
    },
  }
}

/** Host header → lower-case host name without port (IPv6 brackets removed). */
export function hostnameOf(hostHeader: string): string {
  const h = hostHeader.trim().toLowerCase()
  if (h.startsWith('[')) return h.slice(1, h.indexOf(']'))
  const colon = h.lastIndexOf(':')
  return colon > 0 ? h.slice(0, colon) : h
}

/** Bun.serve(options), or a ListenError naming `setting` (the HTTPS listener already open is stopped first). */
function serveOrExplain(
  setting: string,
  opened: HttpsListener,
  options: { port: number; hostname: string } & Parameters<typeof Bun.serve>[0],
): Server<unknown> {
  try {
    return Bun.serve(options)
  } catch (e) {
    void opened.stop(true)
    throw asListenError(e, setting, options.hostname, options.port)
  }
}
