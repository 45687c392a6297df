import { describe, expect, test } from 'bun:test'
import { createHarness } from '../test/helpers/in-process'

describe('API envelope and error handling', () => {
  test('every response carries rate-limit headers and a request id', async () => {
    const h = createHarness()
    for (const [path, key] of [
      ['/tags', h.keys.admin],
      ['/tags', null],
      ['/nope', h.keys.admin],
    ] as const) {
      const r = await h.call('GET', path, { key })
      expect(r.headers.get('ratelimit-limit')).toBe('600')
      expect(Number(r.headers.get('ratelimit-remaining'))).toBeGreaterThanOrEqual(0)
      expect(Number(r.headers.get('ratelimit-reset'))).toBeGreaterThan(0)
      expect(r.headers.get('x-request-id')).toMatch(/^req_/)
    }
  })

  test('the limit is per key: the n+1-th request gets 429 with Retry-After', async () => {
    const h = createHarness({ limits: { apiPerMinute: 5 } })
    const statuses = []
    for (let i = 0; i < 6; i++) statuses.push((await h.call('GET', '/tags')).status)
    expect(statuses).toEqual([200, 200, 200, 200, 200, 429])
    const r = await h.call('GET', '/tags')
    expect(r.body.code).toBe('rate_limit_exceeded')
    expect(Number(r.headers.get('retry-after'))).toBeGreaterThan(0)
    expect((await h.call('GET', '/tags', { key: h.keys.member })).status).toBe(200)
  })

  test('bad bodies are 400 bad_request and change nothing', async () => {
    const h = createHarness()
    const cases: { body: string; headers: Record<string, string>; msg: string }[] = [
      { body: '{"name":', headers: { 'content-type': 'application/json' }, msg: 'JSON' },
      { body: 'name=x', headers: { 'content-type': 'application/x-www-form-urlencoded' }, msg: 'content type' },
      { body: '{"name":"x"}', headers: { 'content-type': 'text/plain' }, msg: 'content type' },
      { body: '{"name":"x"}', headers: {}, msg: 'content type' },
      { body: JSON.stringify({ name: 'x'.repeat(2 * 1024 * 1024) }), headers: { 'content-type': 'application/json' }, msg: 'too large' },
    ]
    for (const c of cases) {
      const r = await h.call('POST', '/tags', c)
      expect(r.status).toBe(400)
      expect(r.body.code).toBe('bad_request')
      expect(r.body.message).toContain(c.msg)
    }
    expect((await h.call('GET', '/tags')).headers.get('x-total-count')).toBe('0')
  })

  test('a declared content-length over the limit is refused before reading', async () => {
    const h = createHarness()
    const r = await h.call('POST', '/tags', { body: '{}', headers: { 'content-type': 'application/json', 'content-length': String(10 * 1024 * 1024) } })
    expect(r.status).toBe(400)
  })

  test('validation failures are 422 parameter_error naming the field; unknown fields too', async () => {
    const h = createHarness()
    const r = await h.call('POST', '/tags', { json: { name: 'ok', extra: true } })
    expect(r.status).toBe(422)
    expect(r.body).toMatchObject({ code: 'parameter_error' })
    expect(r.body.message).toContain('extra')
    const arr = await h.call('POST', '/tags', { json: [1, 2] })
    expect(arr.status).toBe(422)
  })

  test('unknown routes are 404 not_found in the error shape', async () => {
    const h = createHarness()
    const r = await h.call('GET', '/no/such/route')
    expect(r.status).toBe(404)
    expect(r.body.code).toBe('not_found')
  })

  test('an unexpected failure is a generic 500 with the request id, logged', async () => {
    const h = createHarness()
    const logged: unknown[] = []
    h.deps.log.error = (msg, fields) => logged.push({ msg, ...fields })
    // Make the store fail underneath a route, as a bug or a broken disk would.
    h.deps.db.exec('DROP TABLE tags')
    const r = await h.call('GET', '/tags')
    expect(r.status).toBe(500)
    expect(r.body.code).toBe('internal_server_error')
    expect(r.body.message).not.toContain('tags')
    expect(r.body.message).toContain(r.body.requestId)
    expect(JSON.stringify(logged)).toContain(r.body.requestId)
  })

  test('OpenAPI 3.1 document and docs page are public; the docs assets are served locally', async () => {
    const h = createHarness()
    const doc = await h.call('GET', '/openapi.json', { key: null })
    expect(doc.status).toBe(200)
    expect(doc.body.openapi).toBe('3.1.0')
    expect(doc.body.servers[0].url).toBe('https://localhost:8443/api')
    const post = doc.body.paths['/tags'].post
    expect(post.requestBody.content['application/json'].schema.properties.name).toMatchObject({ minLength: 1, maxLength: 50 })
    const list = doc.body.paths['/tags'].get
    expect(list.parameters.find((p: any) => p.name === 'pageSize').schema).toMatchObject({ minimum: 1, maximum: 100 })
    const page = await h.call('GET', '/docs', { key: null })
    expect(page.status).toBe(200)
    expect(page.body).toContain('/api/docs/swagger-ui-bundle.js')
    expect(page.body).not.toContain('cdn')
    const js = await h.call('GET', '/docs/swagger-ui-bundle.js', { key: null })
    expect(js.status).toBe(200)
    expect(String(js.body).length).toBeGreaterThan(100_000)
  })
})
