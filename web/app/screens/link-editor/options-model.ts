/**
 * The "Options" part of a link as the form holds it, and the API's `linkOptions` built
 * from it (seed: Link input; schema: src/links/links.schema.ts). On create only what is
 * filled in is sent; on update every option is sent, with null clearing an emptied one.
 */
import { TEST_VARIANTS_MIN, type TestGoal } from '../../../../src/links/links.ab.values'
import type { ApiData } from './types'

export const TARGET_TYPES = ['device', 'location', 'language', 'time', 'number'] as const
export type TargetType = (typeof TARGET_TYPES)[number]
export const TARGET_LABELS: Record<TargetType, string> = {
  device: 'Device',
  location: 'Country',
  language: 'Language',
  time: 'Time of day',
  number: 'Visit number',
}

export interface LocationRule {
  country: string
  region: string
  city: string
  url: string
}
export interface LanguageRule {
  language: string
  url: string
}
export interface TimeRule {
  start: string
  end: string
  days: number[]
  timezone: string
  url: string
}
export interface NumberRule {
  from: string
  to: string
  url: string
}

export interface TargetingForm {
  type: TargetType | ''
  device: { ios: string; android: string }
  location: LocationRule[]
  language: LanguageRule[]
  time: TimeRule[]
  number: NumberRule[]
}

export const UTM_FIELDS = ['source', 'medium', 'campaign', 'term', 'content', 'ref'] as const
export type UtmField = (typeof UTM_FIELDS)[number]
export type UtmForm = Record<UtmField, string>
/** The query parameter each UTM field fills. */
export const utmParam = (f: UtmField) => (f === 'ref' ? 'ref' : `utm_${f}`)

export interface OptionsForm {
  domain: string
  key: string
  tags: string[]
  comment: string
  password: string
  removePassword: boolean
  expires: boolean
  /** datetime-local value, in the browser's time zone. */
  expirationTime: string
  expirationUrl: string
  /** For types without a typed URL: the `utm` option the redirect merges in. */
  utm: UtmForm
  watermark: boolean
  watermarkText: string
  screenshotProtected: boolean
  previewTitle: string
  previewDesc: string
  previewImage: string
  targeting: TargetingForm
  archived: boolean
  /** Counted visits get a click id (`sl_id`) for POST /track/lead and /track/sale. */
  trackConversion: boolean
  /** Where visits go while the destination is broken (types with a URL destination). */
  healthFallbackUrl: string
  /** An A/B test: its variants (percentages as typed), end (datetime-local) and goal. */
  abTest: boolean
  testVariants: TestVariantForm[]
  testCompletedAt: string
  testGoal: TestGoal
  /** The A/B fields were edited (an edit sends them; otherwise the stored test is left alone). */
  testChanged: boolean
}

export interface TestVariantForm {
  url: string
  percentage: string
}
/** Variants that start a test: an even split (the API wants integers summing to 100). */
export const startingVariants = (url: string): TestVariantForm[] =>
  Array.from({ length: TEST_VARIANTS_MIN }, (_, i) => ({ url: i === 0 ? url : '', percentage: String(100 / TEST_VARIANTS_MIN) }))
/** The percentages' total, or null while one is not a whole number. */
export function percentTotal(variants: TestVariantForm[]): number | null {
  let sum = 0
  for (const v of variants) {
    if (!/^\s*\d+\s*$/.test(v.percentage)) return null
    sum += Number(v.percentage)
  }
  return sum
}

export const browserTimeZone = () => Intl.DateTimeFormat().resolvedOptions().timeZone || 'UTC'
export const emptyLocation = (): LocationRule => ({ country: '', region: '', city: '', url: '' })
export const emptyLanguage = (): LanguageRule => ({ language: '', url: '' })
export const emptyTime = (): TimeRule => ({ start: '09:00', end: '17:00', days: [1, 2, 3, 4, 5], timezone: browserTimeZone(), url: '' })
export const emptyNumber = (): NumberRule => ({ from: '1', to: '100', url: '' })
export const emptyUtm = (): UtmForm => ({ source: '', medium: '', campaign: '', term: '', content: '', ref: '' })

export function emptyOptions(): OptionsForm {
  return {
    domain: '',
    key: '',
    tags: [],
    comment: '',
    password: '',
    removePassword: false,
    expires: false,
    expirationTime: '',
    expirationUrl: '',
    utm: emptyUtm(),
    watermark: false,
    watermarkText: '',
    screenshotProtected: false,
    previewTitle: '',
    previewDesc: '',
    previewImage: '',
    targeting: {
      type: '',
      device: { ios: '', android: '' },
      location: [emptyLocation()],
      language: [emptyLanguage()],
      time: [emptyTime()],
      number: [emptyNumber()],
    },
    archived: false,
    trackConversion: false,
    healthFallbackUrl: '',
    abTest: false,
    testVariants: startingVariants(''),
    testCompletedAt: '',
    testGoal: 'leads',
    testChanged: false,
  }
}

const pad = (n: number) => String(n).padStart(2, '0')
/** ISO time → the datetime-local value in this browser's time zone. */
export function toLocalInput(iso: string): string {
  const d = new Date(iso)
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}T${pad(d.getHours())}:${pad(d.getMinutes())}`
}
/** A week from now, a sensible first expiry. */
export const defaultExpiry = () => toLocalInput(new Date(Date.now() + 7 * 86_400_000).toISOString())

/** The form for a stored link record. */
export function optionsOf(r: ApiData): OptionsForm {
  const o = emptyOptions()
  const s = (v: unknown) => (v === undefined || v === null ? '' : String(v))
  o.domain = r.domain
  o.key = r.key
  o.tags = r.tags ?? []
  o.comment = s(r.comments)
  if (r.expiration) {
    o.expires = true
    o.expirationTime = toLocalInput(r.expiration.time)
    o.expirationUrl = r.expiration.url
  }
  for (const f of UTM_FIELDS) o.utm[f] = s(r.utm?.[f])
  o.watermark = !!r.option?.isWaterMark
  o.watermarkText = s(r.option?.watermarkText)
  o.screenshotProtected = !!r.option?.isScreenshotProtected
  o.previewTitle = s(r.previewData?.title)
  o.previewDesc = s(r.previewData?.desc)
  o.previewImage = s(r.previewData?.image)
  o.archived = !!r.archived
  o.trackConversion = r.trackConversion === true
  o.healthFallbackUrl = s(r.healthFallbackUrl)
  if (r.testVariants) {
    o.abTest = true
    o.testVariants = r.testVariants.map((v: ApiData) => ({ url: v.url, percentage: String(v.percentage) }))
    o.testCompletedAt = r.testCompletedAt ? toLocalInput(r.testCompletedAt) : ''
    o.testGoal = r.testGoal ?? 'leads'
  }
  const t = r.Targeting
  if (t) {
    o.targeting.type = t.targetType
    const td = t.targetDatas
    if (t.targetType === 'device') o.targeting.device = { ios: s(td.ios), android: s(td.android) }
    if (t.targetType === 'location') o.targeting.location = td.map((i: ApiData) => ({ country: i.country, region: s(i.region), city: s(i.city), url: i.url }))
    if (t.targetType === 'language') o.targeting.language = td.map((i: ApiData) => ({ language: i.language, url: i.url }))
    if (t.targetType === 'time')
      o.targeting.time = td.map((i: ApiData) => ({
        start: i.start,
        end: i.end,
        days: i.days ?? [1, 2, 3, 4, 5, 6, 7],
        timezone: i.timezone ?? 'UTC',
        url: i.url,
      }))
    if (t.targetType === 'number') o.targeting.number = td.map((i: ApiData) => ({ from: String(i.from), to: String(i.to), url: i.url }))
  }
  return o
}

const opt = (s: string) => (s.trim() === '' ? undefined : s.trim())
const compact = (o: ApiData): ApiData => Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined))
const orNull = (o: ApiData) => (Object.keys(o).length ? o : null)
/** A number as typed, or the text itself so the API names the field when it is not one. */
const intOf = (s: string) => (/^\s*\d+\s*$/.test(s) ? Number(s) : s)

export function targetingOf(t: TargetingForm): ApiData | null {
  switch (t.type) {
    case '':
      return null
    case 'device':
      return { targetType: 'device', targetDatas: { ios: t.device.ios.trim(), android: t.device.android.trim() } }
    case 'location':
      return {
        targetType: 'location',
        targetDatas: t.location.map((r) => compact({ country: r.country, region: opt(r.region), city: opt(r.city), url: r.url.trim() })),
      }
    case 'language':
      return { targetType: 'language', targetDatas: t.language.map((r) => ({ language: r.language.trim(), url: r.url.trim() })) }
    case 'time':
      return {
        targetType: 'time',
        targetDatas: t.time.map((r) => compact({ start: r.start, end: r.end, days: [...r.days].sort(), timezone: r.timezone || undefined, url: r.url.trim() })),
      }
    case 'number':
      return { targetType: 'number', targetDatas: t.number.map((r) => ({ from: intOf(r.from), to: intOf(r.to), url: r.url.trim() })) }
  }
}

/**
 * `linkOptions` for the API. `editing`: every option is stated (null clears), so what
 * the form shows is what is stored; the UTM option is sent only for types without a URL
 * (for a typed URL the builder writes the parameters into the URL itself).
 */
export function linkOptionsOf(o: OptionsForm, { editing, utmInUrl, health = false }: { editing: boolean; utmInUrl: boolean; health?: boolean }): ApiData {
  const utm = compact(Object.fromEntries(Object.entries(o.utm).map(([k, v]) => [k, opt(v)])))
  const option = compact({
    isWaterMark: o.watermark || undefined,
    watermarkText: o.watermark ? opt(o.watermarkText) : undefined,
    isScreenshotProtected: o.screenshotProtected || undefined,
  })
  const previewData = compact({ title: opt(o.previewTitle), desc: opt(o.previewDesc), image: opt(o.previewImage) })
  const expiration = o.expires ? { time: o.expirationTime ? new Date(o.expirationTime).toISOString() : '', url: o.expirationUrl.trim() } : null
  const out: ApiData = {
    domain: opt(o.domain),
    key: opt(o.key),
    tags: editing || o.tags.length ? o.tags : undefined,
    comment: editing ? (opt(o.comment) ?? null) : opt(o.comment),
    password: o.removePassword ? null : opt(o.password) ? o.password : undefined,
    expiration: editing ? expiration : (expiration ?? undefined),
    utm: utmInUrl ? undefined : editing ? orNull(utm) : (orNull(utm) ?? undefined),
    option: editing ? orNull(option) : (orNull(option) ?? undefined),
    previewData: editing ? orNull(previewData) : (orNull(previewData) ?? undefined),
    Targeting: editing ? targetingOf(o.targeting) : (targetingOf(o.targeting) ?? undefined),
    trackConversion: editing ? o.trackConversion : o.trackConversion || undefined,
    healthFallbackUrl: !health ? undefined : editing ? (opt(o.healthFallbackUrl) ?? null) : opt(o.healthFallbackUrl),
    ...(health ? testOptionsOf(o, editing) : {}),
  }
  return compact(out)
}

/**
 * The A/B test. A test needs conversion tracking (the API refuses it otherwise), so a test sends
 * `trackConversion: true` over the switch's own value. On edit, a test left as stored is not sent again (sending its
 * variants would restart its counts); switched off, it is removed (null).
 */
function testOptionsOf(o: OptionsForm, editing: boolean): ApiData {
  if (!o.abTest) return { testVariants: editing ? null : undefined }
  if (editing && !o.testChanged) return { trackConversion: true }
  return {
    trackConversion: true,
    testVariants: o.testVariants.map((v) => ({ url: v.url.trim(), percentage: intOf(v.percentage) })),
    testCompletedAt: o.testCompletedAt ? new Date(o.testCompletedAt).toISOString() : '',
    testGoal: o.testGoal,
  }
}

/** Reads utm_* (and ref) from a URL; empty when the URL does not parse yet. */
export function utmFromUrl(url: string): UtmForm {
  const u = emptyUtm()
  try {
    const parsed = new URL(url)
    for (const f of Object.keys(u) as UtmField[]) u[f] = parsed.searchParams.get(utmParam(f)) ?? ''
  } catch {
    // not a URL yet: the builder shows empty fields
  }
  return u
}

/** The URL with one UTM parameter set (or removed when empty); the URL unchanged when it does not parse. */
export function withUtm(url: string, field: UtmField, value: string): string {
  try {
    const parsed = new URL(url)
    if (value) parsed.searchParams.set(utmParam(field), value)
    else parsed.searchParams.delete(utmParam(field))
    return parsed.toString()
  } catch {
    return url
  }
}
