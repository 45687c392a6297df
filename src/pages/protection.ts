/**
 * Content protection for landing pages (`option` on the link).
 *
 * - `isWaterMark`: `watermarkText` (default: the short domain) is tiled as a CSS overlay
 *   that lets clicks through to the controls, over the content of every hosted type: media,
 *   documents and file cards, texts, menus, Wi-Fi details and store buttons. The Wi-Fi join
 *   code stays clear: text over its modules could stop phones reading it.
 * - `isScreenshotProtected`: the deterrents a web page can apply. No context menu, no
 *   dragging, no text selection or copy, no download links or download button on the
 *   players, the content is hidden while the page loses focus or visibility (app
 *   switchers, many capture tools) and in print media, and the PrintScreen / capture
 *   shortcuts blank it briefly.
 *
 * A web page cannot fully prevent screenshots: the operating system, another device's
 * camera, or the browser's developer tools all capture what is on screen. These are
 * deterrents; combine them with a watermark so that captures carry their origin.
 */
import { esc } from './html'
import type { ContentOption } from './pages.types'

export interface Protection {
  watermark: string | null
  screenshot: boolean
}

export function protectionOf(option: ContentOption | null | undefined, domain: string): Protection {
  return {
    watermark: option?.isWaterMark ? option.watermarkText?.trim() || domain : null,
    screenshot: option?.isScreenshotProtected === true,
  }
}

/** The tiled overlay placed inside a `.protected` box, or '' without a watermark. */
export function watermarkOverlay(p: Protection): string {
  if (!p.watermark) return ''
  const tile = `<span>${esc(p.watermark)}</span>`
  return `<div class="wm" aria-hidden="true" data-watermark="${esc(p.watermark)}"><div class="wm-tiles">${tile.repeat(120)}</div></div>`
}

/** Content under the watermark when the link has one, else the content as it is. */
export function watermarked(inner: string, p: Protection, extraClass = ''): string {
  return p.watermark ? protectedBox(inner, p, extraClass) : inner
}

/** Wraps content so the watermark (if any) covers it. */
export function protectedBox(inner: string, p: Protection, extraClass = ''): string {
  return `<div class="protected${extraClass ? ` ${extraClass}` : ''}">${inner}${watermarkOverlay(p)}</div>`
}

export const SCREENSHOT_CSS = `
body.sp{-webkit-user-select:none;user-select:none;-webkit-touch-callout:none}
body.sp img,body.sp video,body.sp svg{-webkit-user-drag:none;user-drag:none}
body.sp .protected img{pointer-events:none}
body.sp.concealed main{visibility:hidden}
body.sp.concealed .shield{display:flex}
.shield{position:fixed;inset:0;align-items:center;justify-content:center;text-align:center;padding:2rem;background:var(--bg);color:var(--text);font-weight:600;z-index:10}
@media print{body.sp main,body.sp footer{display:none!important}body.sp .shield{display:flex!important;position:static}}
`

/** Runs only on pages with isScreenshotProtected; its hash goes into the page's CSP. */
export const SCREENSHOT_SCRIPT = `(function(){
var b=document.body;var timer=0;
function hide(){b.classList.add('concealed')}
function show(){clearTimeout(timer);if(!document.hidden)b.classList.remove('concealed')}
function stop(e){e.preventDefault()}
['contextmenu','dragstart','selectstart','copy','cut'].forEach(function(t){document.addEventListener(t,stop)});
window.addEventListener('blur',hide);window.addEventListener('focus',show);
document.addEventListener('visibilitychange',function(){document.hidden?hide():show()});
window.addEventListener('beforeprint',hide);window.addEventListener('afterprint',show);
function capture(e){var k=e.key||'';var mod=e.ctrlKey||e.metaKey;
if(k==='PrintScreen'||(mod&&e.shiftKey&&/^[345sS]$/.test(k))||(mod&&/^[pPsS]$/.test(k))){e.preventDefault();hide();
try{navigator.clipboard&&navigator.clipboard.writeText('')}catch(x){}timer=setTimeout(show,1500)}}
document.addEventListener('keydown',capture);document.addEventListener('keyup',function(e){if(e.key==='PrintScreen')capture(e)});
})();`

export const SHIELD_HTML = '<div class="shield" role="status">This content is hidden while the page is not in view.</div>'
