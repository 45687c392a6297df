/** Pieces several landing pages share: where file-backed content comes from, copy buttons, icons. */
import { esc, safeUrl } from './html'
import { renderPage } from './layout'
import type { FileInfo, LandingLink, PageContext } from './pages.types'
import type { Protection } from './protection'

export type ContentKind = 'image' | 'pdf' | 'audio' | 'video' | 'other'

export interface ContentSource {
  /** Safe src/href for the content; null when the link has none usable. */
  url: string | null
  /** The uploaded file's details, when the content is an upload. */
  file: FileInfo | null
  /** An upload that no longer exists. */
  missing: boolean
}

/** The content of a file-backed link: its upload (via `fileUrl`) or its URL. */
export function sourceOf(link: LandingLink, ctx: PageContext): ContentSource {
  const d = link.data ?? {}
  if (typeof d.fileId === 'string' && d.fileId) {
    const file = ctx.file ? ctx.file(d.fileId) : null
    if (ctx.file && !file) return { url: null, file: null, missing: true }
    return { url: safeUrl(ctx.fileUrl(d.fileId)), file, missing: false }
  }
  return { url: safeUrl(d.url), file: null, missing: false }
}

export function kindOfMime(mime: string | undefined): ContentKind | null {
  if (!mime) return null
  if (mime.startsWith('image/')) return 'image'
  if (mime === 'application/pdf') return 'pdf'
  if (mime.startsWith('audio/')) return 'audio'
  if (mime.startsWith('video/')) return 'video'
  return 'other'
}

/** Copies the value (or text) of the element named by `data-copy` and announces it in the `data-status` element. */
export const COPY_SCRIPT = `(function(){
document.querySelectorAll('[data-copy]').forEach(function(btn){btn.addEventListener('click',function(){
var el=document.getElementById(btn.getAttribute('data-copy'));var st=document.getElementById(btn.getAttribute('data-status'));
var v=el.value!==undefined?el.value:el.textContent;
function done(){if(st){st.textContent='Copied';setTimeout(function(){st.textContent=''},2500)}}
function fallback(){var t=document.createElement('textarea');t.value=v;t.setAttribute('readonly','');t.style.position='fixed';t.style.opacity='0';
document.body.appendChild(t);t.select();var ok=false;try{ok=document.execCommand('copy')}catch(e){}document.body.removeChild(t);
if(ok)done();else if(st)st.textContent='Select the text and copy it'}
if(navigator.clipboard&&window.isSecureContext){navigator.clipboard.writeText(v).then(done,fallback)}else{fallback()}
})})})();`

const svgIcon = (path: string) =>
  `<svg aria-hidden="true" focusable="false" width="20" height="20" viewBox="0 0 24 24" fill="none" stroke="currentColor" stroke-width="2" stroke-linecap="round" stroke-linejoin="round">${path}</svg>`
export const ICONS = {
  download: svgIcon('<path d="M12 3v12"/><path d="m7 10 5 5 5-5"/><path d="M5 21h14"/>'),
  open: svgIcon('<path d="M14 3h7v7"/><path d="M10 14 21 3"/><path d="M21 14v7H3V3h7"/>'),
  copy: svgIcon('<rect x="9" y="9" width="12" height="12" rx="2"/><path d="M5 15V5a2 2 0 0 1 2-2h10"/>'),
  file: svgIcon('<path d="M14 3H6a2 2 0 0 0-2 2v14a2 2 0 0 0 2 2h12a2 2 0 0 0 2-2V9z"/><path d="M14 3v6h6"/>'),
  wifi: svgIcon('<path d="M2 8.8a15 15 0 0 1 20 0"/><path d="M5 12.5a10 10 0 0 1 14 0"/><path d="M8.5 16.1a5 5 0 0 1 7 0"/><path d="M12 20h.01"/>'),
  apple: svgIcon(
    '<path d="M16 3c-1.5.2-3 1.2-3.5 2.7"/><path d="M12 7c-2-1.3-6-1-6.5 3.5C5 15 8 20 10 20c1 0 1.3-.6 2-.6s1 .6 2 .6c2 0 4.5-4 4.5-5.5-1.5-.7-2.5-2-2.5-3.8 0-1.5.9-2.7 2-3.3C16.5 5.5 13.5 6 12 7z"/>',
  ),
  play: svgIcon('<path d="M5 3v18l15-9z"/>'),
  globe: svgIcon('<circle cx="12" cy="12" r="9"/><path d="M3 12h18"/><path d="M12 3a14 14 0 0 1 0 18a14 14 0 0 1 0-18"/>'),
}

/** The page shown when a link's upload was deleted. */
export function unavailablePage(link: LandingLink, protection: Protection): string {
  return renderPage({
    link,
    title: 'Content not available',
    description: 'This content is no longer available.',
    protection,
    body: `<div class="card"><h1>Content not available</h1><p class="muted">The file behind this link was removed by its owner.</p></div>`,
  })
}

/** A heading from the link's title, else the fallback. */
export function titleOf(link: LandingLink, fallback: string): string {
  const t = link.data?.title
  return typeof t === 'string' && t.trim() ? t.trim() : fallback
}

export const h1 = (title: string) => `<h1>${esc(title)}</h1>`
