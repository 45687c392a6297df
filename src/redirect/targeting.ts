/** Targeting rules: which URL a visitor gets, given the link's Targeting. Pure. */
import type { Os } from '../stats'

export interface TargetContext {
  os: Os
  country: string | null
  region: string | null
  city: string | null
  acceptLanguage: string | null
  now: number
  /** The n-th counted visit of this link (number targeting). */
  visitNumber: number
}

export interface Targeting {
  targetType: string
  // biome-ignore lint/suspicious/noExplicitAny: validated per targetType on write (links), read by the case below
  targetDatas: any
}

/** Accept-Language → tags in preference order (q > 0; ties keep header order). */
export function parseAcceptLanguage(header: string | null): string[] {
  if (!header) return []
  return header
    .split(',')
    .map((part, i) => {
      const [tag, ...params] = part.trim().split(';')
      const q = params.map((p) => p.trim()).find((p) => p.startsWith('q='))
      const weight = q ? Number(q.slice(2)) : 1
      return { tag: (tag ?? '').trim().toLowerCase(), q: Number.isFinite(weight) ? weight : 0, i }
    })
    .filter((x) => x.tag && x.q > 0)
    .sort((a, b) => b.q - a.q || a.i - b.i)
    .map((x) => x.tag)
}

/** `fr` serves fr, fr-CH…; `pt-br` serves only pt-BR (and its sub-tags); `*` serves nothing specific. */
function languageMatches(item: string, visitor: string): boolean {
  return visitor === item || visitor.startsWith(`${item}-`)
}

const formatters = new Map<string, Intl.DateTimeFormat>()
function localTime(now: number, timeZone: string): { minutes: number; isoDay: number } {
  let f = formatters.get(timeZone)
  if (!f) {
    f = new Intl.DateTimeFormat('en-GB', { timeZone, hourCycle: 'h23', weekday: 'short', hour: '2-digit', minute: '2-digit' })
    formatters.set(timeZone, f)
  }
  const parts = f.formatToParts(new Date(now))
  const get = (type: string) => parts.find((p) => p.type === type)?.value ?? ''
  const isoDay = ['Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat', 'Sun'].indexOf(get('weekday')) + 1
  return { minutes: Number(get('hour')) * 60 + Number(get('minute')), isoDay }
}

const toMinutes = (hhmm: string) => Number(hhmm.slice(0, 2)) * 60 + Number(hhmm.slice(3, 5))

/**
 * A window [start, end) in its time zone; one that passes midnight (22:00-02:00)
 * belongs, after midnight, to the day it started on.
 */
export function inTimeWindow(item: { start: string; end: string; days?: number[]; timezone?: string }, now: number): boolean {
  const { minutes, isoDay } = localTime(now, item.timezone || 'UTC')
  const start = toMinutes(item.start)
  const end = toMinutes(item.end)
  const dayOk = (d: number) => !item.days?.length || item.days.includes(d)
  if (start < end) return minutes >= start && minutes < end && dayOk(isoDay)
  if (minutes >= start) return dayOk(isoDay)
  if (minutes < end) return dayOk(isoDay === 1 ? 7 : isoDay - 1)
  return false
}

/** The targeted URL for this visitor, or null to use the destination. First matching item wins. */
export function pickTarget(t: Targeting | null | undefined, c: TargetContext): string | null {
  if (!t) return null
  switch (t.targetType) {
    case 'device':
      if (c.os === 'IOS') return t.targetDatas.ios ?? null
      if (c.os === 'Android') return t.targetDatas.android ?? null
      return null
    case 'location':
      for (const item of t.targetDatas) {
        if (!c.country || item.country !== c.country) continue
        if (item.region && item.region.toLowerCase() !== (c.region ?? '').toLowerCase()) continue
        if (item.city && item.city.toLowerCase() !== (c.city ?? '').toLowerCase()) continue
        return item.url
      }
      return null
    case 'language':
      for (const lang of parseAcceptLanguage(c.acceptLanguage)) {
        const item = t.targetDatas.find((x: { language: string }) => languageMatches(x.language.toLowerCase(), lang))
        if (item) return item.url
      }
      return null
    case 'time':
      return t.targetDatas.find((x: { start: string; end: string }) => inTimeWindow(x, c.now))?.url ?? null
    case 'number':
      return t.targetDatas.find((x: { from: number; to: number }) => c.visitNumber >= x.from && c.visitNumber <= x.to)?.url ?? null
    default:
      return null
  }
}
