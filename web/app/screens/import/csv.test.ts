/// <reference types="bun" />
// Run explicitly: `bun test web/app` (bun test ./src does not reach web/).
import { describe, expect, test } from 'bun:test'
import { CsvError, csvField, parseCsv, toCsv, unescapeFormula } from './csv'
import { readImport } from './rows'

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
    expect(unescapeFormula("'=1+1")).toBe('=1+1')
    expect(unescapeFormula("'plain")).toBe("'plain")
  })
})

describe('readImport', () => {
  const domains = new Set(['s.example', 'go.example'])
  const read = (csv: string) => readImport(parseCsv(csv), domains, 's.example')

  test('good rows: defaults, tags split on ;, unknown columns ignored', () => {
    const r = read('URL,Key,Tags,Extra\nhttps://a.example/,spring,menu; Menu ;lunch,x\nhttps://b.example/,,,\n')
    expect(r.fileErrors).toEqual([])
    expect(r.ignoredColumns).toEqual(['Extra'])
    expect(r.rows.map((x) => [x.line, x.url, x.key, x.domain, x.type, x.tags, x.errors])).toEqual([
      [2, 'https://a.example/', 'spring', 's.example', 'link', ['menu', 'lunch'], []],
      [3, 'https://b.example/', '', 's.example', 'link', [], []],
    ])
  })
  test('each local rule gives its own message on its row', () => {
    const r = read(
      [
        'url,key,domain,type',
        'ftp://a.example/,,,',
        'https://a.example/,bad key!,,',
        'https://a.example/,,elsewhere.example,',
        'https://a.example/,,,wi-fi',
        'https://a.example/,,,hologram',
        'https://a.example/,dup,,',
        'https://a.example/,dup,S.example,',
        'https://a.example/,dup,go.example,google-form',
        ',,,',
      ].join('\n'),
    )
    expect(r.rows.map((x) => x.errors)).toEqual([
      ['url "ftp://a.example/" is not an http or https address'],
      ['key "bad key!" may hold only letters, digits, - and _'],
      ['domain elsewhere.example is not one of your short domains'],
      ['type wi-fi needs more than a URL; create it in the link editor'],
      ['type "hologram" is unknown (use link or google-form)'],
      [],
      ['key "dup" is already used on line 7'],
      [],
      ['url is empty'],
    ])
    expect(r.rows[7]!.type).toBe('google-form')
  })
  test('a file without a url column or without rows says so', () => {
    expect(read('key,tags\nx,y\n').fileErrors[0]).toContain('no "url" column')
    expect(read('url\n').fileErrors).toEqual(['the file has a header row but no links'])
    expect(read('').fileErrors).toEqual(['the file is empty'])
  })
})
