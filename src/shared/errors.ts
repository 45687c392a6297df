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

/**
 * The error to answer for `e`: an unreachable store (PostgreSQL) or a full disk becomes
 * service_unavailable (503, Retry-After); anything else stays `e`.
 */
export const orStoreUnavailable = (e: unknown): unknown =>
  e instanceof AppError ? e : isStoreUnreachable(e) ? storeUnavailable() : isDiskFull(e) ? diskFull() : e

/** Seconds a client is told to wait when the disk is full. */
export const DISK_FULL_RETRY_AFTER_S = 30

export const diskFull = () =>
  new AppError('service_unavailable', `the server's disk is full: nothing was written; retry in ${DISK_FULL_RETRY_AFTER_S} s`, {
    'Retry-After': String(DISK_FULL_RETRY_AFTER_S),
  })

/**
 * True for a write refused for want of space: SQLite's SQLITE_FULL, a file system's ENOSPC or
 * EDQUOT, PostgreSQL's disk_full (53100), and the I/O errors SQLite raises when it cannot grow its shared-memory or journal
 * files (their message then names the lack of space).
 */
export function isDiskFull(e: unknown): boolean {
  if (!e || typeof e !== 'object') return false
  const { code, message } = e as { code?: unknown; message?: unknown }
  if (code === 'SQLITE_FULL' || code === 'ENOSPC' || code === 'EDQUOT') return true
  if ((e as { errno?: unknown }).errno === '53100') return true // PostgreSQL's disk_full
  if (typeof code === 'string' && code.startsWith('SQLITE_IOERR') && typeof message === 'string' && /no space|disk is full|quota/i.test(message)) return true
  // DuckDB (the events engine) says it in its message only: "IO Error: Could not write file …: No space left on device",
  // or at a commit "TransactionContext Error: Failed to commit: Could not write file …: No space left on device".
  return typeof message === 'string' && /(IO Error|Could not write file)\b.*(No space left on device|Disk quota exceeded)/i.test(message)
}

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
