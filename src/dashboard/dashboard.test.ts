import { beforeAll, describe, expect, test } from 'bun:test'
import { gunzipSync } from 'node:zlib'
import type { Logger } from '../shared'
import { createDashboard } from './dashboard.handler'
import { type AssetPack, buildAssetPack, decodePack, encodePack } from './dashboard.pack'

const errors: string[] = []
const log: Logger = { info() {}, warn() {}, error: (msg) => errors.push(msg) }

// The real web/app build: what the binary embeds.
let pack: AssetPack
beforeAll(async () => {
  pack = await buildAssetPack()
})

const dashboard = () => createDashboard({ apiPrefix: '/api', log, pack: async () => pack })
const get = (d: ReturnType<typeof dashboard>, path: string, headers: Record<string, string> = {}, method = 'GET') =>
  d.handle(new Request(`https://localhost${path}`, { method, headers }), path)

describe('dashboard files', () => {
  test('the page: revalidated on every load, a CSP allowing only its own origin, the API prefix written in', async () => {
    const res = await get(dashboard(), '/app/')
    expect(res.status).toBe(200)
    expect(res.headers.get('content-type')).toStartWith('text/html')
    expect(res.headers.get('cache-control')).toBe('no-cache')
    const csp = res.headers.get('content-security-policy')!
    expect(csp).toContain("default-src 'self'")
    expect(csp).toContain("connect-src 'self'")
    expect(csp).toContain("frame-ancestors 'none'")
    const html = await res.text()
    expect(html).toContain('<meta name="shortlink-api" content="/api">')
    // Every script and stylesheet the page names is under /app/ and served.
    const refs = [...html.matchAll(/(?:src|href)="(\/app\/[^"]+)"/g)].map((m) => m[1]!)
    expect(refs.length).toBeGreaterThanOrEqual(2)
    for (const ref of refs) expect((await get(dashboard(), ref)).status).toBe(200)
  })

  test('hashed files are cached for a year and sent compressed when the browser accepts it', async () => {
    const d = dashboard()
    const script = [...pack.keys()].find((n) => /^index-[a-z0-9]+\.js$/.test(n))!
    const plain = await get(d, `/app/${script}`)
    expect(plain.headers.get('cache-control')).toBe('public, max-age=31536000, immutable')
    expect(plain.headers.get('content-encoding')).toBeNull()
    const body = new Uint8Array(await plain.arrayBuffer())
    const gz = await get(d, `/app/${script}`, { 'accept-encoding': 'gzip' })
    expect(gz.headers.get('content-encoding')).toBe('gzip')
    expect(gunzipSync(new Uint8Array(await gz.arrayBuffer()))).toEqual(Buffer.from(body))
    const br = await get(d, `/app/${script}`, { 'accept-encoding': 'gzip, deflate, br' })
    expect(br.headers.get('content-encoding')).toBe('br')
    expect(br.headers.get('vary')).toBe('accept-encoding')
  })

  test("the app's own routes answer the page; a missing file is 404; /app goes to /app/; writes are refused", async () => {
    const d = dashboard()
    const route = await get(d, '/app/links/lnk_1/stats')
    expect(route.status).toBe(200)
    expect(await route.text()).toContain('<div id="root">')
    expect((await get(d, '/app/index-00000000.js')).status).toBe(404)
    const bare = await get(d, '/app')
    expect(bare.status).toBe(308)
    expect(bare.headers.get('location')).toBe('/app/')
    expect((await get(d, '/app/', {}, 'POST')).status).toBe(405)
    const head = await get(d, '/app/', {}, 'HEAD')
    expect(head.status).toBe(200)
    expect(await head.text()).toBe('')
  })

  test('a pack that cannot be built answers 503 and is retried on the next request', async () => {
    let attempts = 0
    const d = createDashboard({
      apiPrefix: '/api',
      log,
      pack: async () => {
        if (++attempts === 1) throw new Error('build failed')
        return pack
      },
    })
    const first = await get(d, '/app/')
    expect(first.status).toBe(503)
    expect(first.headers.get('retry-after')).toBe('5')
    expect(errors).toEqual(['dashboard unavailable'])
    expect((await get(d, '/app/')).status).toBe(200)
  })

  test('the embedded form of the pack decodes to the same files', () => {
    const again = decodePack(encodePack(pack))
    expect([...again.keys()].sort()).toEqual([...pack.keys()].sort())
    for (const [name, file] of pack) {
      expect(again.get(name)!.body).toEqual(file.body)
      expect(again.get(name)!.immutable).toBe(file.immutable)
    }
  })
})
