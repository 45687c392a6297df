import { Elysia } from 'elysia'
import { callerOf } from '../auth'
import { errorResponses } from '../docs'
import { LeadRecord, SaleRecord, TrackLeadBody, TrackSaleBody } from './conversions.schema'
import type { ConversionService } from './conversions.service'

const errors = errorResponses(400, 401, 403, 404, 409, 422, 429)
const doc = (summary: string, description: string) => ({ tags: ['Conversions'], summary, description })

export function conversionRoutes({ conversions }: { conversions: ConversionService }) {
  return new Elysia({ name: 'conversions', normalize: false })
    .post('/track/lead', ({ body, request }) => conversions.trackLead(callerOf(request), body), {
      body: TrackLeadBody,
      response: { 200: LeadRecord, ...errors },
      detail: doc(
        'Track a lead',
        [
          "A sign-up (or any lead) against the click id the landing page received as `sl_id` (the link needs `linkOptions.trackConversion`). Dub's request and answer:",
          "Dub SDKs work with only their server URL and key changed. The lead carries the click's link and dimensions into statistics (`conversions=true`).",
          'The same `customerExternalId` and `eventName` again answer the first lead and count nothing (for ever). An unknown click id, or one of a link',
          'the caller may not write, is 404; a click older than `[conversions] attributionDays` (default 90) is 422. Readonly keys: 403. `mode` is accepted and',
          'changes nothing: every call is stored before it is answered. Announced as `lead.created`.',
        ].join(' '),
      ),
    })
    .post('/track/sale', ({ body, request }) => conversions.trackSale(callerOf(request), body), {
      body: TrackSaleBody,
      response: { 200: SaleRecord, ...errors },
      detail: doc(
        'Track a sale',
        [
          "A sale of the customer `customerExternalId` (Dub's request and answer). It goes to the click of the customer's most recent lead",
          "(of `leadEventName` when given; members: among their own links' customers); with `clickId`, a customer without a lead is created on that click.",
          'An unknown customer without `clickId` is 404. `amount` is in minor units, `currency` ISO 4217 (stored lower-case, default usd).',
          'The same `invoiceId` with the same body answers the first sale and counts nothing (kept for ever); with another body it is 409 `conflict`.',
          'Announced as `sale.created`.',
        ].join(' '),
      ),
    })
}
