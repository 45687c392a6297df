/**
 * Click ids of conversion tracking (contract: "Conversions"): each counted visit of a link
 * with `trackConversion` gets its own, handed to the destination as the query parameter
 * `sl_id`, which the site passes back to POST /track/lead. Kept apart from the redirect's
 * steps so the resolve order stays readable: the handler calls `appendClickId` once.
 */
import { customAlphabet } from 'nanoid'

/** 22 URL-safe characters (~131 bits from the CSPRNG): never reused in practice, and the store's primary key refuses a repeat. */
export const newClickId = customAlphabet('0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ', 22)

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
  if (q >= 0 && /[?&]sl_id(=|&|$)/.test(base)) {
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
