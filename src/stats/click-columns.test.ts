import { expect, test } from 'bun:test'
import { columnsOf, rowsOf, transferOf } from './click-columns'
import type { ClickEvent } from './click-event'

const row = (i: number, over: Partial<ClickEvent> = {}): ClickEvent => ({
  linkSeq: 1 + i,
  domain: 'go.example',
  at: 1_795_640_400_123 + i,
  scan: i % 2 === 1,
  continent: 'EU',
  country: 'DE',
  region: 'DEBavaria',
  city: 'DEBavaria\x1fMunich',
  os: 'IOS',
  browser: 'Safari',
  device: 'Mobile',
  referer: 'www.example.com',
  refererUrl: `https://www.example.com/p/${i}?q="x",y`,
  utmSource: 'qr',
  utmMedium: null,
  utmCampaign: 'spring',
  utmTerm: null,
  utmContent: 'ü ✓',
  n: 1 + i * 1000,
  tracked: null,
  variant: null,
  ...over,
})

test('rows through columns and a real postMessage come back equal, nulls, variants and tracked ids included', async () => {
  const rows = [
    row(0),
    row(1, { variant: 0, tracked: 'AaIUghj7xxxxxxxxxxxxxx@1795640400123 AaIUghj7yyyyyyyyyyyyyy@1795640400124' }),
    row(2, { variant: 3, continent: null, country: null, region: null, city: null, referer: null, refererUrl: null }),
    row(3, { n: 2 ** 40, linkSeq: 2 ** 31 + 5 }),
  ]
  const columns = columnsOf(rows)
  const { port1, port2 } = new MessageChannel()
  const received = new Promise<unknown>((resolve) => {
    port2.onmessage = (ev) => resolve(ev.data)
  })
  port1.postMessage(columns, transferOf(columns))
  // Transferred: the sender's typed arrays are detached (no copy was made).
  expect(columns.at.length).toBe(0)
  const back = rowsOf((await received) as ReturnType<typeof columnsOf>)
  port1.close()
  expect(back).toEqual(rows)
})

test('no rows', () => {
  expect(rowsOf(columnsOf([]))).toEqual([])
})

test('a column of repeated values travels as its distinct values once, and comes back row by row', () => {
  const countries = ['DE', 'DE', 'US', null, 'DE', 'US', 'US', null, 'FR']
  const rows = countries.map((country, i) => row(i, { country }))
  const columns = columnsOf(rows)
  expect(columns.coded.country.values).toEqual(['DE', 'US', null, 'FR'])
  expect(structuredClone(rowsOf(columns))).toEqual(rows)
  expect(rowsOf(columns).map((r) => r.country)).toEqual(countries)
})
