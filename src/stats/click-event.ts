/**
 * The click-event vocabulary: what the redirect server records for a visit and the
 * statistics count, with the seed's enum values for os, browser and device. The redirect
 * (which parses visitors) and the statistics (which filter and group by these) both speak it;
 * it lives here, with the statistics, so the redirect depends on stats and never the reverse.
 */
import { clickTimeOf } from './click-id'

export type Os = 'IOS' | 'Android' | 'Windows' | 'MacOS' | 'Linux' | 'HarmonyOS' | 'Other'
export type Browser = 'Chrome' | 'Edge' | 'Safari' | 'Firefox' | 'Opera' | 'Samsung Internet' | 'Android Browser' | 'Others'
export type Device = 'Desktop' | 'Mobile' | 'Tablet' | 'Embedded' | 'SmartTv' | 'Wearable' | 'XR' | 'Others'

export const OS_VALUES: Os[] = ['IOS', 'Android', 'Windows', 'MacOS', 'Linux', 'HarmonyOS', 'Other']
export const BROWSER_VALUES: Browser[] = ['Chrome', 'Edge', 'Safari', 'Firefox', 'Opera', 'Samsung Internet', 'Android Browser', 'Others']
export const DEVICE_VALUES: Device[] = ['Desktop', 'Mobile', 'Tablet', 'Embedded', 'SmartTv', 'Wearable', 'XR', 'Others']

export interface ClickEvent {
  linkSeq: number
  domain: string
  at: number
  scan: boolean
  continent: string | null
  country: string | null
  region: string | null
  city: string | null
  os: string
  browser: string
  device: string
  referer: string | null
  refererUrl: string | null
  utmSource: string | null
  utmMedium: string | null
  utmCampaign: string | null
  utmTerm: string | null
  utmContent: string | null
  /** Identical visits this row stands for. */
  n: number
  /**
   * Conversion tracking: the click ids of the visits this row stands for, separated by spaces (one
   * string: cheap to post to the writer's thread and to store; while the row is held, the recorder
   * gathers them as bytes, tracked-ids.ts). Each id carries its visit's time (click-id.ts); rows
   * written before 2026-11-26 have `<id>@<at ms>` instead, read the same. Absent when none of
   * them was tracked.
   */
  tracked?: string | null
  /** The A/B test variant these visits went to (index in the link's `testVariants`); null/absent outside a test. */
  variant?: number | null
}

/**
 * The click ids and times of a row's `tracked` (written at `rowAt`): the time an id carries, the
 * one written after it (`<id>@<at>`, rows from before ids were kept alone), or else the row's.
 */
export function trackedClicksOf(tracked: string | null | undefined, rowAt: number): { clickId: string; at: number }[] {
  if (!tracked) return []
  return tracked.split(' ').map((t) => {
    const at = t.lastIndexOf('@')
    if (at >= 0) return { clickId: t.slice(0, at), at: Number(t.slice(at + 1)) }
    return { clickId: t, at: clickTimeOf(t) ?? rowAt }
  })
}

/** Event columns holding strings, and the ClickEvent field of each. */
export const EVENT_STRINGS = [
  ['continent', 'continent'],
  ['country', 'country'],
  ['region', 'region'],
  ['city', 'city'],
  ['os', 'os'],
  ['browser', 'browser'],
  ['device', 'device'],
  ['referer', 'referer'],
  ['referer_url', 'refererUrl'],
  ['utm_source', 'utmSource'],
  ['utm_medium', 'utmMedium'],
  ['utm_campaign', 'utmCampaign'],
  ['utm_term', 'utmTerm'],
  ['utm_content', 'utmContent'],
] as const satisfies readonly (readonly [string, keyof ClickEvent])[]
