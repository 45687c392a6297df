/**
 * Print runs: the links chosen on the Links screen (a selection, or every link its filters
 * match) as a ZIP of PNG/SVG/PDF files or as PDF sheets; the run's progress; the download.
 * Formats, papers, captions and sheet bounds are the API's own values (src/qr/qr.batches.values).
 */
import { useEffect, useState } from 'preact/hooks'
import { BATCH_FORMATS, CAPTIONS, MAX_BATCH_LINKS, PAPERS, SHEET_MM } from '../../../src/qr/qr.batches.values'
import { ApiError, api, apiUrl } from '../api'
import type { ScreenProps } from '../routes'
import { Button, ErrorBox, Field, Page, toast } from '../ui'
import { filtersFrom, listQuery } from './links/model'

type Format = (typeof BATCH_FORMATS)[number]
type Caption = (typeof CAPTIONS)[number]
interface Batch {
  id: string
  status: 'queued' | 'running' | 'done' | 'failed'
  total: number
  done: number
  failed: number
  format: Format
  size: number
  error: string | null
  expiresAt: string | null
  failures: { linkId: string; shortLink: string; message: string }[]
}

const FORMAT_LABELS: Record<Format, string> = {
  'zip-png': 'ZIP of PNG images',
  'zip-svg': 'ZIP of SVG images',
  'zip-pdf': 'ZIP of PDF files (vector, one code each)',
  'pdf-sheet': 'PDF sheets (codes laid out on pages)',
}
const CAPTION_LABELS: Record<Caption, string> = { key: 'The key', shortLink: 'The short link', none: 'No caption' }

export function PrintRunsScreen({ query }: ScreenProps) {
  const ids = (query.get('ids') ?? '').split(',').filter(Boolean)
  const filters = filtersFrom(query)
  const { sortBy: _s, sortOrder: _o, ...filter } = listQuery(filters)
  const byFilter = ids.length === 0
  const [count, setCount] = useState<number | null>(byFilter ? null : ids.length)
  const [format, setFormat] = useState<Format>('pdf-sheet')
  const [width, setWidth] = useState('300')
  const [paper, setPaper] = useState<keyof typeof PAPERS>('A4')
  const [codeMm, setCodeMm] = useState(String(SHEET_MM.codeMm.default))
  const [marginMm, setMarginMm] = useState(String(SHEET_MM.marginMm.default))
  const [gapMm, setGapMm] = useState(String(SHEET_MM.gapMm.default))
  const [cropMarks, setCropMarks] = useState(true)
  const [caption, setCaption] = useState<Caption>('key')
  const [batch, setBatch] = useState<Batch | null>(null)
  const [error, setError] = useState<unknown>(null)
  const [busy, setBusy] = useState(false)

  useEffect(() => {
    if (!byFilter) return
    api<{ count: number }>('GET', '/links/count', { query: filter }).then(
      ({ data }) => setCount(data.count),
      (e) => setError(e),
    )
  }, [query.toString()])

  // Follows a run until it ends.
  useEffect(() => {
    if (!batch || batch.status === 'done' || batch.status === 'failed') return
    const t = setTimeout(async () => {
      try {
        setBatch((await api<Batch>('GET', `/qr/batches/${batch.id}`)).data)
      } catch (e) {
        setError(e)
      }
    }, 400)
    return () => clearTimeout(t)
  }, [batch])

  const start = async (e: Event) => {
    e.preventDefault()
    setBusy(true)
    setError(null)
    const linkFilter = Object.fromEntries(Object.entries(filter).filter(([, v]) => v !== undefined && v !== ''))
    const body = {
      ...(byFilter ? { linkFilter } : { linkIds: ids }),
      format,
      width: Number(width),
      ...(format === 'pdf-sheet' ? { sheet: { paper, codeMm: Number(codeMm), marginMm: Number(marginMm), gapMm: Number(gapMm), cropMarks, caption } } : {}),
    }
    try {
      setBatch((await api<Batch>('POST', '/qr/batches', { body })).data)
    } catch (err) {
      setError(err)
      if (err instanceof ApiError) toast(err.message, 'error')
    } finally {
      setBusy(false)
    }
  }

  const running = batch && (batch.status === 'queued' || batch.status === 'running')
  const what = byFilter
    ? count === null
      ? 'the links your filters match'
      : `${count} link${count === 1 ? '' : 's'} matching your filters`
    : `${ids.length} selected link${ids.length === 1 ? '' : 's'}`
  return (
    <Page title="Print run">
      <section class="card print-what" aria-label="Links to print">
        <p>
          Print <strong>{what}</strong> (at most {MAX_BATCH_LINKS.toLocaleString('en')}). Every code is decoded before it goes in; one that cannot scan is left
          out and listed.
        </p>
      </section>
      <form class="card print-form" onSubmit={start} aria-label="Print run options">
        <Field label="Format">
          {(p) => (
            <select {...p} value={format} onChange={(e) => setFormat(e.currentTarget.value as Format)}>
              {BATCH_FORMATS.map((f) => (
                <option key={f} value={f}>
                  {FORMAT_LABELS[f]}
                </option>
              ))}
            </select>
          )}
        </Field>
        <Field label="Image width (px; points for PDF)" hint="100-1000; the scan check renders at this width.">
          {(p) => <input {...p} type="number" min={100} max={1000} value={width} onInput={(e) => setWidth(e.currentTarget.value)} />}
        </Field>
        {format === 'pdf-sheet' ? (
          <fieldset class="le-group">
            <legend class="label">Sheet</legend>
            <Field label="Paper">
              {(p) => (
                <select {...p} value={paper} onChange={(e) => setPaper(e.currentTarget.value as keyof typeof PAPERS)}>
                  {Object.entries(PAPERS).map(([name, [w, h]]) => (
                    <option key={name} value={name}>
                      {name} ({w} × {h} mm)
                    </option>
                  ))}
                </select>
              )}
            </Field>
            <MmField label="Code size (mm)" bounds={SHEET_MM.codeMm} value={codeMm} onValue={setCodeMm} />
            <MmField label="Margins (mm)" bounds={SHEET_MM.marginMm} value={marginMm} onValue={setMarginMm} />
            <MmField label="Gap between codes (mm)" bounds={SHEET_MM.gapMm} value={gapMm} onValue={setGapMm} />
            <Field label="Caption under each code">
              {(p) => (
                <select {...p} value={caption} onChange={(e) => setCaption(e.currentTarget.value as Caption)}>
                  {CAPTIONS.map((c) => (
                    <option key={c} value={c}>
                      {CAPTION_LABELS[c]}
                    </option>
                  ))}
                </select>
              )}
            </Field>
            <label class="check">
              <input type="checkbox" checked={cropMarks} onChange={(e) => setCropMarks(e.currentTarget.checked)} /> Crop marks
            </label>
          </fieldset>
        ) : null}
        <Button kind="primary" type="submit" busy={busy} disabled={Boolean(running) || count === 0}>
          Start print run
        </Button>
      </form>
      {error && !(error instanceof ApiError) ? <ErrorBox error={error} /> : null}
      {batch ? <Progress batch={batch} /> : null}
    </Page>
  )
}

/** A length in mm within the API's bounds for it. */
function MmField({ label, bounds, value, onValue }: { label: string; bounds: { min: number; max: number }; value: string; onValue: (v: string) => void }) {
  return (
    <Field label={label} hint={`${bounds.min}-${bounds.max}`}>
      {(p) => <input {...p} type="number" min={bounds.min} max={bounds.max} value={value} onInput={(e) => onValue(e.currentTarget.value)} />}
    </Field>
  )
}

function Progress({ batch }: { batch: Batch }) {
  const made = batch.done + batch.failed
  return (
    <section class="card print-progress" aria-label="Print run progress">
      <p role="status">
        {batch.status === 'done'
          ? `Done: ${batch.done} code${batch.done === 1 ? '' : 's'}${batch.failed ? `, ${batch.failed} left out` : ''}.`
          : batch.status === 'failed'
            ? `The run failed: ${batch.error}`
            : `${batch.status === 'queued' ? 'Queued' : 'Making codes'}: ${made} of ${batch.total}`}
      </p>
      <progress max={batch.total} value={made} aria-label="Codes made" />
      {batch.status === 'done' ? (
        <p>
          <a class="btn btn-primary" href={apiUrl(`/qr/batches/${batch.id}/file`)} download>
            Download {batch.format === 'pdf-sheet' ? 'PDF' : 'ZIP'} ({(batch.size / 1024).toFixed(0)} KB)
          </a>{' '}
          <span class="hint">Kept until {batch.expiresAt ? new Date(batch.expiresAt).toLocaleString() : 'tomorrow'}.</span>
        </p>
      ) : null}
      {batch.failures.length ? (
        <details>
          <summary>Codes left out ({batch.failures.length})</summary>
          <ul>
            {batch.failures.map((f) => (
              <li key={f.linkId}>
                {f.shortLink}: {f.message}
              </li>
            ))}
          </ul>
        </details>
      ) : null}
    </section>
  )
}
