import { type Caller, canAccessOwnedBy } from '../auth'
import { forbidden, newId, notFound, pageWindow, parameterError } from '../shared'
import { TAG_COLORS } from './tags.schema'
import type { Tag, TagStorePort } from './tags.store'

/** A stable colour for a name, so the same tag name gets the same colour everywhere. */
export function pickColor(name: string): string {
  let h = 0
  for (const ch of name.toLowerCase()) h = (h * 31 + ch.codePointAt(0)!) >>> 0
  return TAG_COLORS[h % TAG_COLORS.length]!
}

/** Over the SQLite store or PostgreSQL's: every store call is awaited (docs/adr/0010). */
export function createTagService(store: TagStorePort) {
  async function getOwned(caller: Caller, id: string): Promise<Tag> {
    const tag = await store.get(id)
    if (!tag) throw notFound(`tag ${id}`)
    if (!canAccessOwnedBy(caller, tag.userId)) throw forbidden(`tag ${id} belongs to another user`)
    return tag
  }

  async function assertNameFree(userId: string, name: string, exceptId?: string): Promise<void> {
    const existing = await store.findByName(userId, name)
    if (existing && existing.id !== exceptId) throw parameterError(`'name' a tag named '${existing.name}' already exists`)
  }

  return {
    getOwned,
    async create(caller: Caller, input: { name: string; color?: string }): Promise<Tag> {
      const name = input.name.trim()
      if (!name) throw parameterError(`'name' must not be blank`)
      await assertNameFree(caller.userId, name)
      const id = newId('tag')
      await store.insert({ id, userId: caller.userId, name, color: input.color ?? pickColor(name) })
      return (await store.get(id))!
    },
    async update(caller: Caller, id: string, input: { name?: string; color?: string }): Promise<Tag> {
      const tag = await getOwned(caller, id)
      const name = input.name?.trim() ?? tag.name
      if (!name) throw parameterError(`'name' must not be blank`)
      if (name.toLowerCase() !== tag.name.toLowerCase()) await assertNameFree(tag.userId, name, tag.id)
      await store.update(id, name, input.color ?? tag.color)
      return (await store.get(id))!
    },
    async remove(caller: Caller, id: string): Promise<{ id: string }> {
      await getOwned(caller, id)
      await store.remove(id)
      return { id }
    },
    async list(
      caller: Caller,
      q: { ids?: string[]; search?: string; sortBy?: 'name' | 'created_at'; sortOrder?: 'asc' | 'desc'; page?: number; pageSize?: number },
    ) {
      const { limit, offset } = pageWindow(q.page, q.pageSize)
      return await store.list({
        userId: caller.role === 'admin' ? undefined : caller.userId,
        ids: q.ids,
        search: q.search,
        sortBy: q.sortBy ?? 'created_at',
        sortOrder: q.sortOrder ?? 'desc',
        limit,
        offset,
      })
    },
  }
}
export type TagService = ReturnType<typeof createTagService>
