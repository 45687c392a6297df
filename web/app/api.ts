/**
 * The dashboard's only way to the server: the same REST API every client uses, with the
 * session cookie instead of a bearer key (the browser never holds a key) and the CSRF
 * token on every write.
 */

/** The API's path prefix, written into the page by the server. */
export const apiPrefix = document.querySelector<HTMLMetaElement>('meta[name="shortlink-api"]')?.content ?? '/api'

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly retryAfter: number | null = null,
  ) {
    super(message)
  }
}

export type QueryValue = string | number | boolean | null | undefined | (string | number)[]
export type Query = Record<string, QueryValue>

export interface ApiResult<T> {
  data: T
  /** `X-Total-Count` of list endpoints (matches before paging), else null. */
  total: number | null
  response: Response
}

let csrfToken: string | null = null
export function setCsrfToken(token: string | null) {
  csrfToken = token
}

/** Listeners told when the server says the session is gone (401), so the app shows the sign-in screen. */
const signedOutListeners = new Set<() => void>()
export function onSignedOut(listener: () => void): () => void {
  signedOutListeners.add(listener)
  return () => signedOutListeners.delete(listener)
}

/** `/links` + query → `/api/links?…` (repeated keys for arrays, as the API expects). */
export function apiUrl(path: string, query?: Query): string {
  const params = new URLSearchParams()
  for (const [k, v] of Object.entries(query ?? {})) {
    if (v === undefined || v === null || v === '') continue
    if (Array.isArray(v)) for (const item of v) params.append(k, String(item))
    else params.append(k, String(v))
  }
  const qs = params.toString()
  return `${apiPrefix}${path}${qs ? `?${qs}` : ''}`
}

export interface RequestOptions {
  query?: Query
  /** Sent as JSON. */
  body?: unknown
  /** Sent as multipart (file uploads). */
  form?: FormData
  signal?: AbortSignal
  /** Read the answer as a Blob (images, CSV) instead of JSON. */
  blob?: boolean
}

export async function api<T = unknown>(method: string, path: string, options: RequestOptions = {}): Promise<ApiResult<T>> {
  const headers: Record<string, string> = { accept: options.blob ? '*/*' : 'application/json' }
  if (method !== 'GET' && method !== 'HEAD' && csrfToken) headers['x-csrf-token'] = csrfToken
  let body: BodyInit | undefined
  if (options.form) body = options.form
  else if (options.body !== undefined) {
    headers['content-type'] = 'application/json'
    body = JSON.stringify(options.body)
  }
  let response: Response
  try {
    response = await fetch(apiUrl(path, options.query), { method, headers, body, signal: options.signal, credentials: 'same-origin' })
  } catch (e) {
    if ((e as Error).name === 'AbortError') throw e
    throw new ApiError(0, 'network_error', 'the server cannot be reached; check the connection and try again')
  }
  if (!response.ok) {
    let code = 'error'
    let message = `${response.status} ${response.statusText}`
    try {
      const err = (await response.json()) as { code?: string; message?: string }
      code = err.code ?? code
      message = err.message ?? message
    } catch {
      // not the error shape (a proxy's page): keep the status line
    }
    const retry = response.headers.get('retry-after')
    if (response.status === 401 && path !== '/session') for (const l of signedOutListeners) l()
    throw new ApiError(response.status, code, message, retry ? Number(retry) : null)
  }
  const total = response.headers.get('x-total-count')
  const data = (options.blob ? await response.blob() : response.status === 204 ? null : await response.json()) as T
  return { data, total: total === null ? null : Number(total), response }
}

export const get = <T>(path: string, query?: Query, signal?: AbortSignal) => api<T>('GET', path, { query, signal }).then((r) => r.data)
export const post = <T>(path: string, body?: unknown) => api<T>('POST', path, { body }).then((r) => r.data)
export const patch = <T>(path: string, body?: unknown) => api<T>('PATCH', path, { body }).then((r) => r.data)
export const del = <T>(path: string, body?: unknown) => api<T>('DELETE', path, { body }).then((r) => r.data)

/** A message fit for a person: the API's own message names the field and rule. */
export function errorText(e: unknown): string {
  if (e instanceof ApiError) return e.message
  return e instanceof Error ? e.message : String(e)
}
