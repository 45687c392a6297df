/**
 * The redirect decision, as a pure function of the link, its domain, the request and
 * the time, in the contract's order, one named step each (see `resolve`): unknown → not found;
 * expired; social-preview bots; password; app stores and hosted pages; targeting; A/B test
 * variant; health fallback; UTM merge; click id. The handler only renders the result.
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

/** The A/B test variant a visit goes to: its index in `testVariants`, and whether it was drawn now (no cookie yet). */
export interface TestPick {
  variant: number
  url: string
  drawn: boolean
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
  /** A/B test: the variant the visitor's cookie names for the running test, else null. */
  testCookie: number | null
  /** A/B test: a uniform draw in [0, 100) for a visitor without a variant. */
  testDraw: number
}

export type Decision =
  | { kind: 'redirect'; location: string; count: boolean; scan: boolean; test?: TestPick }
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

/**
 * The contract's order, top to bottom. The gates answer a visit or pass it on (undefined);
 * the visits that pass are redirects, whose target each later step may change. Plain
 * calls on purpose: no per-visit array or closure on the hot path.
 */
export interface ResolveInput {
  link: ResolvableLink | null
  domain: DomainFallbacks
  request: ResolveRequest
  now: number
}

export function resolve(input: ResolveInput): Decision {
  const { link, domain, request, now } = input
  if (!link) return { kind: 'not-found', location: domain.notFoundUrl }
  return expired(link, domain, now) ?? socialPreview(link, request) ?? passwordForm(link, request) ?? visit(link, request, now)
}

/** A visit past the gates: counted unless a bot, then sent on by the steps in order. */
function visit(link: ResolvableLink, request: ResolveRequest, now: number): Decision {
  const count = !request.visitor.isBot
  const scan = request.query.get('qr') === '1'
  const store = appStoreOf(link, request.visitor)
  if (store) return { kind: 'redirect', location: store, count, scan }
  if (link.hosted) return { kind: 'hosted', count, scan }
  const caught = targeted(link, request, now)
  const test = caught === null && count ? testVariant(link, request, now) : null
  let target = caught ?? test?.url ?? link.destination
  target = healthFallback(link, target)
  let location = withUtm(link, request, target)
  location = withClickId(location)
  return test ? { kind: 'redirect', location, count, scan, test } : { kind: 'redirect', location, count, scan }
}

/** Expired: the link's expiration URL, else the domain's, else the 410 page. */
function expired(link: ResolvableLink, domain: DomainFallbacks, now: number): Decision | undefined {
  if (link.expiresAt !== null && now >= link.expiresAt) return { kind: 'expired', location: link.expirationUrl ?? domain.expiredUrl }
}

/** Social-preview bots get the og: page and count nothing (before the password: a protected link's preview says only that). */
function socialPreview(link: ResolvableLink, request: ResolveRequest): Decision | undefined {
  if (!request.visitor.isSocialBot) return
  const p = link.previewData ?? {}
  // A protected link's preview shows only what its owner chose to publish.
  const fallback = link.passwordHash ? 'Protected link' : link.hosted ? `${link.domain}/${link.key}` : hostOf(link.destination)
  return { kind: 'preview', title: p.title ?? fallback, description: p.desc ?? '', image: p.image ?? null }
}

function passwordForm(link: ResolvableLink, request: ResolveRequest): Decision | undefined {
  if (link.passwordHash && !request.passwordOk) return { kind: 'password' }
}

/** app-stores links: iOS and Android visitors go straight to their store. */
function appStoreOf(link: ResolvableLink, visitor: Visitor): string | undefined {
  if (!link.appStores) return
  return visitor.os === 'IOS' ? link.appStores.ios : visitor.os === 'Android' ? link.appStores.android : undefined
}

/** Targeting: the URL of the first item that catches the visit, else null. */
function targeted(link: ResolvableLink, request: ResolveRequest, now: number): string | null {
  if (!link.Targeting) return null
  return pickTarget(link.Targeting, {
    os: request.visitor.os,
    country: request.country,
    region: request.region,
    city: request.city,
    acceptLanguage: request.acceptLanguage,
    now,
    visitNumber: request.visitNumber,
  })
}

/**
 * A/B test: while it runs, a counted visit no targeting item caught goes to a variant: the one
 * its cookie names, else one drawn by percentage (`drawn`: the answer sets the cookie).
 */
function testVariant(link: ResolvableLink, request: ResolveRequest, now: number): TestPick | null {
  const test = link.test
  if (!test || now >= test.endsAt) return null
  const kept = request.testCookie
  if (kept !== null && kept < test.variants.length) return { variant: kept, url: test.variants[kept]!.url, drawn: false }
  let edge = 0
  for (const [i, v] of test.variants.entries()) {
    edge += v.percentage
    if (request.testDraw < edge) return { variant: i, url: v.url, drawn: true }
  }
  const last = test.variants.length - 1
  return { variant: last, url: test.variants[last]!.url, drawn: true }
}

/** Health: a broken URL sends the visit to the link's fallback instead (still counted). */
function healthFallback(link: ResolvableLink, target: string): string {
  return link.brokenUrls?.has(target) && link.healthFallbackUrl ? link.healthFallbackUrl : target
}

/** UTM merge: the visitor's query and the link's UTM values (the plain answer is precomputed). */
function withUtm(link: ResolvableLink, request: ResolveRequest, target: string): string {
  return target === link.destination && !hasVisitorParams(request.query) ? link.plainLocation : mergeQuery(target, request.query, link.utm)
}

/**
 * Click id: a link with `trackConversion` gets this visit's `sl_id` after the UTM merge (contract:
 * replacing one already there). It is appended by the handler's `countVisit`, which makes the id
 * from the recorded visit's time (a bot's visit, not counted, gets none); here the location stays.
 */
function withClickId(location: string): string {
  return location
}

function hostOf(url: string): string {
  try {
    return new URL(url).hostname
  } catch {
    return url
  }
}
