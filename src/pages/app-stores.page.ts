/**
 * App-store links: both store buttons, the one for the visitor's OS first and
 * highlighted. Whether an iOS or Android visitor is redirected straight to the store
 * is the redirect server's decision; this page is what everyone else sees.
 */
import { esc, safeUrl } from './html'
import { renderPage } from './layout'
import type { LandingLink, PageContext } from './pages.types'
import { h1, ICONS, titleOf } from './parts'
import { protectionOf, watermarked } from './protection'

export function renderAppStoresPage(link: LandingLink, ctx: PageContext): string {
  const d = link.data ?? {}
  const protection = protectionOf(link.option, link.domain)
  const title = titleOf(link, link.previewData?.title || 'Get the app')
  const os = ctx.os ?? 'other'
  const stores = [
    { os: 'ios', url: safeUrl(d.ios), label: 'Download on the App Store', sub: 'iPhone and iPad', icon: ICONS.apple },
    { os: 'android', url: safeUrl(d.android), label: 'Get it on Google Play', sub: 'Android', icon: ICONS.play },
  ].filter((s) => s.url)
  stores.sort((a, b) => Number(b.os === os) - Number(a.os === os))
  const buttons = stores
    .map((s) => {
      const primary = s.os === os || (os === 'other' && s === stores[0])
      return `<a class="btn store${primary ? '' : ' secondary'}" href="${esc(s.url)}" rel="noopener" data-store="${s.os}">${s.icon}<span><span class="store-label">${esc(s.label)}</span><span class="store-sub">${esc(s.sub)}</span></span></a>`
    })
    .join('')
  const fallback = safeUrl(d.fallbackUrl)
  const web = fallback ? `<p class="web"><a href="${esc(fallback)}" rel="noopener">${ICONS.globe}<span>Continue on the website</span></a></p>` : ''
  const hint = os === 'ios' ? 'Your device: iPhone or iPad.' : os === 'android' ? 'Your device: Android.' : 'Choose your store.'
  return renderPage({
    link,
    title,
    description: link.previewData?.desc || `Get the app for ${stores.map((s) => s.sub).join(' or ')}.`,
    protection,
    css: `.stores{display:flex;flex-direction:column;gap:.75rem;margin-top:1rem}
.btn.store{justify-content:flex-start;text-align:left;padding:.75rem 1rem}.btn.store svg{width:1.75rem;height:1.75rem;flex:none}
.store-label{display:block;font-size:1.05rem}.store-sub{display:block;font-weight:400;font-size:.85rem;opacity:.9}
.web a{display:inline-flex;gap:.4rem;align-items:center;min-height:44px}`,
    body: `<article class="card">${h1(title)}<p class="muted" id="device-hint">${esc(hint)}</p>${watermarked(`<div class="stores">${buttons}</div>`, protection)}${web}</article>`,
  })
}
