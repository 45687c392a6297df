/**
 * Import: a file exported from this dashboard or from Bitly, Shlink, YOURLS, Kutt or Rebrandly
 * goes to POST /imports. First as a dry run (the server reads and checks every row and writes
 * nothing), shown as a preview with each problem row; then for real, with the record's counts
 * moving as it runs. The server does the reading, so every format, file size and rule is the
 * API's own and a file imported twice creates nothing new.
 */
import type { Static } from '@sinclair/typebox'
import { useEffect, useMemo, useRef, useState } from 'preact/hooks'
import type { ImportRecord } from '../../../src/imports/imports.schema'
import { IMPORT_SOURCES, type ImportSourceName, SOURCE_HELP } from '../../../src/imports/imports.sources'
import { api, errorText, get } from '../api'
import { Link } from '../router'
import type { ScreenProps } from '../routes'
import { canWrite, useSession } from '../session'
import { Button, Empty, ErrorBox, Field, Loading, Page, useResource } from '../ui'
import { fetchDomains } from './links/model'

type ImportResult = Static<typeof ImportRecord>

/** How often a running import's record is read. */
const POLL_MS = 500

type Phase =
  | { step: 'choose' }
  | { step: 'checking'; record: ImportResult | null }
  | { step: 'preview'; record: ImportResult }
  | { step: 'importing'; record: ImportResult }
  | { step: 'done'; record: ImportResult }

/** Sends the file, then reads the record until the import ends; `onRecord` hears every reading. */
async function runImport(
  file: File,
  fields: { source: ImportSourceName; domain: string; dryRun: boolean },
  onRecord: (r: ImportResult) => void,
  signal: AbortSignal,
): Promise<ImportResult> {
  const form = new FormData()
  form.set('source', fields.source)
  if (fields.domain) form.set('domain', fields.domain)
  form.set('dryRun', String(fields.dryRun))
  form.set('file', file, file.name)
  let record = (await api<ImportResult>('POST', '/imports', { form, signal })).data
  onRecord(record)
  while (record.status === 'running') {
    await new Promise((resolve) => setTimeout(resolve, POLL_MS))
    if (signal.aborted) throw new DOMException('left the screen', 'AbortError')
    record = await get<ImportResult>(`/imports/${record.id}`, undefined, signal)
    onRecord(record)
  }
  return record
}

const plural = (n: number, one: string, many = `${one}s`) => `${n.toLocaleString()} ${n === 1 ? one : many}`

export function ImportScreen(_: ScreenProps) {
  const session = useSession()
  const domains = useResource((signal) => fetchDomains(signal), [])
  const domainNames = useMemo(() => (domains.data ?? []).map((d) => d.slug), [domains.data])
  const [source, setSource] = useState<ImportSourceName>('csv')
  const [chosenDomain, setChosenDomain] = useState('')
  const domain = chosenDomain || domainNames[0] || ''
  const [file, setFile] = useState<File | null>(null)
  const [phase, setPhase] = useState<Phase>({ step: 'choose' })
  const [error, setError] = useState<string | null>(null)
  const running = useRef<AbortController | null>(null)
  useEffect(() => () => running.current?.abort(), [])

  if (!canWrite(session))
    return (
      <Page title="Import links">
        <Empty title="Your account can only read">Importing creates links; ask an admin for a member account.</Empty>
      </Page>
    )
  if (domains.error) return <ErrorBox error={domains.error} retry={domains.reload} />
  if (!domains.data) return <Loading />

  const send = async (f: File, dryRun: boolean) => {
    running.current?.abort()
    const controller = new AbortController()
    running.current = controller
    setError(null)
    setPhase(dryRun ? { step: 'checking', record: null } : { step: 'importing', record: (phase as { record: ImportResult }).record })
    try {
      const record = await runImport(
        f,
        { source, domain, dryRun },
        (r) => setPhase(dryRun ? { step: 'checking', record: r } : { step: 'importing', record: r }),
        controller.signal,
      )
      setPhase(dryRun ? { step: 'preview', record } : { step: 'done', record })
    } catch (e) {
      if ((e as Error).name === 'AbortError') return
      setError(dryRun ? `${f.name} could not be checked: ${errorText(e)}` : `The import could not run: ${errorText(e)}`)
      setPhase({ step: 'choose' })
    }
  }
  const choose = (f: File) => {
    setFile(f)
    void send(f, true)
  }
  const restart = () => {
    running.current?.abort()
    setFile(null)
    setError(null)
    setPhase({ step: 'choose' })
  }

  return (
    <Page
      title="Import links"
      actions={
        <Link href="/links" class="btn">
          Back to links
        </Link>
      }
    >
      {phase.step === 'choose' || phase.step === 'checking' ? (
        <ChooseFile
          source={source}
          setSource={setSource}
          domains={domainNames}
          domain={domain}
          setDomain={setChosenDomain}
          onFile={choose}
          error={error}
          checking={phase.step === 'checking' ? phase.record : undefined}
        />
      ) : null}
      {phase.step === 'preview' || phase.step === 'importing' || phase.step === 'done' ? (
        <Report phase={phase} fileName={file?.name ?? ''} onImport={() => file && send(file, false)} onRestart={restart} />
      ) : null}
    </Page>
  )
}

function ChooseFile({
  source,
  setSource,
  domains,
  domain,
  setDomain,
  onFile,
  error,
  checking,
}: {
  source: ImportSourceName
  setSource: (s: ImportSourceName) => void
  domains: string[]
  domain: string
  setDomain: (d: string) => void
  onFile: (f: File) => void
  error: string | null
  /** Set while the file is checked (null until the server answers). */
  checking: ImportResult | null | undefined
}) {
  const [over, setOver] = useState(false)
  const busy = checking !== undefined
  return (
    <section class="card import-choose" aria-labelledby="import-choose-title">
      <h2 id="import-choose-title">Choose a file</h2>
      <Field label="Exported from" hint={`Send ${SOURCE_HELP[source].file}.`}>
        {(p) => (
          <select {...p} value={source} disabled={busy} onChange={(e) => setSource(e.currentTarget.value as ImportSourceName)}>
            {IMPORT_SOURCES.map((s) => (
              <option key={s} value={s}>
                {SOURCE_HELP[s].label}
              </option>
            ))}
          </select>
        )}
      </Field>
      <Field
        label={source === 'csv' ? 'Short domain for rows without one' : 'Short domain for links on domains not served here'}
        hint={source === 'csv' ? undefined : 'Links on a domain this server serves keep it; the others (bit.ly, kutt.it, …) move here with their keys.'}
      >
        {(p) => (
          <select {...p} value={domain} disabled={busy} onChange={(e) => setDomain(e.currentTarget.value)}>
            {domains.map((d) => (
              <option key={d} value={d}>
                {d}
              </option>
            ))}
          </select>
        )}
      </Field>
      <p>Nothing is created until you have seen what the import will do. Importing the same file again creates nothing new.</p>
      {/* biome-ignore lint/a11y/noStaticElementInteractions: dropping is a pointer shortcut; the file input inside serves keyboards */}
      <div
        class={`import-drop${over ? ' import-drop-over' : ''}`}
        onDragOver={(e) => {
          e.preventDefault()
          setOver(true)
        }}
        onDragLeave={() => setOver(false)}
        onDrop={(e) => {
          e.preventDefault()
          setOver(false)
          const f = e.dataTransfer?.files[0]
          if (f && !busy) onFile(f)
        }}
      >
        <Field label="Export file" hint="Drop the file here or choose it (CSV or JSON, as the service exports it)." error={error}>
          {(p) => (
            <input
              {...p}
              type="file"
              accept=".csv,.json,text/csv,application/json"
              disabled={busy}
              onChange={(e) => {
                const f = e.currentTarget.files?.[0]
                if (f) onFile(f)
                e.currentTarget.value = ''
              }}
            />
          )}
        </Field>
        {busy ? (
          <Loading
            label={
              checking && checking.total > 0
                ? `Checking the rows… ${rowsRead(checking).toLocaleString()} of ${checking.total.toLocaleString()}`
                : 'Checking the rows…'
            }
          />
        ) : null}
      </div>
    </section>
  )
}

const rowsRead = (r: ImportResult) => r.created + r.updated + r.skipped + r.failed

function Report({
  phase,
  fileName,
  onImport,
  onRestart,
}: {
  phase: Extract<Phase, { step: 'preview' | 'importing' | 'done' }>
  fileName: string
  onImport: () => void
  onRestart: () => void
}) {
  const r = phase.record
  const importable = r.created + r.updated
  return (
    <section class="card import-preview" aria-labelledby="import-report-title">
      <h2 id="import-report-title">{phase.step === 'preview' ? `Preview of ${fileName}` : `Import of ${fileName}`}</h2>
      {phase.step === 'preview' ? (
        <p class="import-summary" role="status">
          <strong>{plural(r.created, 'link')}</strong> will be created
          {r.updated ? (
            <>
              , <strong>{r.updated.toLocaleString()}</strong> of yours updated
            </>
          ) : null}
          {r.skipped ? (
            <>
              , <strong>{r.skipped.toLocaleString()}</strong> already there
            </>
          ) : null}
          {r.failed ? (
            <>
              , <strong class="import-bad">{plural(r.failed, 'row')} with problems</strong> (they will be skipped; fix them in the file and import it again)
            </>
          ) : null}
          .
        </p>
      ) : (
        <>
          <p class="import-summary" role="status">
            {r.created.toLocaleString()} created, {r.updated.toLocaleString()} updated, {r.skipped.toLocaleString()} already there, {r.failed.toLocaleString()}{' '}
            failed
            {phase.step === 'importing' && r.total ? `, ${(r.total - rowsRead(r)).toLocaleString()} to go` : ''}.
          </p>
          <label class="import-progress">
            <span class="visually-hidden">Import progress</span>
            <progress class="progress" max={Math.max(r.total, 1)} value={phase.step === 'done' ? Math.max(r.total, 1) : rowsRead(r)} />
          </label>
        </>
      )}
      {phase.step === 'done' && r.status === 'failed' ? (
        <p role="alert" class="import-file-errors">
          The import stopped before the end of the file (see the last problem below). The rows before it were imported; import the file again to finish.
        </p>
      ) : null}
      <div class="import-actions">
        {phase.step === 'preview' ? (
          <>
            <Button kind="primary" disabled={importable === 0} onClick={onImport}>
              Import {plural(importable, 'link')}
            </Button>
            <Button onClick={onRestart}>Choose another file</Button>
          </>
        ) : phase.step === 'importing' ? (
          <Loading label="Importing…" />
        ) : (
          <>
            <Link href="/links" class="btn btn-primary">
              View links
            </Link>
            <Button onClick={onRestart}>Import another file</Button>
          </>
        )}
      </div>
      {phase.step === 'done' && r.status === 'done' && r.failed === 0 && r.created + r.updated > 0 ? (
        <p class="import-done">All {plural(r.created + r.updated, 'link')} are in.</p>
      ) : null}
      {r.errors.length ? <Problems record={r} /> : null}
    </section>
  )
}

function Problems({ record }: { record: ImportResult }) {
  return (
    <>
      {/* biome-ignore lint/a11y/noNoninteractiveTabindex: a table wider than a phone scrolls sideways; keyboards reach it only when it can take focus (axe scrollable-region-focusable) */}
      <section class="table-wrap import-table" tabIndex={0} aria-label="Rows with problems">
        <table>
          <caption class="visually-hidden">Rows with problems</caption>
          <thead>
            <tr>
              <th scope="col" class="num">
                Row
              </th>
              <th scope="col">Problem</th>
            </tr>
          </thead>
          <tbody>
            {record.errors.map((e) => (
              <tr key={`${e.row}-${e.message}`} class="import-row-bad">
                <td class="num">{e.row || '–'}</td>
                <td class="import-errors-cell">{e.message}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </section>
      {record.failed > record.errors.length ? (
        <p class="hint">
          Showing the first {record.errors.length.toLocaleString()} of {record.failed.toLocaleString()} rows with problems.
        </p>
      ) : null}
    </>
  )
}
