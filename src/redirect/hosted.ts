/**
 * Landing pages of hosted link types, served at the short link itself. Uploaded files
 * of such a link are served under the short link too (`/<key>/file/<fileId>`), so they
 * pass the same expiry and password checks as the page.
 */

import type { FileService } from '../files'
import type { LinkRecord, LinkRow, LinkService } from '../links'
import { type LandingLink, NOT_FOUND_PAGE, renderLandingPage, type VisitorOs } from '../pages'

export function hostedFilePath(key: string, fileId: string): string {
  return `/${encodeURIComponent(key)}/file/${encodeURIComponent(fileId)}`
}

export function renderHostedPage(
  deps: { links: Pick<LinkService, 'toRecord'>; files: Pick<FileService, 'get'> },
  row: LinkRow,
  os: string,
): Response | Promise<Response> {
  const record = deps.links.toRecord(row)
  return record instanceof Promise ? record.then((r) => hostedPage(deps, row, os, r)) : hostedPage(deps, row, os, record)
}

function hostedPage(deps: { files: Pick<FileService, 'get'> }, row: LinkRow, os: string, record: LinkRecord): Response {
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
      file: (fileId) => deps.files.get(fileId),
      os: visitorOs,
    },
  )
  const headers = { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store', 'x-robots-tag': 'noindex' }
  if (html === null) return new Response(NOT_FOUND_PAGE, { status: 404, headers })
  return new Response(html, { headers })
}
