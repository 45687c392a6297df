/**
 * Click ids of conversion tracking (contract: "Conversions"): each counted visit of a link
 * with `trackConversion` gets its own, handed to the destination as the query parameter
 * `sl_id`, which the site passes back to POST /track/lead. Kept apart from the redirect's
 * steps so the resolve order stays readable: the handler calls `appendClickId` once.
 */
import { nanoid } from 'nanoid'

const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_'
/** The visit's time (ms, 48 bits) in the first 8 characters: the store finds the click among that moment's events. */
const TIME_CHARS = 8
const RANDOM_CHARS = 14

/**
 * 22 URL-safe characters: the visit's time, then 84 random bits from the CSPRNG (nanoid's pool,
 * about 1 µs). Never reused: two visits would need the same millisecond and the same 84 bits.
 */
export function newClickId(at: number): string {
  let t = Math.max(0, Math.trunc(at))
  let head = ''
  for (let i = 0; i < TIME_CHARS; i++) {
    head = ALPHABET[t % 64]! + head
    t = Math.floor(t / 64)
  }
  return head + nanoid(RANDOM_CHARS)
}

/** The visit time a click id carries, or null when the text is not a click id. */
export function clickTimeOf(clickId: string): number | null {
  if (clickId.length !== TIME_CHARS + RANDOM_CHARS || !/^[A-Za-z0-9_-]+$/.test(clickId)) return null
  let t = 0
  for (let i = 0; i < TIME_CHARS; i++) t = t * 64 + ALPHABET.indexOf(clickId[i]!)
  return t
}

/** The click id's query parameter. */
export const CLICK_ID_PARAM = 'sl_id'

/**
 * `url` with `sl_id=<clickId>` added to its query (before a fragment); an `sl_id` already there
 * is replaced. The common case (none there) is string work only, no URL object.
 */
export function appendClickId(url: string, clickId: string): string {
  const hash = url.indexOf('#')
  const base = hash < 0 ? url : url.slice(0, hash)
  const fragment = hash < 0 ? '' : url.slice(hash)
  const q = base.indexOf('?')
  if (q >= 0 && base.includes(CLICK_ID_PARAM) && /[?&]sl_id(=|&|$)/.test(base)) {
    const kept = base
      .slice(q + 1)
      .split('&')
      .filter((p) => p !== CLICK_ID_PARAM && !p.startsWith(`${CLICK_ID_PARAM}=`))
    kept.push(`${CLICK_ID_PARAM}=${clickId}`)
    return `${base.slice(0, q)}?${kept.join('&')}${fragment}`
  }
  const sep = q < 0 ? '?' : q === base.length - 1 || base.endsWith('&') ? '' : '&'
  return `${base}${sep}${CLICK_ID_PARAM}=${clickId}${fragment}`
}
