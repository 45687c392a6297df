/**
 * Each source's parser on its fixture (test/fixtures/imports/, built after each product's own
 * export format: docs/imports.md says where each was learned), then the file-level checks and
 * the hostile files: huge records, broken quotes and JSON, bad encodings, formulas.
 */
import { describe, expect, test } from 'bun:test'
import { mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { AppError } from '../shared'
import { ImportFileError, inspectFile, MAX_RECORD_BYTES, readRows } from './imports.read'
import { parseDate, readRow } from './imports.rows'
import type { ImportSourceName } from './imports.sources'

const FIXTURES = resolve(import.meta.dir, '../../test/fixtures/imports')
const dir = mkdtempSync(join(tmpdir(), 'shortlink-import-read-'))
let n = 0
const fileOf = (content: string | Uint8Array) => {
  const path = join(dir, `f${++n}`)
  writeFileSync(path, content)
  return path
}

/** Every row of a file as readRow leaves it: the item, or the row's error. */
async function read(source: ImportSourceName, path: string) {
  const shape = await inspectFile(path, source)
  const out: unknown[] = []
  for await (const r of readRows(path, source, shape)) {
    if (r.error !== undefined) out.push({ row: r.row, error: r.error })
    else {
      const checked = readRow(r.raw, r.row, { csv: source === 'csv' })
      out.push(checked.error !== undefined ? { row: r.row, error: checked.error } : checked.item)
    }
  }
  return { format: shape.format, rows: out }
}

const at = (iso: string) => Date.parse(iso)

describe('each source reads its own export format', () => {
  test("csv: this dashboard's columns; BOM, CRLF, quotes, tags split on ;, our formula escape undone, type", async () => {
    const { format, rows } = await read('csv', join(FIXTURES, 'csv.csv'))
    expect(format).toBe('csv')
    expect(rows).toEqual([
      { row: 2, type: 'link', url: 'https://bistro.example/menu', key: 'menu-card', domain: undefined, comment: undefined, tags: ['menu', 'Autumn'] },
      { row: 3, type: 'link', url: 'https://bistro.example/book', key: 'book-a-table', domain: undefined, comment: 'Book now, "today"', tags: [] },
      { row: 4, type: 'google-form', url: 'https://forms.example/feedback', key: undefined, domain: undefined, comment: undefined, tags: ['menu'] },
      { row: 5, type: 'link', url: 'https://bistro.example/sheet', key: 'sheet', domain: undefined, comment: '=HYPERLINK("x")', tags: [] },
      { row: 6, error: 'url "ftp://bistro.example/old" is not an http or https address' },
      { row: 7, error: 'key "bad key!" may hold only letters, digits, - and _' },
      { row: 8, type: 'link', url: 'https://bistro.example/api', key: 'api', domain: undefined, comment: undefined, tags: [] },
      { row: 9, type: 'link', url: 'https://bistro.example/elsewhere', key: 'elsewhere', domain: 'other.example', comment: undefined, tags: [] },
    ])
  })

  test('bitly JSON (API v4 bitlinks page): a custom bitlink wins over the bitlink; title, tags, created_at kept', async () => {
    const { format, rows } = await read('bitly', join(FIXTURES, 'bitly.json'))
    expect(format).toBe('json')
    expect(rows).toMatchObject([
      {
        row: 1,
        url: 'https://shop.example/spring-sale?utm_source=newsletter',
        domain: 'bit.ly',
        key: '3kTq9Zp',
        comment: 'Spring sale',
        tags: ['campaign', 'Spring'],
        createdAt: at('2021-03-04T10:11:12Z'),
      },
      { row: 2, url: 'https://acme.example/careers', domain: 'bit.ly', key: 'acme-careers', comment: 'Careers at ACME', tags: [] },
      { row: 3, url: 'https://acme.example/catalog.pdf', domain: 'go.acme.example', key: 'catalog', comment: undefined, tags: ['campaign'] },
      { row: 4, error: 'url "javascript:alert(1)" is not an http or https address' },
    ])
    expect((rows[0] as { clicks?: number }).clicks).toBeUndefined()
  })

  test('bitly CSV: columns found by name, clicks with thousands separators, a custom bitlink per row when present', async () => {
    const { rows } = await read('bitly', join(FIXTURES, 'bitly.csv'))
    expect(rows).toMatchObject([
      { row: 2, key: '3kTq9Zp', domain: 'bit.ly', clicks: 1532, createdAt: at('2021-03-04T10:11:12Z'), tags: ['campaign', 'Spring'] },
      { row: 3, key: 'acme-careers', domain: 'bit.ly', clicks: 12408 },
      { row: 4, key: 'catalog', domain: 'go.acme.example', clicks: 7, comment: undefined },
      { row: 5, error: 'creation date "yesterday-ish" is not a date' },
    ])
  })

  test("shlink CSV (the web client's short_urls.csv): tags joined with |, visits as the click total", async () => {
    const { rows } = await read('shlink', join(FIXTURES, 'shlink.csv'))
    expect(rows).toMatchObject([
      {
        row: 2,
        key: 'docs',
        domain: 's.test',
        url: 'https://docs.example.org/',
        comment: 'Documentation',
        tags: ['docs', 'help'],
        clicks: 4012,
        createdAt: at('2022-05-01T07:30:00Z'),
      },
      { row: 3, key: 'release-2-0', comment: 'Release 2.0, the big one', tags: ['release'], clicks: 87 },
      { row: 4, key: 'blog', tags: [], clicks: 0, comment: undefined },
      { row: 5, error: 'key "a/b" may hold only letters, digits, - and _' },
    ])
  })

  test('shlink JSON (REST API short-urls page): the default domain (null) is read from the short URL', async () => {
    const { rows } = await read('shlink', join(FIXTURES, 'shlink.json'))
    expect(rows).toMatchObject([
      { row: 1, key: 'docs', domain: 's.test', clicks: 4012, tags: ['docs', 'help'], createdAt: at('2022-05-01T07:30:00Z') },
      { row: 2, key: 'release-2-0', clicks: 87 },
      { row: 3, key: 'blog', clicks: 0 },
    ])
  })

  test("yourls CSV (the yourls_url table) and JSON (action=stats): keyword, title, YOURLS' timestamps, clicks as text", async () => {
    const csv = await read('yourls', join(FIXTURES, 'yourls.csv'))
    expect(csv.rows).toMatchObject([
      { row: 2, key: 'ozh', url: 'http://ozh.example/', comment: 'ozh.org', createdAt: at('2009-01-09T23:59:59Z'), clicks: 1012, domain: undefined },
      { row: 3, key: 'yourls', comment: 'YOURLS: Your Own URL Shortener', clicks: 503 },
      { row: 4, key: 'wiki', clicks: 0 },
      { row: 5, error: 'url "not a url" is not an http or https address' },
    ])
    const json = await read('yourls', join(FIXTURES, 'yourls.json'))
    expect(json.rows).toMatchObject([
      { row: 1, key: 'ozh', domain: 'sho.rt', clicks: 1012, createdAt: at('2009-01-09T23:59:59Z') },
      { row: 2, key: 'yourls', domain: 'sho.rt', clicks: 503 },
    ])
  })

  test('kutt JSON (GET /api/v2/links): address, target, description, visit_count', async () => {
    const { rows } = await read('kutt', join(FIXTURES, 'kutt.json'))
    expect(rows).toMatchObject([
      {
        row: 1,
        key: 'pricing',
        domain: 'kutt.it',
        url: 'https://saas.example/pricing',
        comment: 'Pricing page',
        clicks: 321,
        createdAt: at('2023-02-14T09:00:00Z'),
      },
      { row: 2, key: 'Xy12ab', clicks: 9, comment: undefined },
      { row: 3, error: 'click count "many" is not a whole number' },
    ])
  })

  test('rebrandly JSON (GET /v1/links): slashtag, domain.fullName, tag objects by name, clicks', async () => {
    const { rows } = await read('rebrandly', join(FIXTURES, 'rebrandly.json'))
    expect(rows).toMatchObject([
      {
        row: 1,
        key: 'burn10M',
        domain: 'rebrand.ly',
        comment: 'The LaFerrari Supercar Convertible',
        clicks: 42,
        createdAt: at('2016-07-13T10:54:12Z'),
        tags: [],
      },
      { row: 2, key: 'menu', tags: ['restaurant'], clicks: 7 },
      { row: 3, key: 'docs' },
    ])
  })

  test('a top-level JSON array of link objects is read for every JSON source', async () => {
    const path = fileOf(JSON.stringify([{ address: 'a1', target: 'https://a.example/' }, 'not an object']))
    expect((await read('kutt', path)).rows).toMatchObject([
      { row: 1, key: 'a1', url: 'https://a.example/' },
      { row: 2, error: 'is not a JSON object' },
    ])
  })
})

describe('the file is checked before anything runs (422 naming what was expected)', () => {
  const refused = async (source: ImportSourceName, content: string | Uint8Array, message: string) => {
    const e = await inspectFile(fileOf(content), source).catch((err) => err)
    expect(e).toBeInstanceOf(AppError)
    expect((e as AppError).code).toBe('parameter_error')
    expect((e as AppError).message).toContain(message)
  }
  test('empty, UTF-16, not the source: CSV for a JSON-only source, JSON for csv, a header without a destination', async () => {
    await refused('csv', '', 'is empty')
    await refused('csv', '  \n ', 'is empty')
    await refused('shlink', new Uint8Array([0xff, 0xfe, 0x75, 0x00, 0x72, 0x00]), 'UTF-16')
    await refused('kutt', 'url,key\nhttps://a.example/,a\n', 'a Kutt export is JSON')
    await refused('csv', '[{"url":"https://a.example/"}]', "is JSON, but a this dashboard's CSV export is CSV")
    await refused(
      'bitly',
      'keyword,url\nx,https://a.example/\n',
      'has no destination column for a Bitly export: its first line names keyword, url; expected long_url',
    )
    await refused('csv', '\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR', 'has no destination column')
  })
})

describe('hostile files', () => {
  const rowsOf = async (source: ImportSourceName, content: string | Uint8Array) => {
    const path = fileOf(content)
    const shape = await inspectFile(path, source)
    const rows: { row: number; error?: string }[] = []
    let failure: ImportFileError | null = null
    try {
      for await (const r of readRows(path, source, shape)) rows.push({ row: r.row, error: r.error })
    } catch (e) {
      failure = e as ImportFileError
    }
    return { rows, failure }
  }

  test('a record longer than 64 KiB stops the reading at its line; the rows before it were read', async () => {
    const { rows, failure } = await rowsOf('csv', `url\nhttps://a.example/\n"https://b.example/${'x'.repeat(MAX_RECORD_BYTES)}"\nhttps://c.example/\n`)
    expect(rows.map((r) => r.row)).toEqual([2])
    expect(failure).toBeInstanceOf(ImportFileError)
    expect(failure!.message).toContain('longer than 64 KiB')
  })

  test('a quote never closed, and broken or truncated JSON, end the reading with the row they broke at', async () => {
    const quote = await rowsOf('csv', 'url,comment\nhttps://a.example/,"fine"\nhttps://b.example/,"never closed\n')
    expect(quote.rows.map((r) => r.row)).toEqual([2])
    expect(quote.failure!.message).toContain('never closed')
    const broken = await rowsOf('kutt', '{"data":[{"address":"a","target":"https://a.example/"},{"address":]}')
    expect(broken.rows.map((r) => r.row)).toEqual([1])
    expect(broken.failure!.message).toContain('malformed after link 1')
    const cut = await rowsOf('kutt', '{"data":[{"address":"a","target":"https://a.example/"},{"addr')
    expect(cut.failure!.message).toContain('ends in the middle')
  })

  test('a JSON link object (or what lies between two) over 64 KiB stops the reading; memory never holds more', async () => {
    const huge = await rowsOf('kutt', `{"data":[{"address":"a","target":"https://a.example/"},{"address":"${'y'.repeat(200 * 1024)}"}]}`)
    expect(huge.rows.map((r) => r.row)).toEqual([1])
    expect(huge.failure!.message).toContain('larger than 64 KiB')
  })

  test('bytes that are not UTF-8 fail their row only; the others are read', async () => {
    const bad = Buffer.concat([
      Buffer.from('url,key\nhttps://a.example/,a\nhttps://b.example/,'),
      Buffer.from([0xc3, 0x28]),
      Buffer.from('\nhttps://c.example/,c\n'),
    ])
    const { rows, failure } = await rowsOf('csv', bad)
    expect(failure).toBeNull()
    expect(rows).toEqual([{ row: 2 }, { row: 3, error: 'holds bytes that are not UTF-8 text; save the file as UTF-8' }, { row: 4 }])
  })

  test('a quoted field spanning lines gives its record the line it starts on', async () => {
    const { rows } = await rowsOf('csv', 'url,comment\nhttps://a.example/,"one\ntwo"\nhttps://b.example/,x\n')
    expect(rows.map((r) => r.row)).toEqual([2, 4])
  })
})

describe('row values', () => {
  test('dates: ISO with offsets, YOURLS local format as UTC, Unix seconds and milliseconds; nonsense is null', () => {
    expect(parseDate('2021-03-04T10:11:12+0000')).toBe(at('2021-03-04T10:11:12Z'))
    expect(parseDate('2009-01-09 23:59:59')).toBe(at('2009-01-09T23:59:59Z'))
    expect(parseDate(1_600_000_000)).toBe(1_600_000_000_000)
    expect(parseDate('1600000000000')).toBe(1_600_000_000_000)
    expect(parseDate('soon')).toBeNull()
    expect(parseDate(-5)).toBeNull()
  })
  test('tags: names, trimmed, one per name regardless of case; too many or too long fail the row', () => {
    expect(readRow({ url: 'https://a.example/', tags: [' Menu', 'menu', 'lunch', ''] }, 1, { csv: false }).item!.tags).toEqual(['Menu', 'lunch'])
    expect(readRow({ url: 'https://a.example/', tags: ['x'.repeat(51)] }, 1, { csv: false }).error).toContain('longer than 50')
    expect(readRow({ url: 'https://a.example/', tags: Array.from({ length: 31 }, (_, i) => `t${i}`) }, 1, { csv: false }).error).toContain('at most 30 tags')
  })
  test('a title and a description both land in the comment, cut to 2000 characters', () => {
    expect(readRow({ url: 'https://a.example/', title: 'T', comment: 'D' }, 1, { csv: false }).item!.comment).toBe('T\nD')
    expect(readRow({ url: 'https://a.example/', title: 'x'.repeat(3000) }, 1, { csv: false }).item!.comment!.length).toBe(2000)
  })
  test('a NUL character anywhere fails the row (PostgreSQL stores none)', () => {
    expect(readRow({ url: 'https://a.example/', title: 'a\0b' }, 1, { csv: false }).error).toBe('holds a NUL character')
    expect(readRow({ url: 'https://a.example/', tags: ['ok', 'n\0'] }, 1, { csv: false }).error).toBe('holds a NUL character')
  })
  test('the csv source reads no click totals or dates (an export of this dashboard would count its own clicks twice)', () => {
    expect(readRow({ url: 'https://a.example/', clicks: '5', createdAt: '2020-01-01' }, 1, { csv: true }).item).toMatchObject({
      clicks: undefined,
      createdAt: undefined,
    })
  })
})
