/**
 * The GS1 product form's state and its conversions to and from the API's `data` of a gs1 link.
 * The rules (GTIN check digit, link types, patterns, limits) are the API's own, imported from
 * src/gs1 (plain modules, no schema library).
 */
import { gtinProblem } from '../../../../src/gs1/gs1.gtin'
import { LANG_PATTERN, LOT_PATTERN } from '../../../../src/gs1/gs1.rules'

export interface Gs1LinkRow {
  linkType: string
  url: string
  title: string
  lang: string
}
export interface Gs1LotRow {
  lot: string
  url: string
  links: Gs1LinkRow[]
}
export interface Gs1Form {
  gtin: string
  url: string
  links: Gs1LinkRow[]
  lots: Gs1LotRow[]
}

export const emptyGs1 = (): Gs1Form => ({ gtin: '', url: '', links: [], lots: [] })
export const emptyGs1Link = (): Gs1LinkRow => ({ linkType: 'gs1:pip', url: '', title: '', lang: '' })
export const emptyGs1Lot = (): Gs1LotRow => ({ lot: '', url: '', links: [] })

// biome-ignore lint/suspicious/noExplicitAny: the API's data, read field by field
type ApiData = Record<string, any>
const opt = (s: string) => (s.trim() === '' ? undefined : s.trim())
const compact = (o: ApiData): ApiData => Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined))
const linkOf = (l: Gs1LinkRow) => compact({ linkType: l.linkType, url: l.url.trim(), title: opt(l.title), lang: opt(l.lang) })

export function gs1DataOf(f: Gs1Form): ApiData {
  return compact({
    gtin: f.gtin.replace(/\s+/g, ''),
    url: f.url.trim(),
    links: f.links.length ? f.links.map(linkOf) : undefined,
    lots: f.lots.length
      ? f.lots.map((l) => compact({ lot: l.lot.trim(), url: opt(l.url), links: l.links.length ? l.links.map(linkOf) : undefined }))
      : undefined,
  })
}

const rowOf = (l: ApiData): Gs1LinkRow => ({ linkType: l.linkType ?? 'gs1:pip', url: l.url ?? '', title: l.title ?? '', lang: l.lang ?? '' })
export function gs1FormOf(d: ApiData): Gs1Form {
  return {
    gtin: d.gtin ?? '',
    url: d.url ?? '',
    links: (d.links ?? []).map(rowOf),
    lots: (d.lots ?? []).map((l: ApiData) => ({ lot: l.lot ?? '', url: l.url ?? '', links: (l.links ?? []).map(rowOf) })),
  }
}

/** Live feedback on a GTIN as it is typed: ok with its 14-digit form, or what is wrong. */
export function gtinFeedback(raw: string): { ok: true; message: string } | { ok: false; message: string } | null {
  const g = raw.replace(/\s+/g, '')
  if (g === '') return null
  const problem = gtinProblem(g)
  if (problem) return { ok: false, message: `This GTIN ${problem}.` }
  const kind = g.length === 14 ? 'GTIN-14' : `GTIN-${g.length}`
  return { ok: true, message: `Valid ${kind}${g.length < 14 ? `, stored as ${g.padStart(14, '0')}` : ''}.` }
}

export const lotValid = (lot: string) => new RegExp(LOT_PATTERN).test(lot)
export const langValid = (lang: string) => lang === '' || new RegExp(LANG_PATTERN).test(lang)
