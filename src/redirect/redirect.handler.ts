/**
 * The hot path: requests to a short domain. Looks the link up in the cache, asks the
 * pure `resolve` what to do, renders that, and hands counted visits to the click
 * recorder (tracking never fails or delays a redirect).
 */
import type { Settings } from '../config'
import { type GeoIp, UNKNOWN_LOCATION } from '../geo'
import { type Gs1Product, isGs1Path, productOf } from '../gs1'
import { type LinkRow, MAX_KEY_LENGTH, storedDataOf, storedLinkViewOf } from '../links'
import { metrics } from '../metrics'
import { EXPIRED_PAGE, NOT_FOUND_PAGE, passwordPage, previewPage, TOO_MANY_ATTEMPTS_PAGE } from '../pages'
import { decodePathSegment, HSTS, readCapped, withHsts, withPageHeaders } from '../shared'
import { type ClickRecorder, newClickId } from '../stats'
import { appendClickId } from './click-id'
import { createGs1Resolver, gs1Redirect, resolverDescriptionResponse } from './gs1-resolver'
import { createLinkCache } from './link-cache'
import type { PasswordGate } from './password-gate'
import { type Decision, type DomainFallbacks, mergeQuery, type ResolvableLink, type ResolveInput, resolve } from './resolve'
import { parseVisitor, type Visitor } from './visitor'

/** The redirect answer of a link: a GS1 answer carries its Link header; the link's plain location, its kept headers. */
const redirectTo = (location: string, cached: CachedLink, hsts: boolean) =>
  cached.gs1Link
    ? gs1Redirect(location, cached.gs1Link)
    : location === cached.link.plainLocation
      ? new Response(null, { status: 302, headers: plainRedirectHeaders(cached, hsts) })
      : redirect(location, hsts)

/**
 * The headers of a link's 302 to its plain location (most visits), made once per cache entry: a
 * Response copies a Headers object natively, cheaper than reading a header object's properties.
 */
function plainRedirectHeaders(cached: CachedLink, hsts: boolean): Headers {
  const kept = cached.plain302
  if (kept?.hsts === hsts) return kept.headers
  const location = cached.link.plainLocation
  const headers = new Headers(hsts ? { location, 'strict-transport-security': HSTS } : { location })
  cached.plain302 = { hsts, headers }
  return headers
}

/** Largest password form body read; a password is at most a few hundred bytes. */
const PASSWORD_FORM_MAX = 16 * 1024

/** What the redirect server needs to know about a short domain. */
export interface ShortDomain extends DomainFallbacks {
  slug: string
  /** Where the domain's root redirects; null: the service's home. */
  destination: string | null
  assetLinks: string | null
  appleAppSiteAssociation: string | null
  /** Its HTTPS answers carry Strict-Transport-Security (a default domain, or an active certificate). */
  hsts: boolean
}

export interface RedirectDeps {
  settings: Settings
  /** Synchronous over SQLite; a promise (PostgreSQL) is awaited only on a cache miss. */
  findLiveRow(domain: string, key: string): LinkRow | null | Promise<LinkRow | null>
  /** The short domain serving this host, or null when the host is none of ours. */
  domainOf(host: string): ShortDomain | null
  /** Current clicks of a link in the store (for number targeting). */
  storedClicks(linkSeq: number): number | Promise<number>
  /**
   * The ordinal of this counted visit of a number-targeted link over every node (PostgreSQL:
   * `visitOrdinalFrom`). Absent (SQLite, one node): counted here, from the stored and pending clicks.
   */
  visitOrdinal?: (link: { id: string; seq: number }) => Promise<number>
  recorder: ClickRecorder
  geo: GeoIp
  passwords: PasswordGate
  /** The bytes of an uploaded file (Range, ETag), or null when it is gone. */
  serveFile(request: Request, fileId: string): Response | null | Promise<Response | null>
  /** Renders the landing page of a hosted link type. */
  renderHosted(row: LinkRow, os: string): Response | Promise<Response>
  /**
   * Which of a link's URLs are broken, for a link with a health fallback (link-health;
   * synchronous over SQLite). Asked once, when the link enters the cache: a change of its
   * health drops it from the cache. Absent: no fallback is ever taken.
   */
  brokenUrlsOf?(row: LinkRow, fallback: string): ReadonlySet<string> | null | Promise<ReadonlySet<string> | null>
}

const clicksRecorded = metrics.counter('shortlink_clicks_recorded_total', 'Counted visits handed to the click recorder (written within the flush window).')

const HTML = { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store', 'x-robots-tag': 'noindex' }
const html = (body: string, status = 200, extra: Record<string, string> = {}) => new Response(body, { status, headers: { ...HTML, ...extra } })
/**
 * A 302 without freshness headers is not cached by browsers, so every visit comes back and counts.
 * Built with all its headers at once (HSTS where the domain has it): a header set after
 * construction makes Bun materialise the answer's Headers (6% of a redirect in a profile), so
 * `secured` adds nothing to a 302. Every 302 of the redirect server is made here.
 */
const redirect = (location: string, hsts: boolean) => {
  const headers = hsts ? REDIRECT_HSTS_HEADERS : REDIRECT_HEADERS
  headers.set('location', location)
  return new Response(null, { status: 302, headers })
}
/**
 * The headers of every 302 to a location made per visit (a click id, a UTM merge, targeting), one
 * object each (with HSTS or without), its Location set before each answer: a Response copies a
 * Headers object natively (the Fetch standard's "fill"), so the next visit's `set` does not reach
 * an answer already made, and no header object is built and read per visit (0.40 → 0.32 µs).
 */
const REDIRECT_HEADERS = new Headers()
const REDIRECT_HSTS_HEADERS = new Headers({ 'strict-transport-security': HSTS })

const NO_QUERY = new URLSearchParams()
/** `/<key>/file/<fileId>`: an uploaded file shown by a hosted link. */
const FILE_ROUTE = /^\/([^/]+)\/file\/([^/]+)$/

/** The link as `resolve` takes it: links decodes the stored row; the redirect adds the answer to a visit with no query. */
export function toResolvable(row: LinkRow, brokenUrls: ReadonlySet<string> | null = null): ResolvableLink {
  const view = storedLinkViewOf(row)
  return { plainLocation: mergeQuery(view.destination, NO_QUERY, view.utm), ...view, brokenUrls }
}

export function createRedirectHandler(deps: RedirectDeps) {
  const { settings } = deps
  const cache = createLinkCache<CachedLink>(
    (domain, key) => {
      const row = deps.findLiveRow(domain, key)
      return row instanceof Promise ? row.then(withHealth) : withHealth(row)
    },
    { maxKeyLength: MAX_KEY_LENGTH, sizeOf: cachedLinkBytes },
  )
  const gs1 = createGs1Resolver<CachedLink, ShortDomain>({
    settings,
    passwords: deps.passwords,
    lookup: (domain, key) => cache.get(domain, key),
    answerLink: (request, path, search, cached, domain, clientIp) => answerLink(request, path, search, domain, clientIp, null, cached),
    notFound: (domain) => (domain.notFoundUrl ? redirect(domain.notFoundUrl, domain.hsts) : html(NOT_FOUND_PAGE, 404)),
  })
  /** A loaded link with its broken URLs when it has a fallback for them (one more read, on a miss only). */
  function withHealth(row: LinkRow | null): CachedLink | null | Promise<CachedLink | null> {
    const cached = cachedLinkOf(row)
    const fallback = cached?.link.healthFallbackUrl
    if (!fallback || !deps.brokenUrlsOf) return cached
    const broken = deps.brokenUrlsOf(cached.row, fallback)
    if (broken instanceof Promise)
      return broken.then((b) => {
        cached.link.brokenUrls = b
        return cached
      })
    cached.link.brokenUrls = broken
    return cached
  }

  /**
   * The n of a number-targeted link's n-th visit (one node): its counted visits, kept on its
   * cache entry and seeded from the store's and the recorder's clicks when the entry is loaded
   * (again after a change of the link or an eviction: exact, every counted visit is in one of
   * them). Links without number targeting keep no count: their visits pay nothing for it.
   */
  const nextVisit = (cached: CachedLink): number | Promise<number> => {
    if (cached.visits !== undefined) return cached.visits + 1
    const seq = cached.row.seq
    const stored = deps.storedClicks(seq)
    return stored instanceof Promise ? stored.then((n) => n + deps.recorder.pendingFor(seq) + 1) : stored + deps.recorder.pendingFor(seq) + 1
  }

  function wellKnown(domain: ShortDomain, path: string): Response | null {
    if (path === '/.well-known/gs1resolver') return resolverDescriptionResponse(settings.shortOrigin(domain.slug), domain.slug)
    const body =
      path === '/.well-known/assetlinks.json'
        ? domain.assetLinks
        : path === '/.well-known/apple-app-site-association'
          ? domain.appleAppSiteAssociation
          : undefined
    if (body === undefined) return null
    if (!body) return html(NOT_FOUND_PAGE, 404)
    return new Response(body, { headers: { 'content-type': 'application/json', 'cache-control': 'public, max-age=300' } })
  }

  /**
   * `path` and `search` (without '?') come from the server's cheap split of the URL; no
   * URL object is built on the common path. `clientIp` is asked for only when needed.
   */
  function handle(request: Request, path: string, search: string, host: string, clientIp: () => string): Response | Promise<Response> {
    const domain = deps.domainOf(host)
    const res = answer(request, path, search, domain, clientIp)
    // Every answer leaves through here: HSTS where the domain has it, the security headers (src/shared/security-headers.ts).
    // Our hosted document and menu pages frame the link's files; nothing else of ours may be framed.
    const framedBySelf = path.includes('/file/')
    if (res instanceof Promise) return res.then((r) => secured(r, domain, framedBySelf))
    return secured(res, domain, framedBySelf)
  }

  function secured(res: Response, domain: ShortDomain | null, framedBySelf: boolean): Response {
    const status = res.status
    if (status === 302) return res // built with its headers (redirect)
    if (domain?.hsts) withHsts(res)
    return withPageHeaders(res, framedBySelf)
  }

  function answer(request: Request, path: string, search: string, domain: ShortDomain | null, clientIp: () => string): Response | Promise<Response> {
    if (path === '/robots.txt') return new Response('User-agent: *\nDisallow: /\n', { headers: { 'content-type': 'text/plain' } })
    if (path === '/favicon.ico') return new Response(null, { status: 204, headers: { 'cache-control': 'public, max-age=86400' } })
    if (!domain) return html(NOT_FOUND_PAGE, 404)
    if (path === '/') return redirect(domain.destination ?? `${settings.baseUrl}/docs`, domain.hsts)
    if (path.startsWith('/.well-known/')) return wellKnown(domain, path) ?? html(NOT_FOUND_PAGE, 404)
    if (isGs1Path(path)) return gs1.answer(request, path, search, domain.slug, domain, clientIp)
    const method = request.method
    if (method !== 'GET' && method !== 'HEAD' && method !== 'POST') return new Response(null, { status: 405, headers: { allow: 'GET, HEAD, POST' } })

    const fileRoute = path.indexOf('/', 1) > 0 ? FILE_ROUTE.exec(path) : null
    if (path.indexOf('/', 1) > 0 && !fileRoute) return html(NOT_FOUND_PAGE, 404)
    const key = decodePathSegment(fileRoute ? fileRoute[1]! : path.slice(1)) ?? ''
    const looked = key && !key.includes('/') ? cache.get(domain.slug, key) : null
    // A miss over PostgreSQL: the only await of the path.
    if (looked instanceof Promise) return afterLoad(looked, request, path, search, domain, clientIp, fileRoute)
    return answerLink(request, path, search, domain, clientIp, fileRoute, looked)
  }

  // Closures live outside the hot functions: a captured variable would cost every request a scope object.
  function afterLoad(
    looked: Promise<CachedLink | null>,
    request: Request,
    path: string,
    search: string,
    domain: ShortDomain,
    clientIp: () => string,
    fileRoute: RegExpExecArray | null,
  ): Promise<Response> {
    return looked.then((cached) => answerLink(request, path, search, domain, clientIp, fileRoute, cached))
  }

  function answerLink(
    request: Request,
    path: string,
    search: string,
    domain: ShortDomain,
    clientIp: () => string,
    fileRoute: RegExpExecArray | null,
    cached: CachedLink | null,
  ): Response | Promise<Response> {
    const method = request.method
    const link = cached?.link ?? null

    if (method === 'POST') {
      if (!link?.passwordHash) return new Response(null, { status: 405, headers: { allow: 'GET, HEAD' } })
      return passwordAttempt(request, path, search, link, clientIp())
    }

    if (fileRoute) {
      const fileId = decodePathSegment(fileRoute[2]!)
      return fileId === null ? html(NOT_FOUND_PAGE, 404) : linkFile(request, cached, fileId)
    }

    const headers = request.headers
    const visitor = parseVisitor(headers.get('user-agent'))
    const targeting = link?.Targeting?.targetType
    const needsGeo = link !== null && (!visitor.isBot || targeting === 'location')
    const geo = needsGeo ? deps.geo.lookup(clientIp()) : null
    // Just after a start the GeoIP database may still be loading: location targeting waits for the exact answer.
    if (targeting === 'location' && geo?.resolved)
      return afterLoad(
        geo.resolved.then(() => cached),
        request,
        path,
        search,
        domain,
        clientIp,
        fileRoute,
      )
    const input = resolveInput(link, domain, search, visitor, headers, geo)
    const hsts = domain.hsts
    if (!(link && targeting === 'number' && !visitor.isBot)) return render(resolve(input), path, cached, visitor, geo, headers, 0, hsts)
    if (deps.visitOrdinal) {
      // Across nodes the ordinal is taken only by a visit that counts (it cannot be handed back).
      const probe = resolve(input)
      if (!((probe.kind === 'redirect' || probe.kind === 'hosted') && probe.count)) return render(probe, path, cached, visitor, geo, headers, 0, hsts)
      return renderNumbered(deps.visitOrdinal(cached!.row), input, path, cached!, visitor, geo, headers, hsts)
    }
    const n = nextVisit(cached!)
    if (n instanceof Promise) return renderNumbered(n, input, path, cached!, visitor, geo, headers, hsts)
    input.request.visitNumber = n
    return render(resolve(input), path, cached, visitor, geo, headers, n, hsts)
  }

  /** What `resolve` is asked: the link, the domain, and what this request tells of the visitor. */
  function resolveInput(
    link: ResolvableLink | null,
    domain: ShortDomain,
    search: string,
    visitor: Visitor,
    headers: Headers,
    geo: ReturnType<GeoIp['lookup']> | null,
  ): ResolveInput {
    return {
      link,
      domain,
      now: Date.now(),
      request: {
        query: search ? new URLSearchParams(search) : NO_QUERY,
        visitor,
        acceptLanguage: link?.Targeting?.targetType === 'language' ? headers.get('accept-language') : null,
        country: geo?.country ?? null,
        region: geo?.region ?? null,
        city: geo?.city ?? null,
        passwordOk: link?.passwordHash ? deps.passwords.hasValidCookie(headers.get('cookie'), link as ResolvableLink & { passwordHash: string }) : false,
        visitNumber: 0,
        testCookie: link?.test ? testCookieOf(headers.get('cookie'), link.test.startedAt) : null,
        testDraw: link?.test ? Math.random() * 100 : 0,
      },
    }
  }

  /** A number-targeted visit once its ordinal is known (resolve is pure: asked again with it). */
  function renderNumbered(
    ordinal: Promise<number>,
    input: ResolveInput,
    path: string,
    cached: CachedLink,
    visitor: Visitor,
    geo: ReturnType<GeoIp['lookup']> | null,
    headers: Headers,
    hsts: boolean,
  ): Promise<Response> {
    return ordinal.then((n) => {
      input.request.visitNumber = n
      return render(resolve(input), path, cached, visitor, geo, headers, n, hsts)
    })
  }

  /** Renders a decision and records a counted visit; `visitNumber` is this visit's ordinal when number targeting gave one. */
  function render(
    decision: Decision,
    path: string,
    cached: CachedLink | null,
    visitor: Visitor,
    geo: ReturnType<GeoIp['lookup']> | null,
    headers: Headers,
    visitNumber: number,
    hsts: boolean,
  ): Response | Promise<Response> {
    const link = cached?.link ?? null
    switch (decision.kind) {
      case 'not-found':
        return decision.location ? redirect(decision.location, hsts) : html(NOT_FOUND_PAGE, 404)
      case 'expired':
        return decision.location ? redirect(decision.location, hsts) : html(EXPIRED_PAGE, 410)
      case 'password':
        // The form is what this URL shows until the password is given: 200 (a 401 would need WWW-Authenticate).
        return html(passwordPage({ action: path }))
      case 'preview':
        return html(previewPage({ ...decision, url: `${settings.shortOrigin(link!.domain)}/${link!.key}`, siteName: link!.domain }))
      case 'redirect':
      case 'hosted': {
        const location = decision.count
          ? countVisit(decision, cached!, visitor, geo, headers, visitNumber)
          : decision.kind === 'redirect'
            ? decision.location
            : null
        if (location === null) return deps.renderHosted(cached!.row, visitor.os)
        const res = redirectTo(location, cached!, hsts)
        return decision.kind === 'redirect' && decision.test?.drawn ? withTestCookie(res, cached!.link, decision.test.variant) : res
      }
    }
  }

  /**
   * A counted visit: its ordinal noted (number targeting) and its click handed to the recorder (written within the
   * flush window). Returns the Location to answer (null for a hosted page): a link with `trackConversion` gets this
   * visit's click id appended (the resolve's last step, after the UTM merge), made from the recorded visit's time.
   */
  function countVisit(
    decision: Decision & { kind: 'redirect' | 'hosted' },
    cached: CachedLink,
    visitor: Visitor,
    geo: ReturnType<GeoIp['lookup']> | null,
    headers: Headers,
    visitNumber: number,
  ): string | null {
    const l = cached.link
    if (visitNumber > 0) cached.visits = visitNumber
    const landing = decision.kind === 'redirect' ? decision.location : null
    const utm = landing === null ? NO_UTM : landing === l.plainLocation ? cached.plainUtm : utmOf(landing)
    const ref = refererOf(headers.get('referer'))
    const at = Date.now()
    const clickId = landing !== null && l.trackConversion ? newClickId(at) : null
    clicksRecorded.inc()
    deps.recorder.record({
      linkSeq: l.seq,
      domain: l.domain,
      at,
      scan: decision.scan,
      visitor,
      geo: geo ?? UNKNOWN_LOCATION,
      utm,
      referer: ref.host,
      refererUrl: ref.url,
      clickId,
      variant: decision.kind === 'redirect' ? (decision.test?.variant ?? null) : null,
    })
    return clickId !== null && landing !== null ? appendClickId(landing, clickId) : landing
  }

  /**
   * A file a hosted link shows, served under the short link so it passes the same
   * checks as the page: the link is live and unexpired, its password cookie is held,
   * and the file is the one the link shows. Not counted as a visit.
   */
  function linkFile(request: Request, cached: CachedLink | null, fileId: string): Response | Promise<Response> {
    if (!cached) return html(NOT_FOUND_PAGE, 404)
    const { link, row } = cached
    if (link.expiresAt !== null && Date.now() >= link.expiresAt) return html(EXPIRED_PAGE, 410)
    if (link.passwordHash && !deps.passwords.hasValidCookie(request.headers.get('cookie'), link as ResolvableLink & { passwordHash: string }))
      return html(passwordPage({ action: `/${encodeURIComponent(link.key)}` }), 403)
    const shown = storedDataOf(row).fileId
    if (shown !== fileId) return html(NOT_FOUND_PAGE, 404)
    const served = deps.serveFile(request, fileId)
    return served instanceof Promise ? served.then((r) => r ?? html(NOT_FOUND_PAGE, 404)) : (served ?? html(NOT_FOUND_PAGE, 404))
  }

  async function passwordAttempt(request: Request, path: string, search: string, link: ResolvableLink, clientIp: string): Promise<Response> {
    const verdict = await deps.passwords.allowAttempt(clientIp, link.seq)
    if (!verdict.allowed) return html(TOO_MANY_ATTEMPTS_PAGE, 429, { 'retry-after': String(verdict.retryAfterS) })
    let given = ''
    try {
      const type = request.headers.get('content-type') ?? ''
      if (type.includes('application/x-www-form-urlencoded') || type.includes('multipart/form-data')) {
        // The form is a few bytes: read at most PASSWORD_FORM_MAX, whatever the body claims.
        const body = request.body && (await readCapped(request.body, PASSWORD_FORM_MAX))
        const v = body ? (await new Response(body, { headers: { 'content-type': type } }).formData()).get('password') : null
        given = typeof v === 'string' ? v : ''
      }
    } catch {
      given = ''
    }
    const hash = link.passwordHash!
    const ok = given !== '' && given.length <= 1024 && (await Bun.password.verify(given, hash).catch(() => false))
    if (!ok) return html(passwordPage({ action: path, error: 'Wrong password. Try again.' }), 403)
    await deps.passwords.succeeded(clientIp, link.seq)
    // See-other back to the same URL: the GET then resolves (and counts) like any visit.
    return new Response(null, {
      status: 303,
      headers: {
        location: search ? `${path}?${search}` : path,
        'set-cookie': deps.passwords.cookieFor({ ...link, passwordHash: hash }),
        'cache-control': 'no-store',
      },
    })
  }

  return {
    handle,
    /** Called on every write to a link, so the next visit sees it. */
    invalidate: (domain: string, key: string) => cache.invalidate(domain, key),
    clearCache: () => cache.clear(),
    cacheSize: () => cache.size(),
  }
}
export type RedirectHandler = ReturnType<typeof createRedirectHandler>

function cachedLinkOf(row: LinkRow | null): CachedLink | null {
  if (!row) return null
  const link = toResolvable(row)
  return {
    row,
    link,
    plainUtm: utmOf(link.plainLocation),
    gs1: row.link_type === 'gs1' ? productOf(storedDataOf(row) as Parameters<typeof productOf>[0]) : null,
  }
}

/** Estimated heap bytes of a cached link: its row's strings (JSON data and options) twice over (row and parsed link), plus objects. */
function cachedLinkBytes(c: CachedLink): number {
  const r = c.row
  return 4 * (r.data.length + r.options.length + r.destination.length + r.key.length) + 1024
}

interface CachedLink {
  row: LinkRow
  link: ResolvableLink
  /** UTM values of the plain location, for click events. */
  plainUtm: Utm
  /** A GS1 product's links and lots (gs1 links only). */
  gs1: Gs1Product | null
  /** A GS1 answer: the redirect is a 307 with this Link header (see gs1-resolver.ts). */
  gs1Link?: string
  /** Number targeting on one node: the link's counted visits so far (see nextVisit); unset until its first such visit. */
  visits?: number
  /** The headers of its 302 to its plain location, with or without HSTS (the domain's, when made). */
  plain302?: { hsts: boolean; headers: Headers }
}

type Utm = { id: number; source: string | null; medium: string | null; campaign: string | null; term: string | null; content: string | null }

let nextUtmId = 1
const NO_UTM: Utm = { id: 0, source: null, medium: null, campaign: null, term: null, content: null }

function utmOf(location: string): Utm {
  if (!location.includes('utm_')) return NO_UTM
  let q: URLSearchParams
  try {
    q = new URL(location).searchParams
  } catch {
    return NO_UTM
  }
  const u = (name: string) => q.get(name)?.slice(0, 190) || null
  return { id: nextUtmId++, source: u('utm_source'), medium: u('utm_medium'), campaign: u('utm_campaign'), term: u('utm_term'), content: u('utm_content') }
}

/** The A/B test's cookie: `<test start>.<variant>`, so a cookie of an earlier test on the same link is ignored. */
const TEST_COOKIE = 'sl_variant'

/** The variant the cookie names for the test started at `startedAt`, else null. */
function testCookieOf(cookie: string | null, startedAt: number): number | null {
  if (!cookie) return null
  const at = cookie.indexOf(`${TEST_COOKIE}=`)
  if (at < 0) return null
  const m = /^(\d+)\.(\d)/.exec(cookie.slice(at + TEST_COOKIE.length + 1))
  return m && Number(m[1]) === startedAt ? Number(m[2]) : null
}

/** Keeps the visitor on their variant until the test ends (contract: HttpOnly, Secure, SameSite=Lax, path /<key>). */
function withTestCookie(res: Response, link: ResolvableLink, variant: number): Response {
  const test = link.test!
  res.headers.append(
    'set-cookie',
    `${TEST_COOKIE}=${test.startedAt}.${variant}; Path=/${link.linkType === 'gs1' ? '01/' : ''}${encodeURIComponent(link.key)}; Expires=${new Date(test.endsAt).toUTCString()}; HttpOnly; Secure; SameSite=Lax`,
  )
  return res
}

/** Referer header → host and full URL (at most 2000 characters); null when absent or not a URL. */
export function refererOf(referer: string | null): { host: string | null; url: string | null } {
  if (!referer) return NO_REFERER
  const plain = plainReferer(referer)
  if (plain !== null) return plain
  try {
    const r = new URL(referer)
    return { host: r.hostname.toLowerCase(), url: r.href.slice(0, 2000) }
  } catch {
    return NO_REFERER
  }
}

const NO_REFERER = { host: null, url: null }

/** Characters a URL parser keeps as they are in a path or query (no percent-encoding, no other meaning). */
const KEPT = new Uint8Array(128)
for (const c of 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-._~!$&()*+,;=:@/?%') KEPT[c.charCodeAt(0)] = 1

/**
 * The referer as the URL parser would give it, without building a URL, when it is already in
 * that form (most are: browsers send serialised URLs): `http(s)://` and a lower-case DNS name
 * without port, user or IPv4/punycode lookalikes, then a path and query of characters kept as
 * they are and no dot segments. Anything else (null) goes through the parser.
 */
function plainReferer(referer: string): { host: string; url: string } | null {
  const start = referer.startsWith('https://') ? 8 : referer.startsWith('http://') ? 7 : 0
  if (start === 0) return null
  const n = referer.length
  let i = start
  let labelStart = start
  for (; i < n; i++) {
    const c = referer.charCodeAt(i)
    if (c === 47 /* / */) break
    if (c === 46 /* . */) {
      if (i === labelStart) return null // empty label
      labelStart = i + 1
    } else if (!((c >= 97 && c <= 122) || (c >= 48 && c <= 57) || c === 45)) return null
  }
  // The last label starting with a digit: the parser may read an IPv4 address; `--`: maybe punycode.
  if (i === start || labelStart === i || (referer.charCodeAt(labelStart) >= 48 && referer.charCodeAt(labelStart) <= 57)) return null
  const host = referer.slice(start, i)
  if (host.includes('--')) return null
  if (i === n) return { host, url: `${referer}/`.slice(0, 2000) }
  let query = false
  for (let j = i; j < n; j++) {
    const c = referer.charCodeAt(j)
    if (c >= 128 || KEPT[c] === 0) return null
    if (c === 63 /* ? */) query = true
    // Dot segments (`/.`, `/%2e`) are rewritten by the parser in the path.
    else if (!query && c === 47 && j + 1 < n && (referer.charCodeAt(j + 1) === 46 || referer.charCodeAt(j + 1) === 37)) return null
  }
  return { host, url: referer.length > 2000 ? referer.slice(0, 2000) : referer }
}
