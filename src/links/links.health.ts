/**
 * Link health on the link side: the record's `health` schema, and which URLs of a link are
 * checked. `healthUrlsOf` is the one place that says so: the checker, the record and the
 * redirect's fallback all ask it (a link type or option that sends visitors to another URL
 * adds it here).
 */
import { type Static, type TLiteral, type TUnion, Type as t } from '@sinclair/typebox'
import { HEALTH_STATUSES, type HealthStatus, hasHealth, type LinkHealth } from './links.health.values'
import type { LinkRow } from './links.store'

export { type BrokenUrl, HEALTH_STATUSES, HEALTH_TYPES, type HealthStatus, hasHealth, type LinkHealth, type UrlHealth } from './links.health.values'

/** One TLiteral per status, as a tuple: Elysia reads a union's members so (see links.schema.ts's literalUnion). */
type LiteralsOf<V extends readonly string[]> = { -readonly [K in keyof V]: TLiteral<V[K]> }
const statusUnion = (description: string) =>
  t.Union(
    HEALTH_STATUSES.map((s) => t.Literal(s)),
    { description },
  ) as unknown as TUnion<LiteralsOf<typeof HEALTH_STATUSES>>

export const HealthStatusSchema = statusUnion(
  '`unknown` until checked (or when a redirect hop was refused as private), `ok` after a passed check, `broken` after 2 failed checks in a row.',
)

const answer = {
  url: t.String(),
  httpStatus: t.Union([t.Integer(), t.Null()], { description: 'The final HTTP status, or null when none came (network, TLS, timeout, refused).' }),
  error: t.Union([t.String(), t.Null()], { description: 'What went wrong when there is no HTTP status to say it; null otherwise.' }),
}

export const LinkHealthSchema = t.Object(
  {
    status: HealthStatusSchema,
    checkedAt: t.Union([t.String({ format: 'date-time' }), t.Null()], { description: 'The latest check of any of its URLs; null before the first.' }),
    since: t.String({ format: 'date-time', description: 'When the link entered this status (its creation while never checked).' }),
    brokenUrls: t.Array(t.Object(answer), { description: 'Its broken URLs, with the answer of their last check.' }),
    urls: t.Array(t.Object({ ...answer, status: HealthStatusSchema, checkedAt: t.Union([t.String({ format: 'date-time' }), t.Null()]) }), {
      description: 'Beyond the contract: every checked URL of the link (destination, targeting URLs) with its own status and last answer.',
    }),
  },
  {
    description:
      'Destination health (null for types without a URL destination): broken when any of its URLs is broken, else unknown when any is unknown, else ok.',
  },
)

// The schema and the dashboard's plain type are one shape.
const sameShape: [Static<typeof LinkHealthSchema>, LinkHealth] extends [LinkHealth, Static<typeof LinkHealthSchema>] ? true : never = true
void sameShape

/** The filter value of GET /links and /links/count. */
export const HealthFilter = statusUnion('Links whose health is this (links of types without health never match).')

type JsonObject = Record<string, unknown>
const isHttpUrl = (u: unknown): u is string => typeof u === 'string' && /^https?:\/\//i.test(u)

/**
 * The distinct URLs a link sends visitors to, in a stable order: its URL (a GS1 product's
 * links and lots too), then its targeting URLs. Empty for types without health.
 */
export function healthUrlsOf(row: Pick<LinkRow, 'link_type' | 'data' | 'options'>): string[] {
  if (!hasHealth(row.link_type)) return []
  const out = new Set<string>()
  const add = (u: unknown) => {
    if (isHttpUrl(u)) out.add(u)
  }
  const data = JSON.parse(row.data) as JsonObject
  add(data.url)
  const eachLink = (list: unknown) => {
    if (Array.isArray(list)) for (const l of list) add((l as JsonObject)?.url)
  }
  eachLink(data.links)
  if (Array.isArray(data.lots))
    for (const lot of data.lots as JsonObject[]) {
      add(lot?.url)
      eachLink(lot?.links)
    }
  const options = JSON.parse(row.options) as JsonObject
  const targets = (options.Targeting as { targetDatas?: unknown } | undefined)?.targetDatas
  if (Array.isArray(targets)) for (const item of targets) add((item as JsonObject)?.url)
  else if (targets && typeof targets === 'object') for (const u of Object.values(targets)) add(u)
  // A/B test variants (contract: link health checks them too).
  eachLink(options.testVariants)
  return [...out]
}

/** The health of a link no check has spoken for yet (`since` its creation); null for types without health. */
export function unknownHealth(row: Pick<LinkRow, 'link_type' | 'data' | 'options' | 'created_at'>): LinkHealth | null {
  if (!hasHealth(row.link_type)) return null
  const status: HealthStatus = 'unknown'
  return {
    status,
    checkedAt: null,
    since: new Date(row.created_at).toISOString(),
    brokenUrls: [],
    urls: healthUrlsOf(row).map((url) => ({ url, status, httpStatus: null, error: null, checkedAt: null })),
  }
}
