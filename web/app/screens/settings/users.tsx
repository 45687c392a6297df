/** Users (admins only): add with a role and an optional password, change role or password, disable, delete. */
import { useState } from 'preact/hooks'
import { del, errorText, patch, post } from '../../api'
import type { Role } from '../../session'
import { Button, Empty, ErrorBox, Field, Loading, Modal, Pager, toast } from '../../ui'
import type { Resource } from '../../ui/resource'
import { PASSWORD_MIN, ROLE_WORDS, ROLES, shortUserId, type UserRecord, when } from './records'

export const USERS_PAGE_SIZE = 100

export function UsersSection({
  me,
  users,
  page,
  onPage,
  onChanged,
}: {
  me: string
  users: Resource<{ data: UserRecord[]; total: number | null }>
  page: number
  onPage: (p: number) => void
  onChanged: () => void
}) {
  const [adding, setAdding] = useState(false)
  const [passwordFor, setPasswordFor] = useState<UserRecord | null>(null)
  const [deleting, setDeleting] = useState<UserRecord | null>(null)
  const [busy, setBusy] = useState<string | null>(null)
  const list = users.data?.data ?? []

  const update = async (u: UserRecord, body: { role?: Role; disabled?: boolean }, done: string) => {
    setBusy(u.id)
    try {
      await patch<UserRecord>(`/users/${encodeURIComponent(u.id)}`, body)
      toast(done)
      onChanged()
    } catch (e) {
      toast(errorText(e), 'error')
    } finally {
      setBusy(null)
    }
  }

  return (
    <section class="card settings-section" aria-labelledby="users-title">
      <header class="settings-section-head">
        <div>
          <h2 id="users-title">Users</h2>
          <p class="hint">People who sign in to the dashboard with a password, and the owners of API keys.</p>
        </div>
        <Button kind="primary" onClick={() => setAdding(true)}>
          Add user
        </Button>
      </header>
      {users.error && !users.data ? (
        <ErrorBox error={users.error} retry={users.reload} />
      ) : !users.data ? (
        <Loading label="Loading users…" />
      ) : list.length === 0 ? (
        <Empty title="No users yet" />
      ) : (
        <div class="table-wrap">
          <table>
            <caption class="visually-hidden">Users</caption>
            <thead>
              <tr>
                <th scope="col">User</th>
                <th scope="col">Role</th>
                <th scope="col">Password</th>
                <th scope="col">Status</th>
                <th scope="col" class="hide-phone">
                  Added
                </th>
                <th scope="col">
                  <span class="visually-hidden">Actions</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {list.map((u) => {
                const name = shortUserId(u.id)
                const self = u.id === me || name === shortUserId(me)
                return (
                  <tr key={u.id} class={u.disabled ? 'settings-disabled' : undefined}>
                    <td>
                      <strong>{name}</strong>
                      {self ? <span class="muted"> (you)</span> : null}
                    </td>
                    <td>
                      <select
                        aria-label={`Role of ${name}`}
                        value={u.role}
                        disabled={busy === u.id}
                        onChange={(e) => {
                          const role = e.currentTarget.value as Role
                          e.currentTarget.value = u.role // shown from the server's answer once it agrees
                          update(u, { role }, `${name} is now ${ROLE_WORDS[role].name.toLowerCase()}`)
                        }}
                      >
                        {ROLES.map((r) => (
                          <option key={r} value={r}>
                            {ROLE_WORDS[r].name}
                          </option>
                        ))}
                      </select>
                    </td>
                    <td>{u.hasPassword ? 'Set' : <span class="muted">None</span>}</td>
                    <td>{u.disabled ? <span class="badge badge-bad">Disabled</span> : <span class="badge badge-ok">Active</span>}</td>
                    <td class="hide-phone">{when(u.createdAt)}</td>
                    <td class="settings-row-actions">
                      <Button onClick={() => setPasswordFor(u)} aria-label={`Set password for ${name}`}>
                        Set password
                      </Button>
                      <Button
                        busy={busy === u.id}
                        onClick={() =>
                          update(u, { disabled: !u.disabled }, u.disabled ? `${name} enabled` : `${name} disabled: their keys and sessions stop working`)
                        }
                        aria-label={`${u.disabled ? 'Enable' : 'Disable'} ${name}`}
                      >
                        {u.disabled ? 'Enable' : 'Disable'}
                      </Button>
                      <Button kind="danger" onClick={() => setDeleting(u)} aria-label={`Delete ${name}`}>
                        Delete
                      </Button>
                    </td>
                  </tr>
                )
              })}
            </tbody>
          </table>
        </div>
      )}
      {(users.data?.total ?? 0) > USERS_PAGE_SIZE ? <Pager page={page} pageSize={USERS_PAGE_SIZE} total={users.data!.total!} onPage={onPage} /> : null}
      {adding ? (
        <AddUserDialog
          onClose={() => setAdding(false)}
          onAdded={() => {
            setAdding(false)
            onChanged()
          }}
        />
      ) : null}
      {passwordFor ? (
        <PasswordDialog
          user={passwordFor}
          onClose={() => setPasswordFor(null)}
          onSaved={() => {
            setPasswordFor(null)
            onChanged()
          }}
        />
      ) : null}
      {deleting ? (
        <DeleteUserDialog
          user={deleting}
          onClose={() => setDeleting(null)}
          onDeleted={() => {
            setDeleting(null)
            onChanged()
          }}
        />
      ) : null}
    </section>
  )
}

function AddUserDialog({ onClose, onAdded }: { onClose: () => void; onAdded: () => void }) {
  const [id, setId] = useState('')
  const [role, setRole] = useState<Role>('member')
  const [password, setPassword] = useState('')
  const [busy, setBusy] = useState(false)
  const [error, setError] = useState<{ field: 'id' | 'password' | null; text: string } | null>(null)

  const submit = async (e: Event) => {
    e.preventDefault()
    if (password && password.length < PASSWORD_MIN) return setError({ field: 'password', text: `At least ${PASSWORD_MIN} characters` })
    setBusy(true)
    setError(null)
    try {
      const u = await post<UserRecord>('/users', { id: id.trim(), role, ...(password ? { password } : {}) })
      toast(`${shortUserId(u.id)} added`)
      onAdded()
    } catch (err) {
      const text = errorText(err)
      setError({ field: text.includes('password') ? 'password' : text.includes("'id'") || text.includes('id ') ? 'id' : null, text })
      setBusy(false)
    }
  }

  return (
    <Modal title="Add a user" onClose={onClose}>
      <form onSubmit={submit}>
        <Field label="User id" hint="Letters, digits, - and _, e.g. maria. They sign in with it." error={error?.field === 'id' ? error.text : null}>
          {(p) => (
            <input
              {...p}
              name="id"
              required
              maxLength={64}
              pattern="[A-Za-z0-9_\-]+"
              autocomplete="off"
              autocapitalize="off"
              spellcheck={false}
              value={id}
              onInput={(e) => setId(e.currentTarget.value)}
            />
          )}
        </Field>
        <Field label="Role" hint={`${ROLE_WORDS[role].name}: ${ROLE_WORDS[role].can}.`}>
          {(p) => (
            <select {...p} name="role" value={role} onChange={(e) => setRole(e.currentTarget.value as Role)}>
              {ROLES.map((r) => (
                <option key={r} value={r}>
                  {ROLE_WORDS[r].name}
                </option>
              ))}
            </select>
          )}
        </Field>
        <Field
          label="Password (optional)"
          hint={`For signing in to the dashboard; at least ${PASSWORD_MIN} characters. Without one, the user works only with API keys.`}
          error={error?.field === 'password' ? error.text : null}
        >
          {(p) => (
            <input {...p} name="password" type="password" autocomplete="new-password" value={password} onInput={(e) => setPassword(e.currentTarget.value)} />
          )}
        </Field>
        {error && !error.field ? (
          <p class="field-error" role="alert">
            {error.text}
          </p>
        ) : null}
        <div class="settings-actions">
          <Button kind="primary" type="submit" busy={busy}>
            {busy ? 'Adding…' : 'Add user'}
          </Button>
          <Button onClick={onClose}>Cancel</Button>
        </div>
      </form>
    </Modal>
  )
}

function PasswordDialog({ user, onClose, onSaved }: { user: UserRecord; onClose: () => void; onSaved: () => void }) {
  const name = shortUserId(user.id)
  const [password, setPassword] = useState('')
  const [busy, setBusy] = useState(false)
  const [error, setError] = useState<string | null>(null)
  const save = async (value: string | null) => {
    if (value !== null && value.length < PASSWORD_MIN) return setError(`At least ${PASSWORD_MIN} characters`)
    setBusy(true)
    setError(null)
    try {
      await patch<UserRecord>(`/users/${encodeURIComponent(user.id)}`, { password: value })
      toast(value === null ? `${name} can no longer sign in with a password` : `New password set for ${name}`)
      onSaved()
    } catch (e) {
      setError(errorText(e))
      setBusy(false)
    }
  }
  return (
    <Modal title={`Password for ${name}`} onClose={onClose}>
      <form
        onSubmit={(e) => {
          e.preventDefault()
          save(password)
        }}
      >
        <Field label="New password" hint={`At least ${PASSWORD_MIN} characters. Their open sessions keep working until they expire.`} error={error}>
          {(p) => (
            <input
              {...p}
              name="password"
              type="password"
              autocomplete="new-password"
              required
              value={password}
              onInput={(e) => setPassword(e.currentTarget.value)}
            />
          )}
        </Field>
        <div class="settings-actions">
          <Button kind="primary" type="submit" busy={busy}>
            Set password
          </Button>
          {user.hasPassword ? (
            <Button kind="danger" onClick={() => save(null)} disabled={busy}>
              Remove password
            </Button>
          ) : null}
          <Button onClick={onClose}>Cancel</Button>
        </div>
      </form>
    </Modal>
  )
}

function DeleteUserDialog({ user, onClose, onDeleted }: { user: UserRecord; onClose: () => void; onDeleted: () => void }) {
  const name = shortUserId(user.id)
  const [busy, setBusy] = useState(false)
  const remove = async () => {
    setBusy(true)
    try {
      await del(`/users/${encodeURIComponent(user.id)}`)
      toast(`${name} deleted`)
      onDeleted()
    } catch (e) {
      toast(errorText(e), 'error')
      setBusy(false)
    }
  }
  return (
    <Modal title={`Delete ${name}?`} onClose={onClose}>
      <p>
        {name} can no longer sign in and all of their API keys stop working. Their links and files stay. The id <strong>{name}</strong> cannot be used again.
      </p>
      <div class="settings-actions">
        <Button kind="danger" onClick={remove} busy={busy}>
          Delete {name}
        </Button>
        <Button onClick={onClose}>Cancel</Button>
      </div>
    </Modal>
  )
}
