/** SQL for links. Rows in, rows out; the service owns the rules. */

import { appendEvents, type NewEvent } from '../events'
import { type Awaitable, escapeLike } from '../shared'
import type { Db } from '../store'
import { HEALTH_TYPES, type HealthStatus } from './links.health.values'

export interface LinkRow {
  seq: number
  id: string
  user_id: string
  domain: string
  key: string
  link_type: string
  destination: string
  match_key: string
  data: string
  options: string
  qr_options: string | null
  password_hash: string | null
  expires_at: number | null
  archived: number
  clicks: number
  /** The click total another service reported when the link was imported; never counted in `clicks` or statistics. */
  imported_clicks: number
  last_clicked: number | null
  created_at: number
  updated_at: number
  deleted_at: number | null
}

export type NewLinkRow = Omit<LinkRow, 'seq' | 'clicks' | 'imported_clicks' | 'last_clicked' | 'deleted_at'> & { imported_clicks?: number }

/** A link to create: its row, tag ids in order, and the text search matches. */
export interface NewLink {
  row: NewLinkRow
  tags: string[]
  searchText: string
}

export interface LinkFilter {
  ids?: string[]
  domainKeys?: { domain: string; key: string }[]
  domain?: string
  linkType?: string
  tagIds?: string[]
  search?: string
  userIds?: string[]
  includeArchived?: boolean
  health?: HealthStatus
}

/**
 * The `health` filter as a condition on `l` (both dialects): the status the link-health module
 * keeps per link in `link_health`; a link of a type with health and no row there is unknown.
 */
export function healthCondition(status: HealthStatus, not: '+' | '' = ''): string {
  if (status !== 'unknown') return `${not}l.seq IN (SELECT link_seq FROM link_health WHERE status = '${status}')`
  return `${not}l.link_type IN (${HEALTH_TYPES.map((t) => `'${t}'`).join(', ')}) AND ${not}l.seq NOT IN (SELECT link_seq FROM link_health WHERE status <> 'unknown')`
}

export interface LinkSort {
  sortBy: 'created_at' | 'clicks' | 'last_created_at'
  sortOrder: 'asc' | 'desc'
  limit: number
  offset: number
}

/**
 * One link as an update writes it: the whole next row, computed from `base` (the row as read),
 * its tags when they change, and its search text.
 */
export interface LinkWrite {
  base: LinkRow
  row: LinkRow
  tags?: string[]
  searchText: string
}

/**
 * Why a write was refused (nothing was written): a link is gone, its new key is taken, or it
 * changed since it was read (another request or node wrote it: read again and retry).
 */
export type WriteRefusal = { refused: 'gone' | 'key_taken' | 'changed'; id: string; domain: string; key: string }

/** A link written, as its event tells of it: the row after the write and its tags. */
export interface LinkChangeEvent {
  type: 'link.created' | 'link.updated' | 'link.deleted'
  row: LinkRow
  tags: string[]
}

/**
 * The events of written links (the service makes them: it knows how a record looks); the
 * store appends them to the outbox inside the write's own transaction.
 */
export type LinkEventsOf = (changes: LinkChangeEvent[]) => NewEvent[]

/** The columns an update writes: a row whose values differ from the base it was computed from has changed. */
const WRITTEN = [
  'domain',
  'key',
  'destination',
  'match_key',
  'data',
  'options',
  'qr_options',
  'password_hash',
  'expires_at',
  'archived',
  'imported_clicks',
  'updated_at',
] as const

/** Whether the live row still holds what `base` held in every written column. */
export const unchangedSince = (live: Pick<LinkRow, (typeof WRITTEN)[number]>, base: LinkRow) => WRITTEN.every((c) => live[c] === base[c])

type Arg = string | number | null

/** Above this many matches a page walks the sort index instead of sorting the matches. */
const SORT_DRIVEN_ABOVE = 5000

/** The trigram FTS phrase for a search of 3+ characters; shorter ones use LIKE. */
function ftsPhrase(search: string | undefined): string | undefined {
  return search !== undefined && [...search].length >= 3 ? `"${search.replace(/"/g, '""')}"` : undefined
}

/** Links' tag ids in order, by seq (inside the caller's transaction, if any). */
function tagsIn(db: Db, seqs: readonly number[]): Map<number, string[]> {
  const out = new Map<number, string[]>()
  if (seqs.length === 0) return out
  const rows = db
    .query<{ link_seq: number; tag_id: string }, number[]>(
      `SELECT link_seq, tag_id FROM link_tags WHERE link_seq IN (${seqs.map(() => '?').join(',')}) ORDER BY link_seq, pos`,
    )
    .all(...seqs)
  for (const r of rows) {
    const list = out.get(r.link_seq) ?? []
    list.push(r.tag_id)
    out.set(r.link_seq, list)
  }
  return out
}

/** Live links' rows and tags, read inside the caller's transaction: another store's events carry their records. */
export function liveRowsWithTags(db: Db, seqs: readonly number[]): { rows: LinkRow[]; tags: Map<number, string[]> } {
  if (seqs.length === 0) return { rows: [], tags: new Map() }
  const rows = db
    .query<LinkRow, [string]>('SELECT * FROM links WHERE seq IN (SELECT value FROM json_each(?)) AND deleted_at IS NULL ORDER BY seq')
    .all(JSON.stringify(seqs))
  return {
    rows,
    tags: tagsIn(
      db,
      rows.map((r) => r.seq),
    ),
  }
}

export function createLinkStore(db: Db) {
  const byId = db.query<LinkRow, [string]>('SELECT * FROM links WHERE id = ?')
  const bySeq = db.query<LinkRow, [number]>('SELECT * FROM links WHERE seq = ?')
  const byDomainKey = db.query<LinkRow, [string, string]>('SELECT * FROM links WHERE domain = ? AND key = ? AND deleted_at IS NULL')
  const keyTaken = db.query<{ seq: number }, [string, string]>('SELECT seq FROM links WHERE domain = ? AND key = ? AND deleted_at IS NULL')
  const forUpsert = db.query<LinkRow, [string, string, string]>(
    'SELECT * FROM links WHERE user_id = ? AND link_type = ? AND match_key = ? AND deleted_at IS NULL ORDER BY created_at LIMIT 1',
  )
  const insert = db.query<{ seq: number }, Arg[]>(`INSERT INTO links
    (id, user_id, domain, key, link_type, destination, match_key, data, options, qr_options, password_hash, expires_at, archived, imported_clicks, created_at, updated_at)
    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING seq`)
  const update = db.query(`UPDATE links SET domain = ?, key = ?, destination = ?, match_key = ?, data = ?, options = ?, qr_options = ?,
    password_hash = ?, expires_at = ?, archived = ?, imported_clicks = ?, updated_at = ? WHERE seq = ?`)
  const softDelete = db.query('UPDATE links SET deleted_at = ?, updated_at = ? WHERE seq = ? AND deleted_at IS NULL')
  const clearTags = db.query('DELETE FROM link_tags WHERE link_seq = ?')
  const addTag = db.query('INSERT INTO link_tags (tag_id, link_seq, pos) VALUES (?, ?, ?)')
  const fileUse = db.query<{ one: number }, [string]>(
    "SELECT 1 AS one FROM links WHERE deleted_at IS NULL AND json_extract(data, '$.fileId') IS NOT NULL AND json_extract(data, '$.fileId') = ? LIMIT 1",
  )
  const searchDelete = db.query('DELETE FROM links_search WHERE rowid = ?')
  const searchInsert = db.query('INSERT INTO links_search (rowid, body) VALUES (?, ?)')

  /**
   * How a query should use the indexes:
   * - `count`: read only covering indexes, so every filter (and `archived`) is an index term;
   * - `filter`: few matches: let the filters pick the index, then sort the matches;
   * - `sort`: many matches: walk the index of the sort order and test filters on each row
   *   (a unary `+` keeps a term out of index selection), so a page stops after `limit` rows.
   */
  function where(f: LinkFilter, mode: 'count' | 'filter' | 'sort', archived?: 0 | 1): { sql: string; args: Arg[] } {
    const parts = ['l.deleted_at IS NULL']
    const args: Arg[] = []
    const p = mode === 'sort' ? '+' : ''
    const inList = (col: string, values: string[]) => {
      parts.push(`${col} IN (${values.map(() => '?').join(',')})`)
      args.push(...values)
    }
    if (archived !== undefined) parts.push(`l.archived = ${archived}`)
    else if (!f.includeArchived) parts.push(mode === 'count' ? 'l.archived = 0' : '+l.archived = 0')
    if (f.userIds?.length) inList('l.user_id', f.userIds)
    if (f.ids?.length) inList('l.id', f.ids)
    if (f.domainKeys) {
      if (f.domainKeys.length === 0) parts.push('0')
      else {
        parts.push(`(${f.domainKeys.map(() => '(l.domain = ? AND l.key = ?)').join(' OR ')})`)
        for (const dk of f.domainKeys) args.push(dk.domain, dk.key)
      }
    }
    if (f.domain) {
      parts.push(`${p}l.domain = ?`)
      args.push(f.domain.toLowerCase())
    }
    if (f.linkType) {
      parts.push(`${p}l.link_type = ?`)
      args.push(f.linkType)
    }
    if (f.tagIds?.length) {
      parts.push(`${p}l.seq IN (SELECT link_seq FROM link_tags WHERE tag_id IN (${f.tagIds.map(() => '?').join(',')}))`)
      args.push(...f.tagIds)
    }
    if (f.health) parts.push(healthCondition(f.health, p))
    if (f.search) {
      const phrase = ftsPhrase(f.search)
      if (phrase) {
        // Trigram FTS: a quoted phrase matches any substring of 3+ characters, case-insensitively.
        parts.push(`${p}l.seq IN (SELECT rowid FROM links_search WHERE links_search MATCH ?)`)
        args.push(phrase)
      } else {
        parts.push(`(l.key LIKE ? ESCAPE '\\' OR l.destination LIKE ? ESCAPE '\\' OR l.data LIKE ? ESCAPE '\\')`)
        const like = `%${escapeLike(f.search)}%`
        args.push(like, like, like)
      }
    }
    return { sql: parts.join(' AND '), args }
  }

  /**
   * A search of 3+ characters without id, short-link or tag filters is driven by the FTS
   * index: its matches (rowid order) each probe the covering index of the remaining filters,
   * so no table row is read to count them, and "newest" pages stream in rowid order. The
   * other way round (the FTS matches as an IN list) reads every matching table row.
   */
  function ftsDriven(f: LinkFilter): { phrase: string; probe: string; filter: string; args: Arg[] } | undefined {
    const phrase = ftsPhrase(f.search)
    if (!phrase || f.ids?.length || f.domainKeys || f.tagIds?.length || f.health) return undefined
    const parts = ['p.deleted_at IS NULL', f.includeArchived ? 'p.archived IN (0, 1)' : 'p.archived = 0']
    const args: Arg[] = []
    if (f.userIds?.length) {
      parts.push(`p.user_id IN (${f.userIds.map(() => '?').join(',')})`)
      args.push(...f.userIds)
    }
    if (f.domain) {
      parts.push('p.domain = ?')
      args.push(f.domain.toLowerCase())
    }
    if (f.linkType) {
      parts.push('p.link_type = ?')
      args.push(f.linkType)
    }
    // The partial index whose columns (archived and the rowid included) answer the most filters.
    const probe = f.userIds?.length
      ? f.linkType
        ? 'links_user_type'
        : 'links_user_archived'
      : f.linkType
        ? 'links_type_archived'
        : f.domain
          ? 'links_domain'
          : 'links_live'
    return { phrase, probe, filter: parts.join(' AND '), args }
  }

  /** `SELECT <cols> FROM` the FTS matches that pass the filters, without reading table rows. */
  function ftsMatches(d: NonNullable<ReturnType<typeof ftsDriven>>, cols: string): { sql: string; args: Arg[] } {
    return {
      sql: `SELECT ${cols} FROM links_search s CROSS JOIN links p INDEXED BY ${d.probe} ON p.seq = s.rowid WHERE s.links_search MATCH ? AND ${d.filter}`,
      args: [d.phrase, ...d.args],
    }
  }

  function count(f: LinkFilter): number {
    const d = ftsDriven(f)
    if (d) {
      const m = ftsMatches(d, 'count(*) AS n')
      return db.query<{ n: number }, Arg[]>(m.sql).get(...m.args)!.n
    }
    const run = (archived?: 0 | 1) => {
      const w = where(f, 'count', archived)
      return db.query<{ n: number }, Arg[]>(`SELECT count(*) AS n FROM links l WHERE ${w.sql}`).get(...w.args)!.n
    }
    // Counted per archived value: each count then stays inside a covering index, where
    // "archived IN (0, 1)" would make the planner scan the table.
    return f.includeArchived ? run(0) + run(1) : run()
  }

  function orderBy(s: LinkSort): string {
    const dir = s.sortOrder === 'asc' ? 'ASC' : 'DESC'
    if (s.sortBy === 'clicks') return `l.clicks ${dir}, l.seq ${dir}`
    // Never-clicked links come last in both orders.
    if (s.sortBy === 'last_created_at') return dir === 'DESC' ? 'l.last_clicked DESC, l.seq DESC' : '(l.last_clicked IS NULL), l.last_clicked ASC, l.seq ASC'
    // seq grows with creation time: rowid order is creation order, with no index to maintain.
    return `l.seq ${dir}`
  }

  /**
   * An FTS-driven page. Up to SORT_DRIVEN_ABOVE matches are collected in one pass and give
   * both the total and the page; more are counted, then "newest"/"oldest" pages stream the
   * matches in rowid order and stop after the page, other sorts walk their sort index.
   */
  function searchList(f: LinkFilter, d: NonNullable<ReturnType<typeof ftsDriven>>, s: LinkSort): { rows: LinkRow[]; total: number } {
    const few = ftsMatches(d, 'p.seq')
    const seqs = db
      .query<{ seq: number }, Arg[]>(`${few.sql} LIMIT ${SORT_DRIVEN_ABOVE + 1}`)
      .all(...few.args)
      .map((r) => r.seq)
    const pageOf = (sql: string, args: Arg[]) => db.query<LinkRow, Arg[]>(sql).all(...args)
    if (seqs.length <= SORT_DRIVEN_ABOVE) {
      const total = seqs.length
      if (total === 0 || s.offset >= total) return { rows: [], total }
      const rows = pageOf(`SELECT l.* FROM links l WHERE l.seq IN (SELECT value FROM json_each(?)) ORDER BY ${orderBy(s)} LIMIT ? OFFSET ?`, [
        JSON.stringify(seqs),
        s.limit,
        s.offset,
      ])
      return { rows, total }
    }
    const total = count(f)
    if (s.offset >= total) return { rows: [], total }
    if (s.sortBy === 'created_at') {
      const dir = s.sortOrder === 'asc' ? 'ASC' : 'DESC'
      const m = ftsMatches(d, 's.rowid')
      const rows = pageOf(`SELECT l.* FROM links l WHERE l.seq IN (${m.sql} ORDER BY s.rowid ${dir} LIMIT ? OFFSET ?) ORDER BY ${orderBy(s)}`, [
        ...m.args,
        s.limit,
        s.offset,
      ])
      return { rows, total }
    }
    const w = where(f, 'sort')
    const rows = pageOf(`SELECT l.* FROM links l WHERE ${w.sql} ORDER BY ${orderBy(s)} LIMIT ? OFFSET ?`, [...w.args, s.limit, s.offset])
    return { rows, total }
  }

  const storedClicks = db.query<{ clicks: number }, [number]>('SELECT clicks FROM links WHERE seq = ?')
  const insertRow = (r: NewLinkRow): number =>
    insert.get(
      r.id,
      r.user_id,
      r.domain,
      r.key,
      r.link_type,
      r.destination,
      r.match_key,
      r.data,
      r.options,
      r.qr_options,
      r.password_hash,
      r.expires_at,
      r.archived,
      r.imported_clicks ?? 0,
      r.created_at,
      r.updated_at,
    )!.seq
  const setTags = (seq: number, tagIds: string[]) => {
    clearTags.run(seq)
    for (const [i, tag] of tagIds.entries()) addTag.run(tag, seq, i)
  }
  const indexSearch = (seq: number, text: string) => {
    searchDelete.run(seq)
    searchInsert.run(seq, text)
  }
  /** One new link with its tags and search text, inside the caller's transaction; null when its key is taken. */
  const insertLive = (r: NewLinkRow, tagIds: string[], searchText: string, eventsOf?: LinkEventsOf): LinkRow | null => {
    if (keyTaken.get(r.domain, r.key) !== null) return null
    const seq = insertRow(r)
    setTags(seq, tagIds)
    indexSearch(seq, searchText)
    const saved = byId.get(r.id)!
    if (eventsOf) appendEvents(db, eventsOf([{ type: 'link.created', row: saved, tags: tagIds }]), r.created_at)
    return saved
  }
  const tagsOf = (seqs: number[]) => tagsIn(db, seqs)
  return {
    getById: (id: string) => byId.get(id),
    getByDomainKey: (domain: string, key: string) => byDomainKey.get(domain, key),
    keyTaken: (domain: string, key: string, exceptSeq?: number) => {
      const r = keyTaken.get(domain, key)
      return r !== null && r.seq !== exceptSeq
    },
    findForUpsert: (userId: string, type: string, matchKey: string) => forUpsert.get(userId, type, matchKey),
    /**
     * A new link with its tags and search text, in one transaction; null (nothing written)
     * when its domain and key are taken by a live link.
     */
    createLink(r: NewLinkRow, tagIds: string[], searchText: string, eventsOf?: LinkEventsOf): LinkRow | null {
      // Immediate: a transaction that reads before it writes must hold the write lock first, or a
      // commit by the click writer's thread in between fails it at once ("database is locked").
      return db.transaction(() => insertLive(r, tagIds, searchText, eventsOf)).immediate()
    },
    /**
     * New links in one transaction (an import's batch: one commit instead of one per link, which
     * costs more than the inserts); per link its row, or null when its key is taken.
     */
    createLinks(links: NewLink[], eventsOf?: LinkEventsOf): (LinkRow | null)[] {
      return db.transaction(() => links.map((l) => insertLive(l.row, l.tags, l.searchText, eventsOf))).immediate()
    },
    /** Writes every link or none: refused when one is no longer live, changed since read, or its new key is taken. */
    saveLinks(writes: LinkWrite[], eventsOf?: LinkEventsOf): WriteRefusal | null {
      let refusal = null as WriteRefusal | null
      try {
        db.transaction(() => {
          for (const w of writes) {
            const r = w.row
            const live = byId.get(r.id)
            if (!live || live.deleted_at !== null) refusal = { refused: 'gone', id: r.id, domain: r.domain, key: r.key }
            else if (!unchangedSince(live, w.base)) refusal = { refused: 'changed', id: r.id, domain: r.domain, key: r.key }
            else {
              const taken = keyTaken.get(r.domain, r.key)
              if (taken !== null && taken.seq !== r.seq) refusal = { refused: 'key_taken', id: r.id, domain: r.domain, key: r.key }
            }
            if (refusal) throw refusal
            update.run(
              r.domain,
              r.key,
              r.destination,
              r.match_key,
              r.data,
              r.options,
              r.qr_options,
              r.password_hash,
              r.expires_at,
              r.archived,
              r.imported_clicks,
              r.updated_at,
              r.seq,
            )
            if (w.tags !== undefined) setTags(r.seq, w.tags)
            indexSearch(r.seq, w.searchText)
          }
          if (eventsOf && writes.length) {
            const tags = tagsOf(writes.map((w) => w.row.seq))
            const changes = writes.map((w) => ({ type: 'link.updated' as const, row: byId.get(w.row.id)!, tags: tags.get(w.row.seq) ?? [] }))
            appendEvents(db, eventsOf(changes), writes[0]!.row.updated_at)
          }
        }).immediate()
      } catch (e) {
        if (refusal && e === refusal) return refusal
        throw e
      }
      return null
    },
    /** Tombstones the live links among `seqs` in one transaction; answers how many it deleted. */
    softDeleteLinks(seqs: number[], now: number, eventsOf?: LinkEventsOf): number {
      return db
        .transaction(() => {
          const deleted: number[] = []
          for (const seq of seqs) {
            if (softDelete.run(now, now, seq).changes === 0) continue
            searchDelete.run(seq)
            deleted.push(seq)
          }
          if (eventsOf && deleted.length) {
            const tags = tagsOf(deleted)
            const changes = deleted.map((seq) => ({ type: 'link.deleted' as const, row: bySeq.get(seq)!, tags: tags.get(seq) ?? [] }))
            appendEvents(db, eventsOf(changes), now)
          }
          return deleted.length
        })
        .immediate()
    },
    tagsOf,
    /** The link's clicks as stored (the click writer adds to it). */
    storedClicks: (seq: number) => storedClicks.get(seq)?.clicks ?? 0,
    /** Whether a live link shows this uploaded file. */
    fileInUse: (fileId: string) => fileUse.get(fileId) !== null,
    /** A page and the number of matches before paging. */
    list(f: LinkFilter, s: LinkSort): { rows: LinkRow[]; total: number } {
      const d = ftsDriven(f)
      if (d) return searchList(f, d, s)
      const total = count(f)
      if (total === 0 || s.offset >= total) return { rows: [], total }
      const w = where(f, total > SORT_DRIVEN_ABOVE ? 'sort' : 'filter')
      const rows = db.query<LinkRow, Arg[]>(`SELECT l.* FROM links l WHERE ${w.sql} ORDER BY ${orderBy(s)} LIMIT ? OFFSET ?`).all(...w.args, s.limit, s.offset)
      return { rows, total }
    },
    count,
  }
}
export type LinkStore = ReturnType<typeof createLinkStore>
/** The link store port (docs/adr/0010): SQLite's store with every result allowed to be a promise. */
export type LinkStorePort = Awaitable<LinkStore>
