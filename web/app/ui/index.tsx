/**
 * The dashboard's building blocks. Every screen shows the same loading, empty and error
 * states, labels every control, and reports results through the same toast.
 */
import type { ButtonHTMLAttributes, ComponentChildren } from 'preact'
import { useEffect, useId, useRef, useState } from 'preact/hooks'
import { errorText } from '../api'

export { useResource } from './resource'

export function Page({ title, actions, children }: { title: string; actions?: ComponentChildren; children: ComponentChildren }) {
  useEffect(() => {
    document.title = `${title} · shortlink`
  }, [title])
  return (
    <section class="page" aria-labelledby="page-title">
      <header class="page-head">
        <h1 id="page-title">{title}</h1>
        {actions ? <div class="page-actions">{actions}</div> : null}
      </header>
      {children}
    </section>
  )
}

export function Loading({ label = 'Loading…' }: { label?: string }) {
  return (
    <div class="state state-loading" role="status" aria-live="polite">
      <span class="spinner" aria-hidden="true" />
      {label}
    </div>
  )
}

export function Empty({ title, children }: { title: string; children?: ComponentChildren }) {
  return (
    <div class="state state-empty">
      <p class="state-title">{title}</p>
      {children}
    </div>
  )
}

export function ErrorBox({ error, retry }: { error: unknown; retry?: () => void }) {
  return (
    <div class="state state-error" role="alert">
      <p class="state-title">Something went wrong</p>
      <p>{errorText(error)}</p>
      {retry ? (
        <button type="button" class="btn" onClick={retry}>
          Try again
        </button>
      ) : null}
    </div>
  )
}

/** A labelled control: the label, the control (given an id), an optional hint and an error tied by aria-describedby. */
export function Field({
  label,
  hint,
  error,
  children,
}: {
  label: string
  hint?: ComponentChildren
  error?: string | null
  children: (props: { id: string; 'aria-describedby'?: string; 'aria-invalid'?: boolean }) => ComponentChildren
}) {
  const id = useId()
  const described = [hint ? `${id}-hint` : '', error ? `${id}-error` : ''].filter(Boolean).join(' ') || undefined
  return (
    <div class={`field${error ? ' field-invalid' : ''}`}>
      <label for={id}>{label}</label>
      {children({ id, 'aria-describedby': described, 'aria-invalid': error ? true : undefined })}
      {hint ? (
        <p class="hint" id={`${id}-hint`}>
          {hint}
        </p>
      ) : null}
      {error ? (
        <p class="field-error" id={`${id}-error`}>
          {error}
        </p>
      ) : null}
    </div>
  )
}

export function Button({
  kind = 'default',
  busy,
  children,
  ...rest
}: { kind?: 'default' | 'primary' | 'danger' | 'ghost'; busy?: boolean; children: ComponentChildren } & ButtonHTMLAttributes<HTMLButtonElement>) {
  return (
    <button type="button" {...rest} class={`btn btn-${kind} ${rest.class ?? ''}`} disabled={busy || rest.disabled} aria-busy={busy || undefined}>
      {children}
    </button>
  )
}

/** A modal dialog on <dialog>: focus is trapped by the browser, Escape closes it. */
export function Modal({ title, onClose, children, wide }: { title: string; onClose: () => void; children: ComponentChildren; wide?: boolean }) {
  const ref = useRef<HTMLDialogElement>(null)
  const id = useId()
  useEffect(() => {
    const d = ref.current!
    if (!d.open) d.showModal()
    return () => d.close()
  }, [])
  return (
    <dialog ref={ref} class={`modal${wide ? ' modal-wide' : ''}`} aria-labelledby={id} onClose={onClose}>
      <header class="modal-head">
        <h2 id={id}>{title}</h2>
        <button type="button" class="btn btn-ghost" aria-label="Close" onClick={onClose}>
          ×
        </button>
      </header>
      <div class="modal-body">{children}</div>
    </dialog>
  )
}

type ToastKind = 'ok' | 'error'
const toastListeners = new Set<(t: { id: number; text: string; kind: ToastKind }) => void>()
let toastSeq = 0
/** Tells the user what happened, in a live region screen readers announce. */
export function toast(text: string, kind: ToastKind = 'ok') {
  const t = { id: ++toastSeq, text, kind }
  for (const l of toastListeners) l(t)
}
export function Toasts() {
  const [items, setItems] = useState<{ id: number; text: string; kind: ToastKind }[]>([])
  useEffect(() => {
    const l = (t: { id: number; text: string; kind: ToastKind }) => {
      setItems((xs) => [...xs, t])
      setTimeout(() => setItems((xs) => xs.filter((x) => x.id !== t.id)), t.kind === 'error' ? 8000 : 4000)
    }
    toastListeners.add(l)
    return () => {
      toastListeners.delete(l)
    }
  }, [])
  return (
    <div class="toasts" role="status" aria-live="polite">
      {items.map((t) => (
        <div key={t.id} class={`toast toast-${t.kind}`}>
          {t.text}
        </div>
      ))}
    </div>
  )
}

export function Pager({ page, pageSize, total, onPage }: { page: number; pageSize: number; total: number; onPage: (page: number) => void }) {
  const pages = Math.max(1, Math.ceil(total / pageSize))
  const from = total === 0 ? 0 : (page - 1) * pageSize + 1
  const to = Math.min(total, page * pageSize)
  return (
    <nav class="pager" aria-label="Pages">
      <span>
        {from}–{to} of {total.toLocaleString()}
      </span>
      <Button disabled={page <= 1} onClick={() => onPage(page - 1)} aria-label="Previous page">
        ‹ Previous
      </Button>
      <span aria-current="page">
        Page {page} of {pages}
      </span>
      <Button disabled={page >= pages} onClick={() => onPage(page + 1)} aria-label="Next page">
        Next ›
      </Button>
    </nav>
  )
}

export function CopyButton({ text, label = 'Copy' }: { text: string; label?: string }) {
  const [copied, setCopied] = useState(false)
  return (
    <Button
      kind="ghost"
      aria-label={`${label}: ${text}`}
      onClick={async () => {
        try {
          await navigator.clipboard.writeText(text)
          setCopied(true)
          setTimeout(() => setCopied(false), 1500)
        } catch {
          toast('Copying needs clipboard permission; select the text instead', 'error')
        }
      }}
    >
      {copied ? 'Copied' : label}
    </Button>
  )
}
