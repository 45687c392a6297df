/** Print runs through the API, in process: the ZIP and the sheets, their codes decoded, the refusals, and a run whose node stopped. */
import { describe, expect, test } from 'bun:test'
import { unzipSync } from 'fflate'
import { type ApiHarness, createHarness } from '../../test/helpers/in-process'
import { checkDigitOf } from '../gs1'
import { decodeImageFile } from './qr.decode'

const gtinOf = (n: number) => `${n}${checkDigitOf(String(n))}`

async function seed(h: ApiHarness, n: number): Promise<{ id: string; shortLink: string; domain: string; key: string }[]> {
  const out = []
  for (let i = 0; i < n; i++) {
    const r =
      i % 3 === 0
        ? await h.call('POST', '/links/gs1', { json: { data: { gtin: gtinOf(950600013400 + i), url: `https://brand.example/p${i}` } } })
        : await h.call('POST', '/links/link', {
            json: { data: { url: `https://example.com/p${i}` }, qrOptions: i % 2 ? { patterns: { body: { style_id: 'dots' } } } : null },
          })
    expect(r.status).toBe(200)
    out.push(r.body)
  }
  return out
}

async function finished(h: ApiHarness, id: string) {
  await h.deps.batches.idle()
  return (await h.call('GET', `/qr/batches/${id}`)).body
}

describe('POST /qr/batches', () => {
  test('zip-png: one PNG per link named <domain>_<key>.png, each decoding to its link with ?qr=1', async () => {
    const h = createHarness()
    const links = await seed(h, 12)
    const started = await h.call('POST', '/qr/batches', { json: { linkIds: links.map((l) => l.id), format: 'zip-png', width: 200 } })
    expect(started.status).toBe(202)
    const id: string = started.body.id
    expect(id).toMatch(/^bat_/)
    expect(started.body).toMatchObject({ total: links.length, failed: 0, format: 'zip-png' })
    expect(['queued', 'running']).toContain(started.body.status)
    const early = await h.call('GET', `/qr/batches/${id}/file`)
    if (early.status !== 200) expect(early.body).toMatchObject({ code: 'conflict' })
    const record = await finished(h, id)
    expect(record).toMatchObject({ status: 'done', done: links.length, failed: 0, failures: [] })
    expect(Date.parse(record.expiresAt) - Date.parse(record.finishedAt)).toBe(24 * 3_600_000)
    const file = await h.fetch(`/qr/batches/${id}/file`)
    expect(file.status).toBe(200)
    expect(file.headers.get('content-type')).toBe('application/zip')
    const zip = unzipSync(new Uint8Array(await file.arrayBuffer()))
    expect(Object.keys(zip).sort()).toEqual(links.map((l) => `${l.domain}_${l.key}.png`).sort())
    for (const l of links) expect(await decodeImageFile(zip[`${l.domain}_${l.key}.png`]!)).toBe(`${l.shortLink}?qr=1`)
  })

  test('a linkFilter picks the caller’s matching links; zip-svg and zip-pdf hold one file each', async () => {
    const h = createHarness()
    await seed(h, 6)
    for (const [format, ext] of [
      ['zip-svg', 'svg'],
      ['zip-pdf', 'pdf'],
    ]) {
      const r = await h.call('POST', '/qr/batches', { json: { linkFilter: { linkType: 'gs1' }, format } })
      expect(r.status).toBe(202)
      expect(r.body.total).toBe(2)
      expect((await finished(h, r.body.id)).status).toBe('done')
      const zip = unzipSync(new Uint8Array(await (await h.fetch(`/qr/batches/${r.body.id}/file`)).arrayBuffer()))
      const names = Object.keys(zip)
      expect(names).toHaveLength(2)
      for (const n of names) expect(n).toMatch(new RegExp(`^localhost_[0-9]{14}\\.${ext}$`))
      if (ext === 'pdf') for (const n of names) expect(new TextDecoder().decode(zip[n]!.subarray(0, 5))).toBe('%PDF-')
    }
  })

  test('pdf-sheet: one PDF, laid out on pages', async () => {
    const h = createHarness()
    const links = await seed(h, 10)
    // Letter, 10 mm margins, 60 mm codes, 6 mm gaps, captions: 3 columns × 3 rows a page.
    const r = await h.call('POST', '/qr/batches', {
      json: { linkIds: links.map((l) => l.id), format: 'pdf-sheet', sheet: { paper: 'Letter', codeMm: 60, cropMarks: true, caption: 'shortLink' } },
    })
    expect(r.status).toBe(202)
    expect((await finished(h, r.body.id)).status).toBe('done')
    const file = await h.fetch(`/qr/batches/${r.body.id}/file`)
    expect(file.headers.get('content-type')).toBe('application/pdf')
    const text = new TextDecoder('latin1').decode(new Uint8Array(await file.arrayBuffer()))
    expect(text.startsWith('%PDF-')).toBe(true)
    expect(text.match(/\/Type \/Page\b/g)?.length).toBe(2)
  })

  test('refusals: another user’s link is not_found; bad combinations are 422; another user’s run is 404', async () => {
    const h = createHarness()
    const [mine] = await seed(h, 2)
    const theirs = await h.call('POST', '/links/link', { key: h.keys.member, json: { data: { url: 'https://member.example' } } })
    const other = await h.call('POST', '/qr/batches', { key: h.keys.member, json: { linkIds: [theirs.body.id, mine!.id], format: 'zip-png' } })
    expect(other.status).toBe(404)
    expect((await h.call('POST', '/qr/batches', { json: { format: 'zip-png' } })).status).toBe(422)
    expect((await h.call('POST', '/qr/batches', { json: { linkIds: [mine!.id], linkFilter: {}, format: 'zip-png' } })).status).toBe(422)
    expect((await h.call('POST', '/qr/batches', { json: { linkIds: [mine!.id], format: 'zip-png', sheet: {} } })).status).toBe(422)
    expect((await h.call('POST', '/qr/batches', { json: { linkIds: [mine!.id], format: 'pdf-sheet', sheet: { paper: 'A4', codeMm: 300 } } })).status).toBe(422)
    expect((await h.call('POST', '/qr/batches', { json: { linkFilter: { search: 'nothing-matches' }, format: 'zip-png' } })).status).toBe(422)
    expect((await h.call('POST', '/qr/batches', { json: { linkIds: [mine!.id], format: 'tar' } })).status).toBe(422)
    const run = await h.call('POST', '/qr/batches', { json: { linkIds: [mine!.id], format: 'zip-png' } })
    await h.deps.batches.idle()
    expect((await h.call('GET', `/qr/batches/${run.body.id}`, { key: h.keys.member })).status).toBe(404)
    expect((await h.call('GET', '/qr/batches/bat_nope')).status).toBe(404)
  })

  test('a run whose node stopped (its heartbeat a minute old) is reported failed, with an error that says what to do', async () => {
    const h = createHarness()
    const now = Date.now()
    h.deps.db.run(
      `INSERT INTO qr_batches (id, user_id, status, format, request, total, created_at, heartbeat_at) VALUES ('bat_orphan', 'usr_admin', 'running', 'zip-png', '{}', 5, ?, ?)`,
      [now - 120_000, now - 61_000],
    )
    const r = await h.call('GET', '/qr/batches/bat_orphan')
    expect(r.body).toMatchObject({ status: 'failed', error: expect.stringContaining('start the batch again') })
    expect((await h.call('GET', '/qr/batches/bat_orphan/file')).status).toBe(409)
  })
})
