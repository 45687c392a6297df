/**
 * One code path for a synchronous store (SQLite) and an asynchronous one (PostgreSQL): a
 * generator yields each store answer (a value, or a promise of one) and gets it back
 * resolved. `runSteps` stays synchronous while every answer is a plain value, so a SQLite
 * request still runs inside one `db.transaction` without a microtask, and goes async at
 * the first promise.
 */
export type Steps<T> = Generator<unknown, T, unknown>

/** `yield* ask(store.x())`: the answer of a store call, typed. */
export function* ask<T>(answer: T | Promise<T>): Generator<unknown, T, unknown> {
  return (yield answer) as T
}

const isThenable = (v: unknown): v is PromiseLike<unknown> => typeof (v as { then?: unknown } | null)?.then === 'function'

export function runSteps<T>(steps: Steps<T>): T | Promise<T> {
  let next = steps.next()
  while (!next.done) {
    if (isThenable(next.value)) return resume(steps, next.value)
    next = steps.next(next.value)
  }
  return next.value
}

async function resume<T>(steps: Steps<T>, first: unknown): Promise<T> {
  let pending = first
  for (;;) {
    let outcome: { ok: true; value: unknown } | { ok: false; error: unknown }
    try {
      outcome = { ok: true, value: await pending }
    } catch (error) {
      outcome = { ok: false, error }
    }
    const next = outcome.ok ? steps.next(outcome.value) : steps.throw(outcome.error)
    if (next.done) return next.value
    pending = next.value
  }
}
