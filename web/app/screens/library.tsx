/**
 * The library: uploaded files (logos, frames, menus, documents), tags for sorting links,
 * and saved QR templates. Each lists with paging, and (for users who may write) creates,
 * renames, archives and deletes through the API, asking before anything is deleted.
 */
import { useRef, useState } from 'preact/hooks'
import { api, apiUrl, del, errorText, patch, post } from '../api'
import { Link, setQuery } from '../router'
import type { ScreenProps } from '../routes'
import { canWrite, isAdmin, useSession } from '../session'
import { Button, Empty, ErrorBox, Field, Loading, Page, Pager, toast, useResource } from '../ui'
import { ConfirmModal, formatBytes, formatDate, pageOf, RenameModal } from './library/common'

interface FileRecord {
  id: string
  name: string
  size: number
  mimeType: string
  extension: string
  archived: boolean
  createdAt: string
}
interface TagRecord {
  id: string
  name: string
  color: string
  createdAt: string
}
interface TemplateRecord {
  id: string
  name: string
  comment: string
  archived: boolean
  userId: string
  createdAt: string
  updatedAt: string
}

type Dialog = { kind: 'rename' | 'delete'; id: string } | null

function SearchBar({ label, value, archivedLabel, archived }: { label: string; value: string; archivedLabel?: string; archived?: boolean }) {
  const [text, setText] = useState(value)
  return (
    <form
      class="toolbar library-toolbar"
      onSubmit={(e) => {
        e.preventDefault()
        setQuery({ q: text.trim() || null, page: null })
      }}
    >
      <Field label={label}>{(p) => <input {...p} type="search" maxLength={100} value={text} onInput={(e) => setText(e.currentTarget.value)} />}</Field>
      <Button type="submit">Search</Button>
      {archivedLabel ? (
        <label class="check library-check">
          <input type="checkbox" checked={archived} onChange={(e) => setQuery({ archived: e.currentTarget.checked ? '1' : null, page: null })} />
          {archivedLabel}
        </label>
      ) : null}
    </form>
  )
}

// ---------------------------------------------------------------- files

const FILES_PAGE = 20

export function FilesScreen({ query }: ScreenProps) {
  const writer = canWrite(useSession())
  const page = pageOf(query)
  const search = query.get('q') ?? ''
  const archived = query.get('archived') === '1'
  const list = useResource(
    (signal) =>
      api<FileRecord[]>('GET', '/files', {
        query: { page, pageSize: FILES_PAGE, search, includeArchived: archived || undefined, sortBy: 'created_at', sortOrder: 'desc' },
        signal,
      }),
    [page, search, archived],
  )
  const [dialog, setDialog] = useState<Dialog>(null)
  const files = list.data?.data ?? []
  const current = dialog ? files.find((f) => f.id === dialog.id) : undefined

  const setArchived = async (f: FileRecord, value: boolean) => {
    try {
      await patch(`/files/${f.id}`, { archived: value })
      toast(value ? `${f.name} archived` : `${f.name} restored`)
      list.reload()
    } catch (e) {
      toast(errorText(e), 'error')
    }
  }

  return (
    <Page title="Files">
      <p class="muted library-intro">Logos and frames for QR codes, menus, documents and images your links show.</p>
      {writer ? <UploadZone onUploaded={list.reload} /> : null}
      <SearchBar label="Search files" value={search} archivedLabel="Show archived files" archived={archived} />
      {list.error && !list.data ? (
        <ErrorBox error={list.error} retry={list.reload} />
      ) : !list.data ? (
        <Loading />
      ) : files.length === 0 ? (
        <Empty title={search ? 'No files match' : 'No files yet'}>{writer && !search ? <p>Upload a logo or a menu to use it in your links.</p> : null}</Empty>
      ) : (
        <>
          <div class="table-wrap">
            <table class="library-table">
              <thead>
                <tr>
                  <th>
                    <span class="visually-hidden">Preview</span>
                  </th>
                  <th>Name</th>
                  <th>Type</th>
                  <th class="num">Size</th>
                  <th class="hide-phone">Uploaded</th>
                  {writer ? <th>Actions</th> : null}
                </tr>
              </thead>
              <tbody>
                {files.map((f) => (
                  <tr key={f.id}>
                    <td class="library-thumb-cell">
                      {f.mimeType.startsWith('image/') ? (
                        <img class="library-thumb" src={apiUrl(`/files/${f.id}/content`, { v: f.size })} alt="" width={48} height={48} loading="lazy" />
                      ) : (
                        <span class="library-thumb library-thumb-doc" aria-hidden="true">
                          {f.extension.toUpperCase()}
                        </span>
                      )}
                    </td>
                    <td>
                      <a href={apiUrl(`/files/${f.id}/content`)} target="_blank" rel="noopener" class="library-name">
                        {f.name}
                      </a>{' '}
                      {f.archived ? <span class="badge">Archived</span> : null}
                    </td>
                    <td>
                      <span class="badge">{f.extension.toUpperCase()}</span>
                    </td>
                    <td class="num">{formatBytes(f.size)}</td>
                    <td class="hide-phone">{formatDate(f.createdAt)}</td>
                    {writer ? (
                      <td>
                        <div class="library-row-actions">
                          <Button kind="ghost" aria-label={`Rename ${f.name}`} onClick={() => setDialog({ kind: 'rename', id: f.id })}>
                            Rename
                          </Button>
                          <Button kind="ghost" aria-label={`${f.archived ? 'Restore' : 'Archive'} ${f.name}`} onClick={() => setArchived(f, !f.archived)}>
                            {f.archived ? 'Restore' : 'Archive'}
                          </Button>
                          <Button kind="danger" aria-label={`Delete ${f.name}`} onClick={() => setDialog({ kind: 'delete', id: f.id })}>
                            Delete
                          </Button>
                        </div>
                      </td>
                    ) : null}
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
          <Pager page={page} pageSize={FILES_PAGE} total={list.data.total ?? files.length} onPage={(p) => setQuery({ page: String(p) })} />
        </>
      )}
      {current && dialog?.kind === 'rename' ? (
        <RenameModal
          title="Rename file"
          label="File name"
          initial={current.name}
          maxLength={255}
          onClose={() => setDialog(null)}
          onSave={async (name) => {
            await patch(`/files/${current.id}`, { name })
            toast(`Renamed to ${name}`)
            list.reload()
          }}
        />
      ) : null}
      {current && dialog?.kind === 'delete' ? (
        <ConfirmModal
          title="Delete file?"
          confirm="Delete file"
          onClose={() => setDialog(null)}
          onConfirm={async () => {
            await del(`/files/${current.id}`)
            toast(`${current.name} deleted`)
            list.reload()
          }}
        >
          <p>
            <strong>{current.name}</strong> will be deleted for good. Links and QR codes that show it will go without it. Archive it instead to keep it for
            existing links.
          </p>
        </ConfirmModal>
      ) : null}
    </Page>
  )
}

function UploadZone({ onUploaded }: { onUploaded: () => void }) {
  const [progress, setProgress] = useState<string | null>(null)
  const [over, setOver] = useState(false)
  const input = useRef<HTMLInputElement>(null)
  const upload = async (list: FileList | null | undefined) => {
    const files = [...(list ?? [])]
    if (!files.length) return
    let done = 0
    for (const [i, file] of files.entries()) {
      setProgress(`Uploading ${file.name} (${i + 1} of ${files.length})…`)
      const form = new FormData()
      form.append('file', file)
      try {
        await api('POST', '/files', { form })
        done++
      } catch (e) {
        toast(`${file.name}: ${errorText(e)}`, 'error')
      }
    }
    setProgress(null)
    if (input.current) input.current.value = ''
    if (done) {
      toast(done === 1 ? 'File uploaded' : `${done} files uploaded`)
      onUploaded()
    }
  }
  return (
    <section
      aria-label="File drop zone"
      class={`library-drop${over ? ' library-drop-over' : ''}`}
      onDragOver={(e) => {
        e.preventDefault()
        setOver(true)
      }}
      onDragLeave={() => setOver(false)}
      onDrop={(e) => {
        e.preventDefault()
        setOver(false)
        upload(e.dataTransfer?.files)
      }}
    >
      <Field label="Upload files" hint="Drop files here or choose them. Images (PNG, JPEG, SVG, GIF, WebP), PDF, audio and video.">
        {(p) => <input {...p} ref={input} type="file" multiple disabled={!!progress} onChange={(e) => upload(e.currentTarget.files)} />}
      </Field>
      <p class="library-progress" role="status" aria-live="polite">
        {progress}
      </p>
    </section>
  )
}

// ---------------------------------------------------------------- tags

const TAGS_PAGE = 50
export const TAG_COLORS = ['red', 'orange', 'yellow', 'green', 'teal', 'blue', 'purple', 'pink', 'brown', 'gray'] as const
const colourName = (c: string) => c.charAt(0).toUpperCase() + c.slice(1)

function ColourSelect({ value, onChange, label }: { value: string; onChange: (c: string) => void; label: string }) {
  return (
    <Field label={label}>
      {(p) => (
        <select {...p} value={value} onChange={(e) => onChange(e.currentTarget.value)}>
          <option value="">Pick one for me</option>
          {TAG_COLORS.map((c) => (
            <option key={c} value={c}>
              {colourName(c)}
            </option>
          ))}
        </select>
      )}
    </Field>
  )
}

export function TagsScreen({ query }: ScreenProps) {
  const writer = canWrite(useSession())
  const page = pageOf(query)
  const search = query.get('q') ?? ''
  const list = useResource(
    (signal) => api<TagRecord[]>('GET', '/tags', { query: { page, pageSize: TAGS_PAGE, search, sortBy: 'name', sortOrder: 'asc' }, signal }),
    [page, search],
  )
  const [dialog, setDialog] = useState<Dialog>(null)
  const [editColour, setEditColour] = useState('')
  const tags = list.data?.data ?? []
  const current = dialog ? tags.find((t) => t.id === dialog.id) : undefined

  return (
    <Page title="Tags">
      <p class="muted library-intro">Tags group links: by campaign, by shop, by season. Filter links and statistics by them.</p>
      {writer ? <NewTagForm onCreated={list.reload} /> : null}
      <SearchBar label="Search tags" value={search} />
      {list.error && !list.data ? (
        <ErrorBox error={list.error} retry={list.reload} />
      ) : !list.data ? (
        <Loading />
      ) : tags.length === 0 ? (
        <Empty title={search ? 'No tags match' : 'No tags yet'}>{writer && !search ? <p>Add a first tag above, such as "Summer menu".</p> : null}</Empty>
      ) : (
        <>
          <ul class="library-tags">
            {tags.map((t) => (
              <li key={t.id} class="library-tag card">
                <span class={`library-swatch library-color-${t.color}`} aria-hidden="true" />
                <span class="library-tag-name">{t.name}</span>
                <span class="muted library-tag-colour">{colourName(t.color)}</span>
                {writer ? (
                  <span class="library-row-actions">
                    <Button
                      kind="ghost"
                      aria-label={`Edit ${t.name}`}
                      onClick={() => {
                        setEditColour(t.color)
                        setDialog({ kind: 'rename', id: t.id })
                      }}
                    >
                      Edit
                    </Button>
                    <Button kind="danger" aria-label={`Delete ${t.name}`} onClick={() => setDialog({ kind: 'delete', id: t.id })}>
                      Delete
                    </Button>
                  </span>
                ) : null}
              </li>
            ))}
          </ul>
          <Pager page={page} pageSize={TAGS_PAGE} total={list.data.total ?? tags.length} onPage={(p) => setQuery({ page: String(p) })} />
        </>
      )}
      {current && dialog?.kind === 'rename' ? (
        <RenameModal
          title="Edit tag"
          label="Tag name"
          initial={current.name}
          maxLength={50}
          onClose={() => setDialog(null)}
          onSave={async (name) => {
            await patch(`/tags/${current.id}`, { name, ...(editColour ? { color: editColour } : {}) })
            toast(`Tag ${name} saved`)
            list.reload()
          }}
        >
          <ColourSelect label="Tag colour" value={editColour} onChange={setEditColour} />
        </RenameModal>
      ) : null}
      {current && dialog?.kind === 'delete' ? (
        <ConfirmModal
          title="Delete tag?"
          confirm="Delete tag"
          onClose={() => setDialog(null)}
          onConfirm={async () => {
            await del(`/tags/${current.id}`)
            toast(`Tag ${current.name} deleted`)
            list.reload()
          }}
        >
          <p>
            The tag <strong>{current.name}</strong> will be removed from every link that has it. The links themselves stay.
          </p>
        </ConfirmModal>
      ) : null}
    </Page>
  )
}

function NewTagForm({ onCreated }: { onCreated: () => void }) {
  const [name, setName] = useState('')
  const [color, setColor] = useState('')
  const [error, setError] = useState<string | null>(null)
  const [busy, setBusy] = useState(false)
  return (
    <form
      class="toolbar library-new card"
      onSubmit={async (e) => {
        e.preventDefault()
        if (!name.trim()) return setError('Give the tag a name')
        setBusy(true)
        setError(null)
        try {
          const t = await post<TagRecord>('/tags', { name: name.trim(), ...(color ? { color } : {}) })
          toast(`Tag ${t.name} added`)
          setName('')
          onCreated()
        } catch (err) {
          setError(errorText(err))
        } finally {
          setBusy(false)
        }
      }}
    >
      <Field label="New tag name" error={error}>
        {(p) => <input {...p} type="text" maxLength={50} value={name} onInput={(e) => setName(e.currentTarget.value)} />}
      </Field>
      <ColourSelect label="Colour" value={color} onChange={setColor} />
      <Button type="submit" kind="primary" busy={busy}>
        Add tag
      </Button>
    </form>
  )
}

// ---------------------------------------------------------------- templates

const TEMPLATES_PAGE = 12

export function TemplatesScreen({ query }: ScreenProps) {
  const session = useSession()
  const page = pageOf(query)
  const search = query.get('q') ?? ''
  const archived = query.get('archived') === '1'
  const list = useResource(
    (signal) =>
      api<TemplateRecord[]>('GET', '/qr/templates', {
        query: { page, pageSize: TEMPLATES_PAGE, search, includeArchived: archived || undefined, sortBy: 'created_at', sortOrder: 'desc' },
        signal,
      }),
    [page, search, archived],
  )
  const [dialog, setDialog] = useState<Dialog>(null)
  const templates = list.data?.data ?? []
  const current = dialog ? templates.find((t) => t.id === dialog.id) : undefined
  // Templates are shared: everyone reads them; members change their own, admins all.
  const mayChange = (t: TemplateRecord) => canWrite(session) && (isAdmin(session) || t.userId === session.userId)

  const setArchived = async (t: TemplateRecord, value: boolean) => {
    try {
      await patch(`/qr/templates/${t.id}`, { archived: value })
      toast(value ? `${t.name} archived` : `${t.name} restored`)
      list.reload()
    } catch (e) {
      toast(errorText(e), 'error')
    }
  }

  return (
    <Page
      title="QR templates"
      actions={
        canWrite(session) ? (
          <Link href="/qr" class="btn btn-primary">
            New template
          </Link>
        ) : null
      }
    >
      <p class="muted library-intro">Saved QR designs your team can put on any link in one click.</p>
      <SearchBar label="Search templates" value={search} archivedLabel="Show archived templates" archived={archived} />
      {list.error && !list.data ? (
        <ErrorBox error={list.error} retry={list.reload} />
      ) : !list.data ? (
        <Loading />
      ) : templates.length === 0 ? (
        <Empty title={search ? 'No templates match' : 'No templates yet'}>
          {canWrite(session) && !search ? (
            <p>
              Design a code in the <Link href="/qr">QR designer</Link> and save it as a template.
            </p>
          ) : null}
        </Empty>
      ) : (
        <>
          <ul class="library-templates">
            {templates.map((t) => (
              <li key={t.id} class="card library-template">
                <img
                  class="library-template-image"
                  src={apiUrl(`/qr/templates/${t.id}/preview`, { width: 200, v: t.updatedAt })}
                  alt={`QR code in the ${t.name} design`}
                  width={160}
                  height={160}
                  loading="lazy"
                />
                <h2 class="library-template-name">
                  {t.name} {t.archived ? <span class="badge">Archived</span> : null}
                </h2>
                {t.comment ? <p class="muted library-template-comment">{t.comment}</p> : null}
                <p class="muted library-template-date">Saved {formatDate(t.updatedAt)}</p>
                <div class="library-row-actions">
                  <Link href={`/qr?template=${encodeURIComponent(t.id)}`} class="btn" aria-label={`Open in designer: ${t.name}`}>
                    Open in designer
                  </Link>
                  {mayChange(t) ? (
                    <>
                      <Button kind="ghost" aria-label={`Rename ${t.name}`} onClick={() => setDialog({ kind: 'rename', id: t.id })}>
                        Rename
                      </Button>
                      <Button kind="ghost" aria-label={`${t.archived ? 'Restore' : 'Archive'} ${t.name}`} onClick={() => setArchived(t, !t.archived)}>
                        {t.archived ? 'Restore' : 'Archive'}
                      </Button>
                      <Button kind="danger" aria-label={`Delete ${t.name}`} onClick={() => setDialog({ kind: 'delete', id: t.id })}>
                        Delete
                      </Button>
                    </>
                  ) : null}
                </div>
              </li>
            ))}
          </ul>
          <Pager page={page} pageSize={TEMPLATES_PAGE} total={list.data.total ?? templates.length} onPage={(p) => setQuery({ page: String(p) })} />
        </>
      )}
      {current && dialog?.kind === 'rename' ? (
        <RenameModal
          title="Rename template"
          label="Template name"
          initial={current.name}
          maxLength={100}
          onClose={() => setDialog(null)}
          onSave={async (name) => {
            await patch(`/qr/templates/${current.id}`, { name })
            toast(`Renamed to ${name}`)
            list.reload()
          }}
        />
      ) : null}
      {current && dialog?.kind === 'delete' ? (
        <ConfirmModal
          title="Delete template?"
          confirm="Delete template"
          onClose={() => setDialog(null)}
          onConfirm={async () => {
            await del(`/qr/templates/${current.id}`)
            toast(`Template ${current.name} deleted`)
            list.reload()
          }}
        >
          <p>
            The template <strong>{current.name}</strong> will be deleted. Links already designed with it keep their design.
          </p>
        </ConfirmModal>
      ) : null}
    </Page>
  )
}
