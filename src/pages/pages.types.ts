/** What a landing page is rendered from: the link record's fields as the contract describes them. */

export interface ContentOption {
  isWaterMark?: boolean
  watermarkText?: string
  isScreenshotProtected?: boolean
}

export interface PreviewData {
  title?: string
  desc?: string
  image?: string
}

export interface LandingLink {
  linkType: string
  /** The link's `data` as stored (contract: data per type). */
  // biome-ignore lint/suspicious/noExplicitAny: sixteen variants (contract: data per type), read field by field
  data: Record<string, any>
  previewData?: PreviewData | null
  option?: ContentOption | null
  /** https://<domain>/<key> */
  shortLink: string
  domain: string
  destination?: string
}

/** What a stored file looks like to a page (from `deps.files.get`). */
export interface FileInfo {
  name: string
  size: number
  mimeType: string
}

export type VisitorOs = 'ios' | 'android' | 'other'

export interface PageContext {
  /** Where a visitor's browser fetches an uploaded file (absolute, or relative to the short link). */
  fileUrl(fileId: string): string
  /** Name, size and type of an uploaded file; null when it no longer exists. */
  file?(fileId: string): FileInfo | null
  /** The visitor's OS (app-stores puts the matching store first). */
  os?: VisitorOs
}
