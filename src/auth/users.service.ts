/**
 * Users through the API (admins only). Deleting is soft: the id stays taken (links and
 * files keep naming their owner) and the user's keys are revoked. Disabling keeps the
 * keys but makes them answer 401 until the user is enabled again.
 *
 * Lock-out rules: `usr_admin` (the operator's user, which the config's adminKey and the
 * first printed key act as) and the caller's own user cannot be disabled, deleted or
 * lose the admin role through the API (422); another admin or the CLI can change the latter.
 */
import { AppError, forbidden, pageWindow, parameterError, toIso } from '../shared'
import { PASSWORD_MAX, PASSWORD_MIN } from './auth.schema'
import { ADMIN_USER_ID, type AuthService, type Caller, normalizeUserId } from './auth.service'
import type { AuthStorePort, Role, UserRow } from './auth.store'

export interface UserRecord {
  id: string
  role: Role
  createdAt: string
  disabled: boolean
  hasPassword: boolean
}

/** argon2id, Bun's built-in. The length is bounded so hashing cost stays bounded (the CLI reaches here without the route schema). */
export function hashPassword(password: string): Promise<string> {
  if (password.length < PASSWORD_MIN || password.length > PASSWORD_MAX) throw parameterError(`'password' length must be ${PASSWORD_MIN}-${PASSWORD_MAX}`)
  return Bun.password.hash(password, { algorithm: 'argon2id' })
}

const toRecord = (u: UserRow): UserRecord => ({
  id: u.id,
  role: u.role,
  createdAt: toIso(u.createdAt)!,
  disabled: u.disabled === 1,
  hasPassword: u.hasPassword === 1,
})

/** What a password change does to the user's dashboard sessions (the session service). */
export interface PasswordSessions {
  endPasswordSessions(userId: string, keep: string | null): Promise<void>
}

export function createUserService(store: AuthStorePort, auth: AuthService<AuthStorePort>, sessions: PasswordSessions) {
  function assertAdmin(caller: Caller) {
    if (caller.role !== 'admin') throw forbidden('only admin keys manage users')
  }

  async function getLive(id: string): Promise<UserRow> {
    const userId = normalizeUserId(id)
    const user = await store.getUser(userId)
    if (!user) throw new AppError('not_found', `user ${userId} not found`)
    if (user.deletedAt !== null) throw new AppError('record_gone', `user ${userId} was deleted`)
    return user
  }

  function assertNotLockingOut(caller: Caller, user: UserRow, what: string) {
    if (user.id === ADMIN_USER_ID) throw parameterError(`${what}: ${ADMIN_USER_ID} is the operator's user and cannot be disabled, deleted or demoted`)
    if (user.id === caller.userId) throw parameterError(`${what}: you cannot disable, delete or demote your own user (ask another admin)`)
  }

  return {
    async list(caller: Caller, q: { page?: number; pageSize?: number }) {
      assertAdmin(caller)
      const { limit, offset } = pageWindow(q.page, q.pageSize)
      const { users, total } = await store.listUsers({ limit, offset })
      return { users: users.map(toRecord), total }
    },

    async get(caller: Caller, id: string): Promise<UserRecord> {
      assertAdmin(caller)
      return toRecord(await getLive(id))
    },

    async create(caller: Caller, input: { id: string; password?: string; role?: Role }): Promise<UserRecord> {
      assertAdmin(caller)
      const userId = normalizeUserId(input.id)
      const existing = await store.getUser(userId)
      if (existing) throw parameterError(`'id' user ${userId} ${existing.deletedAt === null ? 'already exists' : 'was deleted; user ids are never reused'}`)
      const passwordHash = input.password === undefined ? undefined : await hashPassword(input.password)
      // Checked again after hashing (an await): a concurrent request may have taken the id.
      if (!(await store.addUser(userId, input.role ?? 'member'))) throw parameterError(`'id' user ${userId} already exists`)
      if (passwordHash) await store.updateUser(userId, { passwordHash })
      return toRecord((await store.getUser(userId))!)
    },

    async update(caller: Caller, id: string, input: { password?: string | null; role?: Role; disabled?: boolean }): Promise<UserRecord> {
      assertAdmin(caller)
      const user = await getLive(id)
      if (input.disabled === true || (input.role !== undefined && input.role !== 'admin' && user.role === 'admin'))
        assertNotLockingOut(caller, user, input.disabled === true ? "'disabled'" : "'role'")
      const passwordHash = typeof input.password === 'string' ? await hashPassword(input.password) : input.password
      await getLive(id) // hashing awaited: the user may have been deleted meanwhile
      await store.updateUser(user.id, { role: input.role, disabled: input.disabled, passwordHash })
      // A new or removed password signs out the user's other password sessions (the caller's own stays).
      if (input.password !== undefined) await sessions.endPasswordSessions(user.id, caller.sessionId ?? null)
      await auth.invalidate()
      return toRecord((await store.getUser(user.id))!)
    },

    async remove(caller: Caller, id: string): Promise<{ id: string }> {
      assertAdmin(caller)
      const user = await getLive(id)
      assertNotLockingOut(caller, user, 'delete')
      await store.deleteUser(user.id, Date.now())
      await auth.invalidate()
      return { id: user.id }
    },
  }
}
export type UserService = ReturnType<typeof createUserService>
