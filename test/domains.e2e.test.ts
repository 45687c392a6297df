/**
 * The domains API through the real server over HTTPS: each endpoint's happy path, an
 * error, and the auth matrix (no key, read-only, member, admin); the OpenAPI document.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { json, startServer, type TestServer } from './helpers/server'

let s: TestServer
let member = ''
let readonly = ''
beforeAll(async () => {
  s = await startServer({ toml: '[domains]\ndefaults = ["localhost", "s.example.net"]\n' })
  member = await s.keyFor('alice', 'member')
  readonly = await s.keyFor('carol', 'readonly')
})
afterAll(async () => {
  await s?.stop()
})

describe('domains over HTTPS', () => {
  test('create, get, list, patch, verify, delete', async () => {
    const created = await json(
      await s.api('/domains', { method: 'POST', json: { domain: 'Links.Bücher.example', notFoundUrl: 'https://example.com/missing' } }),
    )
    expect(created.status).toBe(200)
    expect(created.body).toMatchObject({ slug: 'links.xn--bcher-kva.example', sslStatus: 'pending', clicks: 0, archived: false })
    // The first CNAME check is due at once: on PostgreSQL (the answer is read back after the insert, awaited) it can
    // have ended already. This machine's DNS has no records for the name, so it is pending or, once checked, invalid.
    if (created.body.cnameStatus === 'invalid') expect(created.body.cnameDetail).toContain('has no CNAME, A or AAAA records')
    else expect(created.body.cnameStatus).toBe('pending')

    expect((await json(await s.api('/domains/links.bücher.example'))).body.slug).toBe('links.xn--bcher-kva.example')
    const list = await s.api('/domains?sortBy=domain&sortOrder=asc')
    expect(list.headers.get('x-total-count')).toBe('3')
    expect(((await list.json()) as any[]).map((d) => [d.slug, d.isDefault])).toEqual([
      ['links.xn--bcher-kva.example', false],
      ['localhost', true],
      ['s.example.net', true],
    ])
    const patched = await json(
      await s.api('/domains/links.xn--bcher-kva.example', { method: 'PATCH', json: { archived: true, appleAppSiteAssociation: '{"applinks":{}}' } }),
    )
    expect(patched.body).toMatchObject({ archived: true, appleAppSiteAssociation: '{"applinks":{}}' })
    // No DNS for this name here: the check ends invalid (no records) or pending (no answer).
    const verified = await json(await s.api('/domains/links.xn--bcher-kva.example/verify', { method: 'POST' }))
    expect(verified.status).toBe(200)
    expect(verified.body.cnameStatus).not.toBe('valid')

    const dup = await json(await s.api('/domains', { method: 'POST', json: { domain: 'LINKS.xn--bcher-kva.example.' } }))
    expect([dup.status, dup.body.code]).toEqual([422, 'parameter_error'])

    expect((await json(await s.api('/domains/links.xn--bcher-kva.example', { method: 'DELETE' }))).body).toEqual({ domain: 'links.xn--bcher-kva.example' })
    expect((await s.api('/domains/links.xn--bcher-kva.example')).status).toBe(404)
  })

  test('auth matrix: reads for every key, writes for admins only, default domains read-only', async () => {
    expect((await s.api('/domains', { method: 'POST', json: { domain: 'm.example.org' } })).status).toBe(200)
    const writes: [string, string, unknown][] = [
      ['POST', '/domains', { domain: 'n.example.org' }],
      ['PATCH', '/domains/m.example.org', { archived: true }],
      ['POST', '/domains/m.example.org/verify', undefined],
      ['DELETE', '/domains/m.example.org', undefined],
    ]
    for (const [method, path, body] of writes) {
      expect([method, path, (await s.api(path, { method, json: body, key: null })).status]).toEqual([method, path, 401])
      for (const key of [member, readonly]) {
        const r = await json(await s.api(path, { method, json: body, key }))
        expect([method, path, r.status, r.body.code]).toEqual([method, path, 403, 'forbidden'])
      }
    }
    for (const key of [member, readonly]) {
      expect((await s.api('/domains', { key })).status).toBe(200)
      expect((await s.api('/domains/m.example.org', { key })).status).toBe(200)
    }
    expect((await s.api('/domains/s.example.net', { method: 'PATCH', json: { notFoundUrl: 'https://example.com/' } })).status).toBe(403)
    expect((await s.api('/domains/s.example.net', { method: 'DELETE' })).status).toBe(403)
    expect((await s.api('/domains', { method: 'POST', json: { domain: 's.example.net' } })).status).toBe(422)
    expect((await s.api('/domains', { method: 'POST', json: { domain: 'localhost' } })).status).toBe(422)
  })

  test('the OpenAPI document describes the domain operations', async () => {
    const doc = (await (await s.api('/openapi.json', { key: null })).json()) as any
    expect(Object.keys(doc.paths['/domains'])).toEqual(expect.arrayContaining(['get', 'post']))
    expect(Object.keys(doc.paths['/domains/{domain}'])).toEqual(expect.arrayContaining(['get', 'patch', 'delete']))
    expect(doc.paths['/domains/{domain}/verify'].post).toBeDefined()
    expect(doc.paths['/domains'].post.description).toContain('Admin keys only')
    expect(doc.paths['/domains/{domain}'].delete.description).toContain('no longer resolve')
    expect(doc.paths['/domains/{domain}'].patch.description).toContain('403')
    expect(doc.paths['/domains'].get.parameters.map((p: any) => p.name)).toEqual(
      expect.arrayContaining(['domains', 'search', 'includeArchived', 'page', 'pageSize', 'sortBy', 'sortOrder']),
    )
  })
})
