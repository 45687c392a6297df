/**
 * A batch of click rows as columns, for the trip to the writer's thread. `postMessage` of the
 * row objects serialises each row's 21 properties one by one (with the property names): under
 * a distinct visitor per visit that was 17.8% of the redirect thread's profile. As columns the
 * numbers are typed arrays whose buffers are transferred (no copy) and the strings are plain
 * arrays (a string shared by many rows, as a country or a browser is, is serialised once); the
 * writer's thread makes the rows again (`rowsOf`), so that cost is on its side.
 */
import { type ClickEvent, EVENT_STRINGS } from './click-event'

/** The string fields of a row: the event columns', the domain, and the tracked click ids. */
const STRING_FIELDS = ['domain', ...EVENT_STRINGS.map(([, field]) => field), 'tracked'] as const
type StringField = (typeof STRING_FIELDS)[number]

export interface ClickColumns {
  length: number
  linkSeq: Float64Array
  at: Float64Array
  n: Float64Array
  scan: Uint8Array
  /** -1: no variant. */
  variant: Int16Array
  strings: Record<StringField, (string | null)[]>
}

export function columnsOf(rows: ClickEvent[]): ClickColumns {
  const length = rows.length
  const linkSeq = new Float64Array(length)
  const at = new Float64Array(length)
  const n = new Float64Array(length)
  const scan = new Uint8Array(length)
  const variant = new Int16Array(length)
  const strings = {} as Record<StringField, (string | null)[]>
  for (const f of STRING_FIELDS) strings[f] = new Array(length)
  for (let i = 0; i < length; i++) {
    const r = rows[i]!
    linkSeq[i] = r.linkSeq
    at[i] = r.at
    n[i] = r.n
    scan[i] = r.scan ? 1 : 0
    variant[i] = r.variant ?? -1
    for (const f of STRING_FIELDS) strings[f][i] = r[f] ?? null
  }
  return { length, linkSeq, at, n, scan, variant, strings }
}

/** The buffers to transfer with the columns. */
export const transferOf = (c: ClickColumns): ArrayBuffer[] => [c.linkSeq, c.at, c.n, c.scan, c.variant].map((a) => a.buffer as ArrayBuffer)

/** The rows again (on the writer's thread). */
export function rowsOf(c: ClickColumns): ClickEvent[] {
  const s = c.strings
  const rows: ClickEvent[] = new Array(c.length)
  for (let i = 0; i < c.length; i++) {
    const v = c.variant[i]!
    rows[i] = {
      linkSeq: c.linkSeq[i]!,
      domain: s.domain[i]!,
      at: c.at[i]!,
      scan: c.scan[i] === 1,
      continent: s.continent[i]!,
      country: s.country[i]!,
      region: s.region[i]!,
      city: s.city[i]!,
      os: s.os[i]!,
      browser: s.browser[i]!,
      device: s.device[i]!,
      referer: s.referer[i]!,
      refererUrl: s.refererUrl[i]!,
      utmSource: s.utmSource[i]!,
      utmMedium: s.utmMedium[i]!,
      utmCampaign: s.utmCampaign[i]!,
      utmTerm: s.utmTerm[i]!,
      utmContent: s.utmContent[i]!,
      n: c.n[i]!,
      tracked: s.tracked[i]!,
      variant: v < 0 ? null : v,
    }
  }
  return rows
}
