/**
 * Create and edit a link: a type picker on /links/new, then the type's form, a
 * collapsible Options area and a live preview; /links/:id loads the link and saves
 * changes with PATCH. The API judges every value: its message appears next to the field
 * it names (or in a toast when no field on screen matches).
 */
import { useEffect, useRef, useState } from 'preact/hooks'
import { hasHealth, type LinkHealth } from '../../../src/links/links.health.values'
import { CONVERSION_TYPES } from '../../../src/links/links.values'
import { ApiError, del, errorText, get, patch, post } from '../api'
import { Link, navigate } from '../router'
import type { ScreenProps } from '../routes'
import { canWrite, useSession } from '../session'
import { Button, CopyButton, Empty, ErrorBox, Loading, Modal, Page, toast, useResource } from '../ui'
import { AbTestPanel } from './link-editor/ab-test'
import { ContentFields } from './link-editor/content-form'
import { ErrorContext, type FieldErrorState, fieldOfMessage } from './link-editor/fields'
import { OptionsFields } from './link-editor/options'
import { emptyOptions, linkOptionsOf, type OptionsForm, optionsOf } from './link-editor/options-model'
import { LivePreview } from './link-editor/preview'
import {
  type ApiData,
  type ContentForm,
  contentOf,
  dataOf,
  destinationText,
  emptyContent,
  FILE_TYPES,
  isLinkType,
  type LinkType,
  PICKER_ORDER,
  TYPE_INFO,
  URL_TYPES,
} from './link-editor/types'
import { HealthPanel } from './links/health'

/** The link record as GET /links/{id} answers (contract: Links). */
export interface LinkRecord extends ApiData {
  id: string
  domain: string
  key: string
  shortLink: string
  linkType: string
  destination: string
  clicks: number
  hasPassword: boolean
  archived: boolean
  data: ApiData
  /** Null for types without a URL destination. */
  health: LinkHealth | null
}

export function LinkEditorScreen({ params, query }: ScreenProps) {
  const session = useSession()
  const readOnly = !canWrite(session)
  if (params.id) return <EditLink id={params.id} readOnly={readOnly} />
  if (readOnly)
    return (
      <Page title="New link">
        <Empty title="Your role is read-only">
          <p>
            You can look at links but not create them. <Link href="/links">Back to links</Link>
          </p>
        </Empty>
      </Page>
    )
  const type = query.get('type')
  if (!isLinkType(type)) return <TypePicker />
  return <Editor key={type} type={type} record={null} readOnly={false} />
}

function TypePicker() {
  return (
    <Page title="New link">
      <p class="muted le-intro">What should people get when they open the link or scan its QR code?</p>
      <ul class="le-types" aria-label="Link types">
        {PICKER_ORDER.map((t) => (
          <li key={t}>
            <Link href={`/links/new?type=${t}`} class="le-type-card">
              <span class="le-type-icon" aria-hidden="true">
                {TYPE_INFO[t].icon}
              </span>
              <span class="le-type-label">{TYPE_INFO[t].label}</span>
              <span class="le-type-desc">{TYPE_INFO[t].description}</span>
            </Link>
          </li>
        ))}
      </ul>
    </Page>
  )
}

function EditLink({ id, readOnly }: { id: string; readOnly: boolean }) {
  const link = useResource((signal) => get<LinkRecord>(`/links/${encodeURIComponent(id)}`, undefined, signal), [id])
  if (link.error)
    return (
      <Page title="Link">
        <ErrorBox error={link.error} retry={link.reload} />
        <p>
          <Link href="/links">Back to links</Link>
        </p>
      </Page>
    )
  if (!link.data) return <Loading label="Loading the link…" />
  if (!isLinkType(link.data.linkType))
    return (
      <Page title="Link">
        <Empty title={`Links of type ${link.data.linkType} cannot be edited here`} />
      </Page>
    )
  return <Editor key={link.data.id} type={link.data.linkType} record={link.data} readOnly={readOnly} />
}

function Editor({ type, record: initial, readOnly }: { type: LinkType; record: LinkRecord | null; readOnly: boolean }) {
  const [record, setRecord] = useState(initial)
  const editing = record !== null
  const [content, setContent] = useState<ContentForm>(() => (initial ? contentOf(type, initial.data) : emptyContent(type)))
  const [options, setOptions] = useState<OptionsForm>(() => (initial ? optionsOf(initial) : emptyOptions()))
  const [error, setError] = useState<FieldErrorState | null>(null)
  const [busy, setBusy] = useState(false)
  const [confirmDelete, setConfirmDelete] = useState(false)
  const formRef = useRef<HTMLFormElement>(null)
  const info = TYPE_INFO[type]
  const setC = (p: Partial<ContentForm>) => setContent((c) => ({ ...c, ...p }))
  const setO = (p: Partial<OptionsForm>) => setOptions((o) => ({ ...o, ...p }))

  // A message that names a field on screen goes next to it (its section opened, the field focused); any other in a toast.
  useEffect(() => {
    if (!error) return
    const form = formRef.current
    const invalid = form?.querySelector<HTMLElement>('.field-invalid, .le-group-error')
    if (!invalid) {
      toast(error.message, 'error')
      return
    }
    for (let d = invalid.closest('details'); d; d = d.parentElement?.closest('details') ?? null) d.open = true
    invalid.scrollIntoView({ block: 'center' })
    invalid.querySelector<HTMLElement>('input, select, textarea')?.focus()
  }, [error])

  const save = async (e: Event) => {
    e.preventDefault()
    if (readOnly) return
    setBusy(true)
    setError(null)
    const body = { data: dataOf(type, content), linkOptions: linkOptionsOf(options, { editing, utmInUrl: URL_TYPES.has(type), health: hasHealth(type) }) }
    // A GS1 product's key is its GTIN.
    if (type === 'gs1' && body.linkOptions) delete body.linkOptions.key
    try {
      if (!record) {
        const created = await post<LinkRecord>(`/links/${type}`, body)
        toast(`Link created: ${created.shortLink}`)
        navigate(`/links/${created.id}`)
        return
      }
      const updated = await patch<LinkRecord>(`/links/${record.id}`, body)
      setRecord(updated)
      setO({ password: '', removePassword: false, key: updated.key, domain: updated.domain, testChanged: false })
      toast('Changes saved')
    } catch (err) {
      const message = errorText(err)
      setError({ path: (err instanceof ApiError && fieldOfMessage(message)) || '', message })
    } finally {
      setBusy(false)
    }
  }

  const setArchived = async (archived: boolean) => {
    if (!record) return
    setBusy(true)
    try {
      const updated = await patch<LinkRecord>(`/links/${record.id}`, { linkOptions: { archived } })
      setRecord(updated)
      setO({ archived })
      toast(archived ? 'Link archived: it stays reachable but leaves the default lists' : 'Link restored')
    } catch (err) {
      toast(errorText(err), 'error')
    } finally {
      setBusy(false)
    }
  }

  const remove = async () => {
    if (!record) return
    setBusy(true)
    try {
      await del(`/links/${record.id}`)
      toast(`Deleted ${record.shortLink}`)
      navigate('/links')
    } catch (err) {
      toast(errorText(err), 'error')
      setBusy(false)
    }
  }

  const url = URL_TYPES.has(type) ? content.url : null
  const gs1Key = type === 'gs1' ? `01/${content.gs1.gtin.replace(/\s+/g, '').padStart(14, '0') || '<GTIN>'}` : null
  const shortLink = record
    ? `https://${options.domain || record.domain}/${gs1Key ?? (options.key || record.key)}`.replace(
        `https://${record.domain}/${gs1Key ?? record.key}`,
        record.shortLink,
      )
    : `${options.domain || 'default domain'}/${gs1Key ?? (options.key || '(7 random characters)')}`
  const title = editing ? (readOnly ? `${info.label} link` : `Edit ${info.label.toLowerCase()} link`) : `New ${info.label.toLowerCase()} link`

  return (
    <Page
      title={title}
      actions={
        editing ? (
          <>
            {record.archived ? <span class="badge">Archived</span> : null}
            {readOnly ? null : (
              <>
                <Button onClick={() => setArchived(!record.archived)} busy={busy}>
                  {record.archived ? 'Unarchive' : 'Archive'}
                </Button>
                <Button kind="danger" onClick={() => setConfirmDelete(true)} disabled={busy}>
                  Delete
                </Button>
              </>
            )}
          </>
        ) : (
          <Link href="/links/new" class="btn btn-ghost">
            Change type
          </Link>
        )
      }
    >
      {record ? <SavedLink record={record} /> : null}
      {record?.testVariants ? <AbTestPanel key={record.updatedAt} linkId={record.id} version={String(record.updatedAt)} /> : null}
      {record?.health ? <HealthPanel key={record.updatedAt} linkId={record.id} health={record.health} canCheck={!readOnly} /> : null}
      <div class={`le-layout${readOnly ? ' le-readonly' : ''}`}>
        <ErrorContext.Provider value={error}>
          <form ref={formRef} class="le-form" onSubmit={save} noValidate aria-label={title}>
            <fieldset class="le-fieldset" disabled={readOnly}>
              <legend class="visually-hidden">{info.label}</legend>
              <section class="card le-content" aria-labelledby="le-content-title">
                <h2 id="le-content-title">
                  <span class="le-badge" aria-hidden="true">
                    {info.icon}
                  </span>{' '}
                  {info.label}
                </h2>
                <p class="hint le-type-hint">{info.description}</p>
                <ContentFields type={type} form={content} set={setC} readOnly={readOnly} origin={record ? new URL(record.shortLink).origin : undefined} />
              </section>
              <details class="card le-options-area" open={editing}>
                <summary>
                  <span class="le-options-title">Options</span>
                  <span class="hint"> domain and key, tags, password, expiry, UTM, protection, social preview, rules</span>
                </summary>
                <OptionsFields
                  o={options}
                  set={setO}
                  url={url}
                  setUrl={(u) => setC({ url: u })}
                  hasPassword={!!record?.hasPassword}
                  health={hasHealth(type)}
                  hosted={!URL_TYPES.has(type) && !['email', 'sms', 'whatsapp', 'map'].includes(type)}
                  canTrackConversions={CONVERSION_TYPES.includes(type)}
                  readOnly={readOnly}
                />
              </details>
            </fieldset>
            {error && !error.path ? (
              <p class="field-error le-save-error" role="alert">
                {error.message}
              </p>
            ) : null}
            {readOnly ? (
              <p class="muted">Your role is read-only: you can look at this link but not change it.</p>
            ) : (
              <div class="le-save">
                <Button kind="primary" type="submit" busy={busy}>
                  {busy ? 'Saving…' : editing ? 'Save changes' : 'Create link'}
                </Button>
                <Link href="/links" class="btn btn-ghost">
                  Cancel
                </Link>
              </div>
            )}
          </form>
        </ErrorContext.Provider>
        <LivePreview
          type={type}
          shortLink={shortLink}
          host={record ? new URL(record.shortLink).host : options.domain || 'your short domain'}
          destination={destinationText(type, content)}
          title={options.previewTitle}
          desc={options.previewDesc}
          image={options.previewImage}
        />
      </div>
      {confirmDelete && record ? (
        <Modal title="Delete this link?" onClose={() => setConfirmDelete(false)}>
          <p>
            <span class="mono">{record.shortLink}</span> will stop working for everyone, and its QR codes with it. This cannot be undone.
          </p>
          <div class="le-save">
            <Button kind="danger" onClick={remove} busy={busy}>
              Delete link
            </Button>
            <Button onClick={() => setConfirmDelete(false)}>Keep it</Button>
          </div>
        </Modal>
      ) : null}
    </Page>
  )
}

/** The saved link: the short link to copy, and where its QR code and statistics are. */
function SavedLink({ record }: { record: LinkRecord }) {
  return (
    <section class="card le-saved" aria-label="Short link">
      <div class="le-saved-link">
        <a class="mono le-saved-short" href={record.shortLink} target="_blank" rel="noopener noreferrer">
          {record.shortLink}
        </a>
        <CopyButton text={record.shortLink} label="Copy" />
      </div>
      <p class="muted le-saved-meta">
        {record.clicks.toLocaleString()} {record.clicks === 1 ? 'visit' : 'visits'}
        {FILE_TYPES.has(record.linkType as LinkType) || record.hasPassword ? null : (
          <>
            {' '}
            · goes to <span class="mono">{record.destination}</span>
          </>
        )}
        {record.hasPassword ? ' · password protected' : ''}
      </p>
      <div class="le-saved-actions">
        <Link href={`/links/${record.id}/qr`} class="btn">
          QR code
        </Link>
        <Link href={`/links/${record.id}/stats`} class="btn">
          Statistics
        </Link>
        <Link href="/links/new" class="btn btn-ghost">
          New link
        </Link>
      </div>
    </section>
  )
}
