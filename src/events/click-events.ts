/**
 * link.clicked events on SQLite: `appendClickEvents(db, visits)` is called by the click
 * writer inside its batch transaction, so a visit's events exist exactly when its click does.
 * Self-contained: it reads who could want the visits (click-events.shared.ts) in the same
 * transaction; with nobody subscribed it writes nothing.
 */
import type { Database } from 'bun:sqlite'
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
import { insertEventRows } from './events.outbox'

/** Appends the events of a batch's visits; answers how many. */
export function appendClickEvents(db: Database, visits: readonly VisitRow[], now = Date.now()): number {
  if (visits.length === 0) return 0
  const interests = interestsOf(db.query<InterestRow, [number]>(interestSql('?')).all(now))
  if (interests.length === 0) return 0
  const seqs = JSON.stringify(seqsOf(visits))
  const links = db
    .query<ClickedLink, [string]>('SELECT seq, id, user_id, domain, key, link_type, destination FROM links WHERE seq IN (SELECT value FROM json_each(?))')
    .all(seqs)
  const tags = needsTags(interests)
    ? db
        .query<{ link_seq: number; tag_id: string }, [string]>(
          'SELECT link_seq, tag_id FROM link_tags WHERE link_seq IN (SELECT value FROM json_each(?)) ORDER BY link_seq, pos',
        )
        .all(seqs)
    : []
  const rows = clickEventRows(visits, wantedLinks(interests, links, tags))
  insertEventRows(db, rows)
  return rows.length
}
