/** Click events for the statistics tests (and the store's upgrade test). */
import type { ClickEvent } from './click-writer'

export const T = (iso: string) => Date.parse(iso)

/** A counted visit of link `linkSeq` at `at` from an Android phone in Munich, with `over` applied. */
export function event(linkSeq: number, at: number, over: Partial<ClickEvent> = {}): ClickEvent {
  return {
    linkSeq,
    domain: 'localhost',
    at,
    scan: false,
    continent: 'Europe',
    country: 'DE',
    region: 'Bavaria',
    city: 'Munich',
    os: 'Android',
    browser: 'Chrome',
    device: 'Mobile',
    referer: null,
    refererUrl: null,
    utmSource: null,
    utmMedium: null,
    utmCampaign: null,
    utmTerm: null,
    utmContent: null,
    n: 1,
    ...over,
  }
}
