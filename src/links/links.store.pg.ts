/**
 * The link store on PostgreSQL (docs/adr/0010): the SQLite store's methods and answers, in
 * PostgreSQL's SQL against migration 0001. bigint columns are cast to float8 (epoch ms and
 * sequence numbers fit exactly), because Bun.SQL returns int8 as strings.
 *
 * - Search: a term of 3+ characters matches the generated `search_text` (pg_trgm index) as
 *   SQLite's trigram FTS matches its index; a shorter one is LIKE on key, destination and
 *   data with ASCII-only case folding (COLLATE "C"), as SQLite's LIKE.
 * - Order: SQLite sorts NULL lowest, so "last clicked" puts never-clicked links last with
 *   NULLS LAST in both directions.
 * - Every write that changes what a short link resolves to publishes `${domain}/${key}`
 *   (old and new on an update) on the `links` channel inside its transaction, so every
 *   node's redirect cache drops it at commit.
 */
import type { SQL } from 'bun'
import { appendEventsPg, eventsAppended } from '../events'
import { escapeLike } from '../shared'
import type { InvalidationBus } from '../store'
import {
  healthCondition,
  type LinkChangeEvent,
  type LinkEventsOf,
  type LinkFilter,
  type LinkRow,
  type LinkSort,
  type LinkStorePort,
  type LinkWrite,
  type NewLink,
  type NewLinkRow,
  unchangedSince,
  type WriteRefusal,
} from './links.store'

/** The invalidation channel of links; a key is `${domain}/${key}`, as the redirect cache keys them. */
export const LINKS_CHANNEL = 'links'

export interface PgLinkStoreOptions {
  /** Announces changed short links to every node (the invalidation bus); none: nobody else is told. */
  publish?: InvalidationBus['publish']
}

/**
 * The row as SQLite answers it (`p`: a table alias and dot, or nothing). The counters live in
 * `link_clicks` (migration 0010, written by the click writer): `c` the alias of its row when the
 * query joins it, else looked up per row.
 */
const columnsOf = (p: string, c?: string) => {
  const counter = (col: string) => (c ? `${c}.${col}` : `(SELECT lc.${col} FROM link_clicks lc WHERE lc.seq = ${p || 'links.'}seq)`)
  return `${p}seq::float8 AS seq, ${p}id, ${p}user_id, ${p}domain, ${p}key, ${p}link_type, ${p}destination, ${p}match_key, ${p}data, ${p}options,
  ${p}qr_options, ${p}password_hash, ${p}expires_at::float8 AS expires_at, ${p}archived, coalesce(${counter('clicks')}, 0)::float8 AS clicks,
  ${p}imported_clicks::float8 AS imported_clicks, ${counter('last_clicked')}::float8 AS last_clicked, ${p}created_at::float8 AS created_at, ${p}updated_at::float8 AS updated_at,
  ${p}deleted_at::float8 AS deleted_at`
}
const COLUMNS = columnsOf('')

type Arg = string | number | null

/** `?` placeholders → `$1…` (after `first` already used). */
function numbered(sqlText: string, first = 0): string {
  let n = first
  return sqlText.replace(/\?/g, () => `$${++n}`)
}

const isUniqueViolation = (e: unknown) => (e as { errno?: unknown })?.errno === '23505'

/** Links' tag ids in order, by seq. */
async function tagsIn(db: SQL, seqs: readonly number[]): Promise<Map<number, string[]>> {
  const out = new Map<number, string[]>()
  if (seqs.length === 0) return out
  const rows = await db.unsafe(
    `SELECT link_seq::float8 AS link_seq, tag_id FROM link_tags WHERE link_seq IN (${seqs.map((_, i) => `$${i + 1}`).join(',')}) ORDER BY link_seq, pos`,
    [...seqs],
  )
  for (const r of rows as { link_seq: number; tag_id: string }[]) {
    const list = out.get(r.link_seq) ?? []
    list.push(r.tag_id)
    out.set(r.link_seq, list)
  }
  return out
}

/** Live links' rows and tags, read inside the caller's transaction: another store's events carry their records. */
export async function liveRowsWithTagsPg(tx: SQL, seqs: readonly number[]): Promise<{ rows: LinkRow[]; tags: Map<number, string[]> }> {
  if (seqs.length === 0) return { rows: [], tags: new Map() }
  const rows = (await tx.unsafe(
    `SELECT ${COLUMNS} FROM links WHERE seq IN (SELECT jsonb_array_elements_text($1::text::jsonb)::bigint) AND deleted_at IS NULL ORDER BY seq`,
    [JSON.stringify(seqs)],
  )) as LinkRow[]
  return {
    rows: [...rows],
    tags: await tagsIn(
      tx,
      rows.map((r) => r.seq),
    ),
  }
}

export function createPgLinkStore(sql: SQL, { publish }: PgLinkStoreOptions = {}): LinkStorePort {
  const announce = async (tx: SQL, rows: { domain: string; key: string }[]) => {
    if (publish && rows.length) await publish(tx, LINKS_CHANNEL, [...new Set(rows.map((r) => `${r.domain}/${r.key}`))])
  }
  const one = async (db: SQL, where: string, args: Arg[]): Promise<LinkRow | null> => {
    const [row] = await db.unsafe(`SELECT ${COLUMNS} FROM links WHERE ${where}`, args)
    return (row as LinkRow | undefined) ?? null
  }
  const keyTaken = async (db: SQL, domain: string, key: string, exceptSeq?: number): Promise<boolean> => {
    const [row] = await db.unsafe('SELECT seq::float8 AS seq FROM links WHERE domain = $1 AND key = $2 AND deleted_at IS NULL', [domain, key])
    return row !== undefined && row.seq !== exceptSeq
  }
  /** Appends the events of written links in `tx` (their rows read again there, with their tags). */
  const appendLinkEvents = async (tx: SQL, type: LinkChangeEvent['type'], seqs: number[], now: number, eventsOf: LinkEventsOf | undefined) => {
    if (!eventsOf || seqs.length === 0) return
    const rows = (await tx.unsafe(`SELECT ${COLUMNS} FROM links WHERE seq IN (${seqs.map((_, i) => `$${i + 1}`).join(',')}) ORDER BY seq`, seqs)) as LinkRow[]
    const tags = await tagsIn(tx, seqs)
    await appendEventsPg(tx, eventsOf(rows.map((row) => ({ type, row, tags: tags.get(row.seq) ?? [] }))), now)
  }
  /** `write` in a transaction; this node's event readers are woken once it committed. */
  const committed = async <T>(eventsOf: LinkEventsOf | undefined, write: (tx: SQL) => Promise<T>): Promise<T> => {
    const result = (await sql.begin(write)) as T
    if (eventsOf) eventsAppended()
    return result
  }
  const setTags = async (tx: SQL, seq: number, tagIds: string[]) => {
    await tx`DELETE FROM link_tags WHERE link_seq = ${seq}`
    for (const [i, tag] of tagIds.entries()) await tx`INSERT INTO link_tags (tag_id, link_seq, pos) VALUES (${tag}, ${seq}, ${i})`
  }
  /**
   * One new link with its tags, inside the caller's transaction; null when its key is taken.
   * `precheck`: look first, so a refused insert uses no sequence number (ON CONFLICT covers a
   * race); a batch, whose keys were checked just before, skips the extra round trip.
   */
  const insertLive = async (tx: SQL, r: NewLinkRow, tagIds: string[], precheck = true): Promise<LinkRow | null> => {
    if (precheck && (await keyTaken(tx, r.domain, r.key))) return null
    const [inserted] = await tx`INSERT INTO links
      (id, user_id, domain, key, link_type, destination, match_key, data, options, qr_options, password_hash, expires_at, archived,
        imported_clicks, created_at, updated_at)
      VALUES (${r.id}, ${r.user_id}, ${r.domain}, ${r.key}, ${r.link_type}, ${r.destination}, ${r.match_key}, ${r.data}, ${r.options},
        ${r.qr_options}, ${r.password_hash}, ${r.expires_at}, ${r.archived}, ${r.imported_clicks ?? 0}, ${r.created_at}, ${r.updated_at})
      ON CONFLICT (domain, key) WHERE deleted_at IS NULL DO NOTHING
      RETURNING ${sql.unsafe(COLUMNS)}`
    if (!inserted) return null
    const row = inserted as LinkRow
    for (const [i, tag] of tagIds.entries()) await tx`INSERT INTO link_tags (tag_id, link_seq, pos) VALUES (${tag}, ${row.seq}, ${i})`
    return row
  }

  function where(f: LinkFilter): { sql: string; args: Arg[] } {
    const parts = ['l.deleted_at IS NULL']
    const args: Arg[] = []
    const inList = (col: string, values: string[]) => {
      parts.push(`${col} IN (${values.map(() => '?').join(',')})`)
      args.push(...values)
    }
    if (!f.includeArchived) parts.push('l.archived = 0')
    if (f.userIds?.length) inList('l.user_id', f.userIds)
    if (f.ids?.length) inList('l.id', f.ids)
    if (f.domainKeys) {
      if (f.domainKeys.length === 0) parts.push('false')
      else {
        parts.push(`(${f.domainKeys.map(() => '(l.domain = ? AND l.key = ?)').join(' OR ')})`)
        for (const dk of f.domainKeys) args.push(dk.domain, dk.key)
      }
    }
    if (f.domain) {
      parts.push('l.domain = ?')
      args.push(f.domain.toLowerCase())
    }
    if (f.linkType) {
      parts.push('l.link_type = ?')
      args.push(f.linkType)
    }
    if (f.tagIds?.length) {
      parts.push(`l.seq IN (SELECT link_seq FROM link_tags WHERE tag_id IN (${f.tagIds.map(() => '?').join(',')}))`)
      args.push(...f.tagIds)
    }
    if (f.health) parts.push(healthCondition(f.health))
    if (f.search) {
      const like = `%${escapeLike(f.search)}%`
      if ([...f.search].length >= 3) {
        // The trigram index serves ILIKE on the column's own collation.
        parts.push('l.search_text ILIKE ?')
        args.push(like)
      } else {
        parts.push(`(l.key COLLATE "C" ILIKE ? OR l.destination COLLATE "C" ILIKE ? OR l.data COLLATE "C" ILIKE ?)`)
        args.push(like, like, like)
      }
    }
    return { sql: parts.join(' AND '), args }
  }

  function orderBy(s: LinkSort): string {
    const dir = s.sortOrder === 'asc' ? 'ASC' : 'DESC'
    if (s.sortBy === 'clicks') return `coalesce(c.clicks, 0) ${dir}, l.seq ${dir}`
    if (s.sortBy === 'last_created_at') return `c.last_clicked ${dir} NULLS LAST, l.seq ${dir}`
    return `l.seq ${dir}`
  }

  async function count(f: LinkFilter): Promise<number> {
    const w = where(f)
    const [row] = await sql.unsafe(`SELECT count(*)::float8 AS n FROM links l WHERE ${numbered(w.sql)}`, w.args)
    return row.n as number
  }

  return {
    getById: (id: string) => one(sql, 'id = $1', [id]),
    getByDomainKey: (domain: string, key: string) => one(sql, 'domain = $1 AND key = $2 AND deleted_at IS NULL', [domain, key]),
    keyTaken: (domain: string, key: string, exceptSeq?: number) => keyTaken(sql, domain, key, exceptSeq),
    findForUpsert: (userId: string, type: string, matchKey: string) =>
      one(sql, 'user_id = $1 AND link_type = $2 AND match_key = $3 AND deleted_at IS NULL ORDER BY created_at, seq LIMIT 1', [userId, type, matchKey]),
    /** The search text is the generated `search_text` column here. */
    async createLink(r: NewLinkRow, tagIds: string[], _searchText: string, eventsOf?: LinkEventsOf): Promise<LinkRow | null> {
      return committed(eventsOf, async (tx) => {
        const row = await insertLive(tx, r, tagIds)
        if (row) await appendLinkEvents(tx, 'link.created', [row.seq], r.created_at, eventsOf)
        // The address may be in a node's cache of missing links.
        if (row) await announce(tx, [r])
        return row
      })
    },
    /** New links in one transaction (an import's batch); per link its row, or null when its key is taken. */
    async createLinks(links: NewLink[], eventsOf?: LinkEventsOf): Promise<(LinkRow | null)[]> {
      return committed(eventsOf, async (tx) => {
        const rows: (LinkRow | null)[] = []
        for (const l of links) rows.push(await insertLive(tx, l.row, l.tags, false))
        const created = rows.filter((r): r is LinkRow => r !== null)
        if (created.length)
          await appendLinkEvents(
            tx,
            'link.created',
            created.map((r) => r.seq),
            links[0]!.row.created_at,
            eventsOf,
          )
        await announce(
          tx,
          rows.filter((r): r is LinkRow => r !== null),
        )
        return rows
      })
    },
    async saveLinks(writes: LinkWrite[], eventsOf?: LinkEventsOf): Promise<WriteRefusal | null> {
      let refusal = null as WriteRefusal | null
      try {
        await committed(eventsOf, async (tx) => {
          const changed: { domain: string; key: string }[] = []
          for (const w of writes) {
            const r = w.row
            // Locked, and read here: the address it had is the one every cache holds.
            const [old] = await tx.unsafe(`SELECT ${COLUMNS} FROM links WHERE id = $1 FOR UPDATE`, [r.id])
            if (!old || old.deleted_at !== null) refusal = { refused: 'gone', id: r.id, domain: r.domain, key: r.key }
            else if (!unchangedSince(old as LinkRow, w.base)) refusal = { refused: 'changed', id: r.id, domain: r.domain, key: r.key }
            else if (await keyTaken(tx, r.domain, r.key, r.seq)) refusal = { refused: 'key_taken', id: r.id, domain: r.domain, key: r.key }
            if (refusal) throw refusal
            try {
              await tx`UPDATE links SET domain = ${r.domain}, key = ${r.key}, destination = ${r.destination}, match_key = ${r.match_key},
                data = ${r.data}, options = ${r.options}, qr_options = ${r.qr_options}, password_hash = ${r.password_hash},
                expires_at = ${r.expires_at}, archived = ${r.archived}, imported_clicks = ${r.imported_clicks}, updated_at = ${r.updated_at}
                WHERE seq = ${r.seq}`
            } catch (e) {
              // Another node took the key between the check and the write.
              if (isUniqueViolation(e)) refusal = { refused: 'key_taken', id: r.id, domain: r.domain, key: r.key }
              throw refusal ?? e
            }
            if (w.tags !== undefined) await setTags(tx, r.seq, w.tags)
            changed.push({ domain: old.domain, key: old.key }, r)
          }
          await appendLinkEvents(
            tx,
            'link.updated',
            writes.map((w) => w.row.seq),
            writes[0]?.row.updated_at ?? 0,
            eventsOf,
          )
          await announce(tx, changed)
        })
      } catch (e) {
        if (refusal && e === refusal) return refusal
        throw e
      }
      return null
    },
    async softDeleteLinks(seqs: number[], now: number, eventsOf?: LinkEventsOf): Promise<number> {
      if (seqs.length === 0) return 0
      return committed(eventsOf, async (tx) => {
        const deleted = await tx.unsafe(
          `UPDATE links SET deleted_at = $1, updated_at = $1 WHERE seq IN (${seqs.map((_, i) => `$${i + 2}`).join(',')}) AND deleted_at IS NULL RETURNING seq::float8 AS seq, id, domain, key`,
          [now, ...seqs],
        )
        // A tombstone is never visited again: its number-targeting count goes with it.
        const ids = (deleted as { id: string }[]).map((d) => d.id)
        if (ids.length > 0) await tx.unsafe(`DELETE FROM visit_counters WHERE link_id IN (${ids.map((_, i) => `$${i + 1}`).join(',')})`, ids)
        await appendLinkEvents(
          tx,
          'link.deleted',
          (deleted as { seq: number }[]).map((d) => d.seq),
          now,
          eventsOf,
        )
        await announce(tx, [...deleted] as { domain: string; key: string }[])
        return deleted.length
      })
    },
    tagsOf: (seqs: number[]) => tagsIn(sql, seqs),
    async storedClicks(seq: number): Promise<number> {
      const [row] = await sql`SELECT clicks::float8 AS clicks FROM link_clicks WHERE seq = ${seq}`
      return (row?.clicks as number | undefined) ?? 0
    },
    async fileInUse(fileId: string): Promise<boolean> {
      const [row] = await sql`SELECT 1 AS one FROM links WHERE deleted_at IS NULL AND (data::jsonb ->> 'fileId') = ${fileId} LIMIT 1`
      return row !== undefined
    },
    async list(f: LinkFilter, s: LinkSort): Promise<{ rows: LinkRow[]; total: number }> {
      const total = await count(f)
      if (total === 0 || s.offset >= total) return { rows: [], total }
      const w = where(f)
      const n = w.args.length
      const rows = await sql.unsafe(
        `SELECT ${columnsOf('l.', 'c')} FROM links l LEFT JOIN link_clicks c ON c.seq = l.seq WHERE ${numbered(w.sql)} ORDER BY ${orderBy(s)} LIMIT $${n + 1} OFFSET $${n + 2}`,
        [...w.args, s.limit, s.offset],
      )
      return { rows: [...rows] as LinkRow[], total }
    },
    count,
  }
}
