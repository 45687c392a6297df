/**
 * CSV as RFC 4180 writes it: fields separated by commas, rows by CRLF (a bare LF is accepted
 * too), a field in double quotes may hold commas, line breaks and doubled quotes. A leading
 * byte-order mark is skipped. Spreadsheet formulas are defused on the way out. Every CSV the
 * dashboard reads (import) or writes (links export, statistics) goes through this file.
 */

import { downloadBlob } from './download'

export class CsvError extends Error {}

/** Rows of fields. Limits keep a hostile file from filling memory with one giant row. */
export function parseCsv(text: string, { maxRows = 10_000, maxFields = 100 }: { maxRows?: number; maxFields?: number } = {}): string[][] {
  const rows: string[][] = []
  let row: string[] = []
  let field = ''
  let i = text.charCodeAt(0) === 0xfeff ? 1 : 0
  let quoted = false
  let line = 1
  const endField = () => {
    row.push(field)
    field = ''
    if (row.length > maxFields) throw new CsvError(`line ${line} has more than ${maxFields} columns`)
  }
  const endRow = () => {
    endField()
    // A blank line (one empty field) is skipped, as spreadsheets leave them at the end.
    if (!(row.length === 1 && row[0] === '')) rows.push(row)
    if (rows.length > maxRows) throw new CsvError(`the file has more than ${maxRows.toLocaleString('en')} rows`)
    row = []
    line++
  }
  while (i < text.length) {
    const c = text[i]!
    if (quoted) {
      if (c === '"') {
        if (text[i + 1] === '"') {
          field += '"'
          i += 2
          continue
        }
        quoted = false
        i++
        continue
      }
      if (c === '\n') line++
      field += c
      i++
      continue
    }
    if (c === '"' && field === '') {
      quoted = true
      i++
    } else if (c === ',') {
      endField()
      i++
    } else if (c === '\r' && text[i + 1] === '\n') {
      endRow()
      i += 2
    } else if (c === '\n' || c === '\r') {
      endRow()
      i++
    } else {
      field += c
      i++
    }
  }
  if (quoted) throw new CsvError(`a quoted field opened on or before line ${line} is never closed`)
  if (field !== '' || row.length > 0) endRow()
  return rows
}

/** A cell a spreadsheet would run as a formula starts with one of these. */
const FORMULA_START = /^[=+\-@\t\r]/

/**
 * One field, quoted when it must be. Text a spreadsheet would run as a formula gets a leading
 * apostrophe (OWASP CSV injection: links and referrers, UTM values come from visitors); a
 * plain number written as text ("-3") is no formula and stays as it is.
 */
export function csvField(value: unknown): string {
  if (value === null || value === undefined) return ''
  let s = String(value)
  if (typeof value === 'string' && FORMULA_START.test(s) && !/^-?\d+(\.\d+)?$/.test(s)) s = `'${s}`
  return /[",\r\n]/.test(s) || s !== s.trim() ? `"${s.replaceAll('"', '""')}"` : s
}

export function toCsv(rows: unknown[][]): string {
  return `${rows.map((r) => r.map(csvField).join(',')).join('\r\n')}\r\n`
}

/** Downloads CSV text as a file (nothing leaves the browser). */
export function downloadCsv(filename: string, csv: string) {
  downloadBlob(new Blob([csv], { type: 'text/csv;charset=utf-8' }), filename)
}

/** Undoes csvField's apostrophe so an exported file imports back unchanged. */
export function unescapeFormula(s: string): string {
  return s.length > 1 && s[0] === "'" && FORMULA_START.test(s.slice(1)) ? s.slice(1) : s
}
