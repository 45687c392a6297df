/**
 * The redirect handler on PostgreSQL, as two nodes (two handlers, each with its own Bun.SQL
 * client) over one database: number targeting gives the n-th visit over both nodes exactly n,
 * and while PostgreSQL is down a cached link is still served and a miss is a 503 error that
 * is not remembered.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { SQL } from 'bun'
import { startMigratedDatabase, type TestPostgres } from '../../test/helpers/postgres'
import { createPgAuthStore } from '../auth'
import { deriveSettings } from '../config'
import { buildConfig } from '../config/config.load'
import { createGeoIp } from '../geo'
import { createPgLinkStore } from '../links'
import { AppError } from '../shared'
import type { ClickRecorder } from '../stats'
import { createVisitCounter } from '../store'
import { createPasswordGate } from './password-gate'
import { createRedirectHandler, type ShortDomain } from './redirect.handler'
import { visitOrdinalFrom } from './visit-ordinal'

const BROWSER = 'Mozilla/5.0 (iPhone; CPU iPhone OS 17_4 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4 Mobile/15E148 Safari/604.1'
const VISITS = 200

let sqlA: SQL
let sqlB: SQL
let pg: TestPostgres
let close: () => Promise<void>

beforeAll(async () => {
  const started = await startMigratedDatabase('redirect_cluster')
  sqlA = started.sql
  pg = started.pg
  close = started.close
  sqlB = new SQL(started.url, { max: 4 })
})
afterAll(async () => {
  await sqlB?.close()
  await close?.()
})

const settings = deriveSettings(buildConfig({}, {}))
const domain: ShortDomain = {
  slug: 'localhost',
  destination: null,
  assetLinks: null,
  appleAppSiteAssociation: null,
  hsts: false,
  notFoundUrl: null,
  expiredUrl: null,
}

/** One node: its own client, store, visit counter and redirect handler. */
function node(sql: SQL) {
  const store = createPgLinkStore(sql)
  const recorded: number[] = []
  const recorder = { record: (v: { linkSeq: number }) => void recorded.push(v.linkSeq), pendingFor: () => 0 } as unknown as ClickRecorder
  const handler = createRedirectHandler({
    settings,
    findLiveRow: store.getByDomainKey,
    storedClicks: store.storedClicks,
    visitOrdinal: visitOrdinalFrom(createVisitCounter(sql), store.storedClicks),
    domainOf: () => domain,
    recorder,
    geo: createGeoIp(''),
    passwords: createPasswordGate(Buffer.alloc(32, 7)),
    renderHosted: () => new Response('hosted'),
    serveFile: () => null,
  })
  const visit = async (key: string) =>
    handler.handle(new Request(`https://localhost/${key}`, { headers: { 'user-agent': BROWSER } }), `/${key}`, '', 'localhost', () => '192.0.2.1')
  return { handler, visit, recorded }
}

async function createLink(key: string, options: unknown) {
  const destination = `https://${key}.example/`
  const at = Date.now()
  await createPgLinkStore(sqlA).createLink(
    {
      id: `lnk_${key}`,
      user_id: 'usr_a',
      domain: 'localhost',
      key,
      link_type: 'link',
      destination,
      match_key: destination,
      data: JSON.stringify({ url: destination }),
      options: JSON.stringify(options),
      qr_options: null,
      password_hash: null,
      expires_at: null,
      archived: 0,
      created_at: at,
      updated_at: at,
    },
    [],
    key,
  )
}

test('number targeting over two nodes: 200 concurrent visits get the ordinals 1..200, each once', async () => {
  await createPgAuthStore(sqlA).addUser('usr_a')
  const targetDatas = Array.from({ length: VISITS }, (_, i) => ({ from: i + 1, to: i + 1, url: `https://n.example/${i + 1}` }))
  await createLink('numbered', { Targeting: { targetType: 'number', targetDatas } })
  const a = node(sqlA)
  const b = node(sqlB)
  const responses = await Promise.all(Array.from({ length: VISITS }, (_, i) => (i % 2 ? b : a).visit('numbered')))
  expect(responses.map((r) => r.status)).toEqual(Array(VISITS).fill(302))
  const ordinals = responses.map((r) => Number(new URL(r.headers.get('location')!).pathname.slice(1))).sort((x, y) => x - y)
  expect(ordinals).toEqual(Array.from({ length: VISITS }, (_, i) => i + 1))
  expect(a.recorded.length + b.recorded.length).toBe(VISITS)
  // The next visit, on either node, is the 201st: no item matches, so the link's own destination.
  expect((await a.visit('numbered')).headers.get('location')).toBe('https://numbered.example/')
})

test('PostgreSQL down: a cached link is still served, a miss is 503 service_unavailable and not remembered', async () => {
  await createLink('plain', {})
  const a = node(sqlA)
  expect((await a.visit('plain')).headers.get('location')).toBe('https://plain.example/')
  await pg.stop()
  try {
    expect((await a.visit('plain')).headers.get('location')).toBe('https://plain.example/')
    const error = await a.visit('later').catch((e) => e)
    expect(error).toBeInstanceOf(AppError)
    expect(error).toMatchObject({ code: 'service_unavailable', status: 503 })
    expect(a.handler.cacheSize()).toMatchObject({ positive: 1, negative: 0 })
  } finally {
    await pg.start()
  }
  await createLink('later', {})
  expect((await a.visit('later')).headers.get('location')).toBe('https://later.example/')
  expect((await a.visit('plain')).status).toBe(302)
})
