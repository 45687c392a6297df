/**
 * CSV import: the file is read in the browser and every row checked before anything is
 * written; then the good rows are created one by one, each with its own result.
 */
import { useMemo, useState } from 'preact/hooks'
import { errorText } from '../api'
import { CsvError, parseCsv } from '../csv'
import { Link } from '../router'
import type { ScreenProps } from '../routes'
import { canWrite, useSession } from '../session'
import { Button, Empty, ErrorBox, Field, Loading, Page, useResource } from '../ui'
import { type ImportRow, type ParsedImport, readImport } from './import/rows'
import { keysInUse, missingTags, type RowResult, runImport } from './import/run'
import { fetchDomains, fetchTags } from './links/model'

const MAX_FILE_BYTES = 5 * 1024 * 1024
/** Rows drawn in the preview; the rest are counted (rows with problems are always drawn first). */
const PREVIEW_ROWS = 500

interface Loaded {
  file: File
  fileName: string
  table: string[][]
  /** Lines the server already knows a link for (its key is taken). */
  taken: Map<number, string>
}

export function ImportScreen(_: ScreenProps) {
  const session = useSession()
  const domains = useResource((signal) => fetchDomains(signal), [])
  const tags = useResource((signal) => fetchTags(signal), [])
  const ownTags = useMemo(() => (tags.data ?? []).filter((t) => t.userId === session.userId), [tags.data, session.userId])
  const domainNames = useMemo(() => (domains.data ?? []).map((d) => d.slug), [domains.data])
  const [defaultDomain, setDefaultDomain] = useState('')
  const domain = defaultDomain || domainNames[0] || ''

  const [loaded, setLoaded] = useState<Loaded | null>(null)
  const [fileError, setFileError] = useState<string | null>(null)
  const [checking, setChecking] = useState(false)
  const [results, setResults] = useState<Map<number, RowResult> | null>(null)
  const [running, setRunning] = useState<AbortController | null>(null)

  const parsed: ParsedImport | null = useMemo(() => {
    if (!loaded) return null
    const p = readImport(loaded.table, new Set(domainNames), domain)
    for (const r of p.rows) {
      const taken = loaded.taken.get(r.line)
      if (taken && r.errors.length === 0) r.errors.push(taken)
    }
    return p
  }, [loaded, domainNames, domain])

  if (!canWrite(session))
    return (
      <Page title="Import links">
        <Empty title="Your account can only read">Importing creates links; ask an admin for a member account.</Empty>
      </Page>
    )
  if (domains.error || tags.error)
    return (
      <ErrorBox
        error={domains.error ?? tags.error}
        retry={() => {
          domains.reload()
          tags.reload()
        }}
      />
    )
  if (!domains.data || !tags.data) return <Loading />

  const readFile = async (file: File, rowDomain = domain) => {
    setFileError(null)
    setLoaded(null)
    setResults(null)
    if (file.size > MAX_FILE_BYTES) {
      setFileError(`${file.name} is ${(file.size / 1024 / 1024).toFixed(1)} MB; import at most 5 MB at a time (split the file)`)
      return
    }
    let table: string[][]
    try {
      table = parseCsv(await file.text())
    } catch (e) {
      setFileError(e instanceof CsvError ? `${file.name} cannot be read as CSV: ${e.message}` : errorText(e))
      return
    }
    setChecking(true)
    try {
      const local = readImport(table, new Set(domainNames), rowDomain)
      const taken = local.fileErrors.length ? new Map<number, string>() : await keysInUse(local.rows)
      setLoaded({ file, fileName: file.name, table, taken })
    } catch (e) {
      setFileError(`The rows could not be checked with the server: ${errorText(e)}`)
    } finally {
      setChecking(false)
    }
  }

  const ready = parsed?.rows.filter((r) => r.errors.length === 0) ?? []
  const bad = (parsed?.rows.length ?? 0) - ready.length

  const start = async () => {
    const controller = new AbortController()
    const out = new Map<number, RowResult>()
    setResults(new Map(out))
    setRunning(controller)
    try {
      await runImport(
        ready,
        ownTags,
        (line, result) => {
          out.set(line, result)
          setResults(new Map(out))
        },
        controller.signal,
      )
    } finally {
      setRunning(null)
      tags.reload()
    }
  }

  const created = results ? [...results.values()].filter((r) => r.ok).length : 0
  const failed = results ? results.size - created : 0
  const finished = results !== null && !running

  return (
    <Page
      title="Import links"
      actions={
        <Link href="/links" class="btn">
          Back to links
        </Link>
      }
    >
      {results === null ? (
        <ChooseFile
          domains={domainNames}
          domain={domain}
          setDomain={(d) => {
            setDefaultDomain(d)
            // Keys are checked per domain: check the file's again for the new one.
            if (loaded) readFile(loaded.file, d)
          }}
          onFile={readFile}
          error={fileError}
          checking={checking}
        />
      ) : null}
      {parsed ? (
        <section class="card import-preview" aria-labelledby="import-preview-title">
          <h2 id="import-preview-title">{results === null ? `Preview of ${loaded!.fileName}` : 'Import'}</h2>
          {parsed.fileErrors.length ? (
            <div role="alert" class="import-file-errors">
              {parsed.fileErrors.map((e) => (
                <p key={e}>{e}</p>
              ))}
            </div>
          ) : (
            <>
              <p class="import-summary" role="status">
                {results === null ? (
                  <>
                    <strong>{ready.length}</strong> ready to import
                    {bad ? (
                      <>
                        , <strong class="import-bad">{bad}</strong> with problems (they will be skipped; fix them in the file and import it again)
                      </>
                    ) : null}
                    .{missingTags(ready, ownTags).length ? ` New tags will be created: ${missingTags(ready, ownTags).join(', ')}.` : ''}
                  </>
                ) : (
                  <>
                    {created} created, {failed} failed{running ? `, ${ready.length - results.size} to go` : ''}.
                  </>
                )}
              </p>
              {parsed.ignoredColumns.length ? <p class="hint">Columns ignored: {parsed.ignoredColumns.join(', ')}.</p> : null}
              {results !== null ? (
                <label class="import-progress">
                  <span class="visually-hidden">Import progress</span>
                  <progress class="progress" max={Math.max(ready.length, 1)} value={results.size} />
                </label>
              ) : null}
              <div class="import-actions">
                {results === null ? (
                  <>
                    <Button kind="primary" disabled={ready.length === 0} onClick={start}>
                      Import {ready.length} link{ready.length === 1 ? '' : 's'}
                    </Button>
                    <Button onClick={() => setLoaded(null)}>Choose another file</Button>
                  </>
                ) : running ? (
                  <Button onClick={() => running.abort()}>Stop</Button>
                ) : (
                  <>
                    <Link href="/links" class="btn btn-primary">
                      View links
                    </Link>
                    <Button
                      onClick={() => {
                        setLoaded(null)
                        setResults(null)
                      }}
                    >
                      Import another file
                    </Button>
                  </>
                )}
              </div>
              {finished && failed === 0 && created > 0 ? <p class="import-done">All {created} links were created.</p> : null}
              <PreviewTable rows={parsed.rows} results={results} />
            </>
          )}
        </section>
      ) : null}
    </Page>
  )
}

function ChooseFile({
  domains,
  domain,
  setDomain,
  onFile,
  error,
  checking,
}: {
  domains: string[]
  domain: string
  setDomain: (d: string) => void
  onFile: (f: File) => void
  error: string | null
  checking: boolean
}) {
  const [over, setOver] = useState(false)
  return (
    <section class="card import-choose" aria-labelledby="import-choose-title">
      <h2 id="import-choose-title">Choose a CSV file</h2>
      <p>
        The first row names the columns: <code>url</code> (required), <code>key</code>, <code>domain</code>, <code>tags</code> (names separated by{' '}
        <code>;</code>), <code>comment</code> and <code>type</code> (<code>link</code> or <code>google-form</code>). A file exported from the links page imports
        as it is. Nothing is created until you have seen the preview.
      </p>
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
          if (f) onFile(f)
        }}
      >
        <Field label="CSV file" hint="Drop the file here or choose it; up to 5 MB and 10,000 rows." error={error}>
          {(p) => (
            <input
              {...p}
              type="file"
              accept=".csv,text/csv"
              disabled={checking}
              onChange={(e) => {
                const f = e.currentTarget.files?.[0]
                if (f) onFile(f)
                e.currentTarget.value = ''
              }}
            />
          )}
        </Field>
        {checking ? <Loading label="Checking the rows…" /> : null}
      </div>
      <Field label="Short domain for rows without one">
        {(p) => (
          <select {...p} value={domain} onChange={(e) => setDomain(e.currentTarget.value)}>
            {domains.map((d) => (
              <option key={d} value={d}>
                {d}
              </option>
            ))}
          </select>
        )}
      </Field>
    </section>
  )
}

function PreviewTable({ rows, results }: { rows: ImportRow[]; results: Map<number, RowResult> | null }) {
  const shown = useMemo(() => {
    const withErrors = rows.filter((r) => r.errors.length > 0)
    const rest = rows.filter((r) => r.errors.length === 0)
    const picked = [...withErrors.slice(0, PREVIEW_ROWS), ...rest.slice(0, Math.max(0, PREVIEW_ROWS - withErrors.length))]
    return picked.sort((a, b) => a.line - b.line)
  }, [rows])
  return (
    <>
      {/* biome-ignore lint/a11y/noNoninteractiveTabindex: a table wider than a phone scrolls sideways; keyboards reach it only when it can take focus (axe scrollable-region-focusable) */}
      <section class="table-wrap import-table" tabIndex={0} aria-label="Rows of the file">
        <table>
          <caption class="visually-hidden">Rows of the file</caption>
          <thead>
            <tr>
              <th scope="col" class="num">
                Line
              </th>
              <th scope="col">Destination</th>
              <th scope="col" class="hide-phone">
                Key
              </th>
              <th scope="col" class="hide-phone">
                Domain
              </th>
              <th scope="col" class="hide-phone">
                Tags
              </th>
              <th scope="col" class="hide-phone">
                Type
              </th>
              <th scope="col">Status</th>
            </tr>
          </thead>
          <tbody>
            {shown.map((r) => {
              const result = results?.get(r.line)
              return (
                <tr key={r.line} class={r.errors.length || (result && !result.ok) ? 'import-row-bad' : undefined}>
                  <td class="num">{r.line}</td>
                  <td class="import-url">{r.url || <span class="muted">(empty)</span>}</td>
                  <td class="hide-phone mono">{r.key || <span class="muted">random</span>}</td>
                  <td class="hide-phone">{r.domain}</td>
                  <td class="hide-phone">{r.tags.join(', ')}</td>
                  <td class="hide-phone">{r.type}</td>
                  <td class="import-status">
                    <RowStatus row={r} result={result} importing={results !== null} />
                  </td>
                </tr>
              )
            })}
          </tbody>
        </table>
      </section>
      {rows.length > shown.length ? (
        <p class="hint">
          Showing {shown.length} of {rows.length.toLocaleString()} rows (every row with a problem first).
        </p>
      ) : null}
    </>
  )
}

function RowStatus({ row, result, importing }: { row: ImportRow; result: RowResult | undefined; importing: boolean }) {
  if (row.errors.length)
    return (
      <>
        <span class="badge badge-bad">{importing ? 'skipped' : 'error'}</span>
        <ul class="import-errors">
          {row.errors.map((e) => (
            <li key={e}>{e}</li>
          ))}
        </ul>
      </>
    )
  if (!result) return <span class="badge">{importing ? 'waiting' : 'ready'}</span>
  if (result.ok)
    return (
      <>
        <span class="badge badge-ok">created</span>{' '}
        <a href={result.link.shortLink} target="_blank" rel="noopener noreferrer" class="mono">
          {result.link.shortLink.replace(/^https?:\/\//, '')}
        </a>
      </>
    )
  return (
    <>
      <span class="badge badge-bad">failed</span>
      <ul class="import-errors">
        <li>{result.message}</li>
      </ul>
    </>
  )
}
