/** Users and API keys as the API answers them (src/auth/auth.schema.ts), and how to say them. */
import type { Role } from '../../session'

export interface UserRecord {
  id: string
  role: Role
  createdAt: string
  disabled: boolean
  hasPassword: boolean
}

export interface KeyRecord {
  id: string
  userId: string
  role: Role
  name: string | null
  createdAt: string
  lastUsedAt: string | null
  prefix: string
  revokedAt: string | null
}

export interface CreatedKey {
  id: string
  key: string
  userId: string
  role: Role
  name: string | null
  createdAt: string
}

export const ROLES: Role[] = ['admin', 'member', 'readonly']

export const ROLE_WORDS: Record<Role, { name: string; can: string }> = {
  admin: { name: 'Admin', can: 'everything, including every user’s links, domains, users and keys' },
  member: { name: 'Member', can: 'their own links, tags and files; uses the shared domains and templates' },
  readonly: { name: 'Read-only', can: 'looks at links and statistics, changes nothing' },
}

export const PASSWORD_MIN = 8

/** `usr_alice` → `alice`, the way people type it. */
export const shortUserId = (id: string) => id.replace(/^usr_/, '')

export function when(iso: string | null, never = 'Never'): string {
  if (!iso) return never
  return new Date(iso).toLocaleString(undefined, { dateStyle: 'medium', timeStyle: 'short' })
}
