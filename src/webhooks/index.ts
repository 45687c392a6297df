/** Webhooks and live events: webhook endpoints and their deliveries (signed, retried, leased across nodes), the dispatcher that sends them from the event outbox, and GET /events as Server-Sent Events. Other modules import this file only. */
export { createWebhooks, type Webhooks, type WebhooksOptions } from './webhooks'
export { webhookRoutes } from './webhooks.routes'
export { createWebhookStore, type WebhookStorePort } from './webhooks.store'
export { createPgWebhookStore } from './webhooks.store.pg'
