/**
 * A batch of visits as one flat array (a fixed number of slots per visit): cheap to
 * append on the hot path and cheap to post to the writer thread, where identical visits
 * (same link, kind and dimensions) are merged into one row with a count.
 */
import type { ClickEvent } from './click-writer'

export type VisitInput = Omit<ClickEvent, 'n'>

/** Slots per visit, in this order. */
const FIELDS = ['linkSeq', 'domain', 'at', 'scan', 'continent', 'country', 'region', 'city', 'os', 'browser', 'device',
  'referer', 'refererUrl', 'utmSource', 'utmMedium', 'utmCampaign', 'utmTerm', 'utmContent'] as const
export const STRIDE = FIELDS.length
export const DOMAIN_SLOT = FIELDS.indexOf('domain')

export function appendVisit(buf: unknown[], v: VisitInput) {
  buf.push(v.linkSeq, v.domain, v.at, v.scan, v.continent, v.country, v.region, v.city, v.os, v.browser, v.device,
    v.referer, v.refererUrl, v.utmSource, v.utmMedium, v.utmCampaign, v.utmTerm, v.utmContent)
}

export function visitsIn(buf: unknown[]): number {
  return buf.length / STRIDE
}

/** Visits of one link in a batch. */
export function visitsOfLink(buf: unknown[], linkSeq: number): number {
  let n = 0
  for (let i = 0; i < buf.length; i += STRIDE) if (buf[i] === linkSeq) n++
  return n
}

/** Rows to write: identical visits merged, keeping the latest time. */
export function mergeBatch(buf: unknown[]): ClickEvent[] {
  const rows = new Map<string, ClickEvent>()
  for (let i = 0; i < buf.length; i += STRIDE) {
    // Every slot but the time (index 2) identifies the row.
    let key = ''
    for (let f = 0; f < STRIDE; f++) if (f !== 2) key += `${buf[i + f]}\u0001`
    const at = buf[i + 2] as number
    const row = rows.get(key)
    if (row) {
      row.n++
      if (at > row.at) row.at = at
      continue
    }
    const e = { n: 1 } as Record<string, unknown>
    for (let f = 0; f < STRIDE; f++) e[FIELDS[f]!] = buf[i + f]
    rows.set(key, e as unknown as ClickEvent)
  }
  return [...rows.values()]
}
