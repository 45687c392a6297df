import { Type as t } from '@sinclair/typebox'
import { type ErrorCode, STATUS_BY_CODE } from '../shared'

const ErrorBody = t.Object(
  {
    code: t.String({
      description:
        'Short error code: bad_request, unauthorized, forbidden, not_found, record_gone, parameter_error, rate_limit_exceeded, internal_server_error, bad_gateway.',
    }),
    message: t.String({ description: 'What went wrong, naming the field and rule at fault.' }),
    requestId: t.Optional(t.String({ description: 'Request id, also in the X-Request-Id header and the server log.' })),
  },
  { description: 'The error body of every failure.' },
)

export type ErrorStatus = (typeof STATUS_BY_CODE)[ErrorCode]

/** When each error status is answered: the contract's error table. */
const WHEN: Record<ErrorStatus, string> = {
  400: 'the body is not JSON, has the wrong content type or is too large.',
  401: 'no, malformed, unknown or revoked bearer token.',
  403: "a valid key without the right: a read-only key writing, a member touching another user's record or filtering by other users, a non-admin on an admin-only operation.",
  404: 'no such record (or not visible to the caller).',
  409: 'the request conflicts with the state of the record (a print run whose file is asked for before it is done).',
  410: 'the record existed and was deleted.',
  422: 'a value breaks a rule (type, length, enum, pattern, limit, a name already taken); the message names the field.',
  429: "over the caller's budget; `Retry-After` says when to try again.",
  500: 'a bug; the message holds no internals.',
  502: 'a fetch the operation needs failed (DNS, refused, timeout, non-2xx).',
  503: 'the shared store (PostgreSQL mode) cannot be reached; `Retry-After` says when to try again. Never answered by a single node on SQLite.',
}

const CODE_OF = Object.fromEntries(Object.entries(STATUS_BY_CODE).map(([code, status]) => [status, code])) as Record<ErrorStatus, ErrorCode>

/** The error body per status, described by when it is answered; one schema per status, shared by every route. */
const BODY_OF = Object.fromEntries(
  Object.entries(WHEN).map(([status, when]) => [
    status,
    t.Object(ErrorBody.properties, { description: `\`${CODE_OF[Number(status) as ErrorStatus]}\`: ${when}` }),
  ]),
) as Record<ErrorStatus, typeof ErrorBody>

/** The `response` entries of a route's error statuses, for its OpenAPI document: `{ ...errorResponses(401, 404) }`. */
export function errorResponses<S extends ErrorStatus>(...statuses: S[]): Record<S, typeof ErrorBody> {
  return Object.fromEntries(statuses.map((s) => [s, BODY_OF[s]])) as Record<S, typeof ErrorBody>
}
