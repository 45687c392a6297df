/**
 * The live preview beside the form: the short link, where visitors go, and the social
 * card as chat apps draw it. Drawn locally; an image from another origin is not loaded
 * (the dashboard makes no outside requests), its host is named instead.
 */
import { type LinkType, TYPE_INFO } from './types'

export function LivePreview({
  type,
  shortLink,
  host: cardHost,
  destination,
  title,
  desc,
  image,
}: {
  type: LinkType
  shortLink: string
  /** The short link's host, as cards print it. */
  host: string
  destination: string
  title: string
  desc: string
  image: string
}) {
  const info = TYPE_INFO[type]
  let host = ''
  let sameOrigin = false
  try {
    const u = new URL(image, location.href)
    host = u.host
    sameOrigin = u.origin === location.origin && /^https?:/.test(image)
  } catch {
    host = ''
  }
  return (
    <aside class="le-preview" aria-label="Live preview">
      <div class="card le-preview-link">
        <p class="label">Short link</p>
        <p class="mono le-preview-short">{shortLink}</p>
        <p class="label">Visitors get</p>
        <p class="le-preview-dest">{destination}</p>
      </div>
      <figure class="le-card" aria-label="Social preview card">
        <div class="le-card-image">
          {image && sameOrigin ? <img src={image} alt="" /> : <span>{image ? `Image from ${host || 'the URL you entered'}` : 'No preview image'}</span>}
        </div>
        <div class="le-card-text">
          <p class="le-card-host">{cardHost}</p>
          <p class="le-card-title">{title || `${info.label} link`}</p>
          {desc ? <p class="le-card-desc">{desc}</p> : <p class="le-card-desc muted">Add a title and description under Options › Social preview.</p>}
        </div>
      </figure>
    </aside>
  )
}
