/**
 * QR templates: shared designs. Everyone reads all of them; members create and change
 * their own, admins change all. A design is rendered and decoded before it is saved.
 */

import { type Caller, canAccessOwnedBy } from '../auth'
import { forbidden, newId, notFound, pageWindow, parameterError } from '../shared'
import type { StoredTemplate, TemplateStorePort } from './qr.templates.store'

export interface TemplateRecord extends StoredTemplate {
  image: string
}

export interface TemplateServiceDeps {
  store: TemplateStorePort
  baseUrl: string
  /** Renders the design on a sample link and decodes it; throws parameter_error when it does not scan or names a file the owner may not use. */
  assertScannable(qrOptions: unknown, ownerId: string): Promise<void>
}

/** Over the SQLite store or PostgreSQL's: every store call is awaited (docs/adr/0010). */
export function createTemplateService({ store, baseUrl, assertScannable }: TemplateServiceDeps) {
  const recordOf = (t: StoredTemplate): TemplateRecord => {
    const { id, name, comment, qrOptions, archived, userId, createdAt, updatedAt } = t
    return { id, name, comment, image: `${baseUrl}/qr/templates/${id}/preview`, qrOptions, archived, userId, createdAt, updatedAt }
  }

  async function get(id: string): Promise<StoredTemplate> {
    const t = await store.get(id)
    if (!t) throw notFound(`template ${id}`)
    return t
  }
  async function getChangeable(caller: Caller, id: string): Promise<StoredTemplate> {
    const t = await get(id)
    if (!canAccessOwnedBy(caller, t.userId)) throw forbidden(`template ${id} belongs to another user; members change only their own templates`)
    return t
  }
  const cleanName = (name: string) => {
    const n = name.trim()
    if (!n) throw parameterError(`'name' must not be blank`)
    return n
  }

  return {
    get: async (id: string): Promise<TemplateRecord> => recordOf(await get(id)),
    /** The stored design and its owner (whose files it draws), for rendering; unknown ids are 404. */
    async qrDesignOf(id: string): Promise<{ qrOptions: unknown; ownerId: string }> {
      const t = await get(id)
      return { qrOptions: t.qrOptions, ownerId: t.userId }
    },
    async create(caller: Caller, input: { name: string; comment?: string; qrOptions: unknown }): Promise<TemplateRecord> {
      const name = cleanName(input.name)
      await assertScannable(input.qrOptions, caller.userId)
      const id = newId('tpl')
      await store.insert({ id, userId: caller.userId, name, comment: input.comment ?? '', qrOptions: input.qrOptions })
      return recordOf((await store.get(id))!)
    },
    async update(caller: Caller, id: string, input: { name?: string; comment?: string; qrOptions?: unknown; archived?: boolean }): Promise<TemplateRecord> {
      const t = await getChangeable(caller, id)
      // The template keeps its owner: the design may name that owner's files.
      if (input.qrOptions !== undefined) await assertScannable(input.qrOptions, t.userId)
      await store.update({
        ...t,
        name: input.name === undefined ? t.name : cleanName(input.name),
        comment: input.comment ?? t.comment,
        qrOptions: input.qrOptions ?? t.qrOptions,
        archived: input.archived ?? t.archived,
      })
      return recordOf((await store.get(id))!)
    },
    async remove(caller: Caller, id: string): Promise<{ id: string }> {
      await getChangeable(caller, id)
      await store.remove(id)
      return { id }
    },
    async list(q: {
      ids?: string[]
      search?: string
      sortBy?: 'name' | 'created_at'
      sortOrder?: 'asc' | 'desc'
      page?: number
      pageSize?: number
      includeArchived?: boolean
    }) {
      const { limit, offset } = pageWindow(q.page, q.pageSize, 10)
      const { templates, total } = await store.list({
        ids: q.ids,
        search: q.search,
        includeArchived: q.includeArchived ?? false,
        sortBy: q.sortBy ?? 'created_at',
        sortOrder: q.sortOrder ?? 'desc',
        limit,
        offset,
      })
      return { templates: templates.map(recordOf), total }
    },
  }
}
export type TemplateService = ReturnType<typeof createTemplateService>
