/** What the links screen and the CSV import share: the API's records, the list filters as they sit in the URL, and lookups. */
import { HEALTH_STATUSES, type HealthStatus, type LinkHealth } from '../../../../src/links/links.health.values'
import { api, type Query } from '../../api'

export interface LinkRecord {
  id: string
  domain: string
  key: string
  shortLink: string
  linkType: string
  destination: string
  clicks: number
  /** Clicks the service it was imported from had counted (never part of `clicks`). */
  importedClicks: number
  createdAt: string
  lastClicked: string | null
  tags: string[]
  comments: string | null
  userId: string
  archived: boolean
  hasPassword: boolean
  /** Null for types without a URL destination. */
  health: LinkHealth | null
}
export interface LinkPage {
  links: LinkRecord[]
  page: number
  pageSize: number
  total: number
}
export interface Tag {
  id: string
  name: string
  color: string
  userId: string
}
export interface Domain {
  slug: string
  cnameStatus: string
  archived: boolean
  isDefault: boolean
}
export interface User {
  id: string
  role: string
  disabled: boolean
}

/** The API's largest page of links: exports page through with it. */
export const MAX_PAGE_SIZE = 100
export const PAGE_SIZES = [10, 25, 50, 100] as const
export const DEFAULT_PAGE_SIZE = 25
export { LINK_TYPES } from '../../link-types'
export const SORTS = {
  newest: { label: 'Newest first', sortBy: 'created_at', sortOrder: 'desc' },
  oldest: { label: 'Oldest first', sortBy: 'created_at', sortOrder: 'asc' },
  clicks: { label: 'Most clicks', sortBy: 'clicks', sortOrder: 'desc' },
  fewest: { label: 'Fewest clicks', sortBy: 'clicks', sortOrder: 'asc' },
  recent: { label: 'Last clicked', sortBy: 'last_created_at', sortOrder: 'desc' },
} as const
export type SortName = keyof typeof SORTS

/** The screen's filters, read from the address bar (so back, refresh and shared links keep them). */
export interface LinkFilters {
  search: string
  domain: string
  type: string
  tag: string
  user: string
  /** A health status (the API's `health` filter), or '' for any. */
  health: HealthStatus | ''
  archived: boolean
  sort: SortName
  page: number
  pageSize: number
}

export function filtersFrom(query: URLSearchParams): LinkFilters {
  const int = (name: string, fallback: number) => {
    const n = Number(query.get(name))
    return Number.isInteger(n) && n >= 1 ? n : fallback
  }
  const sort = query.get('sort') ?? ''
  const size = int('size', DEFAULT_PAGE_SIZE)
  const health = query.get('health') ?? ''
  return {
    search: query.get('q') ?? '',
    domain: query.get('domain') ?? '',
    type: query.get('type') ?? '',
    tag: query.get('tag') ?? '',
    user: query.get('user') ?? '',
    health: (HEALTH_STATUSES as readonly string[]).includes(health) ? (health as HealthStatus) : '',
    archived: query.get('archived') === '1',
    sort: sort in SORTS ? (sort as SortName) : 'newest',
    page: Math.min(int('page', 1), 1_000_000),
    pageSize: (PAGE_SIZES as readonly number[]).includes(size) ? size : DEFAULT_PAGE_SIZE,
  }
}

/** The list query the API takes for these filters (without paging). */
export function listQuery(f: LinkFilters): Query {
  const s = SORTS[f.sort]
  return {
    search: f.search.trim().slice(0, 200) || undefined,
    domain: f.domain || undefined,
    linkType: f.type || undefined,
    tagIds: f.tag ? [f.tag] : undefined,
    userIds: f.user ? [f.user] : undefined,
    health: f.health || undefined,
    includeArchived: f.archived || undefined,
    sortBy: s.sortBy,
    sortOrder: s.sortOrder,
  }
}

export async function listLinks(query: Query, page: number, pageSize: number, signal?: AbortSignal): Promise<LinkPage> {
  const { data } = await api<LinkPage>('GET', '/links', { query: { ...query, page, pageSize }, signal })
  return data
}

/** Every page of a list endpoint that answers an array and X-Total-Count, up to `cap` items. */
async function allPages<T>(path: string, pageSize: number, signal?: AbortSignal, cap = 2000, query: Query = {}): Promise<T[]> {
  const out: T[] = []
  for (let page = 1; ; page++) {
    const { data, total } = await api<T[]>('GET', path, { query: { ...query, page, pageSize }, signal })
    out.push(...data)
    if (data.length < pageSize || out.length >= (total ?? 0) || out.length >= cap) return out
  }
}

export const fetchTags = (signal?: AbortSignal) => allPages<Tag>('/tags', 100, signal, 2000, { sortBy: 'name', sortOrder: 'asc' })
/** Domains a new link may use: default ones and custom ones whose CNAME is valid, not archived. */
export const fetchDomains = (signal?: AbortSignal) =>
  allPages<Domain>('/domains', 50, signal, 1000).then((ds) => ds.filter((d) => !d.archived && (d.isDefault || d.cnameStatus === 'valid')))
export const fetchUsers = (signal?: AbortSignal) => allPages<User>('/users', 100, signal, 1000)

/** "3 min ago", "in 2 days": the exact time goes in a title next to it. */
export function relativeTime(iso: string, now = Date.now()): string {
  const seconds = Math.round((new Date(iso).getTime() - now) / 1000)
  const units: [Intl.RelativeTimeFormatUnit, number][] = [
    ['year', 31_536_000],
    ['month', 2_592_000],
    ['week', 604_800],
    ['day', 86_400],
    ['hour', 3600],
    ['minute', 60],
  ]
  const format = new Intl.RelativeTimeFormat(undefined, { numeric: 'auto' })
  for (const [unit, size] of units) if (Math.abs(seconds) >= size) return format.format(Math.round(seconds / size), unit)
  return format.format(0, 'second')
}
