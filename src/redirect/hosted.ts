/**
 * Landing pages of hosted link types, served at the short link itself. Uploaded files
 * of such a link are served under the short link too (`/<key>/file/<fileId>`), so they
 * pass the same expiry and password checks as the page.
 */

import type { FileService, FileStorePort } from '../files'
import type { LinkRecord, LinkRow, LinkService, LinkStorePort } from '../links'
import { type LandingLink, NOT_FOUND_PAGE, renderLandingPage, type VisitorOs } from '../pages'

export function hostedFilePath(key: string, fileId: string): string {
  return `/${encodeURIComponent(key)}/file/${encodeURIComponent(fileId)}`
}

export function renderHostedPage(
  deps: { links: Pick<LinkService<LinkStorePort>, 'toRecord'>; files: Pick<FileService<FileStorePort>, 'get'> },
  row: LinkRow,
  os: string,
): Response | Promise<Response> {
  const record = deps.links.toRecord(row)
  return record instanceof Promise ? record.then((r) => hostedPage(deps, row, os, r)) : hostedPage(deps, row, os, record)
}

type FileInfo = Awaited<ReturnType<FileService<FileStorePort>['get']>>

/**
 * The page renders synchronously; over PostgreSQL the files it names come as promises, so
 * the first pass collects them and, once they are read, a second pass renders with them.
 */
function hostedPage(deps: { files: Pick<FileService<FileStorePort>, 'get'> }, row: LinkRow, os: string, record: LinkRecord): Response | Promise<Response> {
  const pending = new Map<string, Promise<FileInfo>>()
  const first = pageWith(row, os, record, (fileId) => {
    const f = deps.files.get(fileId)
    if (!(f instanceof Promise)) return f
    pending.set(fileId, f)
    return null
  })
  if (pending.size === 0) return first
  const ids = [...pending.keys()]
  return Promise.all(pending.values()).then((files) => {
    const known = new Map(ids.map((id, i) => [id, files[i] ?? null]))
    return pageWith(row, os, record, (fileId) => known.get(fileId) ?? null)
  })
}

function pageWith(row: LinkRow, os: string, record: LinkRecord, file: (fileId: string) => FileInfo): Response {
  const visitorOs: VisitorOs = os === 'IOS' ? 'ios' : os === 'Android' ? 'android' : 'other'
  const html = renderLandingPage(
    {
      linkType: record.linkType,
      data: record.data as LandingLink['data'],
      previewData: record.previewData,
      option: record.option,
      shortLink: record.shortLink,
      domain: record.domain,
      destination: record.destination,
    },
    {
      fileUrl: (fileId) => hostedFilePath(row.key, fileId),
      file,
      os: visitorOs,
    },
  )
  const headers = { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store', 'x-robots-tag': 'noindex' }
  if (html === null) return new Response(NOT_FOUND_PAGE, { status: 404, headers })
  return new Response(html, { headers })
}
