/**
 * Webhook delivery on its own thread (webhooks.delivery.ts says why), over its own connection
 * to the node's store: the SQLite file (WAL: it writes beside the server and the click writer)
 * or PostgreSQL. `onmessage` is registered before anything else (a compiled binary needs that
 * of a worker).
 */
import type { SQL } from 'bun'
import { type Config, deriveSettings } from '../config'
import { createLogger } from '../shared'
import { connectPostgres, connectStore, type Db } from '../store'
import { createDelivery } from './webhooks.delivery'
import type { Dispatcher } from './webhooks.dispatch'
import { createWebhookStore } from './webhooks.store'
import { createPgWebhookStore } from './webhooks.store.pg'

declare const self: Worker

export type DeliveryStore = { sqlite: string } | { postgres: string }

export type WorkerMessage =
  | { type: 'start'; config: Config; store: DeliveryStore; soleNode: boolean; quiet: boolean; pollMs?: number; concurrency?: number }
  | { type: 'wake' }
  | { type: 'stats'; id: number }
  | { type: 'idle'; id: number }
  | { type: 'stop' }

/** Connections a node's delivery thread holds on PostgreSQL. */
const PG_POOL = 4

let dispatcher: Dispatcher | null = null
let db: Db | null = null
let sql: SQL | null = null

self.onmessage = async (ev: MessageEvent<WorkerMessage>) => {
  const m = ev.data
  try {
    if (m.type === 'start') {
      if ('sqlite' in m.store) db = connectStore(m.store.sqlite)
      else sql = connectPostgres(m.store.postgres, { max: PG_POOL })
      const store = db ? createWebhookStore(db) : createPgWebhookStore(sql!)
      dispatcher = createDelivery({
        store,
        settings: deriveSettings(m.config),
        allowPrivateNetworks: m.config.webhooks.allowPrivateNetworks,
        log: createLogger(m.quiet),
        soleNode: m.soleNode,
        pollMs: m.pollMs,
        concurrency: m.concurrency,
      })
      await dispatcher.start()
      postMessage({ type: 'started' })
    } else if (m.type === 'wake') dispatcher?.wake()
    else if (m.type === 'stats') postMessage({ type: 'stats', id: m.id, stats: dispatcher?.stats() ?? null })
    else if (m.type === 'idle') {
      await dispatcher?.idle()
      postMessage({ type: 'idle', id: m.id })
    } else if (m.type === 'stop') {
      await dispatcher?.stop()
      db?.close()
      await sql?.close({ timeout: 5 })
      postMessage({ type: 'stopped' })
    }
  } catch (e) {
    postMessage({ type: 'failed', error: String((e as Error)?.stack ?? e) })
  }
}
