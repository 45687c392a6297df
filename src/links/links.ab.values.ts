/**
 * A/B tests as the API defines them (contract: "A/B tests"): the limits of
 * `linkOptions.testVariants` and the goals a test judges by. No imports: the dashboard imports this file.
 */
export const TEST_GOALS = ['leads', 'sales'] as const
export type TestGoal = (typeof TEST_GOALS)[number]
export const TEST_STATUSES = ['running', 'completed', 'inconclusive'] as const
export type TestStatus = (typeof TEST_STATUSES)[number]

export const TEST_VARIANTS_MIN = 2
export const TEST_VARIANTS_MAX = 4
export const TEST_PERCENTAGE_MIN = 10
export const TEST_PERCENTAGE_MAX = 90
/** `testCompletedAt` is at most this far ahead when set. */
export const TEST_MAX_DURATION_MS = 366 * 24 * 3600 * 1000
/** A two-sided p-value under this against every other variant makes the best variant the winner. */
export const TEST_SIGNIFICANCE = 0.05
