/** A small History API router under /app/: paths, query strings and links that keep the browser's back button. */
import type { AnchorHTMLAttributes, ComponentChildren } from 'preact'
import { useEffect, useState } from 'preact/hooks'

export const BASE = '/app'

const listeners = new Set<() => void>()
const notify = () => {
  for (const l of listeners) l()
}
addEventListener('popstate', notify)

/** Path inside the app, e.g. `/links/lnk_1` for `/app/links/lnk_1`. */
export function currentPath(): string {
  const p = location.pathname.startsWith(BASE) ? location.pathname.slice(BASE.length) : location.pathname
  return p === '' || p === '/' ? '/' : p.replace(/\/+$/, '')
}

export function navigate(to: string, { replace = false } = {}) {
  const url = to.startsWith(BASE) ? to : BASE + to
  if (url === location.pathname + location.search) return
  history[replace ? 'replaceState' : 'pushState'](null, '', url)
  window.scrollTo(0, 0)
  notify()
}

/** Re-renders the caller when the location changes. */
export function useLocation(): { path: string; query: URLSearchParams } {
  const [, setTick] = useState(0)
  useEffect(() => {
    const l = () => setTick((t) => t + 1)
    listeners.add(l)
    return () => {
      listeners.delete(l)
    }
  }, [])
  return { path: currentPath(), query: new URLSearchParams(location.search) }
}

/** Writes filters into the query string (replacing the entry, so typing does not fill the history). */
export function setQuery(values: Record<string, string | string[] | null | undefined>) {
  const q = new URLSearchParams(location.search)
  for (const [k, v] of Object.entries(values)) {
    q.delete(k)
    if (Array.isArray(v)) for (const item of v) q.append(k, item)
    else if (v !== null && v !== undefined && v !== '') q.set(k, v)
  }
  const s = q.toString()
  history.replaceState(null, '', `${location.pathname}${s ? `?${s}` : ''}`)
  notify()
}

/** `/links/:id` against `/links/lnk_1` → `{ id: 'lnk_1' }`, or null. */
export function match(pattern: string, path: string): Record<string, string> | null {
  const p = pattern.split('/')
  const a = path.split('/')
  if (p.length !== a.length) return null
  const params: Record<string, string> = {}
  for (let i = 0; i < p.length; i++) {
    if (p[i]!.startsWith(':')) params[p[i]!.slice(1)] = decodeURIComponent(a[i]!)
    else if (p[i] !== a[i]) return null
  }
  return params
}

/** An anchor that navigates inside the app without a page load (and still opens in a new tab). */
export function Link({ href, children, ...rest }: { href: string; children: ComponentChildren } & AnchorHTMLAttributes<HTMLAnchorElement>) {
  const url = href.startsWith(BASE) ? href : BASE + href
  return (
    <a
      {...rest}
      href={url}
      onClick={(e) => {
        if (e.defaultPrevented || e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey || e.altKey) return
        e.preventDefault()
        navigate(url)
      }}
    >
      {children}
    </a>
  )
}
