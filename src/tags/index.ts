/** Tags: per-user labels on links. Other modules import this file only. */
export { tagRoutes } from './tags.routes'
export { createTagService, type TagService } from './tags.service'
export { createTagStore, type TagStore, type TagStorePort } from './tags.store'
export { createPgTagStore } from './tags.store.pg'
