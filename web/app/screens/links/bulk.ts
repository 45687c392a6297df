/** Bulk changes through the API's bulk endpoints (100 links per call, each call all-or-nothing). */
import { api } from '../../api'
import type { LinkRecord } from './model'

const BULK_LIMIT = 100
const chunks = <T>(xs: T[]) => Array.from({ length: Math.ceil(xs.length / BULK_LIMIT) }, (_, i) => xs.slice(i * BULK_LIMIT, (i + 1) * BULK_LIMIT))

export async function setArchived(ids: string[], archived: boolean) {
  for (const linkIds of chunks(ids)) await api('PATCH', '/links/bulk', { body: { linkIds, updateData: { linkOptions: { archived } } } })
}

export async function deleteLinks(ids: string[]): Promise<number> {
  let deleted = 0
  for (const linkIds of chunks(ids)) {
    const { data } = await api<{ deletedCount: number }>('DELETE', '/links/bulk', { query: { linkIds: linkIds.join(',') } })
    deleted += data.deletedCount
  }
  return deleted
}

/**
 * Adds or removes tags. A bulk update sets one tag list on every link it names, so links are
 * grouped by the list they end up with: one call per distinct result.
 */
export async function changeTags(links: LinkRecord[], tagIds: string[], mode: 'add' | 'remove'): Promise<number> {
  const groups = new Map<string, { tags: string[]; ids: string[] }>()
  for (const l of links) {
    const next = mode === 'add' ? [...new Set([...l.tags, ...tagIds])] : l.tags.filter((t) => !tagIds.includes(t))
    if (next.length === l.tags.length && next.every((t, i) => t === l.tags[i])) continue
    const key = [...next].sort().join('\n')
    const g = groups.get(key) ?? { tags: next, ids: [] }
    g.ids.push(l.id)
    groups.set(key, g)
  }
  let changed = 0
  for (const { tags, ids } of groups.values()) {
    for (const linkIds of chunks(ids)) {
      await api('PATCH', '/links/bulk', { body: { linkIds, updateData: { linkOptions: { tags } } } })
      changed += linkIds.length
    }
  }
  return changed
}
