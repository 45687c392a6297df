/**
 * Password-protected links: a correct password sets a short-lived signed cookie scoped
 * to the link's path; attempts are limited per client IP and link. The signature covers
 * the link id, the expiry and the password hash, so changing the password revokes it.
 */
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto'
import type { Store } from '../store/db'

const COOKIE_TTL_S = 3600
const MAX_ATTEMPTS = 10
const ATTEMPT_WINDOW_MS = 15 * 60_000

export function loadOrCreateSecret(db: Store, name: string): Buffer {
  const row = db.query<{ value: string }, [string]>('SELECT value FROM kv WHERE key = ?').get(name)
  if (row) return Buffer.from(row.value, 'base64')
  const secret = randomBytes(32)
  db.query('INSERT INTO kv (key, value) VALUES (?, ?) ON CONFLICT(key) DO NOTHING').run(name, secret.toString('base64'))
  return Buffer.from(db.query<{ value: string }, [string]>('SELECT value FROM kv WHERE key = ?').get(name)!.value, 'base64')
}

export function createPasswordGate(secret: Buffer, now: () => number = Date.now) {
  const attempts = new Map<string, { count: number; since: number }>()
  const sign = (linkId: string, exp: number, passwordHash: string) =>
    createHmac('sha256', secret).update(`${linkId}|${exp}|${passwordHash}`).digest('base64url')
  const cookieName = (linkSeq: number) => `slpw_${linkSeq}`

  return {
    hasValidCookie(cookieHeader: string | null, link: { seq: number; id: string; passwordHash: string }): boolean {
      if (!cookieHeader) return false
      const name = cookieName(link.seq)
      const raw = cookieHeader.split(';').map((c) => c.trim()).find((c) => c.startsWith(`${name}=`))
      if (!raw) return false
      const [expText, sig] = raw.slice(name.length + 1).split('.')
      const exp = Number(expText)
      if (!sig || !Number.isInteger(exp) || exp * 1000 < now()) return false
      const expected = Buffer.from(sign(link.id, exp, link.passwordHash))
      const given = Buffer.from(sig)
      return given.length === expected.length && timingSafeEqual(given, expected)
    },
    cookieFor(link: { seq: number; id: string; passwordHash: string; key: string }): string {
      const exp = Math.floor(now() / 1000) + COOKIE_TTL_S
      return `${cookieName(link.seq)}=${exp}.${sign(link.id, exp, link.passwordHash)}; Path=/${encodeURIComponent(link.key)}; Max-Age=${COOKIE_TTL_S}; HttpOnly; Secure; SameSite=Lax`
    },
    /** Counts an attempt; false when this IP has used up its attempts on this link. */
    allowAttempt(ip: string, linkSeq: number): boolean {
      const k = `${ip}|${linkSeq}`
      const t = now()
      const a = attempts.get(k)
      if (!a || t - a.since > ATTEMPT_WINDOW_MS) {
        if (attempts.size > 100_000) attempts.clear()
        attempts.set(k, { count: 1, since: t })
        return true
      }
      a.count++
      return a.count <= MAX_ATTEMPTS
    },
  }
}
export type PasswordGate = ReturnType<typeof createPasswordGate>
