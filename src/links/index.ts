/** Links: the create types (GS1 products included), validation, storage, list/count/search, the stored-link decoder, the URLs a link's health is checked on. Other modules import this file only. */

export { LinkTestResult, TestVariantResult } from './links.ab.schema'
export {
  TEST_GOALS,
  TEST_SIGNIFICANCE,
  TEST_STATUSES,
  TEST_VARIANTS_MAX,
  TEST_VARIANTS_MIN,
  type TestGoal,
  type TestStatus,
} from './links.ab.values'
export { isHosted } from './links.content'
export {
  type BrokenUrl,
  HEALTH_STATUSES,
  HEALTH_TYPES,
  type HealthStatus,
  hasHealth,
  healthUrlsOf,
  type LinkHealth,
  LinkHealthSchema,
  type UrlHealth,
  unknownHealth,
} from './links.health'
export {
  keyOfShortLinkPath,
  type LinkRecord,
  type StoredLinkView,
  type StoredOptions,
  shortLinkOf,
  storedDataOf,
  storedLinkViewOf,
  storedOptionsOf,
} from './links.record'
export { linkRoutes } from './links.routes'
export { FILTER_TYPES, LinkOptions, MAX_KEY_LENGTH, TestVariant } from './links.schema'
export { createLinkService, type ImportedFacts, type LinkService } from './links.service'
export { createLinkStore, type LinkRow, type LinkStore, type LinkStorePort, liveRowsWithTags } from './links.store'
export { createPgLinkStore, LINKS_CHANNEL, liveRowsWithTagsPg, type PgLinkStoreOptions } from './links.store.pg'
