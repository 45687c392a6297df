/**
 * Link health as the API defines it (contract: "Link health"): the statuses a link or URL
 * has, and the link types that have one. No imports: the dashboard imports this file.
 */

/** `unknown` until checked (or when a hop was refused), `ok` after a passed check, `broken` after 2 failed checks in a row. */
export const HEALTH_STATUSES = ['unknown', 'ok', 'broken'] as const
export type HealthStatus = (typeof HEALTH_STATUSES)[number]

/** Types whose visitors go to an http(s) URL the owner gave; every other type's `health` is null. */
export const HEALTH_TYPES = ['link', 'google-form', 'gs1'] as const

export const hasHealth = (linkType: string): boolean => (HEALTH_TYPES as readonly string[]).includes(linkType)

/** A URL that answered a failing check: its last answer. */
export interface BrokenUrl {
  url: string
  /** The final HTTP status (404, 410, 5xx), or null when none came (network, TLS, timeout). */
  httpStatus: number | null
  /** What went wrong without an HTTP status; null when `httpStatus` says it. */
  error: string | null
}

/** One URL of a link and the answer to its last check. */
export interface UrlHealth extends BrokenUrl {
  status: HealthStatus
  checkedAt: string | null
}

/** `health` on a link record. */
export interface LinkHealth {
  status: HealthStatus
  checkedAt: string | null
  since: string
  brokenUrls: BrokenUrl[]
  urls: UrlHealth[]
}
