/** The retry schedule applied to one attempt's outcome (contract: "Webhooks and live events"). */
import { MAX_ATTEMPTS, RETRY_SCHEDULE_MS } from './webhooks.values'

/** One attempt of a delivery: `attempts` made before it, its answer (null: none), and when. */
export interface DeliveryOutcome {
  webhookId: string
  eventSeq: number
  attempts: number
  ok: boolean
  responseStatus: number | null
  at: number
}

/**
 * Failing without a success for this long is an outage: the first success afterwards makes the
 * webhook's waiting deliveries due at once (its backlog drains instead of waiting for each
 * retry's turn, up to 5 min away after a minute's outage), while a failure among successes
 * (the next success comes within moments) keeps its own schedule.
 */
export const OUTAGE_MS = 10_000

/** A delivery after an attempt: delivered, retried later, or failed for good. */
export function nextState(o: DeliveryOutcome): { status: 'delivered' | 'pending' | 'failed'; nextAttemptAt: number | null } {
  if (o.ok) return { status: 'delivered', nextAttemptAt: null }
  const made = o.attempts + 1
  if (made >= MAX_ATTEMPTS) return { status: 'failed', nextAttemptAt: null }
  return { status: 'pending', nextAttemptAt: o.at + RETRY_SCHEDULE_MS[made - 1]! }
}
