/** A/B timing shared by the in-process benchmarks (links, stats): two sides alternate in one run. */

export interface Timed {
  ms: number
  body: string
}

/**
 * `runs` timings of `a` and, when given, of `b`, alternating which goes first every other run;
 * `pause` runs after each timing. Returns the samples and whether the two answered alike every time.
 */
export async function alternate(runs: number, a: () => Promise<Timed>, b: (() => Promise<Timed>) | null, pause?: () => Promise<void>) {
  const aMs: number[] = []
  const bMs: number[] = []
  let body = ''
  let same = true
  for (let i = 0; i < runs; i++) {
    let bBody = ''
    for (const side of b && i % 2 ? ['b', 'a'] : ['a', 'b']) {
      if (side === 'a') {
        const r = await a()
        aMs.push(r.ms)
        body = r.body
      } else if (b) {
        const r = await b()
        bMs.push(r.ms)
        bBody = r.body
      } else continue
      await pause?.()
    }
    if (b && bBody !== body) same = false
  }
  return { aMs, bMs, body, same }
}

/** `min | median | max` of samples in ms, each padded to 6 (with `digits` decimals, 1 by default). */
export function minMedianMax(samples: number[], digits = 1): string {
  const s = [...samples].sort((x, y) => x - y)
  const ms = (i: number) => s[i]!.toFixed(digits).padStart(6)
  return `${ms(0)} | ${ms(s.length >> 1)} | ${ms(s.length - 1)}`
}
