/** A/B tests: a link's results (GET /links/{id}/test), the verdict at the test's end (one node), the winner promoted. The split is the redirect's. Other modules import this file only. */
export { abTestRoutes } from './ab-tests.routes'
export { type AbTestDeps, type AbTests, type CompletedTest, createAbTests } from './ab-tests.service'
export { type AbTestStorePort, createAbTestStore, type VerdictEventsOf } from './ab-tests.store'
export { createPgAbTestStore } from './ab-tests.store.pg'
export { verdictOf } from './ab-tests.verdict'
