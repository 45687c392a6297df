/**
 * The rules of link health as pure functions (contract: "Link health"): what one check's
 * answer does to a URL's state, how a link's status follows from its URLs', and the record
 * the API shows. The stores apply them inside their transactions; nothing here reads a store.
 */
import { createHash } from 'node:crypto'
import { type BrokenUrl, type HealthStatus, healthUrlsOf, type LinkHealth, type LinkRow, type UrlHealth } from '../links'

/** One check's answer: `refused` when a hop named a private address (nothing was requested). */
export interface Outcome {
  result: 'pass' | 'fail' | 'refused'
  httpStatus: number | null
  error: string | null
}

/** What the store keeps per URL: its status and how many checks in a row failed. */
export interface UrlState {
  status: HealthStatus
  fails: number
}

/** Failed checks in a row that make a URL broken. */
export const FAILS_TO_BREAK = 2

/** Broken after 2 failed checks in a row, fine after 1 pass; a refused hop leaves the URL unknown. */
export function nextUrlState(prev: UrlState | null, outcome: Outcome): UrlState {
  if (outcome.result === 'pass') return { status: 'ok', fails: 0 }
  if (outcome.result === 'refused') return { status: 'unknown', fails: 0 }
  const fails = (prev?.fails ?? 0) + 1
  return { status: fails >= FAILS_TO_BREAK ? 'broken' : (prev?.status ?? 'unknown'), fails }
}

/** A link is broken when any of its URLs is, else unknown when any is (or it has none), else ok. */
export function linkStatusOf(urlStatuses: readonly HealthStatus[]): HealthStatus {
  if (urlStatuses.includes('broken')) return 'broken'
  if (urlStatuses.length === 0 || urlStatuses.includes('unknown')) return 'unknown'
  return 'ok'
}

/** The store's key of a URL: 128 bits of its SHA-256 (URLs run to a few thousand bytes; an index key should not). */
export const urlKey = (url: string): string => createHash('sha256').update(url).digest('base64url').slice(0, 22)

/** A URL's stored row as the record needs it. */
export interface UrlRow {
  url_key: string
  url: string
  status: HealthStatus
  fails: number
  http_status: number | null
  error: string | null
  checked_at: number | null
}

/** A link's stored status (absent: never settled, so unknown since its creation). */
export interface LinkStateRow {
  status: HealthStatus
  since: number
}

const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString())

/** The record's `health` from the link's URLs (in healthUrlsOf's order), their stored rows and the link's stored status. */
export function linkHealthOf(urls: readonly string[], rows: ReadonlyMap<string, UrlRow>, state: LinkStateRow | undefined, createdAt: number): LinkHealth {
  const perUrl: UrlHealth[] = urls.map((url) => {
    const r = rows.get(urlKey(url))
    return { url, status: r?.status ?? 'unknown', httpStatus: r?.http_status ?? null, error: r?.error ?? null, checkedAt: iso(r?.checked_at ?? null) }
  })
  let checkedAt: number | null = null
  for (const url of urls) {
    const at = rows.get(urlKey(url))?.checked_at ?? null
    if (at !== null && (checkedAt === null || at > checkedAt)) checkedAt = at
  }
  const brokenUrls: BrokenUrl[] = perUrl.filter((u) => u.status === 'broken').map(({ url, httpStatus, error }) => ({ url, httpStatus, error }))
  return { status: state?.status ?? 'unknown', checkedAt: iso(checkedAt), since: new Date(state?.since ?? createdAt).toISOString(), brokenUrls, urls: perUrl }
}

/** A link as a change of its health names it (cache keys are `<domain>/<key>`). */
export interface LinkRef {
  seq: number
  id: string
  domain: string
  key: string
}

/** A link whose status changed, once (the store wrote it in the same transaction). */
export interface Transition {
  link: LinkRef
  from: HealthStatus
  to: HealthStatus
}

/**
 * What settling links did: their status changes, and the links one of whose URLs became or
 * stopped being broken (their cached redirects must be dropped on every node).
 */
export interface Settled {
  transitions: Transition[]
  touched: LinkRef[]
}

export const NOTHING_SETTLED: Settled = { transitions: [], touched: [] }

/** One check's answer for a URL, at the time it came. */
export interface CheckResult {
  url: string
  key: string
  outcome: Outcome
  at: number
}

/** A link and the URLs it sends visitors to now (healthUrlsOf, with their keys). */
export interface MappedLink {
  seq: number
  urls: { url: string; key: string }[]
}

/** A link as settling reads it: its address, whether it is live, and its stored status. */
export interface SettleInput extends LinkRef {
  live: boolean
  stored: LinkStateRow | null
}

/**
 * Links' statuses from their URLs' (`statuses` by link seq): the rows to write (a changed
 * status, `since` now) and the transitions. A live link never settled that is still unknown
 * needs no row.
 */
export function settlePlan(
  links: readonly SettleInput[],
  statuses: ReadonlyMap<number, HealthStatus[]>,
  now: number,
): { writes: { seq: number; status: HealthStatus; since: number }[]; transitions: Transition[] } {
  const writes: { seq: number; status: HealthStatus; since: number }[] = []
  const transitions: Transition[] = []
  for (const l of links) {
    if (!l.live) continue
    const next = linkStatusOf(statuses.get(l.seq) ?? [])
    const prev = l.stored?.status ?? 'unknown'
    if (next === prev) continue
    writes.push({ seq: l.seq, status: next, since: now })
    transitions.push({ link: { seq: l.seq, id: l.id, domain: l.domain, key: l.key }, from: prev, to: next })
  }
  return { writes, transitions }
}

/** A URL's row after a check. */
export interface UrlWrite extends UrlState {
  key: string
  url: string
  httpStatus: number | null
  error: string | null
  checkedAt: number
}

/**
 * Check results applied to the URLs' stored states (`prev`, absent: never checked), in order:
 * the rows to write, the URLs whose status changed, and those that became or stopped being broken.
 */
export function resultsPlan(
  prev: ReadonlyMap<string, UrlState>,
  results: readonly CheckResult[],
): { writes: UrlWrite[]; changed: string[]; flipped: string[] } {
  const state = new Map(prev)
  const before = new Map<string, HealthStatus>()
  const writes = new Map<string, UrlWrite>()
  for (const r of results) {
    const old = state.get(r.key) ?? null
    if (!before.has(r.key)) before.set(r.key, old?.status ?? 'unknown')
    const next = nextUrlState(old, r.outcome)
    state.set(r.key, next)
    writes.set(r.key, { key: r.key, url: r.url, ...next, httpStatus: r.outcome.httpStatus, error: r.outcome.error, checkedAt: r.at })
  }
  const changed: string[] = []
  const flipped: string[] = []
  for (const [key, was] of before) {
    const now = state.get(key)!.status
    if (now === was) continue
    changed.push(key)
    if (now === 'broken' || was === 'broken') flipped.push(key)
  }
  return { writes: [...writes.values()], changed, flipped }
}

/** The webhook event a change of a link's status is (contract): broken, or back to ok from broken; other changes are none. */
export type HealthEventType = 'link.broken' | 'link.recovered'
export function healthEventOf(from: HealthStatus, to: HealthStatus): HealthEventType | null {
  return to === 'broken' ? 'link.broken' : from === 'broken' && to === 'ok' ? 'link.recovered' : null
}

/** The transitions that are events, with their type. */
export function eventTransitions(transitions: readonly Transition[]): { seq: number; type: HealthEventType }[] {
  return transitions.flatMap((t) => {
    const type = healthEventOf(t.from, t.to)
    return type ? [{ seq: t.link.seq, type }] : []
  })
}

/** A change of a link's health as its event tells of it: the link's row and tags as the change left them, and its new `health`. */
export interface HealthChangeEvent {
  type: HealthEventType
  row: LinkRow
  tags: string[]
  health: LinkHealth
}

/** The URL keys whose rows the records of these links need. */
export const healthKeysOf = (rows: readonly LinkRow[]): string[] => [...new Set(rows.flatMap((r) => healthUrlsOf(r).map(urlKey)))]

/** The events' changes, read in the transaction that settled them (a link no longer live has none). */
export function healthChanges(
  typed: readonly { seq: number; type: HealthEventType }[],
  rows: readonly LinkRow[],
  tags: ReadonlyMap<number, string[]>,
  urls: ReadonlyMap<string, UrlRow>,
  states: ReadonlyMap<number, LinkStateRow>,
): HealthChangeEvent[] {
  const bySeq = new Map(rows.map((r) => [r.seq, r]))
  return typed.flatMap(({ seq, type }) => {
    const row = bySeq.get(seq)
    return row ? [{ type, row, tags: tags.get(seq) ?? [], health: linkHealthOf(healthUrlsOf(row), urls, states.get(seq), row.created_at) }] : []
  })
}
