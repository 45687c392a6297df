import { AppError } from '../shared'
import type { Caller } from './auth.service'

/** What the API envelope learned about a request before routing it. */
export interface RequestContext {
  requestId: string
  clientIp: string
  caller: Caller | null
  /** The caller as the request's credential authenticates now (a long-lived stream checks it again); throws when it no longer does. */
  recheck?: () => Promise<Caller>
}

const contexts = new WeakMap<Request, RequestContext>()

export function setRequestContext(request: Request, ctx: RequestContext) {
  contexts.set(request, ctx)
}
export function requestContextOf(request: Request): RequestContext | undefined {
  return contexts.get(request)
}
/** The authenticated caller; routes behind the envelope always have one. */
export function callerOf(request: Request): Caller {
  const caller = contexts.get(request)?.caller
  if (!caller) throw new AppError('unauthorized', 'missing Authorization header (expected: Bearer <API key>)')
  return caller
}
