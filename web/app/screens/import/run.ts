/** The import's talks with the API: which keys are taken already, the tags to create, and the links. */
import { ApiError, api, errorText } from '../../api'
import type { LinkPage, LinkRecord, Tag } from '../links/model'
import type { ImportRow } from './rows'

const SHORT_LINK_BATCH = 50
const WORKERS = 4
const RETRIES_AFTER_429 = 3

/**
 * Rows whose domain and key name a link the caller can already see (GET /links?shortLinks=…,
 * which writes nothing): line → message. Keys taken by other users' links show up only
 * when the server refuses the row.
 */
export async function keysInUse(rows: ImportRow[], signal?: AbortSignal): Promise<Map<number, string>> {
  const withKey = rows.filter((r) => r.key && r.errors.length === 0)
  const found = new Map<string, LinkRecord>()
  for (let i = 0; i < withKey.length; i += SHORT_LINK_BATCH) {
    const batch = withKey.slice(i, i + SHORT_LINK_BATCH)
    const { data } = await api<LinkPage>('GET', '/links', {
      query: { shortLinks: batch.map((r) => `https://${r.domain}/${r.key}`), includeArchived: true, pageSize: 100 },
      signal,
    })
    for (const l of data.links) found.set(`${l.domain}\n${l.key}`, l)
  }
  const out = new Map<number, string>()
  for (const r of withKey) {
    const l = found.get(`${r.domain}\n${r.key}`)
    if (l) out.set(r.line, `key "${r.key}" is already used on ${r.domain} (${l.destination})`)
  }
  return out
}

/** Tag names the rows use that the caller has no tag for yet (case-insensitive, first spelling). */
export function missingTags(rows: ImportRow[], own: Tag[]): string[] {
  const have = new Set(own.map((t) => t.name.toLowerCase()))
  const missing = new Map<string, string>()
  for (const r of rows) for (const name of r.tags) if (!have.has(name.toLowerCase()) && !missing.has(name.toLowerCase())) missing.set(name.toLowerCase(), name)
  return [...missing.values()]
}

export type RowResult = { ok: true; link: LinkRecord } | { ok: false; message: string }

/** Sends one request, waiting out a rate limit as the server asks. */
async function withRetry<T>(send: () => Promise<T>): Promise<T> {
  for (let attempt = 0; ; attempt++) {
    try {
      return await send()
    } catch (e) {
      if (!(e instanceof ApiError && e.status === 429) || attempt >= RETRIES_AFTER_429) throw e
      await new Promise((resolve) => setTimeout(resolve, Math.min(60, e.retryAfter ?? 1) * 1000))
    }
  }
}

/**
 * Creates the missing tags, then every row (a few at a time), never stopping at a failure:
 * `onResult` hears each row's outcome as it comes.
 */
export async function runImport(rows: ImportRow[], ownTags: Tag[], onResult: (line: number, result: RowResult) => void, signal: AbortSignal): Promise<void> {
  const tagIds = new Map(ownTags.map((t) => [t.name.toLowerCase(), t.id]))
  const tagErrors = new Map<string, string>()
  for (const name of missingTags(rows, ownTags)) {
    if (signal.aborted) return
    try {
      const { data } = await withRetry(() => api<Tag>('POST', '/tags', { body: { name } }))
      tagIds.set(name.toLowerCase(), data.id)
    } catch (e) {
      tagErrors.set(name.toLowerCase(), `tag "${name}" could not be created: ${errorText(e)}`)
    }
  }

  let next = 0
  const worker = async () => {
    while (next < rows.length && !signal.aborted) {
      const row = rows[next++]!
      const tagError = row.tags.map((t) => tagErrors.get(t.toLowerCase())).find(Boolean)
      if (tagError) {
        onResult(row.line, { ok: false, message: tagError })
        continue
      }
      const linkOptions: Record<string, unknown> = { domain: row.domain }
      if (row.key) linkOptions.key = row.key
      if (row.tags.length) linkOptions.tags = row.tags.map((t) => tagIds.get(t.toLowerCase())!)
      if (row.comment) linkOptions.comment = row.comment
      try {
        const { data } = await withRetry(() => api<LinkRecord>('POST', `/links/${row.type}`, { body: { data: { url: row.url }, linkOptions } }))
        onResult(row.line, { ok: true, link: data })
      } catch (e) {
        onResult(row.line, { ok: false, message: errorText(e) })
      }
    }
  }
  await Promise.all(Array.from({ length: WORKERS }, worker))
}
