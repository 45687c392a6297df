/**
 * Webhooks per user (contract: "Webhooks and live events"): create with a secret shown once,
 * read, change, delete, their deliveries, a retry and a test event. Members see and change
 * their own; admins everyone's. Throws AppError; never sees HTTP.
 */
import { type Caller, canAccessOwnedBy } from '../auth'
import { type AddressRules, AppError, checkedAddress, forbidden, newId, notFound, pageWindow, parameterError, toIso } from '../shared'
import type { DeliveryRecord, WebhookRecord } from './webhooks.schema'
import { newSecret } from './webhooks.sign'
import type { DeliveryRow, WebhookRow, WebhookStore, WebhookStorePort } from './webhooks.store'
import { type DeliveryStatus, MAX_WEBHOOKS_PER_USER } from './webhooks.values'

export interface WebhookInput {
  url?: string
  events?: string[]
  name?: string | null
  linkIds?: string[]
  tagIds?: string[]
  disabled?: boolean
}

export interface WebhookServiceDeps<S extends WebhookStorePort = WebhookStore> {
  store: S
  allowPrivateNetworks: boolean
  resolveHost?: AddressRules['resolveHost']
  now?: () => number
  /** A delivery became due now (test, retry): the dispatcher looks at once. */
  wake?: () => void
}

export function recordOf(r: WebhookRow): WebhookRecord {
  return {
    id: r.id,
    userId: r.user_id,
    url: r.url,
    events: JSON.parse(r.events),
    name: r.name,
    linkIds: JSON.parse(r.link_ids),
    tagIds: JSON.parse(r.tag_ids),
    disabled: r.disabled === 1,
    failingSince: toIso(r.failing_since),
    createdAt: toIso(r.created_at)!,
  }
}

export function deliveryOf(d: DeliveryRow): DeliveryRecord {
  return {
    eventId: d.event_id,
    type: d.event_type as DeliveryRecord['type'],
    attempts: d.attempts,
    status: d.status,
    responseStatus: d.response_status,
    at: toIso(d.last_attempt_at ?? d.created_at)!,
    nextAttemptAt: d.status === 'pending' ? toIso(d.next_attempt_at) : null,
  }
}

export function createWebhookService<S extends WebhookStorePort = WebhookStore>(deps: WebhookServiceDeps<S>) {
  const store: WebhookStorePort = deps.store
  const clock = deps.now ?? Date.now
  const rules: AddressRules = { allowPrivateNetworks: deps.allowPrivateNetworks, field: 'url', resolveHost: deps.resolveHost }

  /** An http(s) URL without credentials whose host is not private (unless allowed); a name that does not resolve yet is accepted. */
  async function checkUrl(raw: string): Promise<string> {
    let url: URL
    try {
      url = new URL(raw)
    } catch {
      throw parameterError("'url' must be an absolute http or https URL")
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:') throw parameterError("'url' must be an http or https URL")
    if (url.username || url.password) throw parameterError("'url' must not carry a user name or password")
    try {
      await checkedAddress(url, rules)
    } catch (e) {
      if (e instanceof AppError && e.code === 'parameter_error')
        throw parameterError(
          `'url' ${url.hostname} is a private, loopback or link-local address; webhooks are not sent there unless the server sets [webhooks] allowPrivateNetworks = true`,
        )
      // Not resolvable now: it may be later, and every delivery checks it again.
    }
    return url.href
  }

  /** Links and tags a webhook owned by `owner` may name: live ones its owner sees (an unknown or unseen one is 404). */
  async function checkFilters(ownerRole: 'admin' | 'other', owner: string, linkIds: string[] | undefined, tagIds: string[] | undefined) {
    const visible = (rows: { id: string; user_id: string }[]) => new Set(rows.filter((r) => ownerRole === 'admin' || r.user_id === owner).map((r) => r.id))
    if (linkIds?.length) {
      const seen = visible(await store.linkOwners(linkIds))
      const missing = linkIds.find((id) => !seen.has(id))
      if (missing) throw notFound(`link ${missing}`)
    }
    if (tagIds?.length) {
      const seen = visible(await store.tagOwners(tagIds))
      const missing = tagIds.find((id) => !seen.has(id))
      if (missing) throw notFound(`tag ${missing}`)
    }
  }

  async function getOwned(caller: Caller, id: string): Promise<WebhookRow> {
    const row = await store.getWebhook(id)
    if (!row) throw notFound(`webhook ${id}`)
    if (!canAccessOwnedBy(caller, row.user_id)) throw forbidden(`webhook ${id} belongs to another user`)
    return row
  }

  /** The owner's scope: an admin caller acting on their own webhook, else the owner is a member (or less). */
  const ownerRoleOf = (caller: Caller, owner: string): 'admin' | 'other' => (caller.role === 'admin' && caller.userId === owner ? 'admin' : 'other')

  return {
    async create(caller: Caller, body: WebhookInput & { url: string; events: string[] }): Promise<WebhookRecord & { secret: string }> {
      const url = await checkUrl(body.url)
      await checkFilters(ownerRoleOf(caller, caller.userId), caller.userId, body.linkIds, body.tagIds)
      if ((await store.countWebhooks(caller.userId)) >= MAX_WEBHOOKS_PER_USER)
        throw parameterError(`a user may have at most ${MAX_WEBHOOKS_PER_USER} webhooks; delete one first`)
      const now = clock()
      const row: WebhookRow = {
        id: newId('whk'),
        user_id: caller.userId,
        url,
        name: body.name ?? null,
        events: JSON.stringify(body.events),
        link_ids: JSON.stringify(body.linkIds ?? []),
        tag_ids: JSON.stringify(body.tagIds ?? []),
        secret: newSecret(),
        disabled: 0,
        disabled_reason: null,
        failing_since: null,
        created_at: now,
        updated_at: now,
      }
      await store.insertWebhook(row)
      return { ...recordOf(row), secret: row.secret }
    },
    get: async (caller: Caller, id: string): Promise<WebhookRecord> => recordOf(await getOwned(caller, id)),
    async list(caller: Caller, q: { page?: number; pageSize?: number }): Promise<{ webhooks: WebhookRecord[]; total: number }> {
      const { limit, offset } = pageWindow(q.page, q.pageSize)
      const { rows, total } = await store.listWebhooks(caller.role === 'admin' ? null : caller.userId, limit, offset)
      return { webhooks: rows.map(recordOf), total }
    },
    async update(caller: Caller, id: string, body: WebhookInput): Promise<WebhookRecord> {
      const row = await getOwned(caller, id)
      const next: WebhookRow = { ...row, updated_at: clock() }
      if (body.url !== undefined) next.url = await checkUrl(body.url)
      if (body.events !== undefined) next.events = JSON.stringify(body.events)
      if (body.name !== undefined) next.name = body.name
      await checkFilters(ownerRoleOf(caller, row.user_id), row.user_id, body.linkIds, body.tagIds)
      if (body.linkIds !== undefined) next.link_ids = JSON.stringify(body.linkIds)
      if (body.tagIds !== undefined) next.tag_ids = JSON.stringify(body.tagIds)
      if (body.disabled === true) next.disabled = 1
      if (body.disabled === false) Object.assign(next, { disabled: 0, disabled_reason: null, failing_since: null })
      await store.updateWebhook(next)
      if (body.disabled === false) deps.wake?.()
      return recordOf(next)
    },
    async remove(caller: Caller, id: string): Promise<{ id: string }> {
      await getOwned(caller, id)
      await store.deleteWebhook(id)
      return { id }
    },
    async deliveries(
      caller: Caller,
      id: string,
      q: { status?: DeliveryStatus; page?: number; pageSize?: number },
    ): Promise<{ deliveries: DeliveryRecord[]; total: number }> {
      await getOwned(caller, id)
      const { limit, offset } = pageWindow(q.page, q.pageSize)
      const { rows, total } = await store.listDeliveries(id, q.status ?? null, limit, offset)
      return { deliveries: rows.map(deliveryOf), total }
    },
    async retry(caller: Caller, id: string, eventId: string): Promise<DeliveryRecord> {
      await getOwned(caller, id)
      const row = await store.retryDelivery(id, eventId, clock())
      if (!row) throw notFound(`delivery of event ${eventId} to webhook ${id}`)
      deps.wake?.()
      return deliveryOf(row)
    },
    async test(caller: Caller, id: string): Promise<DeliveryRecord> {
      const row = await getOwned(caller, id)
      const delivery = await store.testEvent(row, { webhookId: id, message: 'A test event from shortlink: this endpoint receives its webhooks.' }, clock())
      deps.wake?.()
      return deliveryOf(delivery)
    },
  }
}
export type WebhookService = ReturnType<typeof createWebhookService<WebhookStorePort>>
