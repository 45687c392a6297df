/** Values derived once from the config that the request path needs. */
import type { Config } from './config.schema'

export interface Settings {
  /** Path prefix of the API ('' when baseUrl has no path). */
  apiPrefix: string
  /** Host name (no port) of baseUrl, lower-case. */
  apiHost: string
  baseUrl: string
  defaultDomains: string[]
  httpsPort: number
  /** Origin of a short link on a domain: https://<domain>[:port]. */
  shortOrigin(domain: string): string
}

export function deriveSettings(config: Config): Settings {
  const base = new URL(config.server.baseUrl)
  const apiPrefix = base.pathname.replace(/\/+$/, '')
  const port = config.server.httpsPort
  const portSuffix = port === 443 ? '' : `:${port}`
  return {
    apiPrefix,
    apiHost: base.hostname.toLowerCase(),
    baseUrl: `${base.origin}${apiPrefix}`,
    defaultDomains: config.domains.defaults.map((d) => d.toLowerCase()),
    httpsPort: port,
    shortOrigin: (domain) => `https://${domain}${portSuffix}`,
  }
}
