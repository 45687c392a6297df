/** Who you are, and (admins) users, every API key and webhook, and the backups; everyone else their own keys and webhooks. */
import { useState } from 'preact/hooks'
import { api } from '../api'
import type { ScreenProps } from '../routes'
import { canWrite, isAdmin, type Session, useSession } from '../session'
import { Page, useResource } from '../ui'
import { BackupsSection } from './settings/backups'
import { KeysSection } from './settings/keys'
import { ROLE_WORDS, shortUserId, type UserRecord, when } from './settings/records'
import { USERS_PAGE_SIZE, UsersSection } from './settings/users'
import { WebhooksSection } from './settings/webhooks'

export function SettingsScreen(_: ScreenProps) {
  const session = useSession()
  const admin = isAdmin(session)
  return <Page title="Settings">{admin ? <AdminSettings session={session} /> : <MemberSettings session={session} />}</Page>
}

function AdminSettings({ session }: { session: Session }) {
  const [page, setPage] = useState(1)
  const [changed, setChanged] = useState(0)
  const users = useResource((signal) => api<UserRecord[]>('GET', '/users', { query: { page, pageSize: USERS_PAGE_SIZE }, signal }), [page, changed])
  return (
    <div class="settings-stack">
      <WhoAmI session={session} />
      <UsersSection me={session.userId} users={users} page={page} onPage={setPage} onChanged={() => setChanged((n) => n + 1)} />
      <KeysSection all me={session.userId} canCreate users={users.data?.data} changed={changed} />
      <BackupsSection />
      <WebhooksSection all canCreate />
    </div>
  )
}

function MemberSettings({ session }: { session: Session }) {
  return (
    <div class="settings-stack">
      <WhoAmI session={session} />
      <KeysSection all={false} me={session.userId} canCreate={canWrite(session)} />
      <WebhooksSection all={false} canCreate={canWrite(session)} />
    </div>
  )
}

function WhoAmI({ session }: { session: Session }) {
  const role = ROLE_WORDS[session.role]
  return (
    <section class="card settings-section settings-me" aria-labelledby="me-title">
      <h2 id="me-title">You</h2>
      <dl class="settings-facts">
        <div>
          <dt>User</dt>
          <dd>
            <strong>{shortUserId(session.userId)}</strong>
          </dd>
        </div>
        <div>
          <dt>Role</dt>
          <dd>
            <span class="badge">{role.name}</span> <span class="muted">{role.can}</span>
          </dd>
        </div>
        <div>
          <dt>Signed in with</dt>
          <dd>{session.method === 'password' ? 'Your password' : 'An API key'}</dd>
        </div>
        <div>
          <dt>Session ends</dt>
          <dd>{when(session.expiresAt)}</dd>
        </div>
      </dl>
    </section>
  )
}
