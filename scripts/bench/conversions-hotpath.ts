/**
 * The redirect path with `trackConversion` off (A) and on (B), in process (no sockets, no wrk: on a
 * loaded machine the network benchmark's noise hides a few percent): the handler the server uses,
 * over an in-memory store whose events engine runs in this thread, so each pass also pays for
 * writing what it recorded (the pass ends when the recorder has written everything: the click
 * events, and on B each visit's tracked click). Passes alternate A, B, B, A…
 *   bun scripts/bench/conversions-hotpath.ts [--visits 100000] [--passes 8]
 * Prints visits/s per pass and min | median | max per side, and B/A of the medians.
 */

import { redirectHandlerFor } from '../../src/redirect/redirect.test-fixtures'
import { createHarness } from '../../test/helpers/in-process'
import { minMedianMax } from './ab'
import { arg } from './args'

const VISITS = Number(arg('visits', '100000'))
const PASSES = Number(arg('passes', '8'))
const h = createHarness({ limits: { apiPerMinute: 1_000_000 } })
for (const [key, trackConversion] of [
  ['off', false],
  ['on', true],
] as const) {
  const r = await h.call('POST', '/links/link', {
    json: { data: { url: 'https://example.com/landing?from=bench' }, linkOptions: { key, utm: { source: 'qr' }, trackConversion } },
  })
  if (r.status !== 200) throw new Error(`link: ${r.status}`)
}
const redirects = redirectHandlerFor(h.deps)
const UA = 'Mozilla/5.0 (iPhone; CPU iPhone OS 17_4 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4 Mobile/15E148 Safari/604.1'
const requests = {
  off: new Request('https://localhost/off', { headers: { 'user-agent': UA } }),
  on: new Request('https://localhost/on', { headers: { 'user-agent': UA } }),
}

async function pass(side: 'off' | 'on'): Promise<number> {
  const req = requests[side]
  const path = `/${side}`
  const started = performance.now()
  for (let i = 0; i < VISITS; i++) {
    const res = redirects.handle(req, path, '', 'localhost', () => '192.0.2.1')
    if (res instanceof Promise) await res
    // The recorder's timer is not running in this harness: flush as it would, about once per 10,000 visits.
    if (i % 10_000 === 9_999) await h.deps.recorder.flush()
  }
  await h.deps.recorder.drain()
  return VISITS / ((performance.now() - started) / 1000)
}

console.log(`load ${(await Bun.file('/proc/loadavg').text()).trim()}; ${VISITS} visits a pass, ${PASSES} alternating passes`)
await pass('off')
await pass('on') // warm-up
const res = { off: [] as number[], on: [] as number[] }
for (let i = 0; i < PASSES; i++)
  for (const side of i % 2 ? (['on', 'off'] as const) : (['off', 'on'] as const)) {
    const v = await pass(side)
    res[side].push(v)
    console.log(`pass ${i + 1} ${side.padEnd(3)} ${v.toFixed(0).padStart(8)} visits/s`)
  }
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[xs.length >> 1]!
console.log(`A trackConversion off  visits/s min|median|max ${minMedianMax(res.off)}`)
console.log(`B trackConversion on   visits/s min|median|max ${minMedianMax(res.on)}`)
console.log(`B/A (medians) ${(median(res.on) / median(res.off)).toFixed(3)}`)
const tracked = await h.deps.events.snapshot(
  async (tx) =>
    (
      await tx.run([
        {
          sql: "SELECT coalesce(sum(length(tracked) - length(replace(tracked, ' ', '')) + 1), 0)::DOUBLE AS n FROM events WHERE tracked IS NOT NULL",
          args: [],
        },
      ])
    )[0]![0]!.n,
)
console.log(`tracked clicks stored: ${tracked}`)
process.exit(0)
