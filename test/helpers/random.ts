/**
 * A seeded pseudo-random source in [0, 1) (mulberry32): successive values are
 * independent (an LCG's low bits correlated link types with clicks), and runs repeat.
 * Tests and benchmarks share it.
 */
export function seededRandom(seed: number): () => number {
  let state = seed >>> 0
  return () => {
    state = (state + 0x6d2b79f5) >>> 0
    let x = state
    x = Math.imul(x ^ (x >>> 15), x | 1)
    x ^= x + Math.imul(x ^ (x >>> 7), x | 61)
    return ((x ^ (x >>> 14)) >>> 0) / 2 ** 32
  }
}
