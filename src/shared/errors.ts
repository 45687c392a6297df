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
  rate_limit_exceeded: 429,
  internal_server_error: 500,
  bad_gateway: 502,
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

export function errorBody(code: ErrorCode, message: string, requestId?: string): string {
  return JSON.stringify(requestId ? { code, message, requestId } : { code, message })
}

export function errorResponse(code: ErrorCode, message: string, requestId?: string, headers: Record<string, string> = {}): Response {
  return new Response(errorBody(code, message, requestId), {
    status: STATUS_BY_CODE[code],
    headers: { 'content-type': 'application/json; charset=utf-8', ...headers },
  })
}
