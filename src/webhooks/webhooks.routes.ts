import { Type as t } from '@sinclair/typebox'
import { Elysia } from 'elysia'
import { callerOf, requestContextOf } from '../auth'
import { errorResponses } from '../docs'
import { AppError, parseQuery, queryParameters } from '../shared'
import {
  CreatedWebhook,
  CreateWebhookBody,
  DeliveryParams,
  DeliveryRecord,
  EventEnvelope,
  EventsQuery,
  ListDeliveriesQuery,
  ListWebhooksQuery,
  SCHEDULE_WORDS,
  UpdateWebhookBody,
  WebhookIdParams,
  WebhookRecord,
} from './webhooks.schema'
import type { WebhookService } from './webhooks.service'
import { HEARTBEAT_MS, type LiveStream } from './webhooks.stream'
import { DISABLE_AFTER_MS, MAX_ATTEMPTS, MAX_WEBHOOKS_PER_USER } from './webhooks.values'

const errors = errorResponses(400, 401, 403, 404, 422, 429)
const doc = (summary: string, description?: string, extra: object = {}) => ({ tags: ['Webhooks and events'], summary, description, ...extra })
const query = (request: Request) => new URL(request.url).searchParams

const DELIVERY_DOC =
  'Each delivery is a POST of the event envelope `{ id, type, createdAt, data }` (application/json) signed per the Standard Webhooks ' +
  'specification: `webhook-id` (the event id, the same on every retry), `webhook-timestamp` (seconds) and `webhook-signature` ' +
  '(`v1,` + base64 HMAC-SHA256 of `<id>.<timestamp>.<body>` keyed with the base64-decoded part of the secret). A 2xx answer within ' +
  `10 s delivers; anything else (redirects are not followed) is retried after ${SCHEDULE_WORDS}, then the delivery is failed ` +
  `(${MAX_ATTEMPTS} attempts). After an outage (failures for 10 s or more with no success), the first success makes the waiting deliveries due at once. ` +
  `An endpoint whose deliveries have failed for ${DISABLE_AFTER_MS / 86_400_000} days is disabled. Events wait in the store: a restart ` +
  'or a node that dies loses none, and each goes out from one node.'

export function webhookRoutes({ webhooks, stream }: { webhooks: WebhookService; stream: LiveStream }) {
  return new Elysia({ name: 'webhooks', normalize: false })
    .post('/webhooks', ({ body, request }) => webhooks.create(callerOf(request), body), {
      body: CreateWebhookBody,
      response: { 200: CreatedWebhook, ...errors },
      detail: doc(
        'Create a webhook',
        `Answers the webhook with its \`secret\`, shown this once. A member's webhook gets events of their own links; an admin's of all (domain.updated: admins only). At most ${MAX_WEBHOOKS_PER_USER} per user; \`linkIds\` and \`tagIds\` must be links and tags the owner sees (404 otherwise). ${DELIVERY_DOC}`,
      ),
    })
    .get(
      '/webhooks',
      async ({ request, set }) => {
        const { webhooks: list, total } = await webhooks.list(callerOf(request), parseQuery(ListWebhooksQuery, query(request)))
        set.headers['x-total-count'] = String(total)
        return list
      },
      {
        response: { 200: t.Array(WebhookRecord), ...errors },
        detail: doc('List webhooks', "Members see their own, admins everyone's, newest first; `X-Total-Count` holds how many.", {
          parameters: queryParameters(ListWebhooksQuery),
        }),
      },
    )
    .get('/webhooks/:id', ({ params, request }) => webhooks.get(callerOf(request), params.id), {
      params: WebhookIdParams,
      response: { 200: WebhookRecord, ...errors },
      detail: doc('Get a webhook', 'Never the secret.'),
    })
    .patch('/webhooks/:id', ({ params, body, request }) => webhooks.update(callerOf(request), params.id, body), {
      params: WebhookIdParams,
      body: UpdateWebhookBody,
      response: { 200: WebhookRecord, ...errors },
      detail: doc('Change a webhook', 'Fields given replace the stored ones. `disabled: false` enables it again and its waiting deliveries go out.'),
    })
    .delete('/webhooks/:id', ({ params, request }) => webhooks.remove(callerOf(request), params.id), {
      params: WebhookIdParams,
      response: { 200: t.Object({ id: t.String() }), ...errors },
      detail: doc('Delete a webhook', 'Its deliveries go with it; nothing more is sent.'),
    })
    .get(
      '/webhooks/:id/deliveries',
      async ({ params, request, set }) => {
        const { deliveries, total } = await webhooks.deliveries(callerOf(request), params.id, parseQuery(ListDeliveriesQuery, query(request)))
        set.headers['x-total-count'] = String(total)
        return deliveries
      },
      {
        params: WebhookIdParams,
        response: { 200: t.Array(DeliveryRecord), ...errors },
        detail: doc(
          "A webhook's deliveries",
          'Newest event first, paged; `status` narrows them. Delivered events are kept 24 hours, failed ones 7 days. `X-Total-Count` holds how many match.',
          { parameters: queryParameters(ListDeliveriesQuery) },
        ),
      },
    )
    .post(
      '/webhooks/:id/deliveries/:eventId/retry',
      ({ params, request, set }) => {
        set.status = 202
        return webhooks.retry(callerOf(request), params.id, params.eventId)
      },
      {
        params: DeliveryParams,
        response: { 202: DeliveryRecord, ...errors },
        detail: doc('Send a delivery again now', 'Whatever its state (a failed one gets one more attempt). Answers 202 with the delivery, due now.'),
      },
    )
    .post(
      '/webhooks/:id/test',
      ({ params, request, set }) => {
        set.status = 202
        return webhooks.test(callerOf(request), params.id)
      },
      {
        params: WebhookIdParams,
        response: { 202: DeliveryRecord, ...errors },
        detail: doc(
          'Send a test event',
          'A `webhook.test` event to this webhook only (whatever its `events`), signed like any other. Answers 202 with its delivery; its outcome shows in the deliveries.',
        ),
      },
    )
    .get(
      '/events',
      async ({ request }) => {
        const q = parseQuery(EventsQuery, query(request))
        const ctx = requestContextOf(request)
        const recheck = ctx?.recheck
        if (!recheck) throw new AppError('unauthorized', 'missing Authorization header (expected: Bearer <API key>)')
        const body = await stream.open(callerOf(request), { ...q, lastEventId: request.headers.get('last-event-id'), recheck, signal: request.signal })
        return new Response(body, { headers: { 'content-type': 'text/event-stream; charset=utf-8', 'x-accel-buffering': 'no' } })
      },
      {
        detail: doc(
          'Live events (Server-Sent Events)',
          `The same events as webhooks, for the caller's scope (members: their own links; admins: everything), as \`text/event-stream\`: each message has \`id:\` the event id, \`event:\` the type and \`data:\` the envelope. \`Last-Event-ID\` (sent by EventSource on reconnecting) resumes after that event from the store, where events are kept 24 hours; without it the stream starts now. A comment line goes out at least every ${HEARTBEAT_MS / 1000} s. Bearer keys and dashboard sessions both work; a revoked key or ended session closes the stream.`,
          {
            parameters: [
              ...queryParameters(EventsQuery),
              { name: 'Last-Event-ID', in: 'header', required: false, description: 'Resume after this event id.', schema: { type: 'string' } },
            ],
            responses: {
              200: { description: 'The stream. Each `data:` line is one envelope.', content: { 'text/event-stream': { schema: EventEnvelope } } },
              ...Object.fromEntries(
                Object.entries(errors).map(([status, schema]) => [status, { description: schema.description, content: { 'application/json': { schema } } }]),
              ),
            },
          },
        ),
      },
    )
}
