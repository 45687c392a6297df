/**
 * link.clicked events from a click batch: which visits anyone could want, and their rows.
 * Shared by the SQLite and PostgreSQL functions the click writers call (click-events.ts,
 * click-events.pg.ts), which only read and write.
 *
 * Who could want a visit: an enabled webhook subscribed to link.clicked (its owner's links,
 * every link for an admin, narrowed by its linkIds/tagIds), or a live stream that asked for
 * link.clicked in the last 24 hours (its user's links, every link for an admin). With none,
 * a batch costs one small read and writes nothing.
 */
import { newId, toIso } from '../shared'
import { type EventRowValues, eventRowOf } from './events.outbox'

/** The contract's `click` fields of link.clicked, in its order; a visit row carries each under the same name. */
export const CLICK_FIELDS = [
  'scan',
  'continent',
  'country',
  'region',
  'city',
  'device',
  'os',
  'browser',
  'referer',
  'refererUrl',
  'utmSource',
  'utmMedium',
  'utmCampaign',
  'utmTerm',
  'utmContent',
] as const

/** A visit as the click writers hold it (their ClickEvent is one): a row with `n` > 1 stands for n identical visits. */
export type VisitRow = { linkSeq: number; at: number; n: number; scan: boolean } & Record<Exclude<(typeof CLICK_FIELDS)[number], 'scan'>, string | null>

/** Whose visits one subscriber wants: every link (`all`) or one user's, maybe narrowed to links or tags. */
export interface ClickInterest {
  all: boolean
  userId: string | null
  linkIds: string[]
  tagIds: string[]
}

export interface InterestRow {
  /** A webhook's owner, or a listener's user (null: a listener for every link). */
  user_id: string | null
  /** 'admin' when every link is in scope. */
  role: string
  link_ids: string
  tag_ids: string
}

/** Webhooks subscribed to link.clicked whose owner may still act, and live listeners not expired at `now` (the placeholder). */
export const interestSql = (now: '?' | '$1') => `SELECT w.user_id AS user_id, u.role AS role, w.link_ids AS link_ids, w.tag_ids AS tag_ids
  FROM webhooks w JOIN users u ON u.id = w.user_id
  WHERE w.disabled = 0 AND u.disabled = 0 AND u.deleted_at IS NULL AND w.events LIKE '%"link.clicked"%'
  UNION ALL
  SELECT user_id, CASE WHEN user_id IS NULL THEN 'admin' ELSE 'member' END, '[]', '[]' FROM event_listeners WHERE expires_at > ${now}`

export function interestsOf(rows: readonly InterestRow[]): ClickInterest[] {
  return rows.map((r) => ({
    all: r.role === 'admin',
    userId: r.user_id,
    linkIds: JSON.parse(r.link_ids) as string[],
    tagIds: JSON.parse(r.tag_ids) as string[],
  }))
}

export interface ClickedLink {
  seq: number
  id: string
  user_id: string
  domain: string
  key: string
  link_type: string
  destination: string
}

const narrowed = (i: ClickInterest) => i.linkIds.length > 0 || i.tagIds.length > 0

export const needsTags = (interests: readonly ClickInterest[]) => interests.some((i) => i.tagIds.length > 0)

/** Whether any subscriber wants visits of this link (with its tags, when some subscriber filters by tags). */
export function isWanted(interests: readonly ClickInterest[], link: ClickedLink, tags: readonly string[]): boolean {
  return interests.some((i) => (i.all || i.userId === link.user_id) && (!narrowed(i) || i.linkIds.includes(link.id) || i.tagIds.some((t) => tags.includes(t))))
}

/**
 * The `events` rows of a batch: one per visit (a row with n visits gives n events), for the
 * wanted links only. `link.shortLink` is added when the event is sent (the configuration
 * knows the public port); `linkType` lets that be done for every type and is then removed.
 */
export function clickEventRows(
  visits: readonly VisitRow[],
  wanted: ReadonlyMap<number, { link: ClickedLink; tags: readonly string[] | null }>,
): EventRowValues[] {
  const rows: EventRowValues[] = []
  for (const v of visits) {
    const w = wanted.get(v.linkSeq)
    if (!w) continue
    const click: Record<string, unknown> = { at: toIso(v.at) }
    for (const f of CLICK_FIELDS) click[f] = v[f]
    const data = {
      link: { id: w.link.id, domain: w.link.domain, key: w.link.key, linkType: w.link.link_type, destination: w.link.destination },
      click,
    }
    const event = { type: 'link.clicked' as const, userId: w.link.user_id, linkId: w.link.id, tagIds: w.tags, data }
    const first = eventRowOf(event, v.at)
    rows.push(first)
    for (let i = 1; i < v.n; i++) rows.push({ ...first, id: newId('evt') })
  }
  return rows
}

/** The batch's links that someone wants, with their tags (when some subscriber filters by tags). */
export function wantedLinks(
  interests: readonly ClickInterest[],
  links: readonly ClickedLink[],
  tagRows: readonly { link_seq: number; tag_id: string }[],
): Map<number, { link: ClickedLink; tags: string[] | null }> {
  const tags = new Map<number, string[]>()
  for (const r of tagRows) (tags.get(r.link_seq) ?? tags.set(r.link_seq, []).get(r.link_seq)!).push(r.tag_id)
  const withTags = needsTags(interests)
  const wanted = new Map<number, { link: ClickedLink; tags: string[] | null }>()
  for (const link of links) {
    const linkTags = tags.get(link.seq) ?? []
    if (isWanted(interests, link, linkTags)) wanted.set(link.seq, { link, tags: withTags ? linkTags : null })
  }
  return wanted
}

/** The distinct link seqs of a batch. */
export const seqsOf = (visits: readonly VisitRow[]) => [...new Set(visits.map((v) => v.linkSeq))]
