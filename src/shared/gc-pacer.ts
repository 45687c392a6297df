/**
 * Minor garbage collections at a steady pace while requests are served. Under a redirect
 * load JSC lets short-lived garbage (requests, headers, strings) pile up before it collects:
 * RSS went from about 110 MB to 170-310 MB within seconds, where a bare Bun.serve under the
 * same TLS load grows by 10 MB. An eden collection every 100 ms while serving cut the peak
 * of a 30 s load at ~50k req/s from 277 to 207 MB and p99 from 1.44× to 1.08× bare Bun's
 * (scripts/bench/redirect.ts; every 500 ms did less, a full collection every second was worse);
 * an eden collection of a small young generation costs well under a millisecond. With no
 * requests, the timer does nothing but one full collection once the server goes quiet.
 */
export interface GcPacer {
  /** Count one request (the pacer collects only while there are some). */
  served(): void
  stop(): void
}

/** Runs `tick` every `ms` until the returned function is called (the pacer's clock; tests drive their own). */
export type Every = (tick: () => void, ms: number) => () => void

const everyUnref: Every = (tick, ms) => {
  const timer = setInterval(tick, ms)
  timer.unref()
  return () => clearInterval(timer)
}

export function createGcPacer(opts: { everyMs?: number; collect?: () => void; settle?: () => void; settleAfterTicks?: number; every?: Every } = {}): GcPacer {
  const collect = opts.collect ?? (() => Bun.gc(false))
  // A full collection once the server goes quiet (and once after start-up): what the eden
  // collections left behind under load, and the start-up's garbage (migrations, route
  // compilation, the OpenAPI document), is given back, so an idle server returns to its idle
  // RSS (docs/bench/redirect.md). Never while requests are being served: it costs ~10-30 ms.
  const settle =
    opts.settle ??
    (() => {
      Bun.gc(true)
      Bun.shrink() // and hands freed heap pages back to the system
    })
  const settleAfter = opts.settleAfterTicks ?? 10
  let served = 0
  let seen = 0
  let quietTicks = 0
  let settled = false
  const stop = (opts.every ?? everyUnref)(() => {
    if (served === seen) {
      if (!settled && ++quietTicks >= settleAfter) {
        settled = true
        settle()
      }
      return
    }
    seen = served
    quietTicks = 0
    settled = false
    collect()
  }, opts.everyMs ?? 100)
  return {
    served: () => {
      served++
    },
    stop,
  }
}
