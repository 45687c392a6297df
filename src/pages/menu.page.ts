/** Menu links: sections of items with prices, or the menu as an uploaded file (PDF/image) or a URL. */
import { esc } from './html'
import { renderPage } from './layout'
import { contentView } from './media.page'
import type { LandingLink, PageContext } from './pages.types'
import { h1, ICONS, kindOfMime, sourceOf, titleOf, unavailablePage } from './parts'
import { protectionOf, watermarked } from './protection'

interface MenuItem {
  name?: unknown
  price?: unknown
  description?: unknown
}

const MENU_CSS = `.toc{display:flex;flex-wrap:wrap;gap:.5rem;margin:.5rem 0 0;padding:0;list-style:none}
.toc a{display:inline-block;padding:.35rem .8rem;border-radius:999px;background:var(--accent-soft);text-decoration:none;font-weight:600}
.menu-section h2{border-bottom:2px solid var(--line);padding-bottom:.35rem}
.items{list-style:none;margin:0;padding:0}
.items li{padding:.6rem 0;border-bottom:1px dashed var(--line)}.items li:last-child{border-bottom:0}
.item-head{display:flex;align-items:baseline;gap:.75rem}
.item-name{font-weight:600;overflow-wrap:anywhere}
.item-head .dots{flex:1;border-bottom:2px dotted var(--line);transform:translateY(-.3rem);min-width:1rem}
.price{font-weight:700;white-space:nowrap;font-variant-numeric:tabular-nums}
.desc{margin:.2rem 0 0;color:var(--muted);font-size:.95rem}`

function itemHtml(item: MenuItem): string {
  const price = typeof item.price === 'string' && item.price ? `<span class="dots" aria-hidden="true"></span><span class="price">${esc(item.price)}</span>` : ''
  const desc = typeof item.description === 'string' && item.description ? `<p class="desc">${esc(item.description)}</p>` : ''
  return `<li><div class="item-head"><span class="item-name">${esc(item.name)}</span>${price}</div>${desc}</li>`
}

export function renderMenuPage(link: LandingLink, ctx: PageContext): string {
  const d = link.data ?? {}
  const protection = protectionOf(link.option, link.domain)
  const title = titleOf(link, 'Menu')
  if (Array.isArray(d.sections)) {
    const sections = d.sections as { name?: unknown; items?: MenuItem[] }[]
    const toc =
      sections.length > 1
        ? `<nav aria-label="Menu sections"><ul class="toc">${sections.map((s, i) => `<li><a href="#section-${i + 1}">${esc(s.name)}</a></li>`).join('')}</ul></nav>`
        : ''
    const body =
      `<article class="card">${h1(title)}${toc}</article>` +
      sections
        .map(
          (s, i) =>
            `<section class="card menu-section" id="section-${i + 1}" aria-labelledby="section-${i + 1}-h"><h2 id="section-${i + 1}-h">${esc(s.name)}</h2>` +
            `${watermarked(`<ul class="items">${(Array.isArray(s.items) ? s.items : []).map(itemHtml).join('')}</ul>`, protection)}</section>`,
        )
        .join('')
    const names = sections.map((s) => String(s.name ?? '')).filter(Boolean)
    return renderPage({ link, title, description: names.length ? `Menu: ${names.join(', ')}` : 'Menu', protection, css: MENU_CSS, body })
  }
  const src = sourceOf(link, ctx)
  if (src.missing || !src.url) return unavailablePage(link, protection)
  if (!src.file) {
    // A menu elsewhere on the web: many sites refuse to be framed, so link to it.
    const body = `<article class="card">${h1(title)}<p class="muted">The menu opens on the restaurant's site.</p>
<div class="actions"><a class="btn" href="${esc(src.url)}" rel="noopener">${ICONS.open}Open the menu</a></div></article>`
    return renderPage({ link, title, description: 'Menu', protection, css: MENU_CSS, body })
  }
  const kind = kindOfMime(src.file.mimeType) ?? 'other'
  const open = protection.screenshot
    ? ''
    : `<div class="actions"><a class="btn secondary" href="${esc(src.url)}" target="_blank" rel="noopener">${ICONS.open}Open in full screen</a></div>`
  const body = `<article class="card">${h1(title)}<div class="content">${contentView(kind === 'other' ? 'other' : kind, src, title, protection)}</div>${open}</article>`
  return renderPage({ link, title, description: 'Menu', image: kind === 'image' ? src.url : null, protection, css: MENU_CSS, body })
}
