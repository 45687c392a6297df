/**
 * Small labelled controls of the editor, each tied to the API field path it fills so the
 * API's error message ("'data.url' must be a valid uri") appears next to that control.
 */
import type { ComponentChildren } from 'preact'
import { createContext } from 'preact'
import { useContext } from 'preact/hooks'
import { Field } from '../../ui'

/** The field an API message names: `'linkOptions.key' 'x' is already used` → `linkOptions.key`. */
export function fieldOfMessage(message: string): string | null {
  return /^(?:unknown field )?'([A-Za-z0-9_.]+)'/.exec(message)?.[1] ?? null
}

export interface FieldErrorState {
  path: string
  message: string
}
export const ErrorContext = createContext<FieldErrorState | null>(null)

/** The error message for the control at `path` (or for a field inside it), else undefined. */
export function useFieldError(path: string, exact = false): string | undefined {
  const e = useContext(ErrorContext)
  if (!e) return undefined
  return e.path === path || (!exact && e.path.startsWith(`${path}.`)) ? e.message : undefined
}

/** A message for a whole group ("'data' needs exactly one of fileId and url"). */
export function GroupError({ path }: { path: string }) {
  const message = useFieldError(path, true)
  return message ? (
    <p class="field-error le-group-error" role="alert">
      {message}
    </p>
  ) : null
}

type InputType = 'text' | 'url' | 'email' | 'tel' | 'number' | 'password' | 'datetime-local' | 'time'

export function TextInput({
  label,
  path,
  value,
  onValue,
  hint,
  type = 'text',
  placeholder,
  required,
  autocomplete,
  maxLength,
  step,
  name,
}: {
  label: string
  path: string
  value: string
  onValue: (v: string) => void
  hint?: ComponentChildren
  type?: InputType
  placeholder?: string
  required?: boolean
  autocomplete?: string
  maxLength?: number
  step?: string
  name?: string
}) {
  const error = useFieldError(path)
  return (
    <Field label={label} hint={hint} error={error}>
      {(p) => (
        <input
          {...p}
          name={name ?? path}
          type={type as 'text'}
          value={value}
          placeholder={placeholder}
          required={required}
          autocomplete={autocomplete ?? 'off'}
          maxLength={maxLength}
          step={step}
          onInput={(e) => onValue(e.currentTarget.value)}
        />
      )}
    </Field>
  )
}

export function TextArea({
  label,
  path,
  value,
  onValue,
  hint,
  rows = 4,
  maxLength,
  required,
}: {
  label: string
  path: string
  value: string
  onValue: (v: string) => void
  hint?: ComponentChildren
  rows?: number
  maxLength?: number
  required?: boolean
}) {
  const error = useFieldError(path)
  return (
    <Field label={label} hint={hint} error={error}>
      {(p) => (
        <textarea {...p} name={path} rows={rows} maxLength={maxLength} required={required} value={value} onInput={(e) => onValue(e.currentTarget.value)} />
      )}
    </Field>
  )
}

export function Select<V extends string>({
  label,
  path,
  value,
  onValue,
  options,
  hint,
}: {
  label: string
  path: string
  value: V
  onValue: (v: V) => void
  options: { value: V; label: string }[]
  hint?: ComponentChildren
}) {
  const error = useFieldError(path)
  return (
    <Field label={label} hint={hint} error={error}>
      {(p) => (
        <select {...p} name={path} value={value} onChange={(e) => onValue(e.currentTarget.value as V)}>
          {options.map((o) => (
            <option key={o.value} value={o.value}>
              {o.label}
            </option>
          ))}
        </select>
      )}
    </Field>
  )
}

export function Check({ label, checked, onValue, hint }: { label: string; checked: boolean; onValue: (v: boolean) => void; hint?: string }) {
  return (
    <div class="le-check">
      <label class="check">
        <input type="checkbox" checked={checked} onChange={(e) => onValue(e.currentTarget.checked)} /> {label}
      </label>
      {hint ? <p class="hint">{hint}</p> : null}
    </div>
  )
}
