/** Sign in with a user id and password, or with an API key; the server answers with an HttpOnly session cookie. */
import { useState } from 'preact/hooks'
import { ApiError, api, errorText } from '../api'
import type { Session } from '../session'
import { Button, Field } from '../ui'

export function SignInScreen({ onSignedIn }: { onSignedIn: (s: Session) => void }) {
  const [method, setMethod] = useState<'password' | 'apiKey'>('password')
  const [userId, setUserId] = useState('')
  const [password, setPassword] = useState('')
  const [apiKey, setApiKey] = useState('')
  const [busy, setBusy] = useState(false)
  const [error, setError] = useState<string | null>(null)

  const submit = async (e: Event) => {
    e.preventDefault()
    setBusy(true)
    setError(null)
    try {
      const body = method === 'password' ? { userId: userId.trim(), password } : { apiKey: apiKey.trim() }
      const { data } = await api<Session>('POST', '/session', { body })
      setPassword('')
      setApiKey('')
      onSignedIn(data)
    } catch (err) {
      setError(err instanceof ApiError && err.status === 429 ? `Too many attempts; try again in ${err.retryAfter ?? 60} s` : errorText(err))
    } finally {
      setBusy(false)
    }
  }

  return (
    <main class="sign-in" id="main">
      <form class="card sign-in-card" onSubmit={submit} aria-labelledby="sign-in-title">
        <h1 id="sign-in-title">Sign in to shortlink</h1>
        <fieldset class="segmented">
          <legend class="visually-hidden">Sign in with</legend>
          <label>
            <input type="radio" name="method" checked={method === 'password'} onChange={() => setMethod('password')} /> Password
          </label>
          <label>
            <input type="radio" name="method" checked={method === 'apiKey'} onChange={() => setMethod('apiKey')} /> API key
          </label>
        </fieldset>
        {method === 'password' ? (
          <>
            <Field label="User id">
              {(p) => <input {...p} name="userId" autocomplete="username" required value={userId} onInput={(e) => setUserId(e.currentTarget.value)} />}
            </Field>
            <Field label="Password">
              {(p) => (
                <input
                  {...p}
                  name="password"
                  type="password"
                  autocomplete="current-password"
                  required
                  value={password}
                  onInput={(e) => setPassword(e.currentTarget.value)}
                />
              )}
            </Field>
          </>
        ) : (
          <Field label="API key" hint="The key stays on the server: the browser keeps only a session cookie.">
            {(p) => (
              <input
                {...p}
                name="apiKey"
                type="password"
                autocomplete="off"
                spellcheck={false}
                required
                value={apiKey}
                onInput={(e) => setApiKey(e.currentTarget.value)}
              />
            )}
          </Field>
        )}
        {error ? (
          <p class="field-error" role="alert">
            {error}
          </p>
        ) : null}
        <Button kind="primary" type="submit" busy={busy}>
          {busy ? 'Signing in…' : 'Sign in'}
        </Button>
      </form>
    </main>
  )
}
