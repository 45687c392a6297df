/**
 * GET /statistics/events on the events engine: CSV, NDJSON and Parquet (read back by DuckDB's
 * own Parquet reader), the caller's scope, filters and range, oldest first, merged visits' count.
 */
import { expect, test } from 'bun:test'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createHarness } from '../../test/helpers/in-process'
import { loadDuckDb } from './events.duckdb'
import { event, T } from './stats.test-fixtures'

async function setup() {
  const h = createHarness()
  const made = async (key: string, owner: string) => {
    const r = await h.call('POST', '/links/link', { key: owner, json: { data: { url: `https://dest.example/${key}` }, linkOptions: { key } } })
    return { id: r.body.id as string, seq: (h.deps.db.query('SELECT seq FROM links WHERE id = ?').get(r.body.id) as { seq: number }).seq }
  }
  const a = await made('alpha', h.keys.member)
  const c = await made('gamma', h.keys.other)
  const day = T('2025-03-10T00:00:00Z')
  await h.deps.events.write([
    event(a.seq, day + 86_400_000, {
      country: 'US',
      continent: 'North America',
      region: 'California',
      city: 'Mountain View',
      referer: 't.co',
      refererUrl: 'https://t.co/"x",y',
    }),
    event(a.seq, day + 1000, { n: 3, scan: true }),
    event(c.seq, day + 5000, { country: 'GB', region: 'England', city: 'London' }),
  ])
  return { h, a, c, day }
}

test('csv: a header row, the caller’s links only, oldest first, merged visits’ count, fields quoted when needed', async () => {
  const { h, a } = await setup()
  const r = await h.call('GET', '/statistics/events', { key: h.keys.member })
  expect(r.status).toBe(200)
  expect(r.headers.get('content-type')).toBe('text/csv; charset=utf-8')
  const lines = (r.body as string).trim().split('\n')
  expect(lines[0]).toBe(
    'at,linkId,domain,key,scan,count,continent,country,region,city,os,browser,device,referer,refererUrl,utmSource,utmMedium,utmCampaign,utmTerm,utmContent',
  )
  expect(lines.slice(1)).toEqual([
    `2025-03-10T00:00:01.000Z,${a.id},localhost,alpha,true,3,Europe,DE,Bavaria,Munich,Android,Chrome,Mobile,,,,,,,`,
    `2025-03-11T00:00:00.000Z,${a.id},localhost,alpha,false,1,North America,US,California,Mountain View,Android,Chrome,Mobile,t.co,"https://t.co/""x"",y",,,,,`,
  ])
})

test('variant=true appends the A/B variant of each visit (null outside a test), in CSV, NDJSON and Parquet; without it the fields are the contract’s', async () => {
  const { h, a, day } = await setup()
  await h.deps.events.write([event(a.seq, day + 2000, { variant: 1 }), event(a.seq, day + 3000, { variant: 0, n: 2 })])
  const variants = async (format: string) => {
    const r = await h.call('GET', `/statistics/events?linkId=${a.id}&format=${format}&variant=true`, { key: h.keys.member })
    expect(r.status).toBe(200)
    return r.body as string
  }
  const csv = (await variants('csv')).trim().split('\n')
  expect(csv[0]).toEndWith(',utmContent,variant')
  expect(csv.slice(1).map((l) => l.split(',').at(-1))).toEqual(['', '1', '0', ''])
  const ndjson = (await variants('ndjson'))
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as { variant: number | null; count: number })
  expect(ndjson.map((r) => [r.variant, r.count])).toEqual([
    [null, 3],
    [1, 1],
    [0, 2],
    [null, 1],
  ])
  const plain = await h.call('GET', `/statistics/events?linkId=${a.id}&format=ndjson`, { key: h.keys.member })
  expect(Object.keys(JSON.parse((plain.body as string).split('\n')[0]!))).not.toContain('variant')
  const parquet = await h.deps.stats.exportEvents({ userId: 'usr_admin', role: 'admin', keyId: null }, { format: 'parquet', variant: true, linkId: a.id })
  const dir = mkdtempSync(join(tmpdir(), 'export-variant-'))
  try {
    const file = join(dir, 'events.parquet')
    await Bun.write(file, new Response(parquet.stream))
    const api = await loadDuckDb(dir)
    const db = await api.DuckDBInstance.create(':memory:')
    const c = await db.connect()
    const rows = (await c.runAndReadAll(`SELECT variant FROM read_parquet('${file}') ORDER BY "at"`)).getRowObjectsJS()
    expect(rows.map((r) => r.variant)).toEqual([null, 1, 0, null])
    c.closeSync()
    db.closeSync()
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
})

test('ndjson with filters and a range; a member naming another’s link is refused; bad format is 422', async () => {
  const { h, a, c } = await setup()
  const r = await h.call('GET', '/statistics/events?format=ndjson&country=us&start=2025-03-10T12:00:00Z', { key: h.keys.admin })
  expect(r.status).toBe(200)
  expect(r.headers.get('content-type')).toBe('application/x-ndjson')
  const rows = (typeof r.body === 'string' ? r.body.trim().split('\n') : [JSON.stringify(r.body)]).map((l) => JSON.parse(l))
  expect(rows).toEqual([
    {
      at: '2025-03-11T00:00:00.000Z',
      linkId: a.id,
      domain: 'localhost',
      key: 'alpha',
      scan: false,
      count: 1,
      continent: 'North America',
      country: 'US',
      region: 'California',
      city: 'Mountain View',
      os: 'Android',
      browser: 'Chrome',
      device: 'Mobile',
      referer: 't.co',
      refererUrl: 'https://t.co/"x",y',
      utmSource: null,
      utmMedium: null,
      utmCampaign: null,
      utmTerm: null,
      utmContent: null,
    },
  ])
  expect((await h.call('GET', `/statistics/events?linkId=${c.id}`, { key: h.keys.member })).status).toBe(403)
  expect((await h.call('GET', '/statistics/events?format=xml')).status).toBe(422)
})

test('parquet: every event of the scope, read back by a Parquet reader', async () => {
  const { h } = await setup()
  const res = await h.deps.stats.exportEvents({ userId: 'usr_admin', role: 'admin', keyId: null }, { format: 'parquet' })
  expect(res.format).toBe('parquet')
  const dir = mkdtempSync(join(tmpdir(), 'export-parquet-'))
  try {
    const file = join(dir, 'events.parquet')
    await Bun.write(file, new Response(res.stream))
    const bytes = new Uint8Array(await Bun.file(file).arrayBuffer())
    expect(new TextDecoder().decode(bytes.slice(0, 4))).toBe('PAR1')
    const api = await loadDuckDb(dir)
    const db = await api.DuckDBInstance.create(':memory:')
    const c = await db.connect()
    const rows = (
      await c.runAndReadAll(`SELECT key, "count", scan, country, epoch_ms("at")::DOUBLE AS at FROM read_parquet('${file}') ORDER BY "at"`)
    ).getRowObjectsJS()
    expect(rows).toEqual([
      { key: 'alpha', count: 3, scan: true, country: 'DE', at: T('2025-03-10T00:00:01Z') },
      { key: 'gamma', count: 1, scan: false, country: 'GB', at: T('2025-03-10T00:00:05Z') },
      { key: 'alpha', count: 1, scan: false, country: 'US', at: T('2025-03-11T00:00:00Z') },
    ])
    c.closeSync()
    db.closeSync()
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
})
