/** The shell: the session (or the sign-in screen), navigation, and the screen the path names. */
import type { ComponentType } from 'preact'
import { useEffect, useState } from 'preact/hooks'
import { ApiError, api, onSignedOut, setCsrfToken } from './api'
import { Link, match, navigate, useLocation } from './router'
import { NAV, ROUTES, type ScreenProps } from './routes'
import { SignInScreen } from './screens/sign-in'
import { type Session, SessionContext, useSession, useSignOut } from './session'
import { ErrorBox, Loading, Toasts } from './ui'

export function App() {
  const [session, setSession] = useState<Session | null | undefined>(undefined)
  const [error, setError] = useState<unknown>(null)

  const load = () => {
    setError(null)
    // 204 (no body) when signed out: the page asks without an error.
    api<Session | null>('GET', '/session').then(
      ({ data }) => accept(data),
      (e) => (e instanceof ApiError && e.status === 401 ? accept(null) : setError(e)),
    )
  }
  const accept = (s: Session | null) => {
    setCsrfToken(s?.csrfToken ?? null)
    setSession(s)
  }
  useEffect(load, [])
  useEffect(() => onSignedOut(() => accept(null)), [])

  const signOut = () => {
    api('DELETE', '/session').finally(() => {
      accept(null)
      navigate('/', { replace: true })
    })
  }

  if (error) return <ErrorBox error={error} retry={load} />
  if (session === undefined) return <Loading />
  if (session === null)
    return (
      <>
        <SignInScreen onSignedIn={accept} />
        <Toasts />
      </>
    )
  return (
    <SessionContext.Provider value={{ session, signOut }}>
      <Shell />
      <Toasts />
    </SessionContext.Provider>
  )
}

function Shell() {
  const { path, query } = useLocation()
  const [menuOpen, setMenuOpen] = useState(false)
  useEffect(() => {
    if (path === '/') navigate('/links', { replace: true })
    setMenuOpen(false)
  }, [path])
  const found = ROUTES.map((r) => ({ r, params: match(r.pattern, path) })).find((x) => x.params)
  return (
    <div class="shell">
      <a class="skip" href="#main">
        Skip to content
      </a>
      <header class="topbar">
        <Link href="/links" class="brand">
          shortlink
        </Link>
        <button type="button" class="btn btn-ghost menu-toggle" aria-expanded={menuOpen} aria-controls="nav" onClick={() => setMenuOpen(!menuOpen)}>
          Menu
        </button>
      </header>
      <Nav open={menuOpen} path={path} />
      <main id="main" class="main" tabIndex={-1}>
        {found ? <LazyScreen key={found.r.pattern} load={found.r.load} params={found.params!} query={query} /> : <NotFound />}
      </main>
    </div>
  )
}

function Nav({ open, path }: { open: boolean; path: string }) {
  return (
    <nav id="nav" class={`nav${open ? ' nav-open' : ''}`} aria-label="Main">
      <ul>
        {NAV.map((n) => (
          <li key={n.href}>
            <Link href={n.href} aria-current={path === n.href || path.startsWith(`${n.href}/`) ? 'page' : undefined}>
              {n.label}
            </Link>
          </li>
        ))}
      </ul>
      <SignOutButton />
    </nav>
  )
}

function SignOutButton() {
  const session = useSession()
  const signOut = useSignOut()
  return (
    <div class="nav-user">
      <span>
        {session.userId} <span class="badge">{session.role}</span>
      </span>
      <button type="button" class="btn btn-ghost" onClick={signOut}>
        Sign out
      </button>
    </div>
  )
}

function LazyScreen({ load, params, query }: { load: () => Promise<ComponentType<ScreenProps>>; params: Record<string, string>; query: URLSearchParams }) {
  const [screen, setScreen] = useState<{ C: ComponentType<ScreenProps> } | null>(null)
  const [error, setError] = useState<unknown>(null)
  useEffect(() => {
    load().then((C) => setScreen({ C }), setError)
  }, [load])
  if (error) return <ErrorBox error={error} retry={() => location.reload()} />
  if (!screen) return <Loading />
  return <screen.C params={params} query={query} />
}

function NotFound() {
  return (
    <section class="page">
      <h1>Not found</h1>
      <p>
        There is no such page. <Link href="/links">Back to links</Link>
      </p>
    </section>
  )
}
