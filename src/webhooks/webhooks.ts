/**
 * One node's webhooks and live events, assembled over a store: the service behind the routes,
 * the dispatcher that delivers, and the live stream. `start` after the server listens, `stop`
 * before the store closes.
 */
import type { Logger } from '../shared'
import { createDispatcher } from './webhooks.dispatch'
import { envelopeOf, type ShortLinkOf } from './webhooks.envelope'
import { createSender } from './webhooks.send'
import { createWebhookService } from './webhooks.service'
import type { WebhookStorePort } from './webhooks.store'
import { createLiveStream } from './webhooks.stream'

export interface WebhooksOptions {
  store: WebhookStorePort
  /** `[webhooks] allowPrivateNetworks`. */
  allowPrivateNetworks: boolean
  /** The public short link of a link (the click writer stores links without it). */
  shortLinkOf: ShortLinkOf
  /** Sent as User-Agent: who is calling. */
  baseUrl: string
  log: Logger
  /** One node on its own store (SQLite). */
  soleNode: boolean
  now?: () => number
  /** Dispatcher and stream polling (tests lower it). */
  pollMs?: number
  concurrency?: number
  resolveHost?: (host: string) => Promise<string[]>
}

export function createWebhooks(o: WebhooksOptions) {
  const send = createSender({ allowPrivateNetworks: o.allowPrivateNetworks, userAgent: `shortlink-webhooks/1 (+${o.baseUrl})`, resolveHost: o.resolveHost })
  const dispatcher = createDispatcher({
    store: o.store,
    send,
    render: (c) => envelopeOf({ id: c.event_id, type: c.event_type, data: c.data, created_at: c.created_at }, o.shortLinkOf),
    log: o.log,
    now: o.now,
    pollMs: o.pollMs,
    concurrency: o.concurrency,
    soleNode: o.soleNode,
  })
  const stream = createLiveStream({ store: o.store, shortLinkOf: o.shortLinkOf, log: o.log, now: o.now, pollMs: o.pollMs })
  const service = createWebhookService({
    store: o.store,
    allowPrivateNetworks: o.allowPrivateNetworks,
    resolveHost: o.resolveHost,
    now: o.now,
    wake: dispatcher.wake,
  })
  return {
    service,
    stream,
    dispatcher,
    start: dispatcher.start,
    /** Events were committed in this process (e.g. a click batch by the writer thread). */
    wake() {
      dispatcher.wake()
      stream.wake()
    },
    /** Ends live streams, then lets deliveries in flight finish and writes their outcomes. */
    async stop() {
      stream.closeAll()
      await dispatcher.stop()
    },
    /** For metrics: attempts by result, and the deliveries waiting. */
    async metrics() {
      return { ...dispatcher.stats(), pending: await o.store.pendingCount(), liveStreams: stream.count() }
    },
  }
}
export type Webhooks = ReturnType<typeof createWebhooks>
