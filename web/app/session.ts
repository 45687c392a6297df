/** Who is signed in, as the server's session says (GET /session); the cookie itself is HttpOnly. */
import { createContext } from 'preact'
import { useContext } from 'preact/hooks'

export type Role = 'admin' | 'member' | 'readonly'
export interface Session {
  userId: string
  role: Role
  /** How the session was opened: a user's password or an API key. */
  method: 'password' | 'apiKey'
  csrfToken: string
  expiresAt: string
}

export const SessionContext = createContext<{ session: Session; signOut: () => void } | null>(null)

export function useSession(): Session {
  const ctx = useContext(SessionContext)
  if (!ctx) throw new Error('useSession outside the signed-in app')
  return ctx.session
}
export function useSignOut(): () => void {
  return useContext(SessionContext)!.signOut
}
export const canWrite = (s: Session) => s.role !== 'readonly'
export const isAdmin = (s: Session) => s.role === 'admin'
