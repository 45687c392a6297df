/**
 * The API: an envelope (request id, authentication, rate limit, read-only rule, body
 * size and content type) around one Elysia app holding every module's routes, with the
 * one error handler. Builds from deps; never listens.
 */

import type { TSchema } from '@sinclair/typebox'
import { Elysia, ValidationError } from 'elysia'
import { assertMethodAllowed, authRoutes, type RequestContext, rateLimitHeaders, requestContextOf, setRequestContext } from './auth'
import type { Deps } from './deps'
import { type AnyElysia, docsRoutes, PUBLIC_DOC_PATHS } from './docs'
import { domainRoutes } from './domains'
import { fileRoutes } from './files'
import { linkRoutes } from './links'
import { qrRoutes, templateRoutes } from './qr'
import { AppError, describeRule, diskFullLogOf, errorResponse, isDiskFull, newId, orStoreUnavailable, readCapped } from './shared'
import { statsRoutes } from './stats'
import { tagRoutes } from './tags'

const BODY_METHODS = new Set(['POST', 'PUT', 'PATCH', 'DELETE'])

export interface ApiApp {
  handle(request: Request, clientIp: string): Promise<Response>
  elysia: AnyElysia
}

export function createApiApp(deps: Deps): ApiApp {
  const { settings, log } = deps
  const prefix = settings.apiPrefix

  const routes = new Elysia({ prefix, normalize: false })
    .onError(({ code, error, request }) => {
      const ctx = requestContextOf(request)
      return renderError(code, error, request, ctx, log)
    })
    .use(tagRoutes(deps))
    .use(linkRoutes(deps))
    .use(fileRoutes({ files: deps.files, maxBytes: deps.config.files.maxBytes }))
    .use(templateRoutes(deps))
    .use(domainRoutes(deps))
    .use(qrRoutes(deps))
    .use(statsRoutes(deps))
    .use(authRoutes(deps))

  const elysia = routes.use(docsRoutes(deps.settings, routes))
  elysia.compile()

  const publicPaths = new Set(PUBLIC_DOC_PATHS.map((p) => prefix + p))
  // Signing in needs no credentials; signing out is allowed to readonly sessions.
  const sessionPath = `${prefix}/session`
  const multipartPaths = new Set([`${prefix}/files`])

  async function handle(request: Request, clientIp: string): Promise<Response> {
    const requestId = newId('req')
    const ctx: RequestContext = { requestId, clientIp, caller: null }
    const url = new URL(request.url)
    let rateHeaders: Record<string, string> = {}
    const fail = (e: AppError) => withHeaders(errorResponse(e.code, e.message, requestId, e.headers), rateHeaders, requestId)
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
      if (ctx.caller && !(isSessionPath && request.method === 'DELETE')) assertMethodAllowed(ctx.caller, request.method)
      if (BODY_METHODS.has(request.method)) request = await checkBody(request, multipartPaths.has(url.pathname), deps)
    } catch (e) {
      if (isDiskFull(e)) diskFullLogOf(log).report('api', e)
      const known = orStoreUnavailable(e)
      if (known instanceof AppError) return fail(known)
      throw e
    }
    setRequestContext(request, ctx)
    const response = await elysia.handle(request)
    return withHeaders(response, rateHeaders, requestId)
  }

  return { handle, elysia }
}

function withHeaders(res: Response, extra: Record<string, string>, requestId: string): Response {
  for (const [k, v] of Object.entries(extra)) res.headers.set(k, v)
  res.headers.set('X-Request-Id', requestId)
  return res
}

/** Content type and size rules for request bodies; returns a request whose body is safe to read. */
async function checkBody(request: Request, multipartAllowed: boolean, deps: Deps): Promise<Request> {
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
  const max = isMultipart ? deps.config.files.maxBytes + 64 * 1024 : deps.config.server.maxBodyBytes
  if (length !== null && !(Number(length) <= max)) throw new AppError('bad_request', `request body too large: ${length} bytes, the limit is ${max}`)
  if (isJson || length === null) {
    // Read with the limit whatever the header says (a length may lie, chunked bodies have none), then hand on a copy.
    const body = await readCapped(request.body!, max)
    if (!body) throw new AppError('bad_request', `request body too large: over ${max} bytes`)
    if (isJson && jsonDepth(body) > MAX_JSON_DEPTH)
      throw new AppError('bad_request', `request body nests arrays and objects deeper than ${MAX_JSON_DEPTH} levels`)
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
  const known = orStoreUnavailable(error)
  if (known instanceof AppError) return errorResponse(known.code, known.message, requestId, known.headers)
  if (code === 'VALIDATION' || error instanceof ValidationError) return errorResponse('parameter_error', validationMessage(error), requestId)
  if (code === 'PARSE') return errorResponse('bad_request', 'request body is not valid JSON', requestId)
  if (code === 'NOT_FOUND') {
    const path = new URL(request.url).pathname
    return errorResponse('not_found', `no route ${request.method} ${path}`, requestId)
  }
  const status = (error as { status?: number })?.status
  if (status === 413) return errorResponse('bad_request', 'request body too large', requestId)
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
