/**
 * Values of the webhook API that clients show or count on. No imports: the dashboard imports
 * this file (the schemas in webhooks.schema.ts are built from it).
 */

/** A delivery's state: waiting (first attempt or a retry due), answered 2xx, or out of attempts. */
export const DELIVERY_STATUSES = ['pending', 'delivered', 'failed'] as const
export type DeliveryStatus = (typeof DELIVERY_STATUSES)[number]

/** Waits after the 1st, 2nd, … failed attempt (contract: about 5 s, 5 min, 30 min, 2 h, 5 h, 10 h and 10 h); then failed. */
export const RETRY_SCHEDULE_MS = [5_000, 300_000, 1_800_000, 7_200_000, 18_000_000, 36_000_000, 36_000_000] as const
/** Attempts before a delivery is marked failed: the first and one per retry. */
export const MAX_ATTEMPTS = RETRY_SCHEDULE_MS.length + 1
/** An answer must be complete within this (connect, headers and the capped body). */
export const DELIVERY_TIMEOUT_MS = 10_000
/** An endpoint whose deliveries have failed without a success for this long is disabled. */
export const DISABLE_AFTER_MS = 5 * 86_400_000
/** Webhooks one user may have. */
export const MAX_WEBHOOKS_PER_USER = 100
/** Links or tags one webhook may name. */
export const MAX_FILTER_IDS = 100
