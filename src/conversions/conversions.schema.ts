/**
 * POST /track/lead and /track/sale (contract: "Conversions"): Dub's request fields, and answers
 * that are supersets of Dub's, so a site using Dub's SDKs moves by changing the SDK's server
 * URL and key. Optional fields take `null` as absent (Dub's SDKs send them so).
 */
import { type Static, type TSchema, Type as t } from '@sinclair/typebox'

const strict = { additionalProperties: false } as const
const orNull = <T extends TSchema>(s: T) => t.Optional(t.Union([s, t.Null()]))

/** Metadata is a JSON object of at most this many bytes (as JSON). */
export const MAX_METADATA_BYTES = 10_000
/** The largest sale amount, in the currency's minor unit. */
export const MAX_SALE_AMOUNT = 1_000_000_000_000

export const PAYMENT_PROCESSORS = ['stripe', 'shopify', 'polar', 'paddle', 'apple', 'revenuecat', 'lemonsqueezy', 'dub', 'custom'] as const
export type PaymentProcessor = (typeof PAYMENT_PROCESSORS)[number]

const Metadata = t.Record(t.String(), t.Unknown(), { description: `A JSON object of at most ${MAX_METADATA_BYTES} bytes, kept with the event.` })
const CustomerFields = {
  customerName: orNull(t.String({ maxLength: 255, description: "The customer's name." })),
  customerEmail: orNull(t.String({ maxLength: 255, description: "The customer's email address." })),
  customerAvatar: orNull(t.String({ maxLength: 2000, description: "The URL of the customer's picture." })),
}

export const TrackLeadBody = t.Object(
  {
    clickId: t.String({ minLength: 1, maxLength: 64, description: 'The `sl_id` query parameter the landing page received.' }),
    eventName: t.String({ minLength: 1, maxLength: 255, description: 'What happened, e.g. `Sign up`.' }),
    customerExternalId: t.String({ minLength: 1, maxLength: 100, description: "The customer's id in the site's own system." }),
    ...CustomerFields,
    eventQuantity: orNull(t.Integer({ minimum: 1, maximum: 100, description: 'Leads counted at once (default 1).' })),
    mode: orNull(
      t.Union([t.Literal('async'), t.Literal('wait'), t.Literal('deferred')], {
        description: "Accepted for Dub's SDKs; every call is stored before it is answered, whatever the mode.",
      }),
    ),
    metadata: orNull(Metadata),
  },
  strict,
)
export type TrackLeadBody = Static<typeof TrackLeadBody>

export const TrackSaleBody = t.Object(
  {
    customerExternalId: t.String({ minLength: 1, maxLength: 100, description: "The customer's id in the site's own system (as given to /track/lead)." }),
    amount: t.Integer({ minimum: 1, maximum: MAX_SALE_AMOUNT, description: "In the currency's minor unit (cents), at most 10^12." }),
    currency: orNull(t.String({ pattern: '^[A-Za-z]{3}$', description: 'ISO 4217 code; stored lower-case; default `usd`.' })),
    eventName: orNull(t.String({ minLength: 1, maxLength: 255, description: 'Default `Purchase`.' })),
    invoiceId: orNull(
      t.String({
        minLength: 1,
        maxLength: 255,
        description:
          'Idempotency key, kept for ever: the same invoice with the same body answers the first sale and counts nothing; with another body, 409 conflict.',
      }),
    ),
    paymentProcessor: orNull(
      t.Union(
        PAYMENT_PROCESSORS.map((p) => t.Literal(p)),
        { description: 'Default `custom`.' },
      ),
    ),
    metadata: orNull(Metadata),
    leadEventName: orNull(
      t.String({ minLength: 1, maxLength: 255, description: "The sale goes to the click of the customer's most recent lead of this name." }),
    ),
    clickId: orNull(
      t.String({
        minLength: 1,
        maxLength: 64,
        description: 'A customer without a lead is created on this click (a direct sale); without it, an unknown customer is 404.',
      }),
    ),
    ...CustomerFields,
  },
  strict,
)
export type TrackSaleBody = Static<typeof TrackSaleBody>

const ConversionLink = t.Object({
  id: t.String(),
  domain: t.String(),
  key: t.String(),
  shortLink: t.String(),
  url: t.String({ description: "The link's destination." }),
  partnerId: t.Null(),
  programId: t.Null(),
  tenantId: t.Null(),
  externalId: t.Null(),
})

const Customer = {
  name: t.Union([t.String(), t.Null()]),
  email: t.Union([t.String(), t.Null()]),
  avatar: t.Union([t.String(), t.Null()]),
  externalId: t.String(),
}

export const LeadRecord = t.Object({
  id: t.String({ description: 'led_…' }),
  eventName: t.String(),
  clickId: t.String(),
  linkId: t.String(),
  eventQuantity: t.Integer(),
  createdAt: t.String({ format: 'date-time' }),
  click: t.Object({ id: t.String() }),
  link: ConversionLink,
  customer: t.Object({ id: t.String({ description: 'cus_…' }), ...Customer }),
  metadata: t.Union([t.Record(t.String(), t.Unknown()), t.Null()]),
})
export type LeadRecord = Static<typeof LeadRecord>

export const SaleRecord = t.Object({
  id: t.String({ description: 'sal_…' }),
  eventName: t.String(),
  linkId: t.String(),
  clickId: t.String(),
  createdAt: t.String({ format: 'date-time' }),
  customer: t.Object({ id: t.String({ description: 'cus_…' }), ...Customer }),
  sale: t.Object({
    amount: t.Integer(),
    currency: t.String(),
    paymentProcessor: t.String(),
    invoiceId: t.Union([t.String(), t.Null()]),
    metadata: t.Union([t.Record(t.String(), t.Unknown()), t.Null()]),
  }),
  link: ConversionLink,
})
export type SaleRecord = Static<typeof SaleRecord>
