/**
 * What the resolver does with a product, as pure functions: which link answers a request
 * (link type, lot, languages), and the product's RFC 9264 linkset. The redirect server adds
 * everything a product shares with other links (expiry, password, targeting, counting).
 */
import type { Gs1Data, Gs1LinkValue } from './gs1.schema'
import { DEFAULT_LINK_TYPE, relationOf, titleOf } from './gs1.vocabulary'

/** A stored product, read once when it enters the redirect cache. */
export interface Gs1Product {
  gtin: string
  url: string
  links: Gs1LinkValue[]
  lots: Map<string, { url: string | null; links: Gs1LinkValue[] }>
}

export function productOf(data: Gs1Data): Gs1Product {
  const lots = new Map<string, { url: string | null; links: Gs1LinkValue[] }>()
  for (const l of data.lots ?? []) lots.set(l.lot, { url: l.url ?? null, links: l.links ?? [] })
  return { gtin: data.gtin, url: data.url, links: data.links ?? [], lots }
}

export type Gs1Choice =
  /** `specific`: a link type or lot chose it; otherwise the product's own default (targeting may still apply). */
  { kind: 'target'; url: string; linkType: string; specific: boolean } | { kind: 'no-link'; linkType: string }

/**
 * The link for a request: the requested link type's link (the lot's before the product's, chosen
 * among several by language), else the lot's url, else the product's url. `languages` are the
 * visitor's, in preference order, lower-case (Accept-Language).
 */
export function chooseLink(product: Gs1Product, req: { lot?: string; linkType: string | null; languages: string[] }): Gs1Choice {
  const lot = req.lot === undefined ? undefined : product.lots.get(req.lot)
  if (req.linkType === null || req.linkType === DEFAULT_LINK_TYPE) {
    const url = lot?.url ?? null
    return url
      ? { kind: 'target', url, linkType: DEFAULT_LINK_TYPE, specific: true }
      : { kind: 'target', url: product.url, linkType: DEFAULT_LINK_TYPE, specific: false }
  }
  const ofType = (links: Gs1LinkValue[]) => links.filter((l) => l.linkType === req.linkType)
  const fromLot = lot ? ofType(lot.links) : []
  const candidates = fromLot.length ? fromLot : ofType(product.links)
  const best = byLanguage(candidates, req.languages)
  return best ? { kind: 'target', url: best.url, linkType: req.linkType, specific: true } : { kind: 'no-link', linkType: req.linkType }
}

/**
 * Among links of one type: the first whose language the visitor prefers most (exact tag, then
 * the same primary language), else the first without a language, else the first.
 */
export function byLanguage<L extends { lang?: string }>(links: L[], languages: string[]): L | undefined {
  if (links.length <= 1) return links[0]
  for (const want of languages) {
    const exact = links.find((l) => l.lang?.toLowerCase() === want)
    if (exact) return exact
    const primary = want.split('-')[0]!
    const near = links.find((l) => l.lang !== undefined && l.lang.toLowerCase().split('-')[0] === primary)
    if (near) return near
  }
  return links.find((l) => l.lang === undefined) ?? links[0]
}

/** One link object of a linkset (RFC 9264 section 4.2; GS1 requires a title). */
export interface LinkTarget {
  href: string
  title: string
  hreflang?: string[]
}
/** A link context object: the anchor, GS1's itemDescription, and link relation → targets. */
export type LinkContext = { anchor: string; itemDescription: string } & Record<string, LinkTarget[] | string>

const targetOf = (l: Gs1LinkValue): LinkTarget => ({ href: l.url, title: l.title ?? titleOf(l.linkType), ...(l.lang ? { hreflang: [l.lang] } : {}) })

function contextOf(anchor: string, itemDescription: string, defaultUrl: string, links: Gs1LinkValue[]): LinkContext {
  const ctx = { anchor, itemDescription } as LinkContext
  for (const l of links) {
    const rel = relationOf(l.linkType)
    const list = (ctx[rel] as LinkTarget[] | undefined) ?? []
    list.push(targetOf(l))
    ctx[rel] = list
  }
  ctx[relationOf(DEFAULT_LINK_TYPE)] = [{ href: defaultUrl, title: titleOf(DEFAULT_LINK_TYPE) }]
  return ctx
}

/**
 * The product's linkset (`application/linkset+json`): lot contexts first (only the requested lot
 * when the request names one we know, else every lot), then the product's. `origin` is the
 * short domain's origin; `name` describes the item (itemDescription).
 */
export function linksetOf(product: Gs1Product, opts: { origin: string; name: string; lot?: string }): { linkset: LinkContext[] } {
  const base = `${opts.origin}/01/${product.gtin}`
  const lots = opts.lot !== undefined && product.lots.has(opts.lot) ? [opts.lot] : opts.lot !== undefined ? [] : [...product.lots.keys()]
  const linkset: LinkContext[] = []
  for (const lot of lots) {
    const l = product.lots.get(lot)!
    linkset.push(contextOf(`${base}/10/${encodeURIComponent(lot)}`, `${opts.name}, lot ${lot}`, l.url ?? product.url, l.links))
  }
  linkset.push(contextOf(base, opts.name, product.url, product.links))
  return { linkset }
}
