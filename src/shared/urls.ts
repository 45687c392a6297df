/** URLs users give (destinations, fallbacks, store links), checked and normalised one way everywhere. */
import { parameterError } from './errors'

/** http(s) only, parsed and re-serialised (lower-case host, punycode), at most 2000 characters. */
export function normaliseUrl(raw: string, field: string, min = 1): string {
  let u: URL
  try {
    u = new URL(raw.trim())
  } catch {
    throw parameterError(`'${field}' must be an absolute http or https URL`)
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') throw parameterError(`'${field}' must use http or https (got ${u.protocol.replace(':', '')})`)
  if (!u.hostname) throw parameterError(`'${field}' must name a host`)
  const href = u.href
  if (href.length > 2000 || href.length < min) throw parameterError(`'${field}' length must be ${min}-2000`)
  return href
}

/**
 * A percent-encoded URL path segment decoded, or null when its escapes are malformed (`%E0`) or
 * it decodes to a NUL: no key, file id or GS1 value holds one, and PostgreSQL refuses one in a
 * query, so it is not found without asking.
 */
export function decodePathSegment(raw: string): string | null {
  if (!raw.includes('%')) return raw
  try {
    const decoded = decodeURIComponent(raw)
    return decoded.includes('\0') ? null : decoded
  } catch {
    return null
  }
}
