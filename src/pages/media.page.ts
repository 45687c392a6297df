/**
 * File-backed links (document, image, svg, audio, video, file): the content shown in
 * the page, from an upload (`fileUrl`) or a URL. An upload's real type decides how it
 * is shown (a "document" link pointing at an image shows the image).
 */
import { esc, formatBytes } from './html'
import { renderPage } from './layout'
import type { LandingLink, PageContext } from './pages.types'
import { type ContentKind, type ContentSource, h1, ICONS, kindOfMime, sourceOf, titleOf, unavailablePage } from './parts'
import { type Protection, protectedBox, protectionOf, watermarked } from './protection'

const MEDIA_CSS = `.content{margin-top:.5rem}
audio{width:100%;margin-top:.5rem}
.filecard{display:flex;gap:1rem;align-items:center}
.filecard .icon{flex:none;display:grid;place-items:center;width:3.5rem;height:3.5rem;border-radius:12px;background:var(--accent-soft);color:var(--accent)}
.filecard .icon svg{width:1.75rem;height:1.75rem}
.filecard .meta{min-width:0}.filecard .name{font-weight:600;overflow-wrap:anywhere;margin:0}
.svgbox{background:repeating-conic-gradient(#e5e7eb 0 25%,#fff 0 50%) 50%/20px 20px}`

/** The content element for a kind, under the watermark (when the link has one) whatever the kind. */
export function contentView(kind: ContentKind, src: ContentSource, title: string, p: Protection, boxClass = ''): string {
  const url = src.url!
  const noDownload = p.screenshot ? ' controlslist="nodownload noremoteplayback" disablepictureinpicture' : ''
  switch (kind) {
    case 'image':
      return protectedBox(`<img class="media" src="${esc(url)}" alt="${esc(title)}" decoding="async">`, p, boxClass)
    case 'pdf': {
      const frameSrc = p.screenshot && !url.includes('#') ? `${url}#toolbar=0&navpanes=0` : url
      return protectedBox(`<iframe class="frame" src="${esc(frameSrc)}" title="${esc(title)}" loading="lazy"></iframe>`, p)
    }
    case 'audio':
      return watermarked(`<audio controls preload="metadata" src="${esc(url)}"${noDownload}>Your browser cannot play this audio.</audio>`, p)
    case 'video':
      return protectedBox(
        `<video class="media" controls playsinline preload="metadata" src="${esc(url)}" aria-label="${esc(title)}"${noDownload}>Your browser cannot play this video.</video>`,
        p,
      )
    default:
      return watermarked(fileCard(src, title), p)
  }
}

function fileCard(src: ContentSource, title: string): string {
  const facts = src.file ? `<p class="muted">${esc(describeType(src.file.mimeType))} · ${esc(formatBytes(src.file.size))}</p>` : ''
  return `<div class="filecard"><span class="icon">${ICONS.file}</span><div class="meta"><p class="name">${esc(src.file?.name ?? title)}</p>${facts}</div></div>`
}

function describeType(mime: string): string {
  const names: Record<string, string> = {
    'application/pdf': 'PDF document',
    'image/svg+xml': 'SVG image',
    'audio/mpeg': 'MP3 audio',
    'audio/mp4': 'M4A audio',
    'video/mp4': 'MP4 video',
    'video/webm': 'WebM video',
  }
  return names[mime] ?? `${mime.split('/')[1]?.toUpperCase() ?? 'File'} ${mime.split('/')[0] === 'application' ? 'file' : mime.split('/')[0]}`
}

/** Open and download buttons; screenshot protection drops them (the download is the point of a `file` link, so it stays there). */
function actions(src: ContentSource, kind: ContentKind, p: Protection, isFileLink: boolean): string {
  if (!src.url || (p.screenshot && !isFileLink)) return ''
  const name = src.file?.name
  const size = src.file ? ` <span class="size">(${esc(formatBytes(src.file.size))})</span>` : ''
  const download = `<a class="btn" href="${esc(src.url)}" download${name ? `="${esc(name)}"` : ''} rel="noopener">${ICONS.download}Download${size}</a>`
  if (isFileLink || kind === 'other') return `<div class="actions">${download}</div>`
  const open = `<a class="btn secondary" href="${esc(src.url)}" target="_blank" rel="noopener">${ICONS.open}${kind === 'pdf' ? 'Open in full screen' : 'Open original'}</a>`
  // A PDF in a frame does not show on most phones: always offer to open it.
  const buttons = kind === 'pdf' ? [open, src.file ? download : ''] : [src.file ? download : open]
  return `<div class="actions">${buttons.join('')}</div>`
}

const DEFAULT_TITLES: Record<string, string> = { document: 'Document', image: 'Image', svg: 'Image', audio: 'Audio', video: 'Video', file: 'File' }
const KIND_BY_TYPE: Record<string, ContentKind> = { document: 'pdf', image: 'image', svg: 'image', audio: 'audio', video: 'video', file: 'other' }

/** Renders document, image, svg, audio, video and file links. */
export function renderMediaPage(link: LandingLink, ctx: PageContext): string {
  const protection = protectionOf(link.option, link.domain)
  const src = sourceOf(link, ctx)
  if (src.missing || !src.url) return unavailablePage(link, protection)
  const isFileLink = link.linkType === 'file'
  const kind = isFileLink ? 'other' : (kindOfMime(src.file?.mimeType) ?? KIND_BY_TYPE[link.linkType] ?? 'other')
  const title = titleOf(link, src.file?.name ?? DEFAULT_TITLES[link.linkType] ?? 'File')
  const view = contentView(kind, src, title, protection, link.linkType === 'svg' ? 'svgbox' : '')
  const fileNote = src.file && kind !== 'other' ? `<p class="muted">${esc(src.file.name)} · ${esc(formatBytes(src.file.size))}</p>` : ''
  return renderPage({
    link,
    title,
    description: isFileLink ? `Download ${src.file?.name ?? title}` : undefined,
    image: kind === 'image' ? src.url : null,
    protection,
    css: MEDIA_CSS,
    body: `<article class="card">${h1(title)}<div class="content">${view}</div>${fileNote}${actions(src, kind, protection, isFileLink)}</article>`,
  })
}

export const renderDocumentPage = renderMediaPage
export const renderImagePage = renderMediaPage
export const renderSvgPage = renderMediaPage
export const renderAudioPage = renderMediaPage
export const renderVideoPage = renderMediaPage
export const renderFilePage = renderMediaPage
