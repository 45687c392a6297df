/**
 * Escaping and the page shell shared by every landing page. Everything a user supplied
 * goes through `esc` (text and attributes alike); URLs placed in href/src additionally
 * go through `safeUrl`, so a `javascript:` URL can never become a link.
 */

const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;', '`': '&#96;' }

/** HTML-escapes text for element content and quoted attribute values. */
export function esc(value: unknown): string {
  return String(value ?? '').replace(/[&<>"'`]/g, (c) => ESCAPES[c]!)
}

/**
 * A URL fit for href/src: an http(s) absolute URL (re-serialised), or a same-origin path
 * such as `fileUrl` may answer (kept as given). Anything else (javascript:, data:,
 * protocol-relative, …) yields null.
 */
export function safeUrl(raw: unknown): string | null {
  if (typeof raw !== 'string' || !raw.trim()) return null
  if (/^\/(?![/\\])/.test(raw)) return raw
  try {
    const u = new URL(raw)
    if (u.protocol !== 'http:' && u.protocol !== 'https:') return null
    return u.href
  } catch {
    return null
  }
}

/** An absolute http(s) URL (paths resolved against `base`), for previews that need one. */
export function absoluteUrl(raw: unknown, base: string): string | null {
  const safe = safeUrl(raw)
  if (!safe) return null
  try {
    return new URL(safe, base).href
  } catch {
    return null
  }
}

/** Human file size: 1.4 MB, 820 KB, 12 bytes. */
export function formatBytes(n: number): string {
  if (n < 1024) return `${n} bytes`
  const units = ['KB', 'MB', 'GB']
  let v = n / 1024
  let i = 0
  while (v >= 1024 && i < units.length - 1) {
    v /= 1024
    i++
  }
  return `${v >= 10 ? Math.round(v) : v.toFixed(1)} ${units[i]}`
}

/** Mobile-first base styles; system fonts only (no external requests). Text/background pairs meet WCAG AA. */
export const BASE_CSS = `
*,*::before,*::after{box-sizing:border-box}
:root{--bg:#f4f6fb;--card:#fff;--text:#111827;--muted:#4b5563;--line:#d9dee8;--accent:#1d4ed8;--accent-text:#fff;--accent-soft:#e8eefc;color-scheme:light}
@media (prefers-color-scheme:dark){:root{--bg:#0f172a;--card:#1e293b;--text:#f1f5f9;--muted:#cbd5e1;--line:#334155;--accent:#93c5fd;--accent-text:#0f172a;--accent-soft:#1e3a5f;color-scheme:dark}}
html{-webkit-text-size-adjust:100%}
body{margin:0;background:var(--bg);color:var(--text);font:16px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,"Helvetica Neue",Arial,sans-serif;min-height:100vh;display:flex;flex-direction:column}
main{width:100%;max-width:42rem;margin:0 auto;padding:1rem;flex:1}
.card{background:var(--card);border:1px solid var(--line);border-radius:16px;padding:1.25rem;box-shadow:0 1px 3px rgba(0,0,0,.06)}
.card+.card{margin-top:1rem}
h1{font-size:1.5rem;line-height:1.25;margin:0 0 .75rem;overflow-wrap:anywhere}
h2{font-size:1.15rem;margin:1.25rem 0 .5rem;overflow-wrap:anywhere}
p{margin:.5rem 0}
.muted{color:var(--muted)}
a{color:var(--accent)}
.btn{display:inline-flex;align-items:center;justify-content:center;gap:.5rem;min-height:44px;padding:.6rem 1.1rem;border-radius:10px;border:2px solid var(--accent);background:var(--accent);color:var(--accent-text);font:inherit;font-weight:600;text-decoration:none;cursor:pointer}
.btn.secondary{background:transparent;color:var(--accent)}
.btn:focus-visible,a:focus-visible,input:focus-visible,button:focus-visible,video:focus-visible,audio:focus-visible{outline:3px solid #f59e0b;outline-offset:2px}
.actions{display:flex;flex-wrap:wrap;gap:.75rem;margin-top:1rem}
.actions .btn{flex:1 1 12rem}
.media{display:block;width:100%;max-width:100%;height:auto;border-radius:12px;background:#000}
img.media{background:transparent}
.frame{display:block;width:100%;height:70vh;min-height:320px;border:1px solid var(--line);border-radius:12px;background:#fff}
.protected{position:relative;overflow:hidden;border-radius:12px}
.wm{position:absolute;inset:0;overflow:hidden;pointer-events:none;z-index:2}
.wm-tiles{position:absolute;top:-50%;left:-50%;width:200%;height:200%;display:flex;flex-wrap:wrap;align-content:flex-start;gap:2.25rem 2.75rem;padding:1rem;transform:rotate(-28deg)}
.wm-tiles span{font:700 1rem/1 system-ui,sans-serif;color:rgba(255,255,255,.55);text-shadow:0 0 2px rgba(0,0,0,.75),0 0 1px rgba(0,0,0,.9);white-space:nowrap;user-select:none;-webkit-user-select:none}
.shield{display:none}
footer{text-align:center;font-size:.85rem;color:var(--muted);padding:1rem}
@media (min-width:40rem){main{padding:2rem 1rem}h1{font-size:1.8rem}}
@media (prefers-reduced-motion:reduce){*{transition:none!important;animation:none!important}}
`
