/**
 * The small pages the redirect server answers with itself: link not found, link
 * expired, the password form and the social-preview page for link-preview bots.
 * Embedded CSS, no external requests, everything user-supplied escaped.
 */
import notFoundHtml from '../../web/pages/not-found.html' with { type: 'text' }
import { esc } from './html'

// Imported as text; Bun's types describe .html imports as HTML bundles.
export const NOT_FOUND_PAGE = notFoundHtml as unknown as string

const STYLE = `body{font:16px/1.5 system-ui,-apple-system,sans-serif;display:grid;place-items:center;min-height:90vh;margin:0;color:#1f2328;background:#f6f8fa}
main{box-sizing:border-box;background:#fff;border:1px solid #d0d7de;border-radius:12px;padding:1.5rem;max-width:24rem;width:calc(100% - 2rem)}
h1{font-size:1.25rem;margin:0 0 .75rem}label{display:block;font-weight:600;margin-bottom:.25rem}
input{box-sizing:border-box;width:100%;font:inherit;padding:.6rem;border:1px solid #8c959f;border-radius:8px}
button{margin-top:.75rem;width:100%;font:inherit;font-weight:600;padding:.6rem;border:0;border-radius:8px;background:#1f6feb;color:#fff;cursor:pointer}
.error{color:#b42318;margin:.5rem 0 0}`

/**
 * What these pages may load: their own inline CSS, nothing else; the password form posts to
 * its own origin. Framing is forbidden by the header every redirect-server page gets (a meta
 * CSP cannot do that; src/shared/security-headers.ts).
 */
const CSP = "default-src 'none'; style-src 'unsafe-inline'; base-uri 'none'; form-action 'self'"

function page(title: string, body: string): string {
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta http-equiv="Content-Security-Policy" content="${esc(CSP)}">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex"><title>${esc(title)}</title><style>${STYLE}</style></head><body><main>${body}</main></body></html>`
}

export const EXPIRED_PAGE = page('Link expired', '<h1>This link has expired</h1><p>The link you followed is no longer active.</p>')

export function passwordPage(opts: { action: string; error?: string }): string {
  return page(
    'Password required',
    `<h1>This link is protected</h1>
<form method="post" action="${esc(opts.action)}">
<label for="password">Password</label>
<input id="password" name="password" type="password" autocomplete="current-password" required autofocus aria-describedby="${opts.error ? 'err' : ''}">
${opts.error ? `<p class="error" id="err" role="alert">${esc(opts.error)}</p>` : ''}
<button type="submit">Continue</button></form>`,
  )
}

export const TOO_MANY_ATTEMPTS_PAGE = page('Too many attempts', '<h1>Too many attempts</h1><p>Wait a few minutes, then try again.</p>')

export function previewPage(p: { title: string; description: string; image: string | null; url: string; siteName: string }): string {
  const t = esc(p.title)
  const d = esc(p.description)
  const img = p.image ? esc(p.image) : ''
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta http-equiv="Content-Security-Policy" content="${esc(CSP)}"><title>${t}</title>
<meta property="og:type" content="website"><meta property="og:title" content="${t}"><meta property="og:description" content="${d}">
<meta property="og:url" content="${esc(p.url)}"><meta property="og:site_name" content="${esc(p.siteName)}">
${img ? `<meta property="og:image" content="${img}">` : ''}
<meta name="twitter:card" content="${img ? 'summary_large_image' : 'summary'}"><meta name="twitter:title" content="${t}">
<meta name="twitter:description" content="${d}">${img ? `<meta name="twitter:image" content="${img}">` : ''}
<meta name="description" content="${d}"></head><body><h1>${t}</h1><p>${d}</p></body></html>`
}
