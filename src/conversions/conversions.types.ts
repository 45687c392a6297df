/** The rows of conversions (migrations SQLite 0018 and 0019, PostgreSQL 0013 and 0014), shared by both stores and the service. */
import type { NewEvent } from '../events'
import { EVENT_STRINGS } from '../stats'

/** A visit's dimensions as tracked_clicks and conversions keep them: the click events' columns, in their order. */
export const CLICK_COLUMNS = ['scan', ...EVENT_STRINGS.map(([column]) => column)] as const
export type ClickDimensions = { scan: number } & Record<Exclude<(typeof CLICK_COLUMNS)[number], 'scan'>, string | null>

/** A tracked click (`sl_id`) with its link as it is now. */
export type TrackedClick = ClickDimensions & {
  click_id: string
  link_seq: number
  at: number
  link_id: string
  link_user_id: string
  link_domain: string
  link_key: string
  link_type: string
  link_destination: string
  /** The A/B test variant the visit went to (index in the link's `testVariants`); null outside a test. */
  variant: number | null
}

export interface CustomerRow {
  id: string
  user_id: string
  external_id: string
  name: string | null
  email: string | null
  avatar: string | null
  created_at: number
}

export const CONVERSION_COLUMNS = [
  'id',
  'kind',
  'user_id',
  'customer_id',
  'click_id',
  'link_seq',
  'event_name',
  'quantity',
  'amount',
  'currency',
  'payment_processor',
  'invoice_id',
  'metadata',
  'body_hash',
  'at',
  'click_at',
  ...CLICK_COLUMNS,
  'variant',
] as const

export type ConversionRow = ClickDimensions & {
  id: string
  kind: 'lead' | 'sale'
  /** The owner of the link (whose customers and invoices these are). */
  user_id: string
  customer_id: string
  click_id: string
  link_seq: number
  event_name: string
  quantity: number
  amount: number | null
  currency: string | null
  payment_processor: string | null
  invoice_id: string | null
  /** JSON text. */
  metadata: string | null
  body_hash: string | null
  at: number
  click_at: number
  /** Its click's A/B test variant (null outside a test): a test's conversions per variant (src/ab-tests). */
  variant: number | null
}

export interface LinkOfConversion {
  id: string
  user_id: string
  domain: string
  key: string
  link_type: string
  destination: string
}

export interface ConversionWrite {
  row: ConversionRow
  /** The customer to create when none has this owner and external id (its id is used then). */
  customer: CustomerRow
  /** The outbox event of a new conversion (lead.created, sale.created). */
  event(row: ConversionRow, customer: CustomerRow, link: LinkOfConversion, tagIds: string[]): NewEvent
}

/** created: written now; existing: the first with this key (same body); conflict: a sale's invoice with another body. */
export interface RecordOutcome {
  outcome: 'created' | 'existing' | 'conflict'
  row: ConversionRow
  customer: CustomerRow
  link: LinkOfConversion
}
