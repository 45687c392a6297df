/** Pieces the Files, Tags and Templates screens share: paging from the address bar, a confirm dialog, a rename dialog, sizes in words. */
import type { ComponentChildren } from 'preact'
import { useState } from 'preact/hooks'
import { errorText } from '../../api'
import { Button, Field, Modal } from '../../ui'

/** The page number in the address bar (`?page=`), 1 when absent or invalid. */
export const pageOf = (query: URLSearchParams) => Math.max(1, Math.floor(Number(query.get('page'))) || 1)

export function formatBytes(n: number): string {
  if (n < 1024) return `${n} B`
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(n < 10 * 1024 ? 1 : 0)} KB`
  return `${(n / 1024 / 1024).toFixed(1)} MB`
}

export const formatDate = (iso: string) => new Date(iso).toLocaleDateString(undefined, { year: 'numeric', month: 'short', day: 'numeric' })

/** Asks before a change that cannot be undone; shows the API's error in the dialog when it fails. */
export function ConfirmModal({
  title,
  children,
  confirm,
  onConfirm,
  onClose,
}: {
  title: string
  children: ComponentChildren
  confirm: string
  onConfirm: () => Promise<void>
  onClose: () => void
}) {
  const [busy, setBusy] = useState(false)
  const [error, setError] = useState<string | null>(null)
  return (
    <Modal title={title} onClose={onClose}>
      {children}
      {error ? (
        <p class="field-error" role="alert">
          {error}
        </p>
      ) : null}
      <div class="library-actions">
        <Button
          kind="danger"
          busy={busy}
          onClick={async () => {
            setBusy(true)
            setError(null)
            try {
              await onConfirm()
              onClose()
            } catch (e) {
              setError(errorText(e))
              setBusy(false)
            }
          }}
        >
          {confirm}
        </Button>
        <Button onClick={onClose}>Cancel</Button>
      </div>
    </Modal>
  )
}

/** A name (and optional extra fields) edited in a dialog; the API's message shows under the field. */
export function RenameModal({
  title,
  label,
  initial,
  maxLength,
  onSave,
  onClose,
  children,
}: {
  title: string
  label: string
  initial: string
  maxLength: number
  onSave: (name: string) => Promise<void>
  onClose: () => void
  children?: ComponentChildren
}) {
  const [name, setName] = useState(initial)
  const [busy, setBusy] = useState(false)
  const [error, setError] = useState<string | null>(null)
  return (
    <Modal title={title} onClose={onClose}>
      <form
        onSubmit={async (e) => {
          e.preventDefault()
          if (!name.trim()) return setError('The name cannot be empty')
          setBusy(true)
          setError(null)
          try {
            await onSave(name.trim())
            onClose()
          } catch (err) {
            setError(errorText(err))
            setBusy(false)
          }
        }}
      >
        <Field label={label} error={error}>
          {(p) => <input {...p} type="text" required maxLength={maxLength} value={name} onInput={(e) => setName(e.currentTarget.value)} />}
        </Field>
        {children}
        <div class="library-actions">
          <Button type="submit" kind="primary" busy={busy}>
            Save
          </Button>
          <Button onClick={onClose}>Cancel</Button>
        </div>
      </form>
    </Modal>
  )
}
