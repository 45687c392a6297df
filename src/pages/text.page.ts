/** Text links: the text itself, readable on a phone, with web addresses made clickable and a copy button. */
import { esc } from './html'
import { renderPage } from './layout'
import type { LandingLink } from './pages.types'
import { COPY_SCRIPT, h1, ICONS, titleOf } from './parts'
import { protectionOf, watermarked } from './protection'

const URL_IN_TEXT = /\bhttps?:\/\/[^\s<>"'`]+[^\s<>"'`.,;:!?)\]}]/g

/** Escapes text and turns http(s) addresses into links (rel=nofollow: the text is user content). */
export function linkify(text: string): string {
  let out = ''
  let last = 0
  for (const m of text.matchAll(URL_IN_TEXT)) {
    out += esc(text.slice(last, m.index))
    out += `<a href="${esc(m[0])}" rel="nofollow noopener ugc">${esc(m[0])}</a>`
    last = m.index! + m[0].length
  }
  return out + esc(text.slice(last))
}

export function renderTextPage(link: LandingLink): string {
  const text = String(link.data?.text ?? '')
  const title = titleOf(link, 'Note')
  const protection = protectionOf(link.option, link.domain)
  const copy = protection.screenshot
    ? ''
    : `<div class="actions"><button type="button" class="btn secondary" data-copy="text" data-status="copy-status">${ICONS.copy}Copy text</button></div>
<p id="copy-status" class="muted" role="status" aria-live="polite"></p>`
  return renderPage({
    link,
    title,
    description: text.slice(0, 200),
    protection,
    css: '.text{white-space:pre-wrap;overflow-wrap:anywhere;font-size:1.05rem;line-height:1.6;margin:0}',
    scripts: protection.screenshot ? [] : [COPY_SCRIPT],
    body: `<article class="card">${h1(title)}${watermarked(`<div id="text" class="text">${linkify(text)}</div>`, protection)}${copy}</article>`,
  })
}
