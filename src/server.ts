/**
 * Starts the HTTPS listener (API under baseUrl, short links on every other path and
 * host) and the plain-HTTP listener (ACME HTTP-01 challenges, 301 to https), and
 * drains on SIGTERM.
 */
import type { Server } from 'bun'
import { createApiApp } from './app'
import type { Deps } from './deps'
import { contentResponse, type StoredContent } from './files'
import { createRedirectHandler, renderHostedPage } from './redirect'
import { AppError, createClientIpResolver, createGcPacer, diskFullLogOf, errorResponse, isDiskFull, orStoreUnavailable, withHsts } from './shared'
import { FLUSH } from './store'
import { asListenError, type CertPair, type HttpsListener, startHttpsListener } from './tls'

export interface RunningServer {
  https: HttpsListener
  http: Server<unknown>
  stop(): Promise<void>
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
    serveFile: (request, fileId) => {
      const serve = (opened: StoredContent | null) => (opened ? contentResponse(request, opened, { cacheControl: 'private, no-cache' }) : null)
      // At once over SQLite; over PostgreSQL the file's row comes as a promise.
      const opened = deps.files.open(fileId)
      return opened instanceof Promise ? opened.then(serve) : serve(opened)
    },
  })
  deps.links.onChange((c) => redirects.invalidate(c.domain, c.key))
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
  deps.recorder.start()
  const prefix = settings.apiPrefix

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
      // Split the absolute URL by hand: the redirect path needs no URL object.
      const raw = request.url
      const pathStart = raw.indexOf('/', raw.indexOf('//') + 2)
      const q = raw.indexOf('?', pathStart)
      const path = pathStart < 0 ? '/' : raw.slice(pathStart, q < 0 ? undefined : q)
      const search = q < 0 ? '' : raw.slice(q + 1)
      const host = hostnameOf(request.headers.get('host') ?? raw.slice(raw.indexOf('//') + 2, pathStart < 0 ? undefined : pathStart))
      const failed = (e: unknown) => {
        // The store cannot be reached (PostgreSQL) or the disk is full: 503 with Retry-After (a full disk logged once a minute).
        if (isDiskFull(e)) diskFullLogOf(log).report('redirect server', e)
        const known = orStoreUnavailable(e)
        if (known instanceof AppError && known.code === 'service_unavailable') return errorResponse(known.code, known.message, undefined, known.headers)
        log.error('request failed', { url: raw, error: String((e as Error)?.stack ?? e) })
        return errorResponse('internal_server_error', 'internal error')
      }
      try {
        // The client IP costs a native call per request (11% of a redirect in a profile): redirects ask for it
        // only when they need it (a counted visit's location, password attempts).
        const clientIp = () => clientIpOf(server.requestIP(request)?.address ?? '', request.headers.get('x-forwarded-for'))
        // Redirects answer synchronously when they can; only promises get a catch handler.
        if (isDashboardRequest(host, path)) return deps.dashboard.handle(request, path).then(withHsts, failed)
        const isApi = isApiRequest(host, path)
        const res = isApi ? api.handle(request, clientIp()) : redirects.handle(request, path, search, host, clientIp)
        // The API host always answers with HSTS; short domains get it from the redirect handler, which knows the domain.
        if (res instanceof Promise) return res.then((r) => (isApi ? withHsts(r) : r), failed)
        return isApi ? withHsts(res) : res
      } catch (e) {
        return failed(e)
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
      const url = new URL(request.url)
      // ACME HTTP-01: this node's tokens from memory, other nodes' from the store.
      const challenge = deps.tls.answerChallenge(url.pathname)
      if (challenge) return challenge
      const host = hostnameOf(request.headers.get('host') ?? url.host)
      const hostPart = host.includes(':') ? `[${host}]` : host
      return new Response(null, { status: 301, headers: { location: `${settings.shortOrigin(hostPart)}${url.pathname}${url.search}` } })
    },
  })

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
      gc.stop()
      http.stop(true)
      await https.stop(false) // let in-flight requests finish
      await deps.recorder.stop() // then write every buffered click
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
