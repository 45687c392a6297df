/**
 * One export row → the link an import writes, with every problem that can be seen without the
 * store (the link service checks the rest when the row is written). Pure.
 */
import type { RawLink } from './imports.sources'

/** Types whose whole content is a URL, so a row of an export can carry one. */
export const ROW_TYPES = ['link', 'google-form'] as const
const OTHER_TYPES = new Set(['document', 'file', 'menu', 'app-stores', 'image', 'audio', 'video', 'wi-fi', 'email', 'map', 'whatsapp', 'text', 'sms', 'svg'])
const KEY_PATTERN = /^[a-zA-Z0-9_-]+$/
const MAX_KEY = 190
const MAX_URL = 2000
const MAX_COMMENT = 2000
const MAX_TAG_NAME = 50
const MAX_TAGS = 30

export interface ImportItem {
  row: number
  type: (typeof ROW_TYPES)[number]
  url: string
  key?: string
  /** The short domain the row names (lower case), if any. */
  domain?: string
  comment?: string
  /** Tag names, unique regardless of case (the first spelling wins). */
  tags: string[]
  createdAt?: number
  clicks?: number
}

export type RowResult = { item: ImportItem; error?: undefined } | { error: string; item?: undefined }

/** A spreadsheet formula our CSV export defused with a leading apostrophe. */
const FORMULA_START = /^[=+\-@\t\r]/
const unescapeFormula = (s: string) => (s.length > 1 && s[0] === "'" && FORMULA_START.test(s.slice(1)) ? s.slice(1) : s)

const short = (s: string) => (s.length > 60 ? `${s.slice(0, 57)}…` : s)

function text(v: unknown): string | undefined {
  if (typeof v === 'string') {
    const s = unescapeFormula(v.trim())
    return s === '' ? undefined : s
  }
  if (typeof v === 'number' && Number.isFinite(v)) return String(v)
  return undefined
}

/** `https://bit.ly/abc`, `bit.ly/abc` → its domain and key. */
function splitShortUrl(v: unknown): { domain?: string; key?: string } {
  const s = text(v)
  if (!s) return {}
  try {
    const u = new URL(/^[a-z][a-z0-9+.-]*:\/\//i.test(s) ? s : `https://${s}`)
    const path = u.pathname.replace(/^\/+/, '')
    let key: string | undefined
    try {
      key = decodeURIComponent(path) || undefined
    } catch {
      key = path || undefined
    }
    return { domain: u.hostname.toLowerCase() || undefined, key }
  } catch {
    return {}
  }
}

/** ISO 8601, YOURLS' `YYYY-MM-DD HH:MM:SS` (UTC), or Unix time in seconds or milliseconds. */
export function parseDate(v: unknown): number | null {
  if (typeof v === 'number') return Number.isFinite(v) && v >= 0 ? (v < 1e11 ? v * 1000 : v) : null
  const s = text(v)
  if (!s) return null
  if (/^\d+$/.test(s)) return parseDate(Number(s))
  const plain = /^(\d{4}-\d{2}-\d{2})[ T](\d{2}:\d{2}(:\d{2}(\.\d+)?)?)$/.exec(s)
  const at = Date.parse(plain ? `${plain[1]}T${plain[2]}Z` : s)
  return Number.isFinite(at) && at >= 0 ? at : null
}

function parseCount(v: unknown): number | null {
  if (typeof v === 'number') return Number.isSafeInteger(v) && v >= 0 ? v : null
  const s = text(v)?.replace(/[,\s_]/g, '')
  if (!s || !/^\d+$/.test(s)) return null
  const n = Number(s)
  return Number.isSafeInteger(n) ? n : null
}

function tagList(v: unknown): string[] {
  const parts = Array.isArray(v) ? v : v === undefined || v === null ? [] : [v]
  const byName = new Map<string, string>()
  for (const p of parts) {
    const name = text(p)
    if (name && !byName.has(name.toLowerCase())) byName.set(name.toLowerCase(), name)
  }
  return [...byName.values()]
}

/** A NUL character in any value (PostgreSQL stores no NUL in text; nothing in a link needs one). */
const hasNul = (v: unknown): boolean => (typeof v === 'string' ? v.includes('\0') : Array.isArray(v) ? v.some(hasNul) : false)

/** `csv`: the row is this dashboard's own format (a type column; no click totals or dates). */
export function readRow(raw: RawLink, row: number, { csv }: { csv: boolean }): RowResult {
  if (Object.values(raw).some(hasNul)) return { error: 'holds a NUL character' }
  const errors: string[] = []
  const url = text(raw.url)
  if (!url) errors.push('url is empty')
  else if (url.length > MAX_URL) errors.push(`url is longer than ${MAX_URL} characters`)
  else if (!/^https?:\/\//i.test(url)) errors.push(`url "${short(url)}" is not an http or https address`)

  const fromShort = splitShortUrl(raw.shortUrl)
  const key = text(raw.key) ?? fromShort.key
  if (key !== undefined) {
    if (key.length > MAX_KEY) errors.push(`key is longer than ${MAX_KEY} characters`)
    else if (!KEY_PATTERN.test(key)) errors.push(`key "${short(key)}" may hold only letters, digits, - and _`)
  }
  const domain = (text(raw.domain) ?? fromShort.domain)?.toLowerCase()

  let type: ImportItem['type'] = 'link'
  const rawType = csv ? text(raw.type)?.toLowerCase() : undefined
  if (rawType === 'google-form') type = 'google-form'
  else if (rawType && rawType !== 'link' && rawType !== 'url')
    errors.push(
      OTHER_TYPES.has(rawType)
        ? `type ${rawType} needs more than a URL; create it in the link editor`
        : `type "${short(rawType)}" is unknown (use link or google-form)`,
    )

  const tags = tagList(raw.tags)
  const longTag = tags.find((t) => t.length > MAX_TAG_NAME)
  if (longTag) errors.push(`tag "${short(longTag)}" is longer than ${MAX_TAG_NAME} characters`)
  if (tags.length > MAX_TAGS) errors.push(`a link carries at most ${MAX_TAGS} tags (this row has ${tags.length})`)

  // Our links hold one comment: an export's title and description go into it (cut to its limit).
  const notes = [text(raw.title), text(raw.comment)].filter((s): s is string => s !== undefined)
  const comment = notes.length ? [...new Set(notes)].join('\n').slice(0, MAX_COMMENT) : undefined

  let createdAt: number | undefined
  let clicks: number | undefined
  if (!csv) {
    if (raw.createdAt !== undefined && raw.createdAt !== null && raw.createdAt !== '') {
      const at = parseDate(raw.createdAt)
      if (at === null) errors.push(`creation date "${short(String(raw.createdAt))}" is not a date`)
      else createdAt = at
    }
    if (raw.clicks !== undefined && raw.clicks !== null && raw.clicks !== '') {
      const n = parseCount(raw.clicks)
      if (n === null) errors.push(`click count "${short(String(raw.clicks))}" is not a whole number`)
      else clicks = n
    }
  }
  if (errors.length) return { error: errors.join('; ') }
  return { item: { row, type, url: url!, key, domain, comment, tags, createdAt, clicks } }
}
