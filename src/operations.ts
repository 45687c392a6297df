/**
 * What a running node adds for its operators, started and stopped with the server: the metrics
 * listener and the collectors that read live state at each scrape, and on the embedded store
 * the control socket (`shortlink backup` through this server) and the backup schedule.
 */
import { X509Certificate } from 'node:crypto'
import { type ControlSocket, startControlSocket } from './backup'
import type { Deps } from './deps'
import { metrics, startMetricsListener } from './metrics'

const storeUp = metrics.gauge('shortlink_store_up', '1 when the store answers (SQLite file or PostgreSQL), else 0.')
const ready = metrics.gauge('shortlink_ready', '1 when GET /readyz answers 200, else 0.')
const clicksPending = metrics.gauge('shortlink_clicks_pending', 'Counted visits held in memory, not yet written to the store.')
const clicksWritten = metrics.counter('shortlink_clicks_written_total', 'Counted visits written to the store.')
const certificateExpiry = metrics.gauge(
  'shortlink_certificate_expiry_timestamp_seconds',
  'When the certificate served for a domain expires, in seconds since the Unix epoch (one series per configured or custom domain).',
  ['domain'],
)

export interface Operations {
  stop(): void
}

/** `baseCert`: the certificate of tls.mode the HTTPS listener starts with (its expiry is the API host's unless ACME issued one). */
export function startOperations(deps: Deps, baseCert: { cert: string }): Operations {
  const { config, settings, log } = deps
  const stops: (() => void)[] = []
  const baseNotAfter = Date.parse(new X509Certificate(baseCert.cert).validTo)

  stops.push(
    metrics.onCollect(async () => {
      const report = await deps.readiness.report()
      storeUp.set(report.checks.store === 'ok' ? 1 : 0)
      ready.set(report.ready ? 1 : 0)
      clicksPending.set(deps.recorder.pendingCount())
    }),
    metrics.onCollect(async () => {
      // The configured names and the custom domains: bounded by the domains this node serves.
      const expiry = new Map<string, number>([settings.apiHost, ...settings.defaultDomains].map((n) => [n, baseNotAfter]))
      for (const c of await deps.tls.certs.all()) if (expiry.has(c.name) || deps.domains.stateOf(c.name) !== null) expiry.set(c.name, c.notAfter)
      certificateExpiry.reset()
      for (const [name, at] of expiry) certificateExpiry.labels(name).set(Math.floor(at / 1000))
    }),
  )
  deps.recorder.onFlush((flushed) => clicksWritten.inc(flushed.visits))

  if (config.metrics.listen) {
    const listener = startMetricsListener(config.metrics.listen, metrics, log)
    stops.push(() => listener.stop())
  }

  if (deps.backups) {
    let socket: ControlSocket | null = null
    try {
      socket = startControlSocket(config.server.dataDir, deps.backups, log)
    } catch (e) {
      // The server serves without it; `shortlink backup` then says no server answered.
      log.error('control socket not started: `shortlink backup` cannot reach this server', { error: String((e as Error)?.message ?? e) })
    }
    deps.backups.start()
    stops.push(() => {
      deps.backups?.stop()
      socket?.stop()
    })
  }
  return {
    stop() {
      for (const stop of stops.splice(0)) stop()
    },
  }
}
