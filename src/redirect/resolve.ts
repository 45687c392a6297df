/**
 * The redirect decision, as a pure function of the link, its domain, the request and
 * the time, in the contract's order: unknown → notFound; expired; social-preview bots;
 * password; hosted page; targeting; health fallback; UTM merge. The handler only renders the result.
 */

import type { StoredLinkView } from '../links'
import { pickTarget } from './targeting'
import type { Visitor } from './visitor'

/** The link as the decision takes it: links' decoded view, plus what only the redirect computes. */
export interface ResolvableLink extends StoredLinkView {
  /** The destination with the link's UTM merged: the answer to a visit with no query (precomputed, it is the common case). */
  plainLocation: string
  /** Its URLs that are broken, read when it entered the cache (only when it has a health fallback; else null). */
  brokenUrls: ReadonlySet<string> | null
}

export interface DomainFallbacks {
  notFoundUrl: string | null
  expiredUrl: string | null
}

export interface ResolveRequest {
  query: URLSearchParams
  visitor: Visitor
  acceptLanguage: string | null
  country: string | null
  region: string | null
  city: string | null
  /** The visitor holds a valid password cookie for this link. */
  passwordOk: boolean
  /** The n-th counted visit this one would be (number targeting). */
  visitNumber: number
}

export type Decision =
  | { kind: 'redirect'; location: string; count: boolean; scan: boolean }
  | { kind: 'hosted'; count: boolean; scan: boolean }
  | { kind: 'not-found'; location: string | null }
  | { kind: 'expired'; location: string | null }
  | { kind: 'password' }
  | { kind: 'preview'; title: string; description: string; image: string | null }

const UTM_PARAMS: [string, string][] = [
  ['source', 'utm_source'],
  ['medium', 'utm_medium'],
  ['campaign', 'utm_campaign'],
  ['term', 'utm_term'],
  ['content', 'utm_content'],
  ['ref', 'ref'],
]

/**
 * The visitor's query (minus `qr`) fills parameters the target lacks; the link's UTM
 * values then set or override theirs. Other schemes (mailto:, sms:) are left alone.
 */
export function mergeQuery(target: string, incoming: URLSearchParams, utm: Record<string, string> | null): string {
  if (!/^https?:/i.test(target)) return target
  if (!hasVisitorParams(incoming) && !utm) return target
  let url: URL
  try {
    url = new URL(target)
  } catch {
    return target
  }
  for (const [k, v] of incoming) if (k !== 'qr' && !url.searchParams.has(k)) url.searchParams.append(k, v)
  if (utm) for (const [field, param] of UTM_PARAMS) if (utm[field]) url.searchParams.set(param, utm[field]!)
  return url.href
}

function hasVisitorParams(q: URLSearchParams): boolean {
  if (q.size === 0) return false
  for (const k of q.keys()) if (k !== 'qr') return true
  return false
}

export function resolve(input: { link: ResolvableLink | null; domain: DomainFallbacks; request: ResolveRequest; now: number }): Decision {
  const { link, domain, request, now } = input
  if (!link) return { kind: 'not-found', location: domain.notFoundUrl }
  if (link.expiresAt !== null && now >= link.expiresAt) return { kind: 'expired', location: link.expirationUrl ?? domain.expiredUrl }
  const { visitor } = request
  if (visitor.isSocialBot) {
    const p = link.previewData ?? {}
    // A protected link's preview shows only what its owner chose to publish.
    const fallback = link.passwordHash ? 'Protected link' : link.hosted ? `${link.domain}/${link.key}` : hostOf(link.destination)
    return { kind: 'preview', title: p.title ?? fallback, description: p.desc ?? '', image: p.image ?? null }
  }
  if (link.passwordHash && !request.passwordOk) return { kind: 'password' }
  const count = !visitor.isBot
  const scan = request.query.get('qr') === '1'
  if (link.appStores) {
    const store = visitor.os === 'IOS' ? link.appStores.ios : visitor.os === 'Android' ? link.appStores.android : undefined
    if (store) return { kind: 'redirect', location: store, count, scan }
  }
  if (link.hosted) return { kind: 'hosted', count, scan }
  let target =
    pickTarget(link.Targeting, {
      os: visitor.os,
      country: request.country,
      region: request.region,
      city: request.city,
      acceptLanguage: request.acceptLanguage,
      now,
      visitNumber: request.visitNumber,
    }) ?? link.destination
  // Health: a broken URL sends the visit to the link's fallback instead (still counted).
  if (link.brokenUrls?.has(target) && link.healthFallbackUrl) target = link.healthFallbackUrl
  const location = target === link.destination && !hasVisitorParams(request.query) ? link.plainLocation : mergeQuery(target, request.query, link.utm)
  return { kind: 'redirect', location, count, scan }
}

function hostOf(url: string): string {
  try {
    return new URL(url).hostname
  } catch {
    return url
  }
}
