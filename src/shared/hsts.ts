/** One year; no includeSubDomains: subdomains of customer domains are not ours to pin. */
export const HSTS = 'max-age=31536000'

/**
 * Marks an HTTPS answer Strict-Transport-Security: the API host, default domains and custom
 * domains with an active certificate (never a host served with another host's certificate).
 */
export function withHsts(res: Response): Response {
  res.headers.set('strict-transport-security', HSTS)
  return res
}
