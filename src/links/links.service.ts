/**
 * The link rules: create, upsert, update (single and bulk, all-or-nothing), read,
 * list, count and delete with tombstones. Throws AppError; never sees HTTP.
 */
import { customAlphabet } from 'nanoid'
import { AppError, notFound, parameterError } from '../shared/errors'
import { newId } from '../shared/ids'
import { toIso } from '../shared/time'
import { canAccessOwnedBy, type Caller } from '../auth/auth.service'
import type { Settings } from '../config/settings'
import type { TagStore } from '../tags/tags.store'
import { pageWindow } from '../shared/paging'
import { normaliseHost } from '../domains/domains.names'
import type { LinkFilter, LinkRow, LinkStore } from './links.store'
import { CREATE_TYPES, type LinkOptions, type LinkType, type ListLinksQuery, type CountLinksQuery } from './links.schema'
import { checkData, checkTargeting, destinationOf, matchKeyOf, normaliseUrl, searchTextOf, type LinkDataValue } from './links.content'

const randomKey = customAlphabet('0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ', 7)
/** Paths the API host serves itself; on that host they cannot be slugs. */
const RESERVED_KEYS = ['api', 'qr', 'docs', 'openapi', 'files', 'static', 'assets', 'health', 'admin', 'login', 'logout', 'dashboard', 'p', 'well-known']

export interface LinkBody {
  data?: unknown
  linkOptions?: LinkOptions | null
  qrOptions?: Record<string, unknown> | null
}

export interface LinkRecord {
  id: string
  domain: string
  key: string
  shortLink: string
  qrCode: string
  linkType: string
  destination: string
  clicks: number
  hasPassword: boolean
  createdAt: string
  updatedAt: string
  lastClicked: string | null
  tags: string[]
  comments: string | null
  expiration: { time: string; url: string } | null
  utm: Record<string, string> | null
  option: Record<string, unknown> | null
  previewData: Record<string, string> | null
  Targeting: { targetType: string; targetDatas: unknown } | null
  userId: string
  archived: boolean
  data: unknown
  qrOptions: unknown
}

/** The JSON kept in `links.options`. */
interface StoredOptions {
  comments?: string | null
  expiration?: { time: string; url: string } | null
  utm?: Record<string, string> | null
  option?: Record<string, unknown> | null
  previewData?: Record<string, string> | null
  Targeting?: { targetType: string; targetDatas: unknown } | null
}

export interface LinkServiceDeps {
  store: LinkStore
  tags: TagStore
  settings: Settings
  /** Default domains, or custom domains that are configured and not archived. */
  isUsableDomain(slug: string): boolean
  /** Refuses QR designs that cannot scan and, given the link's owner, files the owner may not use (the QR module plugs in here). */
  checkQrOptions?(qrOptions: Record<string, unknown>, ownerId?: string): void
  /** Whether a file exists and may be used by this owner (the files module plugs in here). */
  fileUsable?(fileId: string, ownerId: string): boolean
}

export type LinkChange = { domain: string; key: string; id: string }

export function createLinkService(deps: LinkServiceDeps) {
  const { store, settings } = deps
  const listeners: ((c: LinkChange) => void)[] = []
  const emit = (row: { domain: string; key: string; id: string }) => {
    for (const l of listeners) l({ domain: row.domain, key: row.key, id: row.id })
  }

  const shortLinkOf = (domain: string, key: string) => `${settings.shortOrigin(domain)}/${key}`

  function toRecord(row: LinkRow, tags: string[]): LinkRecord {
    const o = JSON.parse(row.options) as StoredOptions
    return {
      id: row.id,
      domain: row.domain,
      key: row.key,
      shortLink: shortLinkOf(row.domain, row.key),
      qrCode: `${settings.baseUrl}/qr/${row.id}`,
      linkType: row.link_type,
      destination: row.destination,
      clicks: row.clicks,
      hasPassword: row.password_hash !== null,
      createdAt: toIso(row.created_at)!,
      updatedAt: toIso(row.updated_at)!,
      lastClicked: toIso(row.last_clicked),
      tags,
      comments: o.comments ?? null,
      expiration: o.expiration ?? null,
      utm: o.utm ?? null,
      option: o.option ?? null,
      previewData: o.previewData ?? null,
      Targeting: o.Targeting ?? null,
      userId: row.user_id,
      archived: row.archived === 1,
      data: JSON.parse(row.data),
      qrOptions: row.qr_options === null ? null : JSON.parse(row.qr_options),
    }
  }

  const recordsOf = (rows: LinkRow[]) => {
    const tags = store.tagsOf(rows.map((r) => r.seq))
    return rows.map((r) => toRecord(r, tags.get(r.seq) ?? []))
  }
  const recordOf = (row: LinkRow) => recordsOf([row])[0]!

  function getRowOrThrow(caller: Caller, id: string): LinkRow {
    const row = store.getById(id)
    if (!row) throw notFound(`link ${id}`)
    if (row.deleted_at !== null) throw new AppError('record_gone', `link ${id} was deleted`)
    if (!canAccessOwnedBy(caller, row.user_id)) throw new AppError('forbidden', `link ${id} belongs to another user`)
    return row
  }

  function assertType(type: string): LinkType {
    if (!(CREATE_TYPES as readonly string[]).includes(type)) throw parameterError(`'type' must be one of ${CREATE_TYPES.join(', ')}`)
    return type as LinkType
  }

  function checkDomain(domain: string): string {
    // Stored as the Host header will carry it: lower-case punycode.
    const d = normaliseHost(domain)
    if (!deps.isUsableDomain(d))
      throw parameterError(`'linkOptions.domain' ${d} is neither a default short domain (${settings.defaultDomains.join(', ')}) nor a configured custom domain`)
    return d
  }

  function checkKey(domain: string, key: string, exceptSeq?: number) {
    if (domain === settings.apiHost) {
      const reserved = [...RESERVED_KEYS, settings.apiPrefix.split('/')[1] ?? ''].filter(Boolean)
      if (reserved.includes(key.toLowerCase())) throw parameterError(`'linkOptions.key' '${key}' is reserved on ${domain}`)
    }
    if (store.keyTaken(domain, key, exceptSeq)) throw parameterError(`'linkOptions.key' '${key}' is already used on ${domain}`)
  }

  function freshKey(domain: string): string {
    for (let i = 0; i < 20; i++) {
      const k = randomKey()
      if (!store.keyTaken(domain, k)) return k
    }
    throw new AppError('internal_server_error', 'could not find a free random key')
  }

  function checkTags(ownerId: string, tagIds: string[]) {
    for (const [i, id] of tagIds.entries()) {
      const tag = deps.tags.get(id)
      if (!tag || tag.userId !== ownerId) throw parameterError(`'linkOptions.tags.${i}' ${id} is not a tag of the link's owner`)
    }
  }

  function checkFiles(data: LinkDataValue, ownerId: string) {
    if (typeof data.fileId !== 'string') return
    if (deps.fileUsable ? !deps.fileUsable(data.fileId, ownerId) : true)
      throw parameterError(`'data.fileId' ${data.fileId} is not a file of the link's owner`)
  }

  /** Validated option values, with undefined meaning "leave as is" and null "clear". */
  async function prepareOptions(o: LinkOptions, now: number) {
    const out: StoredOptions & { passwordHash?: string | null; expiresAt?: number | null } = {}
    if (o.comment !== undefined) out.comments = o.comment
    if (o.expiration !== undefined) {
      if (o.expiration === null) (out.expiration = null), (out.expiresAt = null)
      else {
        const at = Date.parse(o.expiration.time)
        if (!(at > now)) throw parameterError(`'linkOptions.expiration.time' must be in the future`)
        out.expiration = { time: new Date(at).toISOString(), url: normaliseUrl(o.expiration.url, 'linkOptions.expiration.url', 3) }
        out.expiresAt = at
      }
    }
    if (o.utm !== undefined) out.utm = o.utm && Object.keys(o.utm).length ? (o.utm as Record<string, string>) : null
    if (o.option !== undefined) out.option = o.option
    if (o.previewData !== undefined) {
      out.previewData = o.previewData ? { ...(o.previewData as Record<string, string>) } : null
      if (out.previewData?.image) out.previewData.image = normaliseUrl(out.previewData.image, 'linkOptions.previewData.image')
    }
    if (o.Targeting !== undefined) {
      const targeting = o.Targeting ? structuredClone(o.Targeting) : null
      checkTargeting(targeting)
      out.Targeting = targeting
    }
    if (o.password !== undefined) out.passwordHash = o.password === null ? null : await Bun.password.hash(o.password)
    return out
  }

  function mergeOptions(current: StoredOptions, changes: StoredOptions): StoredOptions {
    const merged: StoredOptions = { ...current }
    for (const k of ['comments', 'expiration', 'utm', 'option', 'previewData', 'Targeting'] as const)
      if (changes[k] !== undefined) (merged as any)[k] = changes[k]
    for (const k of Object.keys(merged) as (keyof StoredOptions)[]) if (merged[k] === null) delete merged[k]
    return merged
  }

  async function create(caller: Caller, typeParam: string, body: LinkBody): Promise<LinkRecord> {
    const type = assertType(typeParam)
    const data = checkData(type, body.data)
    checkFiles(data, caller.userId)
    const o = body.linkOptions ?? {}
    const now = Date.now()
    const domain = checkDomain(o.domain ?? settings.defaultDomains[0]!)
    if (o.key !== undefined) checkKey(domain, o.key)
    if (o.tags) checkTags(caller.userId, o.tags)
    const prepared = await prepareOptions(o, now)
    if (body.qrOptions) deps.checkQrOptions?.(body.qrOptions, caller.userId)
    return store.transaction(() => {
      const key = o.key ?? freshKey(domain)
      if (o.key !== undefined) checkKey(domain, key) // re-checked inside the transaction
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
        options: JSON.stringify(mergeOptions({}, prepared)),
        qr_options: body.qrOptions ? JSON.stringify(body.qrOptions) : null,
        password_hash: prepared.passwordHash ?? null,
        expires_at: prepared.expiresAt ?? null,
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

  interface PreparedUpdate {
    data?: LinkDataValue
    options: Awaited<ReturnType<typeof prepareOptions>>
    o: LinkOptions
    qrOptions?: Record<string, unknown> | null
  }

  async function prepareUpdate(type: LinkType | null, body: LinkBody, ownerId: string | null): Promise<PreparedUpdate> {
    const data = body.data !== undefined && type ? checkData(type, body.data) : undefined
    if (data && ownerId) checkFiles(data, ownerId)
    const o = body.linkOptions ?? {}
    if (o.domain !== undefined) o.domain = checkDomain(o.domain)
    if (o.tags && ownerId) checkTags(ownerId, o.tags)
    const options = await prepareOptions(o, Date.now())
    if (body.qrOptions) deps.checkQrOptions?.(body.qrOptions)
    return { data, options, o, qrOptions: body.qrOptions }
  }

  /** Applies a prepared update to one row inside the caller's transaction. */
  function applyUpdate(row: LinkRow, p: PreparedUpdate, now: number): LinkRow {
    const type = row.link_type as LinkType
    const domain = p.o.domain ?? row.domain
    const key = p.o.key ?? row.key
    if (domain !== row.domain || key !== row.key) checkKey(domain, key, row.seq)
    if (p.o.tags !== undefined) checkTags(row.user_id, p.o.tags ?? [])
    if (p.data?.fileId) checkFiles(p.data, row.user_id)
    if (p.qrOptions) deps.checkQrOptions?.(p.qrOptions, row.user_id)
    const data = p.data ?? (JSON.parse(row.data) as LinkDataValue)
    const destination = destinationOf(type, data, shortLinkOf(domain, key))
    const next: LinkRow = {
      ...row,
      domain,
      key,
      destination,
      match_key: matchKeyOf(type, data, destination),
      data: JSON.stringify(data),
      options: JSON.stringify(mergeOptions(JSON.parse(row.options), p.options)),
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
    const prepared = await prepareUpdate(row.link_type as LinkType, body, row.user_id)
    return store.transaction(() => {
      const current = getRowOrThrow(caller, id)
      applyUpdate(current, prepared, Date.now())
      return recordOf(store.getById(id)!)
    })
  }

  async function upsert(caller: Caller, typeParam: string, body: LinkBody): Promise<{ record: LinkRecord; created: boolean }> {
    const type = assertType(typeParam)
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
    const prepared = await prepareUpdate(rows[0]!.link_type as LinkType, updateData, owners.size === 1 ? rows[0]!.user_id : null)
    return store.transaction(() => {
      const now = Date.now()
      for (const id of linkIds) applyUpdate(getRowOrThrow(caller, id), prepared, now)
      const links = recordsOf(linkIds.map((id) => store.getById(id)!))
      return { updatedCount: links.length, links }
    })
  }

  function filterFor(caller: Caller, q: CountLinksQuery): LinkFilter {
    let userIds = q.userIds
    if (caller.role !== 'admin') {
      const others = (userIds ?? []).filter((u) => u !== caller.userId)
      if (others.length) throw new AppError('forbidden', `members may only filter by their own user id (${caller.userId})`)
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

  function parseShortLink(s: string, i: number): { domain: string; key: string } {
    try {
      const u = new URL(s)
      return { domain: u.hostname.toLowerCase(), key: decodeURIComponent(u.pathname.replace(/^\/+/, '')) }
    } catch {
      throw parameterError(`'shortLinks.${i}' must be a full short link such as https://example.com/abc`)
    }
  }

  return {
    create,
    upsert,
    update,
    bulkUpdate,
    /** A live link the caller may see (404 / 410 / 403 otherwise); the QR module uses it too. */
    get: (caller: Caller, id: string) => recordOf(getRowOrThrow(caller, id)),
    /** For the redirect server: the live link at a domain and key, as stored. */
    findLiveRow: (domain: string, key: string) => store.getByDomainKey(domain, key),
    list(caller: Caller, q: ListLinksQuery) {
      const { limit, offset, page, pageSize } = pageWindow(q.page, q.pageSize)
      const filter = filterFor(caller, q)
      const { rows, total } = store.list(filter, { sortBy: q.sortBy ?? 'created_at', sortOrder: q.sortOrder ?? 'desc', limit, offset })
      return { links: recordsOf(rows), page, pageSize, total }
    },
    count: (caller: Caller, q: CountLinksQuery) => ({ count: store.count(filterFor(caller, q)) }),
    remove(caller: Caller, id: string): { id: string } {
      const row = getRowOrThrow(caller, id)
      store.transaction(() => {
        store.softDelete(row.seq, Date.now())
        store.unindexSearch(row.seq)
      })
      emit(row)
      return { id }
    },
    bulkRemove(caller: Caller, linkIdsCsv: string): { deletedCount: number } {
      const ids = [...new Set(linkIdsCsv.split(',').map((s) => s.trim()).filter(Boolean))]
      if (ids.length < 1 || ids.length > 100) throw parameterError(`'linkIds' must hold 1-100 comma-separated ids (got ${ids.length})`)
      const rows = ids.map((id) => store.getById(id)).filter((r): r is LinkRow => r !== null && r.deleted_at === null)
      for (const r of rows) if (!canAccessOwnedBy(caller, r.user_id)) throw new AppError('forbidden', `link ${r.id} belongs to another user`)
      const now = Date.now()
      const deleted = store.transaction(() => rows.filter((r) => store.softDelete(r.seq, now) && (store.unindexSearch(r.seq), true)).length)
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
