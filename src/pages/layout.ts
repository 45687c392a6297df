/**
 * The document every landing page shares: head with social-preview tags, a
 * Content-Security-Policy that allows only the page's own inline CSS and the hashed
 * inline scripts (no external code, fonts or styles), then the page body.
 */
import { createHash } from 'node:crypto'
import { absoluteUrl, BASE_CSS, esc, safeUrl } from './html'
import type { LandingLink } from './pages.types'
import { type Protection, SCREENSHOT_CSS, SCREENSHOT_SCRIPT, SHIELD_HTML } from './protection'

export interface PageParts {
  link: LandingLink
  /** The page's own title (the h1 and <title>). */
  title: string
  /** Description for previews when previewData has none. */
  description?: string
  /** Preview image when previewData has none (e.g. the image itself). */
  image?: string | null
  body: string
  css?: string
  protection: Protection
  /** Inline scripts the page needs besides protection; each is allowed by its hash. */
  scripts?: string[]
}

const hashOf = (script: string) => `'sha256-${createHash('sha256').update(script).digest('base64')}'`
const hashCache = new Map<string, string>()
const cspHash = (script: string) => {
  let h = hashCache.get(script)
  if (!h) {
    h = hashOf(script)
    hashCache.set(script, h)
  }
  return h
}

export function renderPage(p: PageParts): string {
  const { link, protection } = p
  const preview = link.previewData ?? {}
  const ogTitle = preview.title || p.title
  const ogDesc = preview.desc || p.description || link.destination || link.shortLink
  const ogImage = safeUrl(preview.image) ?? (p.image ? absoluteUrl(p.image, link.shortLink) : null)
  const scripts = [...(p.scripts ?? []), ...(protection.screenshot ? [SCREENSHOT_SCRIPT] : [])]
  const csp = [
    "default-src 'none'",
    "style-src 'unsafe-inline'",
    `script-src ${scripts.length ? scripts.map(cspHash).join(' ') : "'none'"}`,
    "img-src 'self' https: http: data: blob:",
    "media-src 'self' https: http: blob:",
    "frame-src 'self' https: http:",
    "object-src 'self' https: http:",
    "base-uri 'none'",
    "form-action 'none'",
  ].join('; ')
  const meta = [
    ['og:type', 'website'],
    ['og:title', ogTitle],
    ['og:description', ogDesc],
    ['og:url', link.shortLink],
    ['og:site_name', link.domain],
    ...(ogImage ? [['og:image', ogImage]] : []),
  ]
    .map(([k, v]) => `<meta property="${k}" content="${esc(v)}">`)
    .concat(
      [
        ['twitter:card', ogImage ? 'summary_large_image' : 'summary'],
        ['twitter:title', ogTitle],
        ['twitter:description', ogDesc],
        ...(ogImage ? [['twitter:image', ogImage]] : []),
      ].map(([k, v]) => `<meta name="${k}" content="${esc(v)}">`),
    )
    .join('\n')
  const bodyClass = protection.screenshot ? ' class="sp"' : ''
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="${esc(csp)}">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="strict-origin-when-cross-origin">
<title>${esc(p.title)}</title>
<meta name="description" content="${esc(ogDesc)}">
${meta}
<link rel="canonical" href="${esc(link.shortLink)}">
<style>${BASE_CSS}${protection.screenshot ? SCREENSHOT_CSS : ''}${p.css ?? ''}</style>
</head>
<body${bodyClass}>
<main id="content">
${p.body}
</main>
<footer>${esc(link.domain)}</footer>
${protection.screenshot ? SHIELD_HTML : ''}
${scripts.map((s) => `<script>${s}</script>`).join('\n')}
</body>
</html>
`
}
