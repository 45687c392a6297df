/**
 * Landing pages for hosted link types: pure functions from a link record (and how to
 * reach its files) to one complete HTML document with embedded CSS, no external
 * requests, og:/twitter: preview tags, and the link's content protection applied.
 * The redirect server decides when to serve one; see protection.ts for what
 * `isScreenshotProtected` can and cannot do.
 */

import { renderAppStoresPage } from './app-stores.page'
import { renderMediaPage } from './media.page'
import { renderMenuPage } from './menu.page'
import type { LandingLink, PageContext } from './pages.types'
import { renderTextPage } from './text.page'
import { renderWifiPage } from './wifi.page'

export { EXPIRED_PAGE, NOT_FOUND_PAGE, passwordPage, previewPage, TOO_MANY_ATTEMPTS_PAGE } from './link-status.page'
export { renderAudioPage, renderDocumentPage, renderFilePage, renderImagePage, renderSvgPage, renderVideoPage } from './media.page'
export type { ContentOption, FileInfo, LandingLink, PageContext, PreviewData, VisitorOs } from './pages.types'
export { renderAppStoresPage, renderMenuPage, renderTextPage, renderWifiPage }

const RENDERERS: Record<string, (link: LandingLink, ctx: PageContext) => string> = {
  text: renderTextPage,
  'wi-fi': renderWifiPage,
  menu: renderMenuPage,
  document: renderMediaPage,
  image: renderMediaPage,
  svg: renderMediaPage,
  audio: renderMediaPage,
  video: renderMediaPage,
  file: renderMediaPage,
  'app-stores': renderAppStoresPage,
}

export const LANDING_PAGE_TYPES: readonly string[] = Object.keys(RENDERERS)

/** The landing page of a hosted link, or null for types that redirect instead. */
export function renderLandingPage(link: LandingLink, ctx: PageContext): string | null {
  const render = RENDERERS[link.linkType]
  return render ? render(link, ctx) : null
}
