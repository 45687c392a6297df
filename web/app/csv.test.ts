/// <reference types="bun" />
// Run explicitly: `bun test web/app` (bun test ./src does not reach web/).
import { describe, expect, test } from 'bun:test'
import { CsvError, csvField, parseCsv, toCsv, unescapeFormula } from './csv'

describe('parseCsv', () => {
  test('plain rows, CRLF and LF, a trailing line break', () => {
    expect(parseCsv('a,b\r\n1,2\n3,4\r\n')).toEqual([
      ['a', 'b'],
      ['1', '2'],
      ['3', '4'],
    ])
  })
  test('quoted fields hold commas, line breaks and doubled quotes', () => {
    expect(parseCsv('url,comment\r\n"https://x.example/?a=1,2","say ""hi""\r\nthere"\r\n')).toEqual([
      ['url', 'comment'],
      ['https://x.example/?a=1,2', 'say "hi"\r\nthere'],
    ])
  })
  test('a byte-order mark is skipped', () => {
    expect(parseCsv('\uFEFFurl\nhttps://a.example/')).toEqual([['url'], ['https://a.example/']])
  })
  test('empty fields and blank lines', () => {
    expect(parseCsv('a,,c\n\n,\n')).toEqual([
      ['a', '', 'c'],
      ['', ''],
    ])
    expect(parseCsv('')).toEqual([])
  })
  test('a quote inside an unquoted field stays as it is', () => {
    expect(parseCsv('a"b,c')).toEqual([['a"b', 'c']])
  })
  test('an unclosed quote, too many rows or columns: a clear error', () => {
    expect(() => parseCsv('a\n"open,b\n')).toThrow(CsvError)
    expect(() => parseCsv('a\n1\n2\n3', { maxRows: 2 })).toThrow('more than 2 rows')
    expect(() => parseCsv('a,b,c', { maxFields: 2 })).toThrow('more than 2 columns')
  })
})

describe('toCsv', () => {
  test('quotes what must be quoted and reads back the same', () => {
    const rows = [
      ['id', 'comment'],
      ['lnk_1', 'a, "b"\nc'],
      ['lnk_2', ' padded '],
      ['lnk_3', 12],
    ]
    const text = toCsv(rows)
    expect(text).toBe('id,comment\r\nlnk_1,"a, ""b""\nc"\r\nlnk_2," padded "\r\nlnk_3,12\r\n')
    expect(parseCsv(text)).toEqual(rows.map((r) => r.map(String)))
  })
  test('formula-like text is defused, and the import undoes it', () => {
    expect(csvField('=HYPERLINK("x")')).toBe(`"'=HYPERLINK(""x"")"`)
    expect(csvField('@SUM(A1)')).toBe("'@SUM(A1)")
    expect(csvField(-3)).toBe('-3')
    // A number written as text is no formula; anything more after the sign is.
    expect(csvField('-3')).toBe('-3')
    expect(csvField('-3+cmd')).toBe("'-3+cmd")
    expect(unescapeFormula("'=1+1")).toBe('=1+1')
    expect(unescapeFormula("'plain")).toBe("'plain")
  })
})
