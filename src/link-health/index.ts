/** Link health: checking the destinations of live links, the record's `health`, the redirect's fallback lookup, `POST /links/{id}/health`. Other modules import this file only. */

export { leaseLeadership } from './link-health.rounds'
export { linkHealthRoutes } from './link-health.routes'
export { createLinkHealth, type LinkHealthDeps, type LinkHealthService, type OnHealthChange } from './link-health.service'
export { createHealthStore, type HealthStorePort } from './link-health.store'
export { createPgHealthStore } from './link-health.store.pg'
