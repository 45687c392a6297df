/**
 * The delivery engine of a node over a store: the dispatcher with its sender and envelope.
 * It runs in a worker thread with a connection of its own (webhooks.dispatch.worker.ts),
 * so fan-out, leases, signing, sending and outcome writes never take the event loop that
 * answers redirects; a store only this process can open (in-memory SQLite) runs it here.
 */
import type { Settings } from '../config'
import { shortLinkOf } from '../links'
import type { Logger } from '../shared'
import { createDispatcher } from './webhooks.dispatch'
import { envelopeOf, type ShortLinkOf } from './webhooks.envelope'
import { createSender } from './webhooks.send'
import type { WebhookStorePort } from './webhooks.store'

export interface DeliveryOptions {
  store: WebhookStorePort
  settings: Pick<Settings, 'baseUrl' | 'shortOrigin'>
  allowPrivateNetworks: boolean
  log: Logger
  soleNode: boolean
  now?: () => number
  pollMs?: number
  concurrency?: number
  resolveHost?: (host: string) => Promise<string[]>
}

/**
 * The public short link of a link from the configuration, as the API shows it (links' own
 * shortLinkOf: `https://<domain>[:port]/<key>`, a GS1 product's Digital Link URI). Events carry
 * the link's type for types whose short link has another form.
 */
export const shortLinkFrom =
  (settings: Pick<Settings, 'shortOrigin'>): ShortLinkOf =>
  ({ domain, key, linkType }) =>
    shortLinkOf(settings, domain, key, linkType)

export function createDelivery(o: DeliveryOptions) {
  const shortLinkOf = shortLinkFrom(o.settings)
  return createDispatcher({
    store: o.store,
    send: createSender({
      allowPrivateNetworks: o.allowPrivateNetworks,
      userAgent: `shortlink-webhooks/1 (+${o.settings.baseUrl})`,
      resolveHost: o.resolveHost,
    }),
    render: (c) => envelopeOf({ id: c.event_id, type: c.event_type, data: c.data, created_at: c.created_at }, shortLinkOf),
    log: o.log,
    now: o.now,
    pollMs: o.pollMs,
    concurrency: o.concurrency,
    soleNode: o.soleNode,
  })
}
