/**
 * Pure rules about a link's content: URL normalisation, the per-type checks the
 * schema cannot express, the destination each type implies, and the text searched.
 */
import { createHash } from 'node:crypto'
import type { Static } from '@sinclair/typebox'
import { gtinProblem } from '../gs1'
import { assertValid, normaliseUrl, parameterError } from '../shared'
import { DATA_BY_TYPE, DeviceTargets, HOSTED_TYPES, type LinkType, TARGET_ITEM_SCHEMA, type Targeting } from './links.schema'

export { normaliseUrl } from '../shared'
/** A link's `data` as checked against its type's variant (the schemas say which fields each has). */
// biome-ignore lint/suspicious/noExplicitAny: sixteen variants, read field by field after validation
export type LinkDataValue = Record<string, any>

/** Validates `data` against the variant of `type` and normalises its URLs. */
export function checkData(type: LinkType, data: unknown): LinkDataValue {
  if (typeof data !== 'object' || data === null || Array.isArray(data)) throw parameterError(`'data' must be an object`)
  assertValid(DATA_BY_TYPE[type], data, 'data')
  const d: LinkDataValue = { ...(data as LinkDataValue) }
  for (const f of ['url', 'ios', 'android', 'fallbackUrl']) if (typeof d[f] === 'string') d[f] = normaliseUrl(d[f], `data.${f}`)
  switch (type) {
    case 'document':
    case 'file':
    case 'image':
    case 'audio':
    case 'video':
    case 'svg':
      if (!d.fileId === !d.url) throw parameterError(`'data' needs exactly one of fileId and url for ${type} links`)
      break
    case 'menu': {
      const n = [d.fileId, d.url, d.sections].filter((x) => x !== undefined).length
      if (n !== 1) throw parameterError(`'data' needs exactly one of fileId, url and sections for menu links`)
      break
    }
    case 'app-stores':
      if (!d.ios && !d.android) throw parameterError(`'data' needs ios and/or android for app-stores links`)
      break
    case 'map':
      if (d.query === undefined && (d.latitude === undefined || d.longitude === undefined))
        throw parameterError(`'data' needs query, or latitude and longitude, for map links`)
      if (d.query !== undefined && (d.latitude !== undefined || d.longitude !== undefined))
        throw parameterError(`'data' takes query or coordinates for map links, not both`)
      break
    case 'gs1':
      checkProduct(d)
      break
    case 'wi-fi': {
      const enc = d.encryption ?? 'WPA'
      const pw: string = d.password ?? ''
      if (enc === 'nopass' && pw) throw parameterError(`'data.password' must be empty when encryption is nopass`)
      if (enc === 'WPA' && (pw.length < 8 || pw.length > 63)) throw parameterError(`'data.password' length must be 8-63 for WPA`)
      if (enc === 'WEP' && ![5, 13, 16, 29].includes(pw.length)) throw parameterError(`'data.password' length must be 5, 13, 16 or 29 for WEP`)
      break
    }
  }
  return d
}

/**
 * A GS1 product's rules beyond its schema: the GTIN's check digit (then its 14-digit form), URLs
 * normalised, lots unique, languages as `xx` or `xx-XX`.
 */
function checkProduct(d: LinkDataValue): void {
  const problem = gtinProblem(d.gtin)
  if (problem) throw parameterError(`'data.gtin' ${d.gtin} ${problem}`)
  d.gtin = d.gtin.padStart(14, '0')
  const links = (list: LinkDataValue[] | undefined, field: string) =>
    list?.map((l, i) => ({
      ...l,
      url: normaliseUrl(l.url, `${field}.${i}.url`),
      ...(l.lang ? { lang: l.lang.length === 2 ? l.lang.toLowerCase() : `${l.lang.slice(0, 2).toLowerCase()}-${l.lang.slice(3).toUpperCase()}` } : {}),
    }))
  if (d.links) d.links = links(d.links, 'data.links')
  if (d.lots) {
    const seen = new Set<string>()
    d.lots = d.lots.map((lot: LinkDataValue, i: number) => {
      if (seen.has(lot.lot)) throw parameterError(`'data.lots.${i}.lot' ${lot.lot} is listed twice`)
      seen.add(lot.lot)
      if (lot.url === undefined && !lot.links?.length) throw parameterError(`'data.lots.${i}' needs a url or links`)
      return {
        ...lot,
        ...(lot.url !== undefined ? { url: normaliseUrl(lot.url, `data.lots.${i}.url`) } : {}),
        ...(lot.links ? { links: links(lot.links, `data.lots.${i}.links`) } : {}),
      }
    })
  }
}

/**
 * Where a visitor is sent. Hosted types land on the page this service serves at the
 * short link itself, so their destination is the short link.
 */
export function destinationOf(type: LinkType, d: LinkDataValue, shortLink: string): string {
  switch (type) {
    case 'link':
    case 'google-form':
    case 'gs1':
      return d.url
    case 'email': {
      const q = new URLSearchParams()
      if (d.subject) q.set('subject', d.subject)
      if (d.body) q.set('body', d.body)
      const qs = q.toString().replace(/\+/g, '%20')
      return `mailto:${encodeURIComponent(d.to).replace(/%40/g, '@')}${qs ? `?${qs}` : ''}`
    }
    case 'sms': {
      const tel = d.phone.replace(/[^0-9+]/g, '')
      return `sms:${tel}${d.message ? `?body=${encodeURIComponent(d.message)}` : ''}`
    }
    case 'whatsapp': {
      const digits = d.phone.replace(/[^0-9]/g, '')
      return `https://wa.me/${digits}${d.message ? `?text=${encodeURIComponent(d.message)}` : ''}`
    }
    case 'map': {
      const q = d.query ?? `${d.latitude},${d.longitude}`
      return `https://www.google.com/maps/search/?api=1&query=${encodeURIComponent(q)}`
    }
    default:
      return shortLink
  }
}

export const isHosted = (type: string) => HOSTED_TYPES.has(type)

/**
 * What upsert matches on besides owner and type: the destination for redirecting
 * types; for hosted types (whose destination is their own short link) the content.
 */
export function matchKeyOf(type: LinkType, d: LinkDataValue, destination: string): string {
  // A product is its GTIN: upsert never answers another product that shares the default URL.
  if (type === 'gs1') return `gs1:${d.gtin} ${destination}`
  if (!isHosted(type)) return destination
  return `data:${createHash('sha256').update(canonicalJson(d)).digest('base64url')}`
}

export function canonicalJson(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(canonicalJson).join(',')}]`
  if (v && typeof v === 'object')
    return `{${Object.keys(v as object)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonicalJson((v as Record<string, unknown>)[k])}`)
      .join(',')}}`
  return JSON.stringify(v)
}

/** Text that `search` matches besides slug and destination. */
export function searchTextOf(d: LinkDataValue): string {
  const parts: string[] = []
  const walk = (v: unknown) => {
    if (typeof v === 'string') parts.push(v)
    else if (Array.isArray(v)) v.forEach(walk)
    else if (v && typeof v === 'object') Object.values(v).forEach(walk)
  }
  walk(d)
  return parts.join(' ')
}

/**
 * Checks of Targeting the schema cannot express: items match targetType, time zones
 * exist, ranges ordered. After it, the value is a Targeting of the record's schema.
 */
export function checkTargeting(
  targeting: { targetType: string; targetDatas: unknown } | null | undefined,
): asserts targeting is Static<typeof Targeting> | null | undefined {
  if (!targeting) return
  const { targetType, targetDatas } = targeting
  if (targetType === 'device') {
    if (Array.isArray(targetDatas)) throw parameterError(`'linkOptions.Targeting.targetDatas' must be an object { ios, android } for device targeting`)
    // The schema the record is read back with: a stored extra key would break every later read.
    assertValid(DeviceTargets, targetDatas, 'linkOptions.Targeting.targetDatas')
    const td = targetDatas as Record<string, string>
    td.ios = normaliseUrl(td.ios!, 'linkOptions.Targeting.targetDatas.ios')
    td.android = normaliseUrl(td.android!, 'linkOptions.Targeting.targetDatas.android')
    return
  }
  if (!Array.isArray(targetDatas)) throw parameterError(`'linkOptions.Targeting.targetDatas' must be an array for ${targetType} targeting`)
  const schema = TARGET_ITEM_SCHEMA[targetType as keyof typeof TARGET_ITEM_SCHEMA]
  targetDatas.forEach((raw: unknown, i: number) => {
    const field = `linkOptions.Targeting.targetDatas.${i}`
    assertValid(schema, raw, field)
    const item = raw as LinkDataValue
    item.url = normaliseUrl(item.url, `${field}.url`)
    if (targetType === 'number' && item.to < item.from) throw parameterError(`'${field}.to' must be ≥ from`)
    if (targetType === 'time') {
      if (item.start === item.end) throw parameterError(`'${field}' start and end must differ`)
      if (item.timezone && !isTimeZone(item.timezone)) throw parameterError(`'${field}.timezone' is not an IANA time zone`)
    }
    if (targetType === 'language') item.language = item.language.toLowerCase()
  })
}

export function isTimeZone(tz: string): boolean {
  try {
    new Intl.DateTimeFormat('en', { timeZone: tz })
    return true
  } catch {
    return false
  }
}
