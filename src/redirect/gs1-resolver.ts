/**
 * The GS1-Conformant resolver on every short domain: `/01/<gtin>[/22/…][/10/…][/21/…]` with data
 * attributes in the query. A malformed path or check digit is 400; an unknown GTIN follows the
 * domain's not-found rules; `linkType=all|linkset` or `Accept: application/linkset+json` answers
 * the product's RFC 9264 linkset; otherwise the chosen link (link type, lot, Accept-Language) is
 * handed to the ordinary redirect path as the link's destination, so expiry, password, bots,
 * targeting, UTM and counting work as for any link, and the redirect goes out as a 307 with a
 * Link header pointing at the linkset.
 */
import type { Settings } from '../config'
import {
  chooseLink,
  type Gs1Product,
  type Gs1Request,
  LINKSET_CONTEXT_HEADER,
  LINKSET_MEDIA_TYPE,
  linksetLinkHeader,
  linksetOf,
  parseGs1Path,
  resolverDescription,
  wantsLinkset,
} from '../gs1'
import { EXPIRED_PAGE } from '../pages'
import { type ErrorCode, errorResponse } from '../shared'
import type { PasswordGate } from './password-gate'
import { mergeQuery, type ResolvableLink } from './resolve'
import { parseAcceptLanguage } from './targeting'

/** What the resolver needs of a cached link: the redirect handler's cache entry. */
export interface Gs1Cached {
  link: ResolvableLink
  gs1: Gs1Product | null
  /** Set on a GS1 answer: its redirect goes out as a 307 carrying this Link header. */
  gs1Link?: string
}

export interface Gs1ResolverDeps<C extends Gs1Cached, D> {
  settings: Settings
  passwords: PasswordGate
  /** The cache entry of a domain and key (a promise on a PostgreSQL miss). */
  lookup(domain: string, key: string): C | null | Promise<C | null>
  /** The ordinary path, given the entry with the chosen destination. */
  answerLink(request: Request, path: string, search: string, cached: C, domain: D, clientIp: () => string): Response | Promise<Response>
  /** The domain's not-found answer (its notFoundUrl, else the 404 page). */
  notFound(domain: D): Response
}

/** CORS, as the standard requires of a resolver: any origin may read its answers. */
export const GS1_CORS = {
  'access-control-allow-origin': '*',
  'access-control-allow-methods': 'GET, HEAD, OPTIONS',
  'access-control-expose-headers': 'Link, Location',
} as const

const NO_QUERY = new URLSearchParams()

export function gs1Redirect(location: string, link: string): Response {
  return new Response(null, { status: 307, headers: { location, link, vary: 'Accept, Accept-Language', ...GS1_CORS } })
}

function gs1Error(code: ErrorCode, message: string, link?: string): Response {
  return errorResponse(code, message, undefined, { ...GS1_CORS, 'cache-control': 'no-store', ...(link ? { link } : {}) })
}

/** `/.well-known/gs1resolver` of a domain. */
export function resolverDescriptionResponse(origin: string, domain: string): Response {
  return Response.json(resolverDescription(origin, `shortlink GS1 resolver for ${domain}`), {
    headers: { 'cache-control': 'public, max-age=300', ...GS1_CORS },
  })
}

export function createGs1Resolver<C extends Gs1Cached, D>(deps: Gs1ResolverDeps<C, D>) {
  function found(
    request: Request,
    path: string,
    domainSlug: string,
    domain: D,
    clientIp: () => string,
    req: Gs1Request,
    cached: C | null,
  ): Response | Promise<Response> {
    if (!cached?.gs1) return deps.notFound(domain)
    const product = cached.gs1
    const origin = deps.settings.shortOrigin(domainSlug)
    const linkHeader = linksetLinkHeader(origin, req.canonicalPath)
    const headers = request.headers
    if (req.linkType === 'all' || req.linkType === 'linkset' || wantsLinkset(headers.get('accept'))) {
      // A linkset tells what the product links to: not while it is expired or locked.
      const link = cached.link
      if (link.expiresAt !== null && Date.now() >= link.expiresAt)
        return new Response(EXPIRED_PAGE, { status: 410, headers: { 'content-type': 'text/html; charset=utf-8' } })
      if (link.passwordHash && !deps.passwords.hasValidCookie(headers.get('cookie'), link as ResolvableLink & { passwordHash: string }))
        return gs1Error('forbidden', 'this product is password-protected: open it in a browser and enter the password first')
      const name = link.previewData?.title ?? `GTIN ${product.gtin}`
      const body = linksetOf(product, { origin, name, lot: req.qualifiers.lot })
      return new Response(JSON.stringify(body), {
        headers: {
          'content-type': LINKSET_MEDIA_TYPE,
          link: `${LINKSET_CONTEXT_HEADER}, ${linkHeader}`,
          vary: 'Accept',
          'cache-control': 'no-store',
          ...GS1_CORS,
        },
      })
    }
    const choice = chooseLink(product, { lot: req.qualifiers.lot, linkType: req.linkType, languages: parseAcceptLanguage(headers.get('accept-language')) })
    if (choice.kind === 'no-link') return gs1Error('not_found', `this product has no ${choice.linkType} link`, linkHeader)
    const search = req.passOn.toString()
    if (!choice.specific) return deps.answerLink(request, path, search, { ...cached, gs1Link: linkHeader }, domain, clientIp)
    // A link type or lot chose the target: it replaces the destination, and targeting stands aside.
    const link: ResolvableLink = {
      ...cached.link,
      destination: choice.url,
      plainLocation: mergeQuery(choice.url, NO_QUERY, cached.link.utm),
      Targeting: null,
      appStores: null,
    }
    return deps.answerLink(request, path, search, { ...cached, link, gs1Link: linkHeader }, domain, clientIp)
  }

  return {
    /** A request to `/01/…` on a short domain. */
    answer(request: Request, path: string, search: string, domainSlug: string, domain: D, clientIp: () => string): Response | Promise<Response> {
      const method = request.method
      if (method === 'OPTIONS') return new Response(null, { status: 204, headers: { ...GS1_CORS, 'access-control-max-age': '86400' } })
      if (method !== 'GET' && method !== 'HEAD' && method !== 'POST') return new Response(null, { status: 405, headers: { allow: 'GET, HEAD, OPTIONS' } })
      const result = parseGs1Path(path, search)
      if (!result.ok) return gs1Error('bad_request', `not a valid GS1 Digital Link URI: ${result.message}`)
      const req = result.request
      const looked = deps.lookup(domainSlug, req.gtin)
      if (looked instanceof Promise) return looked.then((c) => found(request, path, domainSlug, domain, clientIp, req, c))
      return found(request, path, domainSlug, domain, clientIp, req, looked)
    },
  }
}
