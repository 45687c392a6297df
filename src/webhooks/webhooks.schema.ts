import { type Static, Type as t } from '@sinclair/typebox'
import { EVENT_CATALOG, EVENT_TYPES } from '../events'
import { PlainText, pagingQuery } from '../shared'
import { DELIVERY_STATUSES, MAX_FILTER_IDS, RETRY_SCHEDULE_MS } from './webhooks.values'

const Id = (description: string) => t.String({ minLength: 1, maxLength: 100, description })
const Time = (description: string) => t.String({ format: 'date-time', description })
const Nullable = <T extends ReturnType<typeof t.String>>(s: T) => t.Union([s, t.Null()])

/** One of `values` (a union of literals, typed as their union). */
const oneOf = <T extends string>(values: readonly T[], description: string) =>
  t.Unsafe<T>(
    t.Union(
      values.map((v) => t.Literal(v)),
      { description },
    ),
  )

export const EventTypeSchema = oneOf(
  EVENT_TYPES,
  `An event type:\n${EVENT_TYPES.map((type) => `- \`${type}\`: ${EVENT_CATALOG[type].description}`).join('\n')}`,
)

const Events = t.Array(EventTypeSchema, { minItems: 1, maxItems: EVENT_TYPES.length, uniqueItems: true, description: 'The event types delivered.' })
const LinkIds = t.Array(Id('A link id (lnk_…).'), {
  maxItems: MAX_FILTER_IDS,
  uniqueItems: true,
  description: "Only link events (`link.*`) of these links; with tagIds, of links having either. Empty: all the owner's links.",
})
const TagIds = t.Array(Id('A tag id (tag_…).'), {
  maxItems: MAX_FILTER_IDS,
  uniqueItems: true,
  description: 'Only link events of links carrying one of these tags.',
})
const Url = t.String({
  minLength: 1,
  maxLength: 2048,
  description:
    'An http or https URL. Private, loopback and link-local addresses are refused (422) unless the server sets `[webhooks] allowPrivateNetworks = true`; the address is checked again at every delivery.',
})
const Name = PlainText({ minLength: 1, maxLength: 100, description: 'A name for people.' })

export const WebhookRecord = t.Object({
  id: t.String({ description: 'Webhook identifier (whk_…).' }),
  userId: t.String({ description: 'Owner: a member gets events of their own links; an admin of all.' }),
  url: t.String(),
  events: t.Array(EventTypeSchema),
  name: t.Union([t.String(), t.Null()]),
  linkIds: t.Array(t.String()),
  tagIds: t.Array(t.String()),
  disabled: t.Boolean({ description: 'No deliveries while true; set by the owner, or by the server after 5 days of failures.' }),
  failingSince: Nullable(Time('Since when every attempt has failed (null: the last one succeeded).')),
  createdAt: Time('Creation time.'),
})
export type WebhookRecord = Static<typeof WebhookRecord>

export const CreatedWebhook = t.Composite([
  WebhookRecord,
  t.Object({
    secret: t.String({
      description:
        'The signing secret, `whsec_` + base64, shown this once. Deliveries are signed per the Standard Webhooks specification: verify them with its libraries.',
    }),
  }),
])

export const CreateWebhookBody = t.Object(
  { url: Url, events: Events, name: t.Optional(Name), linkIds: t.Optional(LinkIds), tagIds: t.Optional(TagIds) },
  { additionalProperties: false },
)

export const UpdateWebhookBody = t.Object(
  {
    url: t.Optional(Url),
    events: t.Optional(Events),
    name: t.Optional(t.Union([Name, t.Null()])),
    linkIds: t.Optional(LinkIds),
    tagIds: t.Optional(TagIds),
    disabled: t.Optional(t.Boolean({ description: 'false enables a webhook again (its failure streak starts anew).' })),
  },
  { additionalProperties: false },
)

export const WebhookIdParams = t.Object({ id: Id('Webhook id (whk_…).') })
export const DeliveryParams = t.Object({ id: Id('Webhook id (whk_…).'), eventId: Id('Event id (evt_…).') })

export const ListWebhooksQuery = t.Object({ ...pagingQuery(100) })

const DeliveryStatusSchema = oneOf(DELIVERY_STATUSES, 'pending: the first attempt or a retry is due; delivered: answered 2xx; failed: out of attempts.')

export const DeliveryRecord = t.Object({
  eventId: t.String({ description: 'The event id, also the `webhook-id` header of every attempt.' }),
  type: EventTypeSchema,
  attempts: t.Integer({ minimum: 0, description: 'Attempts made so far.' }),
  status: DeliveryStatusSchema,
  responseStatus: t.Union([t.Integer(), t.Null()], { description: 'The HTTP status of the last answer; null when none came (refused, timeout).' }),
  at: Time('When the last attempt was made (when the delivery was queued, before the first).'),
  nextAttemptAt: Nullable(Time('When it is tried next; null once delivered or failed.')),
})
export type DeliveryRecord = Static<typeof DeliveryRecord>

export const ListDeliveriesQuery = t.Object({ status: t.Optional(DeliveryStatusSchema), ...pagingQuery(100) })

export const EventsQuery = t.Object({
  types: t.Optional(t.Array(EventTypeSchema, { maxItems: EVENT_TYPES.length, description: 'Only these event types (repeated); all when absent.' })),
  linkIds: t.Optional(t.Array(Id('A link id (lnk_…).'), { maxItems: MAX_FILTER_IDS, description: 'Only events of these links (repeated).' })),
})

export const EventEnvelope = t.Object(
  {
    id: t.String({ description: 'Event id (evt_…); the same on every retry.' }),
    type: EventTypeSchema,
    createdAt: Time('When it happened.'),
    data: t.Unknown({ description: 'Per type: see the event types.' }),
  },
  { description: 'What every delivery and every live-stream message carries.' },
)

/** The retry schedule in words, for the docs. */
export const SCHEDULE_WORDS = RETRY_SCHEDULE_MS.map((ms) =>
  ms < 60_000 ? `${ms / 1000} s` : ms < 3_600_000 ? `${ms / 60_000} min` : `${ms / 3_600_000} h`,
).join(', ')
