/**
 * POST /track/lead and /track/sale (contract: "Conversions"): a site reports a sign-up or a
 * sale against the click id (`sl_id`) its landing page received. Each is attributed to the
 * click's link and dimensions (statistics group and filter them like visits), counted once
 * per idempotency key for ever (the store's unique keys), and announced as lead.created /
 * sale.created through the outbox in the same transaction. Free of the web framework and of
 * the store's dialect.
 */
import type { Caller } from '../auth'
import type { Settings } from '../config'
import { shortLinkOf } from '../links'
import { AppError, type Logger, newId, notFound, parameterError, toIso } from '../shared'
import type { LeadRecord, SaleRecord, TrackLeadBody, TrackSaleBody } from './conversions.schema'
import { MAX_METADATA_BYTES } from './conversions.schema'
import type { ConversionStoreAsync } from './conversions.store'
import {
  CLICK_COLUMNS,
  type ClickDimensions,
  type ConversionRow,
  type CustomerRow,
  type LinkOfConversion,
  type RecordOutcome,
  type TrackedClick,
} from './conversions.types'

const DAY_MS = 86_400_000

export interface ConversionServiceDeps {
  store: ConversionStoreAsync
  settings: Pick<Settings, 'shortOrigin'>
  attributionDays: number
  /** Writes the clicks this node still holds (a lead often arrives a moment after its visit, before the click batch is written). */
  settleClicks(): Promise<void>
  /** A cluster: how long to wait, after that, for a click another node holds (its flush window); absent on one node. */
  otherNodesFlushMs?: number
  /** After a conversion is recorded: copies it into the events engine (SQLite; statistics read it there). */
  afterRecord?(): Promise<void>
  log: Logger
  now?: () => number
}

export function createConversionService(deps: ConversionServiceDeps) {
  const now = deps.now ?? Date.now

  /** The click `clickId`, written or not yet: asked again once the held clicks are written. */
  async function findClick(clickId: string): Promise<TrackedClick | null> {
    const found = await deps.store.click(clickId)
    if (found) return found
    await deps.settleClicks()
    const held = await deps.store.click(clickId)
    if (held || !deps.otherNodesFlushMs) return held
    await Bun.sleep(deps.otherNodesFlushMs)
    return deps.store.click(clickId)
  }

  /** A click the caller may track against, within the attribution window. */
  async function usableClick(caller: Caller, clickId: string, field: string): Promise<TrackedClick> {
    const click = await findClick(clickId)
    // Another user's click is as unknown as none (its existence is not the caller's to learn).
    if (!click || (caller.role !== 'admin' && click.link_user_id !== caller.userId)) throw notFound(`'${field}' click ${clickId}`)
    if (click.at < now() - deps.attributionDays * DAY_MS)
      throw parameterError(`'${field}' click ${clickId} is older than the attribution window of ${deps.attributionDays} days`)
    return click
  }

  async function recorded(write: Parameters<ConversionStoreAsync['record']>[0]): Promise<RecordOutcome> {
    const outcome = await deps.store.record(write)
    if (outcome.outcome === 'created' && deps.afterRecord)
      // Stored already: a copy that fails is made at the next one (or the next start).
      await deps.afterRecord().catch((e) => deps.log.warn('conversion not yet copied to the events store', { error: String(e) }))
    return outcome
  }

  const linkOf = (link: LinkOfConversion) => ({
    id: link.id,
    domain: link.domain,
    key: link.key,
    shortLink: shortLinkOf(deps.settings, link.domain, link.key, link.link_type),
    url: link.destination,
    partnerId: null,
    programId: null,
    tenantId: null,
    externalId: null,
  })
  const customerOf = (c: CustomerRow) => ({ id: c.id, name: c.name, email: c.email, avatar: c.avatar, externalId: c.external_id })

  function leadRecordOf(row: ConversionRow, customer: CustomerRow, link: LinkOfConversion): LeadRecord {
    return {
      id: row.id,
      eventName: row.event_name,
      clickId: row.click_id,
      linkId: link.id,
      eventQuantity: row.quantity,
      createdAt: toIso(row.at)!,
      click: { id: row.click_id },
      link: linkOf(link),
      customer: customerOf(customer),
      metadata: row.metadata === null ? null : JSON.parse(row.metadata),
    }
  }

  function saleRecordOf(row: ConversionRow, customer: CustomerRow, link: LinkOfConversion): SaleRecord {
    return {
      id: row.id,
      eventName: row.event_name,
      linkId: link.id,
      clickId: row.click_id,
      createdAt: toIso(row.at)!,
      customer: customerOf(customer),
      sale: {
        amount: row.amount!,
        currency: row.currency!,
        paymentProcessor: row.payment_processor!,
        invoiceId: row.invoice_id,
        metadata: row.metadata === null ? null : JSON.parse(row.metadata),
      },
      link: linkOf(link),
    }
  }

  /** Webhook data: the record, its link with `destination` (contract: "the record above plus link"). */
  const eventLink = (link: LinkOfConversion) => ({ ...linkOf(link), destination: link.destination })

  function dimensionsOf(click: TrackedClick): ClickDimensions {
    const d = {} as Record<string, unknown>
    for (const c of CLICK_COLUMNS) d[c] = click[c]
    return d as ClickDimensions
  }

  function newCustomer(
    ownerId: string,
    externalId: string,
    body: { customerName?: string | null; customerEmail?: string | null; customerAvatar?: string | null },
    at: number,
  ): CustomerRow {
    return {
      id: newId('cus'),
      user_id: ownerId,
      external_id: externalId,
      name: body.customerName ?? null,
      email: body.customerEmail ?? null,
      avatar: body.customerAvatar ?? null,
      created_at: at,
    }
  }

  return {
    async trackLead(caller: Caller, body: TrackLeadBody): Promise<LeadRecord> {
      checkText(body)
      const metadata = metadataOf(body.metadata)
      const click = await usableClick(caller, body.clickId, 'clickId')
      const at = now()
      const row: ConversionRow = {
        id: newId('led'),
        kind: 'lead',
        user_id: click.link_user_id,
        customer_id: '',
        click_id: click.click_id,
        link_seq: click.link_seq,
        event_name: body.eventName,
        quantity: body.eventQuantity ?? 1,
        amount: null,
        currency: null,
        payment_processor: null,
        invoice_id: null,
        metadata,
        body_hash: null,
        at,
        click_at: click.at,
        ...dimensionsOf(click),
        variant: click.variant ?? null,
      }
      const r = await recorded({
        row,
        customer: newCustomer(click.link_user_id, body.customerExternalId, body, at),
        event: (row, customer, link, tagIds) => ({
          type: 'lead.created',
          userId: link.user_id,
          linkId: link.id,
          tagIds,
          data: { ...leadRecordOf(row, customer, link), link: eventLink(link) },
        }),
      })
      return leadRecordOf(r.row, r.customer, r.link)
    },

    async trackSale(caller: Caller, body: TrackSaleBody): Promise<SaleRecord> {
      checkText(body)
      const metadata = metadataOf(body.metadata)
      const lead = await deps.store.latestLead(body.customerExternalId, caller.role === 'admin' ? null : caller.userId, body.leadEventName ?? null)
      let click: TrackedClick
      if (lead) click = lead
      else if (body.clickId) click = await usableClick(caller, body.clickId, 'clickId')
      else
        throw notFound(
          `'customerExternalId' customer ${body.customerExternalId} with a lead${body.leadEventName ? ` named '${body.leadEventName}'` : ''} (give clickId to record a sale without one)`,
        )
      const at = now()
      const normalized = {
        customerExternalId: body.customerExternalId,
        amount: body.amount,
        currency: (body.currency ?? 'usd').toLowerCase(),
        eventName: body.eventName ?? 'Purchase',
        paymentProcessor: body.paymentProcessor ?? 'custom',
        invoiceId: body.invoiceId ?? null,
        metadata: body.metadata ?? null,
        leadEventName: body.leadEventName ?? null,
        clickId: body.clickId ?? null,
        customerName: body.customerName ?? null,
        customerEmail: body.customerEmail ?? null,
        customerAvatar: body.customerAvatar ?? null,
      }
      const row: ConversionRow = {
        id: newId('sal'),
        kind: 'sale',
        user_id: click.link_user_id,
        customer_id: '',
        click_id: click.click_id,
        link_seq: click.link_seq,
        event_name: normalized.eventName,
        quantity: 1,
        amount: normalized.amount,
        currency: normalized.currency,
        payment_processor: normalized.paymentProcessor,
        invoice_id: normalized.invoiceId,
        metadata,
        body_hash: new Bun.CryptoHasher('sha256').update(canonicalJson(normalized)).digest('hex'),
        at,
        click_at: click.at,
        ...dimensionsOf(click),
        variant: click.variant ?? null,
      }
      const r = await recorded({
        row,
        customer: newCustomer(click.link_user_id, body.customerExternalId, body, at),
        event: (row, customer, link, tagIds) => ({
          type: 'sale.created',
          userId: link.user_id,
          linkId: link.id,
          tagIds,
          data: { ...saleRecordOf(row, customer, link), link: eventLink(link) },
        }),
      })
      if (r.outcome === 'conflict')
        throw new AppError('conflict', `'invoiceId' ${normalized.invoiceId} was recorded with another body (sale ${r.row.id}); an invoice counts once`)
      return saleRecordOf(r.row, r.customer, r.link)
    },
  }
}
export type ConversionService = ReturnType<typeof createConversionService>

/** The metadata as stored (JSON text), at most MAX_METADATA_BYTES. */
function metadataOf(metadata: Record<string, unknown> | null | undefined): string | null {
  if (metadata == null) return null
  const text = JSON.stringify(metadata)
  if (Buffer.byteLength(text) > MAX_METADATA_BYTES) throw parameterError(`'metadata' must be at most ${MAX_METADATA_BYTES} bytes as JSON`)
  return text
}

/** Text fields cannot hold NUL (PostgreSQL's text refuses it; no name or id needs it). */
function checkText(body: Record<string, unknown>): void {
  for (const [k, v] of Object.entries(body)) if (typeof v === 'string' && v.includes('\0')) throw parameterError(`'${k}' must not contain NUL characters`)
}

/** JSON with object keys sorted at every level: equal bodies give equal text whatever their key order. */
function canonicalJson(v: unknown): string {
  if (v === null || typeof v !== 'object') return JSON.stringify(v)
  if (Array.isArray(v)) return `[${v.map(canonicalJson).join(',')}]`
  const o = v as Record<string, unknown>
  return `{${Object.keys(o)
    .sort()
    .filter((k) => o[k] !== undefined)
    .map((k) => `${JSON.stringify(k)}:${canonicalJson(o[k])}`)
    .join(',')}}`
}
