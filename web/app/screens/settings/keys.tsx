/** API keys: the list (never a secret), a new key shown once, and revoking. */
import { useState } from 'preact/hooks'
import { api, del, errorText, post } from '../../api'
import type { Role } from '../../session'
import { Button, Empty, ErrorBox, Field, Loading, Modal, Pager, toast, useResource } from '../../ui'
import { type CreatedKey, type KeyRecord, ROLE_WORDS, ROLES, shortUserId, type UserRecord, when } from './records'
import { SecretDialog } from './secret'

const PAGE_SIZE = 50

/**
 * `all`: an admin's view of every key, made for any user. Otherwise the signed-in user's own keys;
 * `canCreate` when they may make member and read-only keys for themselves.
 */
export function KeysSection({
  all,
  me,
  canCreate,
  users,
  changed,
}: {
  all: boolean
  me: string
  canCreate: boolean
  users?: UserRecord[]
  /** Bumped when users change (a disabled or deleted user's keys change with them). */
  changed?: number
}) {
  const [page, setPage] = useState(1)
  const keys = useResource(
    // Admins are answered every key, everyone else their own.
    (signal) => api<KeyRecord[]>('GET', '/keys', { query: { page, pageSize: PAGE_SIZE }, signal }),
    [page, changed],
  )
  const [creating, setCreating] = useState(false)
  const [secret, setSecret] = useState<CreatedKey | null>(null)
  const [revoking, setRevoking] = useState<KeyRecord | null>(null)
  const list = keys.data?.data ?? []

  return (
    <section class="card settings-section" aria-labelledby="keys-title">
      <header class="settings-section-head">
        <div>
          <h2 id="keys-title">{all ? 'API keys' : 'Your API keys'}</h2>
          <p class="hint">
            {all
              ? 'Keys let programs and integrations use shortlink. Each belongs to a user and has its own role.'
              : 'Keys let your programs and integrations use shortlink as you.'}
          </p>
        </div>
        {canCreate ? (
          <Button kind="primary" onClick={() => setCreating(true)}>
            Create key
          </Button>
        ) : null}
      </header>
      {keys.error && !keys.data ? (
        <ErrorBox error={keys.error} retry={keys.reload} />
      ) : !keys.data ? (
        <Loading label="Loading keys…" />
      ) : list.length === 0 ? (
        <Empty title="No API keys yet">{canCreate ? <p>Create one to connect a program or integration.</p> : null}</Empty>
      ) : (
        <div class="table-wrap">
          <table>
            <caption class="visually-hidden">{all ? 'API keys' : 'Your API keys'}</caption>
            <thead>
              <tr>
                <th scope="col">Name</th>
                {all ? <th scope="col">User</th> : null}
                <th scope="col">Role</th>
                <th scope="col">Key</th>
                <th scope="col" class="hide-phone">
                  Created
                </th>
                <th scope="col">Last used</th>
                {canCreate ? (
                  <th scope="col">
                    <span class="visually-hidden">Actions</span>
                  </th>
                ) : null}
              </tr>
            </thead>
            <tbody>
              {list.map((k) => (
                <tr key={k.id}>
                  <td>{k.name ?? <span class="muted">Unnamed</span>}</td>
                  {all ? <td>{shortUserId(k.userId)}</td> : null}
                  <td>
                    <span class="badge">{ROLE_WORDS[k.role]?.name ?? k.role}</span>
                  </td>
                  <td class="mono">{k.prefix}…</td>
                  <td class="hide-phone">{when(k.createdAt)}</td>
                  <td>{when(k.lastUsedAt)}</td>
                  {canCreate ? (
                    <td class="settings-row-actions">
                      <Button kind="danger" onClick={() => setRevoking(k)} aria-label={`Revoke key ${k.name ?? k.prefix}`}>
                        Revoke
                      </Button>
                    </td>
                  ) : null}
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      {(keys.data?.total ?? 0) > PAGE_SIZE ? <Pager page={page} pageSize={PAGE_SIZE} total={keys.data!.total!} onPage={setPage} /> : null}
      {creating ? (
        <CreateKeyDialog
          all={all}
          me={me}
          users={users}
          onClose={() => setCreating(false)}
          onCreated={(k) => {
            setCreating(false)
            setSecret(k)
            keys.reload()
          }}
        />
      ) : null}
      {secret ? (
        <SecretDialog
          title="Your new API key"
          label={`API key${secret.name ? ` “${secret.name}”` : ''}`}
          value={secret.key}
          copyLabel="Copy key"
          onClose={() => setSecret(null)}
        >
          <strong>Copy this key now: it will not be shown again.</strong> Anyone who has it can act as {shortUserId(secret.userId)} with{' '}
          {ROLE_WORDS[secret.role]?.name.toLowerCase() ?? secret.role} rights. Keep it somewhere safe, such as a password manager.
        </SecretDialog>
      ) : null}
      {revoking ? (
        <RevokeDialog
          apiKey={revoking}
          onClose={() => setRevoking(null)}
          onRevoked={() => {
            setRevoking(null)
            keys.reload()
          }}
        />
      ) : null}
    </section>
  )
}

function CreateKeyDialog({
  all,
  me,
  users,
  onClose,
  onCreated,
}: {
  all: boolean
  me: string
  users?: UserRecord[]
  onClose: () => void
  onCreated: (k: CreatedKey) => void
}) {
  const roles: Role[] = all ? ROLES : ['member', 'readonly']
  const [userId, setUserId] = useState(all ? '' : me)
  const [role, setRole] = useState<Role>('member')
  const [name, setName] = useState('')
  const [busy, setBusy] = useState(false)
  const [error, setError] = useState<{ field: 'userId' | 'role' | 'name' | null; text: string } | null>(null)

  const submit = async (e: Event) => {
    e.preventDefault()
    setBusy(true)
    setError(null)
    try {
      const body: Record<string, string> = { userId: userId.trim(), role }
      if (name.trim()) body.name = name.trim()
      const k = await post<CreatedKey>('/keys', body)
      onCreated(k)
    } catch (err) {
      const text = errorText(err)
      setError({ field: (['userId', 'role', 'name'] as const).find((f) => text.includes(`'${f}'`) || text.includes(f)) ?? null, text })
      setBusy(false)
    }
  }

  return (
    <Modal title="Create an API key" onClose={onClose}>
      <form onSubmit={submit}>
        {all ? (
          <Field
            label="For user"
            hint="An existing user, or a new id (the user is then created as a member)."
            error={error?.field === 'userId' ? error.text : null}
          >
            {(p) => (
              <>
                <input
                  {...p}
                  name="userId"
                  list="settings-user-ids"
                  autocomplete="off"
                  autocapitalize="off"
                  spellcheck={false}
                  required
                  value={userId}
                  onInput={(e) => setUserId(e.currentTarget.value)}
                />
                <datalist id="settings-user-ids">
                  {(users ?? []).map((u) => (
                    <option key={u.id} value={shortUserId(u.id)} />
                  ))}
                </datalist>
              </>
            )}
          </Field>
        ) : (
          <p>
            For you (<strong>{shortUserId(me)}</strong>).
          </p>
        )}
        <Field label="Role" hint={ROLE_WORDS[role].can} error={error?.field === 'role' ? error.text : null}>
          {(p) => (
            <select {...p} name="role" value={role} onChange={(e) => setRole(e.currentTarget.value as Role)}>
              {roles.map((r) => (
                <option key={r} value={r}>
                  {ROLE_WORDS[r].name}
                </option>
              ))}
            </select>
          )}
        </Field>
        <Field
          label="Name (optional)"
          hint="What uses the key, e.g. “Newsletter tool”, so you recognise it later."
          error={error?.field === 'name' ? error.text : null}
        >
          {(p) => <input {...p} name="name" maxLength={100} autocomplete="off" value={name} onInput={(e) => setName(e.currentTarget.value)} />}
        </Field>
        {error && !error.field ? (
          <p class="field-error" role="alert">
            {error.text}
          </p>
        ) : null}
        <div class="settings-actions">
          <Button kind="primary" type="submit" busy={busy}>
            {busy ? 'Creating…' : 'Create key'}
          </Button>
          <Button onClick={onClose}>Cancel</Button>
        </div>
      </form>
    </Modal>
  )
}

function RevokeDialog({ apiKey, onClose, onRevoked }: { apiKey: KeyRecord; onClose: () => void; onRevoked: () => void }) {
  const [busy, setBusy] = useState(false)
  const label = apiKey.name ? `“${apiKey.name}”` : `${apiKey.prefix}…`
  const revoke = async () => {
    setBusy(true)
    try {
      await del(`/keys/${encodeURIComponent(apiKey.id)}`)
      toast(`Key ${label} revoked`)
      onRevoked()
    } catch (e) {
      toast(errorText(e), 'error')
      setBusy(false)
    }
  }
  return (
    <Modal title={`Revoke key ${label}?`} onClose={onClose}>
      <p>
        Anything using this key (<span class="mono">{apiKey.prefix}…</span>, {shortUserId(apiKey.userId)}) stops working within a second. This cannot be undone;
        you can create a new key instead.
      </p>
      <div class="settings-actions">
        <Button kind="danger" onClick={revoke} busy={busy}>
          Revoke key
        </Button>
        <Button onClick={onClose}>Cancel</Button>
      </div>
    </Modal>
  )
}
