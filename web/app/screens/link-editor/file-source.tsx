/** The content of a file link: a new upload (POST /files), a file already stored (GET /files), or a URL. */
import { useState } from 'preact/hooks'
import { api, errorText, get } from '../../api'
import { ErrorBox, Field, Loading, useResource } from '../../ui'
import { GroupError, TextInput, useFieldError } from './fields'
import { acceptOf, type ContentForm, FILE_EXTENSIONS } from './types'

interface FileRecord {
  id: string
  name: string
  size: number
  extension: string
  mimeType: string
}

export const formatBytes = (n: number) => (n < 1024 ? `${n} B` : n < 1024 * 1024 ? `${(n / 1024).toFixed(1)} KB` : `${(n / 1024 / 1024).toFixed(1)} MB`)

export function FileSource({ type, form, set, readOnly }: { type: string; form: ContentForm; set: (patch: Partial<ContentForm>) => void; readOnly: boolean }) {
  const [picking, setPicking] = useState(false)
  const [uploading, setUploading] = useState(false)
  const [uploadError, setUploadError] = useState<string | null>(null)
  const fileError = useFieldError('data.fileId')
  // A saved link holds only the file's id: its name comes from the files API.
  const named = useResource(
    (signal) => (form.fileId && !form.fileName ? get<FileRecord>(`/files/${encodeURIComponent(form.fileId)}`, undefined, signal) : Promise.resolve(null)),
    [form.fileId],
  )
  const fileName = form.fileName || named.data?.name

  const upload = async (file: File | undefined) => {
    if (!file) return
    setUploading(true)
    setUploadError(null)
    try {
      const body = new FormData()
      body.append('file', file)
      const { data } = await api<FileRecord>('POST', '/files', { form: body })
      set({ fileId: data.id, fileName: data.name })
    } catch (e) {
      setUploadError(errorText(e))
    } finally {
      setUploading(false)
    }
  }

  return (
    <div class="le-file">
      <fieldset class="segmented le-write">
        <legend class="label">Where is the file?</legend>
        <label>
          <input type="radio" name="file-source" checked={form.source === 'file'} onChange={() => set({ source: 'file' })} /> Upload or pick a stored file
        </label>
        <label>
          <input type="radio" name="file-source" checked={form.source === 'url'} onChange={() => set({ source: 'url' })} /> A link to it
        </label>
      </fieldset>
      <GroupError path="data" />
      {form.source === 'url' ? (
        <TextInput
          label="File URL"
          path="data.url"
          type="url"
          value={form.url}
          onValue={(url) => set({ url })}
          placeholder="https://example.com/brochure.pdf"
        />
      ) : (
        <div class={`le-file-box${fileError ? ' field-invalid' : ''}`}>
          {form.fileId ? (
            <p class="le-file-chosen">
              <span aria-hidden="true">📎</span> <strong>{fileName || form.fileId}</strong> <span class="muted mono">{form.fileId}</span>
            </p>
          ) : (
            <p class="muted">No file chosen yet.</p>
          )}
          {readOnly ? null : (
            <div class="le-file-actions">
              <Field label={form.fileId ? 'Replace with a new upload' : 'Upload a file'} hint={hintOf(type)} error={uploadError ?? fileError}>
                {(p) => (
                  <input {...p} type="file" name="upload" accept={acceptOf(type)} disabled={uploading} onChange={(e) => upload(e.currentTarget.files?.[0])} />
                )}
              </Field>
              {uploading ? <Loading label="Uploading…" /> : null}
              <button type="button" class="btn" aria-expanded={picking} onClick={() => setPicking(!picking)}>
                {picking ? 'Hide stored files' : 'Pick a stored file'}
              </button>
              {picking ? (
                <StoredFiles
                  type={type}
                  selected={form.fileId}
                  onPick={(f) => {
                    set({ fileId: f.id, fileName: f.name })
                    setPicking(false)
                  }}
                />
              ) : null}
            </div>
          )}
        </div>
      )}
    </div>
  )
}

function hintOf(type: string) {
  const ext = FILE_EXTENSIONS[type]
  return ext ? `Accepted: ${ext.join(', ').toUpperCase()}.` : 'Images, PDF, audio and video files.'
}

function StoredFiles({ type, selected, onPick }: { type: string; selected: string; onPick: (f: FileRecord) => void }) {
  const [search, setSearch] = useState('')
  const files = useResource((signal) => get<FileRecord[]>('/files', { pageSize: 100, search: search.trim() || undefined }, signal), [search])
  const allowed = FILE_EXTENSIONS[type]
  const list = (files.data ?? []).filter((f) => !allowed || allowed.includes(f.extension))
  return (
    <div class="le-stored">
      <Field label="Search stored files">{(p) => <input {...p} type="search" value={search} onInput={(e) => setSearch(e.currentTarget.value)} />}</Field>
      {files.error ? (
        <ErrorBox error={files.error} retry={files.reload} />
      ) : files.loading && !files.data ? (
        <Loading />
      ) : list.length === 0 ? (
        <p class="muted">
          No stored {allowed ? allowed.join('/').toUpperCase() : ''} files{search ? ' match' : ' yet'}.
        </p>
      ) : (
        <ul class="le-stored-list">
          {list.map((f) => (
            <li key={f.id}>
              <button type="button" class="btn btn-ghost" aria-pressed={f.id === selected} onClick={() => onPick(f)}>
                <span>{f.name}</span> <span class="muted">{formatBytes(f.size)}</span>
              </button>
            </li>
          ))}
        </ul>
      )}
    </div>
  )
}
