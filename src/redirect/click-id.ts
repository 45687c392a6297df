/**
 * Click ids of conversion tracking (contract: "Conversions"): each counted visit of a link
 * with `trackConversion` gets its own (made by stats/click-id.ts), handed to the destination
 * as the query parameter `sl_id`, which the site passes back to POST /track/lead. Kept apart
 * from the redirect's steps so the resolve order stays readable: the handler calls
 * `appendClickId` once.
 */

/** The click id's query parameter. */
export const CLICK_ID_PARAM = 'sl_id'

/**
 * `url` with `sl_id=<clickId>` added to its query (before a fragment); an `sl_id` already there
 * is replaced. The common case (none there) is string work only, no URL object. Most tracked
 * visits go to the destination the visit before went to, so the parts around the id are kept
 * for the last destination (one comparison per visit instead of a scan of the URL).
 */
export function appendClickId(url: string, clickId: string): string {
  if (url !== around.url) around = partsAround(url)
  return around.head + clickId + around.tail
}

/** The parts of the last destination (an empty one to begin with). */
let around = partsAround('')

/** What goes before the click id (the URL up to `sl_id=`) and after it (the fragment). */
function partsAround(url: string): { url: string; head: string; tail: string } {
  const hash = url.indexOf('#')
  const base = hash < 0 ? url : url.slice(0, hash)
  const tail = hash < 0 ? '' : url.slice(hash)
  const q = base.indexOf('?')
  if (q >= 0 && base.includes(CLICK_ID_PARAM) && /[?&]sl_id(=|&|$)/.test(base)) {
    const kept = base
      .slice(q + 1)
      .split('&')
      .filter((p) => p !== CLICK_ID_PARAM && !p.startsWith(`${CLICK_ID_PARAM}=`))
    kept.push(`${CLICK_ID_PARAM}=`)
    return { url, head: `${base.slice(0, q)}?${kept.join('&')}`, tail }
  }
  const sep = q < 0 ? '?' : q === base.length - 1 || base.endsWith('&') ? '' : '&'
  return { url, head: `${base}${sep}${CLICK_ID_PARAM}=`, tail }
}
