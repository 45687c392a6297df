/**
 * link.clicked events on PostgreSQL: `appendClickEventsPg(tx, visits)` is called by the
 * click writer inside its batch transaction (click-events.ts says why; the logic is shared).
 */
import type { SQL } from 'bun'
import {
  type ClickedLink,
  clickEventRows,
  type InterestRow,
  interestSql,
  interestsOf,
  needsTags,
  seqsOf,
  type VisitRow,
  wantedLinks,
} from './click-events.shared'
import { insertEventRowsPg } from './events.outbox.pg'

/** Appends the events of a batch's visits; answers how many. */
export async function appendClickEventsPg(tx: SQL, visits: readonly VisitRow[], now = Date.now()): Promise<number> {
  if (visits.length === 0) return 0
  const interests = interestsOf((await tx.unsafe(interestSql('$1'), [now])) as InterestRow[])
  if (interests.length === 0) return 0
  const seqs = seqsOf(visits)
  const links = (await tx.unsafe('SELECT seq::float8 AS seq, id, user_id, domain, key, link_type, destination FROM links WHERE seq = ANY($1::bigint[])', [
    seqs,
  ])) as ClickedLink[]
  const tags = needsTags(interests)
    ? ((await tx.unsafe('SELECT link_seq::float8 AS link_seq, tag_id FROM link_tags WHERE link_seq = ANY($1::bigint[]) ORDER BY link_seq, pos', [seqs])) as {
        link_seq: number
        tag_id: string
      }[])
    : []
  const rows = clickEventRows(visits, wantedLinks(interests, links, tags))
  await insertEventRowsPg(tx, rows)
  return rows.length
}
