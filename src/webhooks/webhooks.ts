/**
 * One node's webhooks and live events, assembled over a store: the service behind the routes,
 * the live stream, and delivery (webhooks.delivery.ts), in a worker thread over its own
 * connection to the same store, or in this thread for a store only this process can open
 * (in-memory SQLite: tests). `start` after the server listens, `stop` before the store closes.
 */
import { type Config, deriveSettings } from '../config'
import { onEventsAppended } from '../events'
import type { Logger } from '../shared'
import { createDelivery, shortLinkFrom } from './webhooks.delivery'
import type { DispatcherStats } from './webhooks.dispatch'
import { type DeliveryHandle, deliveryThread } from './webhooks.dispatch.thread'
import type { DeliveryStore } from './webhooks.dispatch.worker'
import { createWebhookService } from './webhooks.service'
import type { WebhookStorePort } from './webhooks.store'
import { createLiveStream } from './webhooks.stream'

export interface WebhooksOptions {
  /** The node's store: the API and the live stream read and write through it. */
  store: WebhookStorePort
  config: Config
  log: Logger
  /** Where deliveries run: a worker thread opening this store itself, or (null) this thread over `store`. */
  deliveryStore: DeliveryStore | null
  /** One node on its own store (SQLite): leases a previous run left end at start. */
  soleNode: boolean
  now?: () => number
  pollMs?: number
  concurrency?: number
  resolveHost?: (host: string) => Promise<string[]>
}

export function createWebhooks(o: WebhooksOptions) {
  const settings = deriveSettings(o.config)
  const allowPrivateNetworks = o.config.webhooks.allowPrivateNetworks
  const delivery: DeliveryHandle = o.deliveryStore
    ? deliveryThread({ config: o.config, store: o.deliveryStore, soleNode: o.soleNode, log: o.log, pollMs: o.pollMs, concurrency: o.concurrency })
    : (() => {
        const d = createDelivery({ ...o, settings, allowPrivateNetworks })
        return { start: d.start, wake: d.wake, stop: d.stop, idle: d.idle, stats: async (): Promise<DispatcherStats> => d.stats() }
      })()
  const stream = createLiveStream({ store: o.store, shortLinkOf: shortLinkFrom(settings), log: o.log, now: o.now, pollMs: o.pollMs })
  const service = createWebhookService({ store: o.store, allowPrivateNetworks, resolveHost: o.resolveHost, now: o.now, wake: delivery.wake })
  // Link and domain writes of this process: deliver their events now, not at the next poll.
  const unsubscribe = onEventsAppended(delivery.wake)
  return {
    service,
    stream,
    delivery,
    start: delivery.start,
    /** Events were committed in this process (e.g. a click batch by the writer thread). */
    wake() {
      delivery.wake()
      stream.wake()
    },
    /** Ends live streams, then lets deliveries in flight finish and writes their outcomes. */
    async stop() {
      unsubscribe()
      stream.closeAll()
      await delivery.stop()
    },
    /** For metrics: attempts by result (this node), deliveries waiting (all nodes), live streams open here. */
    async metrics() {
      return { ...(await delivery.stats()), pending: await o.store.pendingCount(), liveStreams: stream.count() }
    },
  }
}
export type Webhooks = ReturnType<typeof createWebhooks>
