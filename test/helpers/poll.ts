/**
 * Polls `read` until `done` holds for its answer (by default: the answer is truthy) and returns
 * that answer. The deadline only bounds a failing test; it is not a timed assertion.
 */
export async function until<T>(
  what: string,
  read: () => Promise<T>,
  done: (value: T) => boolean = (value) => Boolean(value),
  timeoutMs = 30_000,
): Promise<Exclude<T, null | undefined | false>> {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const value = await read()
    if (done(value)) return value as Exclude<T, null | undefined | false>
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}: still ${JSON.stringify(value)} after ${timeoutMs} ms`)
    await Bun.sleep(20) // a poll interval, not a wait standing in for synchronisation
  }
}
