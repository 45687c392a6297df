/**
 * A CSV file → link rows to create, each with the problems that can be found without
 * writing anything (the server checks the rest when the row is sent).
 */
import { unescapeFormula } from '../../csv'

/** Columns the import reads; others (an export's id, clicks, …) are ignored. */
export const IMPORT_COLUMNS = ['url', 'key', 'domain', 'tags', 'comment', 'type'] as const
type Column = (typeof IMPORT_COLUMNS)[number]
const ALIASES: Record<string, Column> = { destination: 'url', slug: 'key', tag: 'tags', comments: 'comment', linktype: 'type' }

/** Types whose content is a URL and nothing else, so a CSV row can carry it. */
export const URL_TYPES = ['link', 'google-form'] as const
const OTHER_TYPES = new Set(['document', 'file', 'menu', 'app-stores', 'image', 'audio', 'video', 'wi-fi', 'email', 'map', 'whatsapp', 'text', 'sms', 'svg'])
export const KEY_PATTERN = /^[a-zA-Z0-9_-]+$/
const MAX_KEY = 190
const MAX_URL = 2000
const MAX_COMMENT = 2000
const MAX_TAG_NAME = 50
const MAX_TAGS = 30

export interface ImportRow {
  /** Line in the file (the header is line 1). */
  line: number
  url: string
  key: string
  /** The row's domain, or the import's chosen one when the row names none. */
  domain: string
  tags: string[]
  comment: string
  type: (typeof URL_TYPES)[number]
  errors: string[]
}

export interface ParsedImport {
  rows: ImportRow[]
  /** Problems with the file as a whole (no url column, no rows). */
  fileErrors: string[]
  ignoredColumns: string[]
}

/** Header cells → column index per known column. */
function readHeader(header: string[]) {
  const index = new Map<Column, number>()
  const ignored: string[] = []
  header.forEach((cell, i) => {
    const name = cell.trim().toLowerCase().replace(/[\s_]/g, '')
    const col = (IMPORT_COLUMNS as readonly string[]).includes(name) ? (name as Column) : ALIASES[name]
    if (col && !index.has(col)) index.set(col, i)
    else if (cell.trim()) ignored.push(cell.trim())
  })
  return { index, ignored }
}

/**
 * `knownDomains`: domains links may use now (lower case); `defaultDomain` goes to rows that
 * name none. A key already used in the file is flagged on its second use, since the server
 * would refuse that link anyway.
 */
export function readImport(table: string[][], knownDomains: ReadonlySet<string>, defaultDomain: string): ParsedImport {
  const [header, ...body] = table
  if (!header) return { rows: [], fileErrors: ['the file is empty'], ignoredColumns: [] }
  const { index, ignored } = readHeader(header)
  if (!index.has('url'))
    return { rows: [], fileErrors: [`the header row has no "url" column (it names: ${header.join(', ') || 'nothing'})`], ignoredColumns: ignored }
  if (body.length === 0) return { rows: [], fileErrors: ['the file has a header row but no links'], ignoredColumns: ignored }
  const seenKeys = new Map<string, number>()
  const rows = body.map((cells, n) => {
    const cell = (c: Column) => {
      const i = index.get(c)
      return i === undefined ? '' : unescapeFormula((cells[i] ?? '').trim())
    }
    const errors: string[] = []
    const url = cell('url')
    const key = cell('key')
    const domain = cell('domain').toLowerCase() || defaultDomain
    const comment = cell('comment')
    const rawType = cell('type').toLowerCase()
    // Tag names are unique per user regardless of case: the first spelling wins.
    const byName = new Map<string, string>()
    for (const t of cell('tags').split(';')) {
      const name = t.trim()
      if (name && !byName.has(name.toLowerCase())) byName.set(name.toLowerCase(), name)
    }
    const tags = [...byName.values()]

    if (!url) errors.push('url is empty')
    else if (url.length > MAX_URL) errors.push(`url is longer than ${MAX_URL} characters`)
    else if (!isWebUrl(url)) errors.push(`url "${short(url)}" is not an http or https address`)
    if (key) {
      if (key.length > MAX_KEY) errors.push(`key is longer than ${MAX_KEY} characters`)
      else if (!KEY_PATTERN.test(key)) errors.push(`key "${short(key)}" may hold only letters, digits, - and _`)
    }
    if (domain && !knownDomains.has(domain)) errors.push(`domain ${short(domain)} is not one of your short domains`)
    let type: ImportRow['type'] = 'link'
    if (rawType === 'google-form') type = 'google-form'
    else if (rawType && rawType !== 'link' && rawType !== 'url') {
      errors.push(
        OTHER_TYPES.has(rawType)
          ? `type ${rawType} needs more than a URL; create it in the link editor`
          : `type "${short(rawType)}" is unknown (use link or google-form)`,
      )
    }
    const longTag = tags.find((t) => t.length > MAX_TAG_NAME)
    if (longTag) errors.push(`tag "${short(longTag)}" is longer than ${MAX_TAG_NAME} characters`)
    if (tags.length > MAX_TAGS) errors.push(`a link carries at most ${MAX_TAGS} tags (this row has ${tags.length})`)
    if (comment.length > MAX_COMMENT) errors.push(`comment is longer than ${MAX_COMMENT} characters`)
    const line = n + 2
    if (key) {
      const slot = `${domain}\n${key}`
      const first = seenKeys.get(slot)
      if (first !== undefined) errors.push(`key "${short(key)}" is already used on line ${first}`)
      else seenKeys.set(slot, line)
    }
    return { line, url, key, domain, tags, comment, type, errors }
  })
  return { rows, fileErrors: [], ignoredColumns: ignored }
}

function isWebUrl(s: string): boolean {
  try {
    const u = new URL(s)
    return (u.protocol === 'http:' || u.protocol === 'https:') && u.hostname !== ''
  } catch {
    return false
  }
}

const short = (s: string) => (s.length > 60 ? `${s.slice(0, 57)}…` : s)
