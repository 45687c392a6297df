/**
 * The metrics listener: Prometheus text at `/metrics` on `[metrics] listen` only, a plain-HTTP
 * address of its own (loopback or a private interface), never one of the public ports.
 */
import type { Server } from 'bun'
import type { Logger } from '../shared'
import type { Registry } from './metrics.registry'

/** `host:port`, `[v6]:port` or `:port` (every interface) → Bun.serve's hostname and port; null when malformed. */
export function parseListen(listen: string): { hostname: string; port: number } | null {
  const m = /^(?:\[([0-9a-fA-F:.]+)\]|([^:[\]]*)):(\d{1,5})$/.exec(listen.trim())
  if (!m) return null
  const port = Number(m[3])
  if (port > 65535) return null
  return { hostname: m[1] ?? (m[2] || '0.0.0.0'), port }
}

const TEXT = { 'content-type': 'text/plain; version=0.0.4; charset=utf-8', 'cache-control': 'no-store' }

export interface MetricsListener {
  readonly port: number
  stop(): void
}

export function startMetricsListener(listen: string, registry: Registry, log: Logger): MetricsListener {
  const at = parseListen(listen)
  if (!at) throw new Error(`metrics.listen: not host:port: ${listen}`)
  // Collectors that fail (the store unreachable) are reported once per kind of error, not per scrape.
  let lastError = ''
  const server: Server<unknown> = Bun.serve({
    hostname: at.hostname,
    port: at.port,
    // Scrapes are small GETs; nothing here reads a body.
    maxRequestBodySize: 1024,
    async fetch(request) {
      const path = new URL(request.url).pathname
      if (path !== '/metrics') return new Response('not found: metrics are at /metrics\n', { status: 404, headers: TEXT })
      if (request.method !== 'GET' && request.method !== 'HEAD') return new Response(null, { status: 405, headers: { allow: 'GET, HEAD' } })
      const body = await registry.render((e) => {
        const text = String((e as Error)?.message ?? e)
        if (text !== lastError) log.warn('metrics collector failed', { error: text })
        lastError = text
      })
      return new Response(request.method === 'HEAD' ? null : body, { headers: TEXT })
    },
  })
  log.info('metrics listening', { metrics: `http://${listen}/metrics` })
  return {
    port: server.port!,
    stop: () => void server.stop(true),
  }
}
