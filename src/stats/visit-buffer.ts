/**
 * Where the redirect hands a counted visit to the click recorder: its fields pushed into
 * preallocated columns (numbers in typed arrays, strings and the shared dimension objects in
 * plain arrays, by reference), with no key, no row object and no map on the request. Merging
 * identical visits into rows is the flush side's work (click-recorder.ts `mergeBuffered`),
 * which takes the whole buffer at once; the buffer then starts again at slot 0.
 *
 * Capacity starts at `initial` slots and doubles when more visits arrive before the flush side
 * takes them (a burst between two turns of the event loop); the recorder's memory bound keeps
 * it from growing without end (it merges at once when the bound is reached).
 *
 * A new optional per-visit field (as A/B tests' `variant` was): one name in HELD, one line in `push`.
 */
import type { Visit } from './click-recorder'

/** Visit fields held by reference, one array each. */
const HELD = ['domain', 'referer', 'refererUrl', 'clickId', 'visitor', 'geo', 'utm', 'variant'] as const
export type HeldField = (typeof HELD)[number]
type Columns = { [F in HeldField]: (Visit[F] | null)[] }

/** A buffered visit's slot (three numbers, eight references) and its array overhead, without its strings. */
export const VISIT_SLOT_BYTES = 96

export class VisitBuffer {
  /** Visits in the buffer (slots 0 … length-1). */
  length = 0
  /** Estimated bytes the buffered visits hold (slots, the referer strings and click ids). */
  bytes = 0
  linkSeq: Float64Array
  at: Float64Array
  scan: Uint8Array
  held: Columns

  constructor(readonly initial = 1024) {
    this.linkSeq = new Float64Array(initial)
    this.at = new Float64Array(initial)
    this.scan = new Uint8Array(initial)
    this.held = columns(initial)
  }

  get capacity(): number {
    return this.linkSeq.length
  }

  push(v: Visit): void {
    const i = this.length
    if (i === this.linkSeq.length) this.grow()
    this.length = i + 1
    this.linkSeq[i] = v.linkSeq
    this.at[i] = v.at
    this.scan[i] = v.scan ? 1 : 0
    const h = this.held
    h.domain[i] = v.domain
    h.referer[i] = v.referer
    h.refererUrl[i] = v.refererUrl
    h.clickId[i] = v.clickId ?? null
    h.visitor[i] = v.visitor
    h.geo[i] = v.geo
    h.utm[i] = v.utm
    h.variant[i] = v.variant ?? null
    this.bytes += VISIT_SLOT_BYTES + 2 * ((v.refererUrl?.length ?? 0) + (v.referer?.length ?? 0)) + (v.clickId ? 80 : 0)
  }

  /** Visits of one link in the buffer. */
  visitsOf(linkSeq: number): number {
    let n = 0
    for (let i = 0; i < this.length; i++) if (this.linkSeq[i] === linkSeq) n++
    return n
  }

  /** Empties the buffer: its references are dropped (their strings can be collected) and slot 0 is next. */
  clear(): void {
    const n = this.length
    for (const f of HELD) this.held[f].fill(null, 0, n)
    this.length = 0
    this.bytes = 0
  }

  private grow() {
    const size = this.linkSeq.length * 2
    const linkSeq = new Float64Array(size)
    linkSeq.set(this.linkSeq)
    const at = new Float64Array(size)
    at.set(this.at)
    const scan = new Uint8Array(size)
    scan.set(this.scan)
    const held = columns(size)
    for (const f of HELD) {
      const from = this.held[f]
      const to = held[f]
      for (let i = 0; i < from.length; i++) to[i] = from[i] as never
    }
    this.linkSeq = linkSeq
    this.at = at
    this.scan = scan
    this.held = held
  }
}

function columns(size: number): Columns {
  const c = {} as Record<HeldField, unknown[]>
  for (const f of HELD) c[f] = new Array(size).fill(null)
  return c as Columns
}
