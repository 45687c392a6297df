/**
 * The one error type of the service. Services throw it; the one handler in
 * `errorResponse` renders the contract's body `{ code, message }` with the status
 * from `STATUS_BY_CODE`. Anything else thrown is a bug and becomes a generic 500.
 */
export const STATUS_BY_CODE = {
  bad_request: 400,
  unauthorized: 401,
  forbidden: 403,
  not_found: 404,
  record_gone: 410,
  parameter_error: 422,
  conflict: 409,
  rate_limit_exceeded: 429,
  internal_server_error: 500,
  bad_gateway: 502,
  service_unavailable: 503,
} as const

export type ErrorCode = keyof typeof STATUS_BY_CODE

export class AppError extends Error {
  readonly code: ErrorCode
  /** Extra response headers, e.g. Retry-After on 429. */
  readonly headers: Record<string, string>
  constructor(code: ErrorCode, message: string, headers: Record<string, string> = {}) {
    super(message)
    this.name = 'AppError'
    this.code = code
    this.headers = headers
  }
  get status(): number {
    return STATUS_BY_CODE[this.code]
  }
}

export const badRequest = (message: string) => new AppError('bad_request', message)
export const parameterError = (message: string) => new AppError('parameter_error', message)
export const notFound = (what: string) => new AppError('not_found', `${what} not found`)
export const forbidden = (message: string) => new AppError('forbidden', message)

/** Seconds a client is told to wait when the shared store cannot be reached. */
export const STORE_RETRY_AFTER_S = 5

/** The shared store (PostgreSQL) cannot be reached: 503 with Retry-After (contract: service_unavailable). */
export const storeUnavailable = () =>
  new AppError('service_unavailable', `the shared store cannot be reached; retry in ${STORE_RETRY_AFTER_S} s`, {
    'Retry-After': String(STORE_RETRY_AFTER_S),
  })

/** The error to answer for `e`: an unreachable store becomes service_unavailable (503); anything else stays `e`. */
export const orStoreUnavailable = (e: unknown): unknown => (e instanceof AppError || !isStoreUnreachable(e) ? e : storeUnavailable())

/**
 * True for the errors Bun.SQL raises when PostgreSQL cannot be reached or went away: the
 * connection failed, closed or timed out, or the server is shutting down or starting
 * (SQLSTATE classes 08 and 57P). A query that PostgreSQL refused is not one of them.
 */
export function isStoreUnreachable(e: unknown): boolean {
  if (!e || typeof e !== 'object') return false
  const { code, errno } = e as { code?: unknown; errno?: unknown }
  if (typeof code === 'string' && /^ERR_POSTGRES_(CONNECTION_(CLOSED|TIMEOUT|FAILED|REFUSED)|LIFETIME_TIMEOUT|IDLE_TIMEOUT|TLS_)/.test(code)) return true
  if (typeof code === 'string' && /^(ECONNREFUSED|ECONNRESET|ETIMEDOUT|EPIPE|ENOTFOUND|EHOSTUNREACH|ENETUNREACH)$/.test(code)) return true
  return typeof errno === 'string' && (errno.startsWith('08') || errno.startsWith('57P'))
}

export function errorBody(code: ErrorCode, message: string, requestId?: string): string {
  return JSON.stringify(requestId ? { code, message, requestId } : { code, message })
}

/** An error in the contract's body; never sniffed, never cached, wherever it is answered (API, redirect server, listener). */
export function errorResponse(code: ErrorCode, message: string, requestId?: string, headers: Record<string, string> = {}): Response {
  return new Response(errorBody(code, message, requestId), {
    status: STATUS_BY_CODE[code],
    headers: { 'content-type': 'application/json; charset=utf-8', 'x-content-type-options': 'nosniff', 'cache-control': 'no-store', ...headers },
  })
}
