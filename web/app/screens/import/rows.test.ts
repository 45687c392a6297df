/// <reference types="bun" />
// Run explicitly: `bun test web/app` (bun test ./src does not reach web/).
import { describe, expect, test } from 'bun:test'
import { parseCsv } from '../../csv'
import { readImport } from './rows'

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
