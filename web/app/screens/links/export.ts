/** CSV export of every link matching the screen's filters, paged through the API with its largest page. */
import type { Query } from '../../api'
import { toCsv } from '../../csv'
import { type LinkRecord, listLinks, MAX_PAGE_SIZE, type Tag } from './model'

export const EXPORT_COLUMNS = ['id', 'shortLink', 'url', 'key', 'domain', 'type', 'tags', 'comment', 'clicks', 'createdAt'] as const

export function exportRow(l: LinkRecord, tagNames: ReadonlyMap<string, string>): (string | number)[] {
  return [
    l.id,
    l.shortLink,
    l.destination,
    l.key,
    l.domain,
    l.linkType,
    l.tags.map((id) => tagNames.get(id) ?? id).join(';'),
    l.comments ?? '',
    l.clicks,
    l.createdAt,
  ]
}

/**
 * Pages through the list; `onProgress(done, total)` after each page. Links created while it
 * runs can shift pages, so a link seen twice is written once.
 */
export async function exportLinks(
  query: Query,
  tags: readonly Tag[],
  onProgress: (done: number, total: number) => void,
  signal: AbortSignal,
): Promise<{ csv: string; count: number }> {
  const tagNames = new Map(tags.map((t) => [t.id, t.name]))
  const seen = new Set<string>()
  const rows: (string | number)[][] = [[...EXPORT_COLUMNS]]
  for (let page = 1; ; page++) {
    const result = await listLinks(query, page, MAX_PAGE_SIZE, signal)
    for (const l of result.links) {
      if (seen.has(l.id)) continue
      seen.add(l.id)
      rows.push(exportRow(l, tagNames))
    }
    onProgress(seen.size, Math.max(result.total, seen.size))
    if (result.links.length < MAX_PAGE_SIZE || page * MAX_PAGE_SIZE >= result.total) break
  }
  return { csv: toCsv(rows), count: seen.size }
}
