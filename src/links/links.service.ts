/**
 * The link verbs: create, upsert, update (single and bulk, all-or-nothing), read, list,
 * count and delete with tombstones. Input rules are in links.validate.ts, the stored
 * row's reading in links.record.ts; this file composes them with the store. Throws
 * AppError; never sees HTTP.
 */

import { type Caller, canAccessOwnedBy } from '../auth'
import { AppError, forbidden, newId, notFound, pageWindow, parameterError } from '../shared'
import type { TagStorePort } from '../tags'
import { checkData, destinationOf, matchKeyOf, searchTextOf } from './links.content'
import { type LinkHealth, unknownHealth } from './links.health'
import { hasHealth } from './links.health.values'
import { type LinkRecord, linkRecordOf, mergeStoredOptions, shortLinkOf as shortLinkAt, storedDataOf, storedOptionsOf } from './links.record'
import type { CountLinksQuery, LinkType, ListLinksQuery } from './links.schema'
import type { LinkEventsOf, LinkFilter, LinkRow, LinkStore, LinkStorePort, LinkWrite, NewLink, WriteRefusal } from './links.store'
import {
  checkTrackConversion,
  createLinkRules,
  type LinkBody,
  type LinkRulesDeps,
  type PreparedCreate,
  type PreparedUpdate,
  parseShortLink,
} from './links.validate'

export type { LinkRecord } from './links.record'
export type { LinkBody } from './links.validate'

/** `S` is the store's own type, so the redirect's lookups stay synchronous over SQLite. */
export interface LinkServiceDeps<S extends LinkStorePort = LinkStore> extends LinkRulesDeps {
  store: S
  tags: Pick<TagStorePort, 'get'>
  /**
   * The `health` of these links by seq (the link-health module plugs in here; synchronous over
   * SQLite). A link it leaves out has the health of one never checked.
   */
  healthOf?(rows: LinkRow[]): Map<number, LinkHealth | null> | Promise<Map<number, LinkHealth | null>>
}

export type LinkChange = { domain: string; key: string; id: string }

/** What an import keeps beyond a link body: the other service's creation time and click total. */
export interface ImportedFacts {
  createdAt?: number
  importedClicks?: number
}

/** `f(value)`, at once when `value` is not a promise: a synchronous store's path stays free of promises. */
function then<T, R>(value: T | Promise<T>, f: (v: T) => R): R | Promise<R> {
  return value instanceof Promise ? value.then(f) : f(value)
}

/** Writes tried when a link changes between its read and its write (another request or node). */
const SAVE_TRIES = 5

/** Random keys tried when a fresh key is taken between its check and the insert (another node). */
const FRESH_KEY_TRIES = 5

export function createLinkService<S extends LinkStorePort = LinkStore>(deps: LinkServiceDeps<S>) {
  const { settings } = deps
  const store: LinkStorePort = deps.store
  const clock = deps.now ?? Date.now
  const rules = createLinkRules(deps)
  const listeners: ((c: LinkChange) => void)[] = []
  const emit = (row: { domain: string; key: string; id: string }) => {
    for (const l of listeners) l({ domain: row.domain, key: row.key, id: row.id })
  }

  const shortLinkOf = (domain: string, key: string) => shortLinkAt(settings, domain, key)
  /** The key a type fixes itself: a GS1 product's is its GTIN. */
  const fixedKeyOf = (type: LinkType, data: { gtin?: string }): string | null => (type === 'gs1' ? data.gtin! : null)
  /** link.created / updated / deleted, appended by the store in the write's own transaction; `data` is the record. */
  // The health a change event carries is the write's: a written link's URLs are checked anew (link.broken / link.recovered tell what follows).
  const eventsOf: LinkEventsOf = (changes) =>
    changes.map((c) => ({
      type: c.type,
      userId: c.row.user_id,
      linkId: c.row.id,
      tagIds: c.tags,
      data: linkRecordOf(c.row, c.tags, settings, hasHealth(c.row.link_type) ? unknownHealth(c.row) : null),
    }))

  const healthOf = (rows: LinkRow[]) => deps.healthOf?.(rows) ?? new Map<number, LinkHealth | null>()
  const withHealth = (row: LinkRow, health: Map<number, LinkHealth | null>) => (health.has(row.seq) ? health.get(row.seq)! : unknownHealth(row))
  const recordsOf = async (rows: LinkRow[]): Promise<LinkRecord[]> => {
    const tags = await store.tagsOf(rows.map((r) => r.seq))
    const health = await healthOf(rows)
    return rows.map((r) => linkRecordOf(r, tags.get(r.seq) ?? [], settings, withHealth(r, health)))
  }
  const recordOf = async (row: LinkRow): Promise<LinkRecord> => (await recordsOf([row]))[0]!

  async function getRowOrThrow(caller: Caller, id: string): Promise<LinkRow> {
    const row = await store.getById(id)
    if (!row) throw notFound(`link ${id}`)
    if (row.deleted_at !== null) throw new AppError('record_gone', `link ${id} was deleted`)
    if (!canAccessOwnedBy(caller, row.user_id)) throw forbidden(`link ${id} belongs to another user`)
    return row
  }

  /** A refused write as the caller sees it (nothing was written). */
  const refusalError = (r: WriteRefusal) =>
    r.refused === 'gone'
      ? new AppError('record_gone', `link ${r.id} was deleted`)
      : r.refused === 'key_taken'
        ? rules.keyTakenError(r.domain, r.key, /^[0-9]{14}$/.test(r.key) ? 'gs1' : undefined)
        : new AppError('internal_server_error', `link ${r.id} kept changing while it was written; retry`)

  /** The new link a checked create writes at `key`. */
  function newLinkOf(caller: Caller, p: PreparedCreate, key: string, body: LinkBody, imported: ImportedFacts): NewLink {
    const { type, data, o, domain, options, now } = p
    const destination = destinationOf(type, data, shortLinkOf(domain, key))
    return {
      row: {
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
        imported_clicks: imported.importedClicks ?? 0,
        created_at: Math.min(imported.createdAt ?? now, now),
        updated_at: now,
      },
      tags: o.tags ?? [],
      searchText: `${key} ${destination} ${searchTextOf(data)}`,
    }
  }

  async function create(caller: Caller, typeParam: string, body: LinkBody, imported: ImportedFacts = {}): Promise<LinkRecord> {
    const prepared = await rules.prepareCreate(caller.userId, typeParam, body)
    const { type, data, o, domain } = prepared
    // A gs1 product's key is its GTIN, never a random one.
    const fixedKey = fixedKeyOf(type, data) ?? o.key
    for (let attempt = 0; attempt < FRESH_KEY_TRIES; attempt++) {
      const key = fixedKey ?? (await rules.freshKey(domain))
      const link = newLinkOf(caller, prepared, key, body, imported)
      // The key is checked again by the store, in the insert's transaction.
      const saved = await store.createLink(link.row, link.tags, link.searchText, eventsOf)
      if (saved) {
        emit(saved)
        return recordOf(saved)
      }
      if (fixedKey !== undefined) throw rules.keyTakenError(domain, key, type)
    }
    throw new AppError('internal_server_error', 'could not find a free random key')
  }

  /**
   * Many new links checked one by one as create() checks them and written in one store
   * transaction (an import's batch). Per input, in order: the error that refused it, or null.
   */
  async function createMany(caller: Caller, inputs: { type: string; body: LinkBody; imported?: ImportedFacts }[]): Promise<(AppError | null)[]> {
    const refused: (AppError | null)[] = inputs.map(() => null)
    const pending: { at: number; link: NewLink; keyGiven: boolean }[] = []
    const keys = new Set<string>()
    // Checked side by side (each is reads only: round trips overlap on PostgreSQL); keys assigned in order.
    const checked = await Promise.all(
      inputs.map((input) =>
        rules.prepareCreate(caller.userId, input.type, input.body).then(
          (prepared) => ({ prepared }),
          (error: unknown) => ({ error }),
        ),
      ),
    )
    for (const [at, input] of inputs.entries()) {
      try {
        const c = checked[at]!
        if ('error' in c) throw c.error
        const { prepared } = c
        const fixedKey = fixedKeyOf(prepared.type, prepared.data) ?? prepared.o.key
        let key = fixedKey
        if (key !== undefined && keys.has(`${prepared.domain}/${key}`)) throw rules.keyTakenError(prepared.domain, key, prepared.type)
        while (key === undefined || keys.has(`${prepared.domain}/${key}`)) key = await rules.freshKey(prepared.domain)
        keys.add(`${prepared.domain}/${key}`)
        pending.push({ at, link: newLinkOf(caller, prepared, key, input.body, input.imported ?? {}), keyGiven: fixedKey !== undefined })
      } catch (e) {
        if (!(e instanceof AppError)) throw e
        refused[at] = e
      }
    }
    const saved = pending.length
      ? await store.createLinks(
          pending.map((p) => p.link),
          eventsOf,
        )
      : []
    for (const [i, row] of saved.entries()) {
      const p = pending[i]!
      if (row) emit(row)
      else if (p.keyGiven) refused[p.at] = rules.keyTakenError(p.link.row.domain, p.link.row.key, p.link.row.link_type as LinkType)
      else {
        // A random key taken meanwhile (another node): this one alone, with fresh keys.
        const input = inputs[p.at]!
        try {
          await create(caller, input.type, input.body, input.imported)
        } catch (e) {
          if (!(e instanceof AppError)) throw e
          refused[p.at] = e
        }
      }
    }
    return refused
  }

  /** The next row of a link under a prepared update, with the checks that depend on the link. */
  async function writeOf(row: LinkRow, p: PreparedUpdate & ImportedFacts, now: number): Promise<LinkWrite> {
    const type = row.link_type as LinkType
    const domain = p.o.domain ?? row.domain
    const fixed = type === 'gs1' ? (p.data?.gtin ?? row.key) : null
    if (fixed !== null && p.o.key !== undefined && p.o.key !== fixed)
      throw parameterError(`'linkOptions.key' of a gs1 link is its GTIN (${fixed}): change data.gtin instead`)
    const key = fixed ?? p.o.key ?? row.key
    if (domain !== row.domain || key !== row.key) await rules.checkKey(domain, key, row.seq, type)
    if (p.o.tags !== undefined) await rules.checkTags(row.user_id, p.o.tags ?? [])
    checkTrackConversion(type, p.o.trackConversion)
    if (p.data?.fileId) await rules.checkFiles(p.data, row.user_id)
    if (p.qrOptions) await deps.checkQrOptions?.(p.qrOptions, row.user_id)
    rules.checkOptionsForType(type, p.options)
    const options = mergeStoredOptions(storedOptionsOf(row), p.options)
    rules.checkTest(type, storedOptionsOf(row), options, p.options, now)
    const data = p.data ?? storedDataOf(row)
    const destination = destinationOf(type, data, shortLinkOf(domain, key))
    const next: LinkRow = {
      ...row,
      domain,
      key,
      destination,
      match_key: matchKeyOf(type, data, destination),
      data: JSON.stringify(data),
      options: JSON.stringify(options),
      qr_options: p.qrOptions === undefined ? row.qr_options : p.qrOptions === null ? null : JSON.stringify(p.qrOptions),
      password_hash: p.options.passwordHash === undefined ? row.password_hash : p.options.passwordHash,
      expires_at: p.options.expiresAt === undefined ? row.expires_at : p.options.expiresAt,
      archived: p.o.archived === undefined ? row.archived : p.o.archived ? 1 : 0,
      imported_clicks: p.importedClicks ?? row.imported_clicks,
      updated_at: now,
    }
    return { base: row, row: next, tags: p.o.tags === undefined ? undefined : (p.o.tags ?? []), searchText: `${key} ${destination} ${searchTextOf(data)}` }
  }

  /**
   * Reads the links, computes their next rows and writes them all or none, then tells listeners
   * their old and new addresses. A link written by someone else meanwhile is read again.
   */
  async function save(caller: Caller, ids: string[], p: PreparedUpdate & ImportedFacts): Promise<void> {
    for (let attempt = 1; ; attempt++) {
      const now = clock()
      const current: LinkRow[] = []
      const writes: LinkWrite[] = []
      for (const id of ids) {
        const row = await getRowOrThrow(caller, id)
        current.push(row)
        writes.push(await writeOf(row, p, now))
      }
      const refused = await store.saveLinks(writes, eventsOf)
      if (refused && (refused.refused !== 'changed' || attempt >= SAVE_TRIES)) throw refusalError(refused)
      if (refused) continue
      for (const [i, row] of current.entries()) {
        const next = writes[i]!.row
        emit(row)
        if (next.domain !== row.domain || next.key !== row.key) emit(next)
      }
      return
    }
  }

  async function update(caller: Caller, id: string, body: LinkBody, imported: Pick<ImportedFacts, 'importedClicks'> = {}): Promise<LinkRecord> {
    const row = await getRowOrThrow(caller, id)
    const prepared = await rules.prepareUpdate(row.link_type as LinkType, body, row.user_id)
    await save(caller, [id], { ...prepared, importedClicks: imported.importedClicks })
    return recordOf((await store.getById(id))!)
  }

  async function upsert(caller: Caller, typeParam: string, body: LinkBody): Promise<{ record: LinkRecord; created: boolean }> {
    const type = rules.assertType(typeParam)
    const data = checkData(type, body.data)
    // The destination of hosted types depends on the key; their content identifies them instead.
    const probeDestination = destinationOf(type, data, '')
    const existing = await store.findForUpsert(caller.userId, type, matchKeyOf(type, data, probeDestination))
    if (!existing) return { record: await create(caller, type, body), created: true }
    const hasChanges = body.linkOptions != null || body.qrOptions !== undefined
    if (!hasChanges) return { record: await recordOf(existing), created: false }
    const changes: LinkBody = { linkOptions: body.linkOptions, qrOptions: body.qrOptions }
    return { record: await update(caller, existing.id, changes), created: false }
  }

  async function bulkUpdate(caller: Caller, linkIds: string[], updateData: LinkBody): Promise<{ updatedCount: number; links: LinkRecord[] }> {
    const rows: LinkRow[] = []
    for (const id of linkIds) rows.push(await getRowOrThrow(caller, id))
    if (updateData.linkOptions?.key !== undefined) throw parameterError(`'updateData.linkOptions.key' cannot be set in bulk (keys are unique per domain)`)
    const types = new Set(rows.map((r) => r.link_type))
    if (updateData.data !== undefined && types.size > 1)
      throw parameterError(`'updateData.data' needs every link to share one linkType (got ${[...types].join(', ')})`)
    const owners = new Set(rows.map((r) => r.user_id))
    const prepared = await rules.prepareUpdate(rows[0]!.link_type as LinkType, updateData, owners.size === 1 ? rows[0]!.user_id : null)
    await save(caller, linkIds, prepared)
    const saved: LinkRow[] = []
    for (const id of linkIds) saved.push((await store.getById(id))!)
    const links = await recordsOf(saved)
    return { updatedCount: links.length, links }
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
      health: q.health,
    }
  }

  return {
    create,
    createMany,
    /** The checks a create runs, writing nothing (an import's dry run); tags are left to the caller. */
    checkCreate: async (caller: Caller, typeParam: string, body: LinkBody): Promise<void> => {
      await rules.prepareCreate(caller.userId, typeParam, body)
    },
    /** The caller's live link an upsert of this content would match, or null (imports match keyless rows with it). */
    async findSame(caller: Caller, typeParam: string, data: unknown): Promise<LinkRow | null> {
      const type = rules.assertType(typeParam)
      const checked = checkData(type, data)
      return store.findForUpsert(caller.userId, type, matchKeyOf(type, checked, destinationOf(type, checked, '')))
    },
    upsert,
    update,
    bulkUpdate,
    /** A live link the caller may see (404 / 410 / 403 otherwise); the QR module uses it too. */
    get: async (caller: Caller, id: string): Promise<LinkRecord> => recordOf(await getRowOrThrow(caller, id)),
    /** For the redirect server: the live link at a domain and key, as stored (synchronous over SQLite). */
    findLiveRow: (domain: string, key: string) => deps.store.getByDomainKey(domain, key) as ReturnType<S['getByDomainKey']>,
    /** For number targeting: a link's clicks as stored. */
    storedClicks: (seq: number) => deps.store.storedClicks(seq) as ReturnType<S['storedClicks']>,
    /** Whether a live link shows this uploaded file (files refuse to delete it). */
    fileInUse: (fileId: string) => deps.store.fileInUse(fileId) as ReturnType<S['fileInUse']>,
    async list(caller: Caller, q: ListLinksQuery): Promise<{ links: LinkRecord[]; page: number; pageSize: number; total: number }> {
      const { limit, offset, page, pageSize } = pageWindow(q.page, q.pageSize)
      const filter = filterFor(caller, q)
      const { rows, total } = await store.list(filter, { sortBy: q.sortBy ?? 'created_at', sortOrder: q.sortOrder ?? 'desc', limit, offset })
      return { links: await recordsOf(rows), page, pageSize, total }
    },
    count: async (caller: Caller, q: CountLinksQuery) => ({ count: await store.count(filterFor(caller, q)) }),
    async remove(caller: Caller, id: string): Promise<{ id: string }> {
      const row = await getRowOrThrow(caller, id)
      await store.softDeleteLinks([row.seq], clock(), eventsOf)
      emit(row)
      return { id }
    },
    async bulkRemove(caller: Caller, linkIdsCsv: string): Promise<{ deletedCount: number }> {
      const ids = [
        ...new Set(
          linkIdsCsv
            .split(',')
            .map((s) => s.trim())
            .filter(Boolean),
        ),
      ]
      if (ids.length < 1 || ids.length > 100) throw parameterError(`'linkIds' must hold 1-100 comma-separated ids (got ${ids.length})`)
      const rows: LinkRow[] = []
      for (const id of ids) {
        const r = await store.getById(id)
        if (r !== null && r.deleted_at === null) rows.push(r)
      }
      for (const r of rows) if (!canAccessOwnedBy(caller, r.user_id)) throw forbidden(`link ${r.id} belongs to another user`)
      const deleted = await store.softDeleteLinks(
        rows.map((r) => r.seq),
        clock(),
        eventsOf,
      )
      for (const r of rows) emit(r)
      return { deletedCount: deleted }
    },
    onChange(fn: (c: LinkChange) => void) {
      listeners.push(fn)
    },
    shortLinkOf,
    /** A row as the API shows it, with the tags and `health` the caller read (another store's event, inside its transaction). */
    recordWith: (row: LinkRow, tags: string[], health: LinkHealth | null): LinkRecord => linkRecordOf(row, tags, settings, health),
    /** A stored row as the API shows it; synchronous over SQLite (hosted landing pages render on the redirect path). */
    toRecord: (row: LinkRow) =>
      then(deps.store.tagsOf([row.seq]), (tags) =>
        then(healthOf([row]), (health) => linkRecordOf(row, tags.get(row.seq) ?? [], settings, withHealth(row, health))),
      ) as S extends LinkStore ? LinkRecord : LinkRecord | Promise<LinkRecord>,
  }
}
export type LinkService<S extends LinkStorePort = LinkStore> = ReturnType<typeof createLinkService<S>>
