/** The one time a secret (an API key, a webhook's signing secret) is on screen: dropped from memory when the dialog closes. */
import type { ComponentChildren } from 'preact'
import { Button, CopyButton, Modal } from '../../ui'

export function SecretDialog({
  title,
  label,
  value,
  copyLabel,
  children,
  onClose,
}: {
  title: string
  label: string
  value: string
  copyLabel: string
  /** Why it matters, after "Copy this … now: it will not be shown again." */
  children: ComponentChildren
  onClose: () => void
}) {
  return (
    <Modal title={title} onClose={onClose}>
      <p class="settings-warning" role="alert">
        {children}
      </p>
      <div class="settings-secret">
        <label class="label" for="settings-new-secret">
          {label}
        </label>
        <div class="settings-secret-row">
          <input id="settings-new-secret" class="mono" readOnly value={value} spellcheck={false} onFocus={(e) => e.currentTarget.select()} />
          <CopyButton text={value} label={copyLabel} />
        </div>
      </div>
      <div class="settings-actions">
        <Button kind="primary" onClick={onClose}>
          I have saved it
        </Button>
      </div>
    </Modal>
  )
}
