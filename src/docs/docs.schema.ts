import { Type as t } from '@sinclair/typebox'

export const ErrorBody = t.Object(
  {
    code: t.String({ description: 'Short error code: bad_request, unauthorized, forbidden, not_found, record_gone, parameter_error, rate_limit_exceeded, internal_server_error, bad_gateway.' }),
    message: t.String({ description: 'What went wrong, naming the field and rule at fault.' }),
    requestId: t.Optional(t.String({ description: 'Request id, also in the X-Request-Id header and the server log.' })),
  },
  { description: 'The error body of every failure.' },
)
