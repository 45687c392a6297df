/**
 * The link verbs: create, upsert, update (single and bulk, all-or-nothing), read, list,
 * count and delete with tombstones. Input rules are in links.validate.ts, the stored
 * row's reading in links.record.ts; this file composes them with the store. Throws
 * AppError; never sees HTTP.
 */

import { type Caller, canAccessOwnedBy } from '../auth'
import { AppError, forbidden, newId, notFound, pageWindow, parameterError } from '../shared'
import type { TagStore } from '../tags'
import { checkData, destinationOf, matchKeyOf, searchTextOf } from './links.content'
import { type LinkRecord, linkRecordOf, mergeStoredOptions, shortLinkOf as shortLinkAt, storedDataOf, storedOptionsOf } from './links.record'
import type { CountLinksQuery, LinkType, ListLinksQuery } from './links.schema'
import type { LinkFilter, LinkRow, LinkStore } from './links.store'
import { createLinkRules, type LinkBody, type LinkRulesDeps, type PreparedUpdate, parseShortLink } from './links.validate'

export type { LinkRecord } from './links.record'
export type { LinkBody } from './links.validate'

export interface LinkServiceDeps extends LinkRulesDeps {
  store: LinkStore
  tags: TagStore
}

export type LinkChange = { domain: string; key: string; id: string }

export function createLinkService(deps: LinkServiceDeps) {
  const { store, settings } = deps
  const clock = deps.now ?? Date.now
  const rules = createLinkRules(deps)
  const listeners: ((c: LinkChange) => void)[] = []
  const emit = (row: { domain: string; key: string; id: string }) => {
    for (const l of listeners) l({ domain: row.domain, key: row.key, id: row.id })
  }

  const shortLinkOf = (domain: string, key: string) => shortLinkAt(settings, domain, key)

  const recordsOf = (rows: LinkRow[]): LinkRecord[] => {
    const tags = store.tagsOf(rows.map((r) => r.seq))
    return rows.map((r) => linkRecordOf(r, tags.get(r.seq) ?? [], settings))
  }
  const recordOf = (row: LinkRow): LinkRecord => recordsOf([row])[0]!

  function getRowOrThrow(caller: Caller, id: string): LinkRow {
    const row = store.getById(id)
    if (!row) throw notFound(`link ${id}`)
    if (row.deleted_at !== null) throw new AppError('record_gone', `link ${id} was deleted`)
    if (!canAccessOwnedBy(caller, row.user_id)) throw forbidden(`link ${id} belongs to another user`)
    return row
  }

  async function create(caller: Caller, typeParam: string, body: LinkBody): Promise<LinkRecord> {
    const { type, data, o, domain, options, now } = await rules.prepareCreate(caller.userId, typeParam, body)
    return store.transaction(() => {
      const key = o.key ?? rules.freshKey(domain)
      if (o.key !== undefined) rules.checkKey(domain, key) // re-checked inside the transaction
      const destination = destinationOf(type, data, shortLinkOf(domain, key))
      const row = {
        id: newId('lnk'),
        user_id: caller.userId,
        domain,
        key,
        link_type: type,
        destination,
        match_key: matchKeyOf(type, data, destination),
        data: JSON.stringify(data),
        options: JSON.stringify(mergeStoredOptions({}, options)),
        qr_options: body.qrOptions ? JSON.stringify(body.qrOptions) : null,
        password_hash: options.passwordHash ?? null,
        expires_at: options.expiresAt ?? null,
        archived: o.archived ? 1 : 0,
        created_at: now,
        updated_at: now,
      }
      const seq = store.insert(row)
      if (o.tags?.length) store.setTags(seq, o.tags)
      store.indexSearch(seq, `${key} ${destination} ${searchTextOf(data)}`)
      const saved = store.getById(row.id)!
      emit(saved)
      return recordOf(saved)
    })
  }

  /** Applies a prepared update to one row inside the caller's transaction. */
  function applyUpdate(row: LinkRow, p: PreparedUpdate, now: number): LinkRow {
    const type = row.link_type as LinkType
    const domain = p.o.domain ?? row.domain
    const key = p.o.key ?? row.key
    if (domain !== row.domain || key !== row.key) rules.checkKey(domain, key, row.seq)
    if (p.o.tags !== undefined) rules.checkTags(row.user_id, p.o.tags ?? [])
    if (p.data?.fileId) rules.checkFiles(p.data, row.user_id)
    if (p.qrOptions) deps.checkQrOptions?.(p.qrOptions, row.user_id)
    const data = p.data ?? storedDataOf(row)
    const destination = destinationOf(type, data, shortLinkOf(domain, key))
    const next: LinkRow = {
      ...row,
      domain,
      key,
      destination,
      match_key: matchKeyOf(type, data, destination),
      data: JSON.stringify(data),
      options: JSON.stringify(mergeStoredOptions(storedOptionsOf(row), p.options)),
      qr_options: p.qrOptions === undefined ? row.qr_options : p.qrOptions === null ? null : JSON.stringify(p.qrOptions),
      password_hash: p.options.passwordHash === undefined ? row.password_hash : p.options.passwordHash,
      expires_at: p.options.expiresAt === undefined ? row.expires_at : p.options.expiresAt,
      archived: p.o.archived === undefined ? row.archived : p.o.archived ? 1 : 0,
      updated_at: now,
    }
    store.update(next)
    if (p.o.tags !== undefined) store.setTags(row.seq, p.o.tags ?? [])
    store.indexSearch(row.seq, `${key} ${destination} ${searchTextOf(data)}`)
    emit(row)
    if (domain !== row.domain || key !== row.key) emit(next)
    return next
  }

  async function update(caller: Caller, id: string, body: LinkBody): Promise<LinkRecord> {
    const row = getRowOrThrow(caller, id)
    const prepared = await rules.prepareUpdate(row.link_type as LinkType, body, row.user_id)
    return store.transaction(() => {
      const current = getRowOrThrow(caller, id)
      applyUpdate(current, prepared, clock())
      return recordOf(store.getById(id)!)
    })
  }

  async function upsert(caller: Caller, typeParam: string, body: LinkBody): Promise<{ record: LinkRecord; created: boolean }> {
    const type = rules.assertType(typeParam)
    const data = checkData(type, body.data)
    // The destination of hosted types depends on the key; their content identifies them instead.
    const probeDestination = destinationOf(type, data, '')
    const existing = store.findForUpsert(caller.userId, type, matchKeyOf(type, data, probeDestination))
    if (!existing) return { record: await create(caller, type, body), created: true }
    const hasChanges = body.linkOptions != null || body.qrOptions !== undefined
    if (!hasChanges) return { record: recordOf(existing), created: false }
    const changes: LinkBody = { linkOptions: body.linkOptions, qrOptions: body.qrOptions }
    return { record: await update(caller, existing.id, changes), created: false }
  }

  async function bulkUpdate(caller: Caller, linkIds: string[], updateData: LinkBody): Promise<{ updatedCount: number; links: LinkRecord[] }> {
    const rows = linkIds.map((id) => getRowOrThrow(caller, id))
    if (updateData.linkOptions?.key !== undefined) throw parameterError(`'updateData.linkOptions.key' cannot be set in bulk (keys are unique per domain)`)
    const types = new Set(rows.map((r) => r.link_type))
    if (updateData.data !== undefined && types.size > 1)
      throw parameterError(`'updateData.data' needs every link to share one linkType (got ${[...types].join(', ')})`)
    const owners = new Set(rows.map((r) => r.user_id))
    const prepared = await rules.prepareUpdate(rows[0]!.link_type as LinkType, updateData, owners.size === 1 ? rows[0]!.user_id : null)
    return store.transaction(() => {
      const now = clock()
      for (const id of linkIds) applyUpdate(getRowOrThrow(caller, id), prepared, now)
      const links = recordsOf(linkIds.map((id) => store.getById(id)!))
      return { updatedCount: links.length, links }
    })
  }

  function filterFor(caller: Caller, q: CountLinksQuery): LinkFilter {
    let userIds = q.userIds
    if (caller.role !== 'admin') {
      const others = (userIds ?? []).filter((u) => u !== caller.userId)
      if (others.length) throw forbidden(`members may only filter by their own user id (${caller.userId})`)
      userIds = [caller.userId]
    }
    return {
      ids: q.ids,
      domainKeys: q.shortLinks?.map(parseShortLink),
      domain: q.domain,
      linkType: q.linkType,
      tagIds: q.tagIds,
      search: q.search,
      userIds,
      includeArchived: q.includeArchived,
    }
  }

  return {
    create,
    upsert,
    update,
    bulkUpdate,
    /** A live link the caller may see (404 / 410 / 403 otherwise); the QR module uses it too. */
    get: (caller: Caller, id: string): LinkRecord => recordOf(getRowOrThrow(caller, id)),
    /** For the redirect server: the live link at a domain and key, as stored. */
    findLiveRow: (domain: string, key: string) => store.getByDomainKey(domain, key),
    /** For number targeting: a link's clicks as stored. */
    storedClicks: (seq: number) => store.storedClicks(seq),
    /** Whether a live link shows this uploaded file (files refuse to delete it). */
    fileInUse: (fileId: string) => store.fileInUse(fileId),
    list(caller: Caller, q: ListLinksQuery): { links: LinkRecord[]; page: number; pageSize: number; total: number } {
      const { limit, offset, page, pageSize } = pageWindow(q.page, q.pageSize)
      const filter = filterFor(caller, q)
      const { rows, total } = store.list(filter, { sortBy: q.sortBy ?? 'created_at', sortOrder: q.sortOrder ?? 'desc', limit, offset })
      return { links: recordsOf(rows), page, pageSize, total }
    },
    count: (caller: Caller, q: CountLinksQuery) => ({ count: store.count(filterFor(caller, q)) }),
    remove(caller: Caller, id: string): { id: string } {
      const row = getRowOrThrow(caller, id)
      store.transaction(() => {
        store.softDelete(row.seq, clock())
        store.unindexSearch(row.seq)
      })
      emit(row)
      return { id }
    },
    bulkRemove(caller: Caller, linkIdsCsv: string): { deletedCount: number } {
      const ids = [
        ...new Set(
          linkIdsCsv
            .split(',')
            .map((s) => s.trim())
            .filter(Boolean),
        ),
      ]
      if (ids.length < 1 || ids.length > 100) throw parameterError(`'linkIds' must hold 1-100 comma-separated ids (got ${ids.length})`)
      const rows = ids.map((id) => store.getById(id)).filter((r): r is LinkRow => r !== null && r.deleted_at === null)
      for (const r of rows) if (!canAccessOwnedBy(caller, r.user_id)) throw forbidden(`link ${r.id} belongs to another user`)
      const now = clock()
      const deleted = store.transaction(
        () =>
          rows.filter((r) => {
            if (!store.softDelete(r.seq, now)) return false
            store.unindexSearch(r.seq)
            return true
          }).length,
      )
      for (const r of rows) emit(r)
      return { deletedCount: deleted }
    },
    onChange(fn: (c: LinkChange) => void) {
      listeners.push(fn)
    },
    shortLinkOf,
    toRecord: recordOf,
  }
}
export type LinkService = ReturnType<typeof createLinkService>
