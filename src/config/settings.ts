/** Values derived once from the config that the request path needs. */
import type { Config } from './config.schema'

export interface Settings {
  /** Path prefix of the API ('' when baseUrl has no path). */
  apiPrefix: string
  /** Host name (no port) of baseUrl, lower-case. */
  apiHost: string
  baseUrl: string
  defaultDomains: string[]
  /**
   * Public origin of a host: https://<host>[:port], with the port of baseUrl (none when it
   * names none). Never the listening port: behind `-p 443:8443` or a load balancer the
   * world reaches another port, and printed QR codes must keep working.
   */
  shortOrigin(host: string): string
}

export function deriveSettings(config: Config): Settings {
  const base = new URL(config.server.baseUrl)
  const apiPrefix = base.pathname.replace(/\/+$/, '')
  // URL drops a scheme's default port, so https://x:443 names no port.
  const portSuffix = base.port ? `:${base.port}` : ''
  return {
    apiPrefix,
    apiHost: base.hostname.toLowerCase(),
    baseUrl: `${base.origin}${apiPrefix}`,
    defaultDomains: config.domains.defaults.map((d) => d.toLowerCase()),
    shortOrigin: (host) => `https://${host}${portSuffix}`,
  }
}
