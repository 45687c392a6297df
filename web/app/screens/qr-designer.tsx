/**
 * The QR designer: a link's QR code (`/links/:id/qr`) or a template without a link (`/qr`,
 * `/qr?template=<id>`). The preview is rendered and decoded by the server as the user edits,
 * so every design shown, saved or downloaded scans; repairs and refusals are said plainly.
 */
import { useState } from 'preact/hooks'
import { ApiError, apiUrl, errorText, get, patch, post } from '../api'
import { downloadBlob } from '../download'
import { Link } from '../router'
import type { ScreenProps } from '../routes'
import { canWrite, useSession } from '../session'
import { Button, ErrorBox, Field, Loading, Modal, Page, toast, useResource } from '../ui'
import { AdvancedControls, ColourControls, type FileRecord, FrameControls, LogoControls, ShapeControls } from './qr-designer/controls'
import { cleaned, type QrOptions } from './qr-designer/design'
import { renderDesign, usePreview } from './qr-designer/preview'

interface LinkRecord {
  id: string
  key: string
  shortLink: string
  destination: string
  qrOptions: QrOptions | null
}
interface TemplateRecord {
  id: string
  name: string
  comment: string
  qrOptions: QrOptions
  updatedAt: string
}

export function QrDesignerScreen({ params, query }: ScreenProps) {
  const linkId = params.id
  const templateId = linkId ? null : query.get('template')
  const start = useResource(
    async (signal) => {
      const link = linkId ? await get<LinkRecord>(`/links/${encodeURIComponent(linkId)}`, undefined, signal) : null
      const template = templateId ? await get<TemplateRecord>(`/qr/templates/${encodeURIComponent(templateId)}`, undefined, signal) : null
      return { link, template }
    },
    [linkId, templateId],
  )
  const title = start.data?.link ? 'QR code' : 'QR designer'
  return (
    <Page title={title}>
      {start.error ? (
        <ErrorBox error={start.error} retry={start.reload} />
      ) : !start.data ? (
        <Loading />
      ) : (
        <Designer key={`${linkId ?? ''}:${templateId ?? ''}`} link={start.data.link} template={start.data.template} />
      )}
    </Page>
  )
}

function Designer({ link, template }: { link: LinkRecord | null; template: TemplateRecord | null }) {
  const session = useSession()
  const writer = canWrite(session)
  const initial = (link?.qrOptions ?? template?.qrOptions ?? {}) as QrOptions
  const [design, setDesign] = useState<QrOptions>(initial)
  const [saved, setSaved] = useState(JSON.stringify(cleaned(initial)))
  const [saving, setSaving] = useState(false)
  const [saveError, setSaveError] = useState<string | null>(null)
  const [templateOpen, setTemplateOpen] = useState(false)
  const preview = usePreview(design, link?.id, writer)
  const files = useResource((signal) => (writer ? get<FileRecord[]>('/files', { pageSize: 100 }, signal) : Promise.resolve([])), [writer])
  const [uploaded, setUploaded] = useState<FileRecord[]>([])
  const allFiles = [...uploaded, ...(files.data ?? []).filter((f) => !uploaded.some((u) => u.id === f.id))]
  const dirty = JSON.stringify(cleaned(design)) !== saved

  const update = (change: (d: QrOptions) => void) =>
    setDesign((d) => {
      const next = JSON.parse(JSON.stringify(d)) as QrOptions
      change(next)
      return next
    })

  const saveToLink = async () => {
    if (!link) return
    setSaving(true)
    setSaveError(null)
    try {
      const qrOptions = cleaned(design)
      await patch(`/links/${encodeURIComponent(link.id)}`, { qrOptions })
      setSaved(JSON.stringify(qrOptions))
      toast('Design saved to the link')
    } catch (e) {
      setSaveError(errorText(e))
    } finally {
      setSaving(false)
    }
  }

  if (!writer)
    return (
      <div class="qr-designer qr-designer-readonly">
        {link ? (
          <>
            <p class="muted">
              Your account is read-only: this is the link's saved design. <span class="mono">{link.shortLink}</span>
            </p>
            <img
              class="qr-designer-image"
              src={apiUrl(`/qr/${encodeURIComponent(link.id)}`, { width: 360 })}
              alt={`QR code of ${link.shortLink}`}
              width={360}
            />
          </>
        ) : (
          <p class="muted">Your account is read-only, so it cannot design QR codes. Saved templates are listed under Templates.</p>
        )}
      </div>
    )

  return (
    <div class="qr-designer">
      <section class="qr-designer-preview card" aria-label="Preview">
        {link ? (
          <p class="qr-designer-target">
            Encodes <span class="mono">{link.shortLink}</span> (scans are counted) · <Link href={`/links/${encodeURIComponent(link.id)}`}>Edit link</Link>
          </p>
        ) : (
          <p class="qr-designer-target muted">
            Shown on a sample link. {template ? `Template: ${template.name}` : 'Save it as a template to use it on links.'}
          </p>
        )}
        <div class={`qr-designer-frame${preview.busy ? ' qr-designer-busy' : ''}${preview.refusal ? ' qr-designer-stale' : ''}`}>
          {preview.url ? <img class="qr-designer-image" src={preview.url} alt="QR code preview" /> : <Loading label="Rendering…" />}
        </div>
        <div class="qr-designer-status" role="status" aria-live="polite">
          {preview.busy ? <span class="muted">Updating preview…</span> : preview.refusal ? null : <span class="qr-designer-ok">Checked: this code scans.</span>}
        </div>
        {preview.refusal ? (
          <div class="qr-designer-refusal" role="alert">
            <strong>This design would not scan, so it cannot be used.</strong> {preview.refusal}
          </div>
        ) : null}
        {preview.repairs.length && !preview.refusal ? (
          <div class="qr-designer-repairs">
            <strong>Adjusted so it scans:</strong>
            <ul>
              {preview.repairs.map((r) => (
                <li key={r}>{r}</li>
              ))}
            </ul>
          </div>
        ) : null}
        <DownloadBar design={design} link={link} disabled={!!preview.refusal} />
        <div class="qr-designer-actions">
          {link ? (
            <Button kind="primary" busy={saving} disabled={!!preview.refusal || !dirty} onClick={saveToLink}>
              {dirty ? 'Save to link' : 'Saved'}
            </Button>
          ) : null}
          <Button disabled={!!preview.refusal} onClick={() => setTemplateOpen(true)}>
            Save as template
          </Button>
          {dirty && link ? <span class="badge">Unsaved changes</span> : null}
        </div>
        {saveError ? (
          <p class="field-error" role="alert">
            {saveError}
          </p>
        ) : null}
      </section>
      <div class="qr-designer-controls">
        <TemplatePicker onApply={(t) => setDesign(JSON.parse(JSON.stringify(t.qrOptions ?? {})))} />
        <ShapeControls design={design} update={update} />
        <ColourControls design={design} update={update} />
        <LogoControls design={design} update={update} files={allFiles} onUploaded={(f) => setUploaded((xs) => [f, ...xs])} />
        <FrameControls design={design} update={update} files={allFiles} />
        <AdvancedControls design={design} update={update} />
        <Button kind="ghost" onClick={() => setDesign({})}>
          Reset to a plain code
        </Button>
      </div>
      {templateOpen ? <SaveTemplateModal design={design} onClose={() => setTemplateOpen(false)} /> : null}
    </div>
  )
}

function DownloadBar({ design, link, disabled }: { design: QrOptions; link: LinkRecord | null; disabled: boolean }) {
  const [width, setWidth] = useState(600)
  const [busy, setBusy] = useState<string | null>(null)
  const valid = Number.isInteger(width) && width >= 100 && width <= 1000
  const download = async (format: 'image' | 'svg') => {
    setBusy(format)
    try {
      const { blob } = await renderDesign({ qrOptions: design, linkId: link?.id, width, format })
      downloadBlob(blob, `qr-${link?.key ?? 'design'}-${width}.${format === 'svg' ? 'svg' : 'png'}`)
    } catch (e) {
      toast(errorText(e), 'error')
    } finally {
      setBusy(null)
    }
  }
  return (
    <div class="qr-designer-download">
      <Field label="Download width (px)" error={valid ? null : 'Between 100 and 1000 pixels'}>
        {(p) => <input {...p} type="number" min={100} max={1000} step={50} value={width} onInput={(e) => setWidth(Number(e.currentTarget.value))} />}
      </Field>
      <Button disabled={disabled || !valid} busy={busy === 'image'} onClick={() => download('image')}>
        Download PNG
      </Button>
      <Button disabled={disabled || !valid} busy={busy === 'svg'} onClick={() => download('svg')}>
        Download SVG
      </Button>
    </div>
  )
}

function TemplatePicker({ onApply }: { onApply: (t: TemplateRecord) => void }) {
  const list = useResource((signal) => get<TemplateRecord[]>('/qr/templates', { pageSize: 100, sortBy: 'name', sortOrder: 'asc' }, signal), [])
  const [chosen, setChosen] = useState('')
  if (list.error) return <ErrorBox error={list.error} retry={list.reload} />
  const templates = list.data ?? []
  return (
    <div class="qr-designer-section qr-designer-row qr-designer-templates">
      <Field label="Start from a template" hint={list.loading ? 'Loading templates…' : templates.length ? undefined : 'No templates yet.'}>
        {(p) => (
          <select {...p} value={chosen} disabled={!templates.length} onChange={(e) => setChosen(e.currentTarget.value)}>
            <option value="">Choose a template</option>
            {templates.map((t) => (
              <option key={t.id} value={t.id}>
                {t.name}
              </option>
            ))}
          </select>
        )}
      </Field>
      <Button
        disabled={!chosen}
        onClick={() => {
          const t = templates.find((x) => x.id === chosen)
          if (t) {
            onApply(t)
            toast(`Applied template ${t.name}`)
          }
        }}
      >
        Apply template
      </Button>
    </div>
  )
}

function SaveTemplateModal({ design, onClose }: { design: QrOptions; onClose: () => void }) {
  const [name, setName] = useState('')
  const [comment, setComment] = useState('')
  const [error, setError] = useState<string | null>(null)
  const [busy, setBusy] = useState(false)
  const save = async (e: Event) => {
    e.preventDefault()
    if (!name.trim()) return setError('Give the template a name')
    setBusy(true)
    setError(null)
    try {
      const t = await post<TemplateRecord>('/qr/templates', { name: name.trim(), comment, qrOptions: cleaned(design) })
      toast(`Template ${t.name} saved`)
      onClose()
    } catch (err) {
      setError(err instanceof ApiError ? err.message : errorText(err))
    } finally {
      setBusy(false)
    }
  }
  return (
    <Modal title="Save as template" onClose={onClose}>
      <form onSubmit={save}>
        <Field label="Template name" error={error}>
          {(p) => <input {...p} type="text" maxLength={100} required value={name} onInput={(e) => setName(e.currentTarget.value)} />}
        </Field>
        <Field label="Comment" hint="Optional, for your colleagues.">
          {(p) => <textarea {...p} maxLength={500} value={comment} onInput={(e) => setComment(e.currentTarget.value)} />}
        </Field>
        <div class="qr-designer-actions">
          <Button type="submit" kind="primary" busy={busy}>
            Save template
          </Button>
          <Button onClick={onClose}>Cancel</Button>
        </div>
      </form>
    </Modal>
  )
}
