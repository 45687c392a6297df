/**
 * Reads an export file from disk as a stream of links, in bounded memory: CSV through csv-parse
 * (RFC 4180, a record at most MAX_RECORD_BYTES), JSON through @streamparser/json, which hands
 * over each link object at the source's path and forgets it (a link object, or anything between
 * two, at most MAX_RECORD_BYTES). Rows are numbered as a user finds them: the line of a CSV
 * record (the header is line 1), the position of a JSON link (1 = first).
 */
import { createReadStream } from 'node:fs'
import { open } from 'node:fs/promises'
import { JSONParser } from '@streamparser/json'
import { parse as parseCsv } from 'csv-parse'
import { parameterError } from '../shared'
import { type CsvFormat, headerName, type ImportSourceName, type RawField, type RawLink, SOURCES } from './imports.sources'

/** The longest CSV record or JSON link object read; longer ones stop the import with an error naming the row. */
export const MAX_RECORD_BYTES = 64 * 1024
/** Bytes of the file inspected before the import starts. */
const HEAD_BYTES = 64 * 1024
/** JSON is fed to the parser in pieces of this size, so the record-size check runs often. */
const JSON_PIECE = 16 * 1024

export type FileShape = { format: 'csv'; columns: Map<RawField, number[]>; ignored: string[] } | { format: 'json'; paths: string[] }

/** A link as read, or the reason its row cannot be read. */
export type SourceRow = { row: number; raw: RawLink; error?: undefined } | { row: number; error: string; raw?: undefined }

/** The file cannot be read on from `row` (a broken quote, a record too long, JSON syntax): rows before it stand. */
export class ImportFileError extends Error {
  constructor(
    readonly row: number,
    message: string,
  ) {
    super(message)
  }
}

/** U+FFFD is what a decoder puts where bytes are not UTF-8. */
const NOT_UTF8 = '\uFFFD'

async function readHead(path: string): Promise<Uint8Array> {
  const file = await open(path, 'r')
  try {
    const buf = new Uint8Array(HEAD_BYTES)
    const { bytesRead } = await file.read(buf, 0, HEAD_BYTES, 0)
    return buf.subarray(0, bytesRead)
  } finally {
    await file.close()
  }
}

/**
 * What the file is, checked before anything runs: its encoding, CSV or JSON, and (CSV) which
 * column holds what. A file that cannot be what `source` exports is a 422 naming what was expected.
 */
export async function inspectFile(path: string, source: ImportSourceName): Promise<FileShape> {
  const format = SOURCES[source]
  const head = await readHead(path)
  if ((head[0] === 0xff && head[1] === 0xfe) || (head[0] === 0xfe && head[1] === 0xff))
    throw parameterError(`'file' is UTF-16 text; save it as UTF-8 (CSV UTF-8 in spreadsheets) and import it again`)
  const text = new TextDecoder().decode(head).replace(/^\uFEFF/, '')
  const first = text.trimStart()[0]
  if (first === undefined) throw parameterError(`'file' is empty`)
  if (first === '{' || first === '[') {
    if (!format.json) throw parameterError(`'file' is JSON, but a ${format.label} export is CSV with the columns ${format.csv!.expected}`)
    return { format: 'json', paths: first === '[' ? ['$.*'] : format.json.objectPaths }
  }
  if (!format.csv) throw parameterError(`'file' is not JSON; a ${format.label} export is JSON: ${format.json!.expected}`)
  const headerLine = text.split(/\r?\n/, 1)[0]!
  const header = await firstCsvRecord(headerLine)
  if (header.some((c) => c.includes(NOT_UTF8))) throw parameterError(`'file' is not UTF-8 text; save it as UTF-8 and import it again`)
  const { columns, ignored } = mapHeader(header, format.csv)
  if (!columns.has('url'))
    throw parameterError(
      `'file' has no destination column for a ${format.label} export: its first line names ${header.slice(0, 12).join(', ') || 'nothing'}; expected ${format.csv.expected}`,
    )
  return { format: 'csv', columns, ignored }
}

async function firstCsvRecord(line: string): Promise<string[]> {
  const parser = parseCsv({ relax_column_count: true, relax_quotes: true, max_record_size: MAX_RECORD_BYTES })
  parser.end(line)
  for await (const record of parser) return record as string[]
  return []
}

/** Which columns hold each field, in the order `columns` lists their names: a row takes the first that is not empty. */
function mapHeader(header: string[], csv: CsvFormat): { columns: Map<RawField, number[]>; ignored: string[] } {
  const names = header.map(headerName)
  const columns = new Map<RawField, number[]>()
  for (const [field, wanted] of Object.entries(csv.columns) as [RawField, string[]][]) {
    const found = wanted.map((n) => names.indexOf(n)).filter((j) => j >= 0)
    if (found.length) columns.set(field, found)
  }
  const used = new Set([...columns.values()].flat())
  const ignored = header.filter((c, i) => !used.has(i) && c.trim()).map((c) => c.trim())
  return { columns, ignored }
}

/** Every row of the file, in order. Throws ImportFileError where the file cannot be read on. */
export function readRows(path: string, source: ImportSourceName, shape: FileShape): AsyncGenerator<SourceRow> {
  return shape.format === 'csv' ? readCsv(path, SOURCES[source].csv!, shape.columns) : readJson(path, SOURCES[source].json!.map, shape.paths)
}

/** csv-parse's synchronous core (what its stream calls): records in order, then the fault, none lost. */
type CsvCore = { parse(buf: Buffer | undefined, end: boolean, push: (r: CsvRecord) => void, close: () => void): Error | undefined }
type CsvRecord = { record: string[]; info: { lines: number } }

async function* readCsv(path: string, csv: CsvFormat, columns: Map<RawField, number[]>): AsyncGenerator<SourceRow> {
  // Fed by hand rather than piped: a stream that fails drops the records it had buffered before the fault.
  const core = (
    parseCsv({ bom: true, relax_column_count: true, relax_quotes: true, skip_empty_lines: true, max_record_size: MAX_RECORD_BYTES, info: true }) as unknown as {
      api: CsvCore
    }
  ).api
  const found: CsvRecord[] = []
  const push = (r: CsvRecord) => {
    found.push(r)
  }
  let header = true
  let lastLine = 1
  const rows = function* (): Generator<SourceRow> {
    for (const { record, info } of found) {
      // info.lines is the line a record ends on; a quoted field may span lines.
      const breaks = record.reduce((n, f) => n + (f.match(/\r\n|\n|\r/g)?.length ?? 0), 0)
      const row = info.lines - breaks
      lastLine = info.lines
      if (header) {
        header = false
        continue
      }
      if (record.some((f) => f.includes(NOT_UTF8))) {
        yield { row, error: 'holds bytes that are not UTF-8 text; save the file as UTF-8' }
        continue
      }
      const raw: RawLink = {}
      for (const [field, at] of columns) {
        const cell = at.map((i) => record[i]).find((c) => c !== undefined && c.trim() !== '')
        if (cell === undefined) continue
        raw[field] = field === 'tags' ? cell.split(csv.tagSeparator) : cell
      }
      yield { row, raw }
    }
    found.length = 0
  }
  const fault = (e: Error): ImportFileError => {
    const err = e as Error & { code?: string; lines?: number }
    const at = err.lines ?? lastLine + 1
    if (err.code === 'CSV_MAX_RECORD_SIZE')
      return new ImportFileError(at, `line ${at} is longer than ${MAX_RECORD_BYTES / 1024} KiB; the rows after it were not read`)
    if (err.code === 'CSV_QUOTE_NOT_CLOSED') return new ImportFileError(lastLine + 1, `a quoted field opened after line ${lastLine} is never closed`)
    return new ImportFileError(at, `line ${at} is not valid CSV: ${err.message.split(':')[0]}`)
  }
  for await (const chunk of createReadStream(path, { highWaterMark: 64 * 1024 }) as AsyncIterable<Buffer>) {
    const err = core.parse(chunk, false, push, () => {})
    yield* rows()
    if (err) throw fault(err)
  }
  const err = core.parse(undefined, true, push, () => {})
  yield* rows()
  if (err) throw fault(err)
}

async function* readJson(path: string, map: (o: Record<string, unknown>) => RawLink, paths: string[]): AsyncGenerator<SourceRow> {
  const parser = new JSONParser({ paths, keepStack: false })
  const found: unknown[] = []
  let failure: Error | null = null
  parser.onValue = ({ value }) => {
    found.push(value)
  }
  parser.onError = (e) => {
    failure = e
  }
  let row = 0
  let sinceValue = 0
  const drain = function* (): Generator<SourceRow> {
    for (const value of found) {
      row++
      if (!value || typeof value !== 'object' || Array.isArray(value)) yield { row, error: 'is not a JSON object' }
      else yield { row, raw: map(value as Record<string, unknown>) }
    }
    found.length = 0
  }
  for await (const chunk of createReadStream(path, { highWaterMark: 64 * 1024 }) as AsyncIterable<Buffer>) {
    for (let at = 0; at < chunk.length; at += JSON_PIECE) {
      const piece = chunk.subarray(at, at + JSON_PIECE)
      if (parser.isEnded) {
        if (piece.toString('utf8').trim()) throw new ImportFileError(row + 1, 'the file goes on after its JSON value ends')
        continue
      }
      try {
        parser.write(piece)
      } catch (e) {
        failure ??= e as Error
      }
      sinceValue = found.length ? 0 : sinceValue + piece.length
      // The links before the fault are good.
      yield* drain()
      if (failure) throw new ImportFileError(row + 1, `the JSON is malformed after link ${row}: ${(failure as Error).message.split('.')[0]}`)
      if (sinceValue > MAX_RECORD_BYTES)
        throw new ImportFileError(row + 1, `link ${row + 1} (or what follows link ${row}) is larger than ${MAX_RECORD_BYTES / 1024} KiB`)
    }
  }
  if (!parser.isEnded) throw new ImportFileError(row + 1, 'the JSON ends in the middle of a value (is the file complete?)')
  yield* drain()
}
