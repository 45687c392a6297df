/**
 * The API: an envelope (request id, authentication, rate limit, read-only rule, body
 * size and content type) around one Elysia app holding every module's routes, with the
 * one error handler. Builds from deps; never listens.
 */

import type { TSchema } from '@sinclair/typebox'
import { Elysia, ValidationError } from 'elysia'
import { abTestRoutes } from './ab-tests'
import { assertMethodAllowed, authRoutes, type Caller, type RequestContext, rateLimitHeaders, requestContextOf, setRequestContext } from './auth'
import { backupRoutes } from './backup'
import { conversionRoutes } from './conversions'
import type { Deps } from './deps'
import { type AnyElysia, docsRoutes, PUBLIC_DOC_PATHS } from './docs'
import { domainRoutes } from './domains'
import { fileRoutes } from './files'
import { HEALTH_PATHS, healthRoutes } from './health'
import { importRoutes } from './imports'
import { linkHealthRoutes } from './link-health'
import { linkRoutes } from './links'
import { apiDuration, httpRequests, type StatusCountsChild } from './metrics'
import { batchRoutes, qrRoutes, templateRoutes } from './qr'
import {
  AppError,
  describeRule,
  diskFullLogOf,
  errorResponse,
  isDiskFull,
  newId,
  orStoreUnavailable,
  parameterError,
  readCapped,
  withApiHeaders,
} from './shared'
import { statsRoutes } from './stats'
import { tagRoutes } from './tags'
import { webhookRoutes } from './webhooks'

const BODY_METHODS = new Set(['POST', 'PUT', 'PATCH', 'DELETE'])

export interface ApiApp {
  handle(request: Request, clientIp: string): Promise<Response>
  elysia: AnyElysia
}

export function createApiApp(deps: Deps): ApiApp {
  const { settings, log } = deps
  const prefix = settings.apiPrefix

  // The route template each request matched, for the request counter (bounded: templates, never paths).
  const routeOf = new WeakMap<Request, string>()
  const routes = new Elysia({ prefix, normalize: false })
    .onError(({ code, error, request }) => {
      const ctx = requestContextOf(request)
      return renderError(code, error, request, ctx, log)
    })
    .onTransform(({ request, route }) => {
      routeOf.set(request, route)
    })
    .use(healthRoutes(deps.readiness))
    .use(tagRoutes(deps))
    .use(linkRoutes(deps))
    .use(linkHealthRoutes(deps))
    .use(abTestRoutes(deps))
    .use(fileRoutes({ files: deps.files, maxBytes: deps.config.files.maxBytes }))
    .use(templateRoutes(deps))
    .use(domainRoutes(deps))
    .use(batchRoutes(deps))
    .use(qrRoutes(deps))
    .use(statsRoutes(deps))
    .use(conversionRoutes(deps))
    .use(authRoutes(deps))
    .use(importRoutes({ imports: deps.imports, maxBytes: deps.config.imports.maxBytes }))
    .use(backupRoutes(deps))
    .use(webhookRoutes({ webhooks: deps.webhooks.service, stream: deps.webhooks.stream }))

  const elysia = routes.use(docsRoutes(deps.settings, routes))
  elysia.compile()

  const publicPaths = new Set(PUBLIC_DOC_PATHS.map((p) => prefix + p))
  // Signing in needs no credentials; signing out is allowed to readonly sessions.
  const sessionPath = `${prefix}/session`
  // Multipart bodies and their limits; an import's upload is streamed to disk by its route, never read here.
  const multipartPaths = new Map([
    [`${prefix}/files`, { max: deps.config.files.maxBytes + 64 * 1024, streamed: false }],
    [`${prefix}/imports`, { max: deps.config.imports.maxBytes + 64 * 1024, streamed: true }],
  ])

  // Probes answer without credentials, rate limits or the store (a load balancer asks while PostgreSQL is down).
  const healthPaths = new Set(HEALTH_PATHS.map((p) => prefix + p))
  const counters = new Map<string, StatusCountsChild>()
  const countedAs = (route: string) => {
    let c = counters.get(route)
    if (!c) {
      c = httpRequests.labels(route)
      counters.set(route, c)
    }
    return c
  }
  /** The caller a request's credential authenticates now: a long-lived stream (GET /events) checks it again. */
  const recheckOf = (headers: Headers) => async (): Promise<Caller> => {
    const authorization = headers.get('authorization')
    const token = authorization === null ? deps.sessions.tokenOf(headers.get('cookie')) : null
    return token !== null ? (await deps.sessions.authenticate(token)).caller : await deps.auth.authenticate(authorization)
  }

  async function handle(request: Request, clientIp: string): Promise<Response> {
    const started = performance.now()
    const routed = { request }
    const response = await answer(routed, clientIp)
    apiDuration.observe((performance.now() - started) / 1000)
    // Answered before routing (credentials, rate limit, body checks) or by no route: one series, never the path.
    countedAs(routeOf.get(routed.request) ?? 'unrouted').inc(response.status)
    return response
  }

  async function answer(routed: { request: Request }, clientIp: string): Promise<Response> {
    let request = routed.request
    const requestId = newId('req')
    const ctx: RequestContext = { requestId, clientIp, caller: null }
    let rateHeaders: Record<string, string> = {}
    const fail = (e: AppError) => withHeaders(errorResponse(e.code, e.message, requestId, e.headers), rateHeaders, requestId)
    // The server checks the Host before it calls here; a URL that still does not parse is the client's fault.
    const url = URL.parse(request.url)
    if (!url) return fail(new AppError('bad_request', 'malformed request URL: the Host header must be a valid host[:port]'))
    if (healthPaths.has(url.pathname)) return withApiHeaders(await elysia.handle(request))
    try {
      const isSessionPath = url.pathname === sessionPath
      const isPublic =
        publicPaths.has(url.pathname) ||
        url.pathname.startsWith(`${prefix}/docs/`) ||
        (isSessionPath && (request.method === 'POST' || request.method === 'GET'))
      let bucket = `ip:${clientIp}`
      let authError: AppError | null = null
      if (!isPublic) {
        try {
          const authorization = request.headers.get('authorization')
          // An Authorization header decides alone; without one, the dashboard's session cookie may sign the request in.
          const token = authorization === null ? deps.sessions.tokenOf(request.headers.get('cookie')) : null
          // Both answer a cached credential at once; a promise only when the store is read.
          if (token !== null) {
            const found = deps.sessions.authenticate(token)
            const session = found instanceof Promise ? await found : found
            ctx.caller = session.caller
            bucket = session.caller.keyId === null ? `user:${session.caller.userId}` : `key:${session.caller.keyId}`
            deps.sessions.assertWriteAllowed(session, request.method, request.headers)
          } else {
            const found = deps.auth.authenticate(authorization)
            const caller = found instanceof Promise ? await found : found
            ctx.caller = caller
            bucket = `key:${caller.keyId}`
          }
          ctx.recheck = recheckOf(request.headers)
        } catch (e) {
          authError = e as AppError
        }
      }
      const hit = deps.limiter.hit(bucket)
      const rate = hit instanceof Promise ? await hit : hit
      rateHeaders = rateLimitHeaders(rate)
      if (!rate.allowed)
        throw new AppError('rate_limit_exceeded', `rate limit of ${rate.limit} requests per minute exceeded; retry in ${rate.reset} s`, {
          'Retry-After': String(rate.reset),
        })
      if (authError) throw authError
      checkUrl(url)
      if (ctx.caller && !(isSessionPath && request.method === 'DELETE')) assertMethodAllowed(ctx.caller, request.method)
      if (BODY_METHODS.has(request.method)) request = await checkBody(request, multipartPaths.get(url.pathname), deps)
    } catch (e) {
      if (isDiskFull(e)) diskFullLogOf(log).report('api', e)
      const known = asKnownError(e)
      if (known instanceof AppError) return fail(known)
      return withHeaders(internalError(e, request, requestId, log), rateHeaders, requestId)
    }
    setRequestContext(request, ctx)
    routed.request = request
    const response = await elysia.handle(request)
    // A write that succeeds ends a full-disk outage the log reported (said once; nothing when there was none).
    if (response.status < 400 && BODY_METHODS.has(request.method)) diskFullLogOf(log).recovered('api')
    return withHeaders(response, rateHeaders, requestId)
  }

  return { handle, elysia }
}

/** Every API answer leaves through here: rate-limit headers, its request id, the security headers (src/shared/security-headers.ts). */
function withHeaders(res: Response, extra: Record<string, string>, requestId: string): Response {
  for (const [k, v] of Object.entries(extra)) res.headers.set(k, v)
  res.headers.set('X-Request-Id', requestId)
  return withApiHeaders(res)
}

const CONTROL_CHARACTERS = 'must not contain control characters'

/**
 * What no route can take: a path with a broken percent-escape, or a NUL (`%00`) in the path
 * or a query value. No stored value holds a NUL and PostgreSQL refuses one in any query, so
 * it is refused here for every route, in the words of a field's control-character rule.
 */
function checkUrl(url: URL) {
  const path = url.pathname
  if (path.includes('%')) {
    try {
      decodeURIComponent(path)
    } catch {
      throw new AppError('bad_request', 'malformed percent-escape in the request path')
    }
    if (path.includes('%00')) throw new AppError('bad_request', 'the request path must not contain NUL (%00)')
  }
  if (url.search.includes('%00'))
    for (const [name, value] of url.searchParams)
      if (name.includes('\0') || value.includes('\0')) throw parameterError(`'${name.replaceAll('\0', '')}' ${CONTROL_CHARACTERS}`)
}

/** Where the first string holding a NUL sits in a JSON value, as validation names fields (`data.text`); null if none. */
function nulPath(value: unknown, at: string[] = []): string[] | null {
  if (typeof value === 'string') return value.includes('\0') ? at : null
  if (value === null || typeof value !== 'object') return null
  for (const [k, v] of Object.entries(value)) {
    if (k.includes('\0')) return [...at, k.replaceAll('\0', '')]
    const found = nulPath(v, [...at, k])
    if (found) return found
  }
  return null
}

/** Whether JSON text escapes a NUL (`\u0000`) inside a string; one pass, no parse. */
export function hasNulEscape(bytes: Uint8Array): boolean {
  for (let i = 0; i < bytes.length - 5; i++)
    if (bytes[i] === 0x5c) {
      if (bytes[i + 1] === 0x75 && bytes[i + 2] === 0x30 && bytes[i + 3] === 0x30 && bytes[i + 4] === 0x30 && bytes[i + 5] === 0x30) return true
      i++ // another escape: skip the escaped character (an escaped backslash is not the start of one)
    }
  return false
}

/** Content type and size rules for request bodies; returns a request whose body is safe to read. */
async function checkBody(request: Request, multipart: { max: number; streamed: boolean } | undefined, deps: Deps): Promise<Request> {
  const multipartAllowed = multipart !== undefined
  const length = request.headers.get('content-length')
  if (length === '0' || (length === null && request.body === null)) return request
  const type = (request.headers.get('content-type') ?? '').split(';')[0]!.trim().toLowerCase()
  const isJson = type === 'application/json' || type.endsWith('+json')
  const isMultipart = type === 'multipart/form-data'
  if (!isJson && !(isMultipart && multipartAllowed))
    throw new AppError(
      'bad_request',
      `unsupported content type '${type || '(none)'}': send application/json${multipartAllowed ? ' or multipart/form-data' : ''}`,
    )
  const max = isMultipart ? multipart!.max : deps.config.server.maxBodyBytes
  if (length !== null && !(Number(length) <= max)) throw new AppError('bad_request', `request body too large: ${length} bytes, the limit is ${max}`)
  if (isJson || (length === null && !(isMultipart && multipart!.streamed))) {
    // Read with the limit whatever the header says (a length may lie, chunked bodies have none), then hand on a copy.
    const body = await readCapped(request.body!, max)
    if (!body) throw new AppError('bad_request', `request body too large: over ${max} bytes`)
    if (isJson && jsonDepth(body) > MAX_JSON_DEPTH)
      throw new AppError('bad_request', `request body nests arrays and objects deeper than ${MAX_JSON_DEPTH} levels`)
    if (isJson && hasNulEscape(body)) {
      // Name the field, as its own validation would; JSON that does not parse is left to the parser's bad_request.
      let parsed: unknown
      try {
        parsed = JSON.parse(new TextDecoder().decode(body))
      } catch {}
      const at = nulPath(parsed)
      if (at) throw parameterError(`'${at.join('.') || 'body'}' ${CONTROL_CHARACTERS}`)
    }
    return new Request(request, { body: body })
  }
  return request
}

/** No request schema is nearly this deep; deeper input only costs stack in parsers and validators. */
const MAX_JSON_DEPTH = 32

/** Deepest nesting of arrays and objects in JSON bytes (strings skipped); one pass, no parse. */
export function jsonDepth(bytes: Uint8Array): number {
  let depth = 0
  let deepest = 0
  let inString = false
  for (let i = 0; i < bytes.length; i++) {
    const c = bytes[i]!
    if (inString) {
      if (c === 0x5c)
        i++ // backslash: skip the escaped character
      else if (c === 0x22) inString = false
    } else if (c === 0x22) inString = true
    else if (c === 0x7b || c === 0x5b) deepest = Math.max(deepest, ++depth)
    else if (c === 0x7d || c === 0x5d) depth--
  }
  return deepest
}

/** The one place errors become responses. */
function renderError(code: string | number, error: unknown, request: Request, ctx: RequestContext | undefined, log: Deps['log']): Response {
  const requestId = ctx?.requestId
  if (isDiskFull(error)) diskFullLogOf(log).report('api', error)
  const known = asKnownError(error)
  if (known instanceof AppError) return errorResponse(known.code, known.message, requestId, known.headers)
  if (code === 'VALIDATION' || error instanceof ValidationError) return errorResponse('parameter_error', validationMessage(error), requestId)
  if (code === 'PARSE') return errorResponse('bad_request', 'request body is not valid JSON', requestId)
  if (code === 'NOT_FOUND') {
    const path = new URL(request.url).pathname
    return errorResponse('not_found', `no route ${request.method} ${path}`, requestId)
  }
  const status = (error as { status?: number })?.status
  if (status === 413) return errorResponse('bad_request', 'request body too large', requestId)
  return internalError(error, request, requestId, log)
}

/**
 * Errors that are not bugs: the store out of reach (503), or a body that could not be read
 * because the client closed the connection or broke its chunked framing (Bun rejects the read
 * with an AbortError; the client's fault, and nobody is left to read the answer).
 */
function asKnownError(e: unknown): unknown {
  if (e instanceof DOMException && e.name === 'AbortError')
    return new AppError('bad_request', 'the request body could not be read: the connection closed or its chunked encoding is malformed')
  return orStoreUnavailable(e)
}

/** A bug: logged with its stack, answered without internals. */
function internalError(error: unknown, request: Request, requestId: string | undefined, log: Deps['log']): Response {
  log.error('unhandled error', { requestId, method: request.method, url: request.url, error: String((error as Error)?.stack ?? error) })
  return errorResponse('internal_server_error', `internal error; quote request id ${requestId} when reporting it`, requestId)
}

function validationMessage(error: unknown): string {
  const e = error as { type?: string; valueError?: { path: string; message: string; schema: TSchema; value: unknown }; message?: string }
  const where = e.type === 'params' ? 'path' : e.type === 'query' ? 'query' : 'body'
  const ve = e.valueError
  if (!ve) return `invalid ${where}`
  const field = ve.path.replace(/^\//, '').replace(/\//g, '.') || where
  if (ve.message === 'Unexpected property') return `unknown field '${field}' in ${where}`
  if (ve.value === undefined && ve.path) return `'${field}' is required in ${where}`
  return `'${field}' ${describeRule(ve.schema ?? {}, ve.message)}`
}
