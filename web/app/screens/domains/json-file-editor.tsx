/** One deep-link file (served under /.well-known/ on the domain): a JSON textarea checked as you type; invalid JSON is never sent. */
import { useState } from 'preact/hooks'
import { errorText, patch } from '../../api'
import { Button, Field, toast } from '../../ui'
import type { DomainRecord } from './domain'
import { describeProblem, JSON_FILE_MAX, jsonProblem } from './json-check'

export type DeepLinkField = 'appleAppSiteAssociation' | 'assetLinks'

export const DEEP_LINK_FILES: { field: DeepLinkField; file: string; platform: string; placeholder: string }[] = [
  {
    field: 'appleAppSiteAssociation',
    file: 'apple-app-site-association',
    platform: 'iPhone and iPad (Universal Links)',
    placeholder: '{\n  "applinks": {\n    "details": [{ "appIDs": ["TEAMID.com.example.app"], "components": [{ "/": "/*" }] }]\n  }\n}',
  },
  {
    field: 'assetLinks',
    file: 'assetlinks.json',
    platform: 'Android (App Links)',
    placeholder:
      '[{\n  "relation": ["delegate_permission/common.handle_all_urls"],\n  "target": { "namespace": "android_app", "package_name": "com.example.app", "sha256_cert_fingerprints": ["…"] }\n}]',
  },
]

export function JsonFileEditor({
  domain,
  spec,
  onSaved,
}: {
  domain: DomainRecord
  spec: (typeof DEEP_LINK_FILES)[number]
  onSaved: (d: DomainRecord) => void
}) {
  const saved = domain[spec.field] ?? ''
  const [text, setText] = useState(saved)
  const [busy, setBusy] = useState(false)
  const [serverError, setServerError] = useState<string | null>(null)
  const problem = jsonProblem(text)
  const changed = text !== saved
  const headingId = `deeplink-${spec.field}`

  const save = async (e: Event) => {
    e.preventDefault()
    if (problem || !changed) return
    setBusy(true)
    setServerError(null)
    try {
      const value = text.trim() === '' ? null : text
      const d = await patch<DomainRecord>(`/domains/${encodeURIComponent(domain.slug)}`, { [spec.field]: value })
      onSaved(d)
      setText(d[spec.field] ?? '')
      toast(value === null ? `${spec.file} removed` : `${spec.file} saved`)
    } catch (err) {
      setServerError(errorText(err))
    } finally {
      setBusy(false)
    }
  }

  const format = () => {
    try {
      setText(JSON.stringify(JSON.parse(text), null, 2))
    } catch {
      // the error is already shown
    }
  }

  return (
    <form class="domains-jsonfile" aria-labelledby={headingId} onSubmit={save}>
      <h4 id={headingId}>{spec.platform}</h4>
      <Field
        label={spec.file}
        hint={
          <>
            Served at{' '}
            <span class="mono">
              https://{domain.slug}/.well-known/{spec.file}
            </span>
            . Leave empty for none. {text.length.toLocaleString()} / {JSON_FILE_MAX.toLocaleString()} characters.
          </>
        }
        error={problem ? describeProblem(problem) : serverError}
      >
        {(p) => (
          <textarea
            {...p}
            class="mono domains-json"
            rows={8}
            spellcheck={false}
            autocapitalize="off"
            placeholder={spec.placeholder}
            value={text}
            onInput={(e) => {
              setText(e.currentTarget.value)
              setServerError(null)
            }}
          />
        )}
      </Field>
      <div class="domains-actions">
        <Button kind="primary" type="submit" busy={busy} disabled={!!problem || !changed}>
          Save {spec.file}
        </Button>
        <Button onClick={format} disabled={!!problem || text.trim() === ''}>
          Tidy up
        </Button>
        {changed ? (
          <Button kind="ghost" onClick={() => setText(saved)}>
            Undo changes
          </Button>
        ) : null}
      </div>
    </form>
  )
}
