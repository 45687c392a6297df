/**
 * The links API through the real server over HTTPS: each endpoint's happy path, an
 * error and the auth matrix (no key, readonly, a member on another user's link).
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { json, startServer, type TestServer } from './helpers/server'

let s: TestServer
let member = ''
let other = ''
let readonly = ''
beforeAll(async () => {
  s = await startServer()
  member = await s.keyFor('alice', 'member')
  other = await s.keyFor('bob', 'member')
  readonly = await s.keyFor('carol', 'readonly')
})
afterAll(async () => {
  await s?.stop()
})

describe('links over HTTPS', () => {
  test('create, get, patch, list, count, upsert, bulk update, delete, bulk delete', async () => {
    const tag = (await json(await s.api('/tags', { key: member, method: 'POST', json: { name: 'poster' } }))).body
    const created = await json(
      await s.api('/links/link', {
        key: member,
        method: 'POST',
        json: { data: { url: 'https://example.com/menu' }, linkOptions: { key: 'menu', tags: [tag.id] } },
      }),
    )
    expect(created.status).toBe(200)
    expect(created.body).toMatchObject({ key: 'menu', shortLink: `https://localhost:${s.httpsPort}/menu`, tags: [tag.id], userId: 'usr_alice' })
    const id = created.body.id
    expect((await json(await s.api(`/links/${id}`, { key: member }))).body).toEqual(created.body)
    const patched = await json(await s.api(`/links/${id}`, { key: member, method: 'PATCH', json: { linkOptions: { comment: 'table tents' } } }))
    expect(patched.body.comments).toBe('table tents')
    const list = await json(await s.api(`/links?tagIds=${tag.id}`, { key: member }))
    expect(list.body).toMatchObject({ page: 1, pageSize: 20, total: 1 })
    expect((await json(await s.api('/links/count', { key: member }))).body).toEqual({ count: 1 })
    const up1 = await s.api('/links/upsert/link', { key: member, method: 'PUT', json: { data: { url: 'https://example.com/other' } } })
    const up2 = await s.api('/links/upsert/link', { key: member, method: 'PUT', json: { data: { url: 'https://example.com/other' } } })
    expect([up1.status, up2.status]).toEqual([201, 200])
    const second = (await up1.json()) as any
    const bulk = await json(
      await s.api('/links/bulk', { key: member, method: 'PATCH', json: { linkIds: [id, second.id], updateData: { linkOptions: { archived: true } } } }),
    )
    expect(bulk.body.updatedCount).toBe(2)
    expect((await json(await s.api('/links/count', { key: member }))).body).toEqual({ count: 0 })
    expect((await json(await s.api(`/links/${id}`, { key: member, method: 'DELETE' }))).body).toEqual({ id })
    expect((await s.api(`/links/${id}`, { key: member })).status).toBe(410)
    expect((await json(await s.api(`/links/bulk?linkIds=${id},${second.id}`, { key: member, method: 'DELETE' }))).body).toEqual({ deletedCount: 1 })
  })

  test('errors: 422 naming the field, 404, 400 for bad JSON', async () => {
    const bad = await json(await s.api('/links/link', { method: 'POST', json: { data: { url: 'javascript:alert(1)' } } }))
    expect(bad).toMatchObject({ status: 422, body: { code: 'parameter_error' } })
    expect(bad.body.message).toContain('data.url')
    expect((await json(await s.api('/links/qr-code', { method: 'POST', json: { data: {} } }))).status).toBe(422)
    expect((await s.api('/links/lnk_missing')).status).toBe(404)
    const notJson = await s.api('/links/link', { method: 'POST', body: '{"data":', headers: { 'content-type': 'application/json' } })
    expect(notJson.status).toBe(400)
    expect((await s.api('/links?pageSize=101')).status).toBe(422)
  })

  test('auth matrix on every link endpoint', async () => {
    const theirs = (await json(await s.api('/links/link', { key: other, method: 'POST', json: { data: { url: 'https://bob.example/' } } }))).body
    const endpoints: [string, string, unknown?][] = [
      ['POST', '/links/link', { data: { url: 'https://x.example/' } }],
      ['PUT', '/links/upsert/link', { data: { url: 'https://x.example/' } }],
      ['GET', `/links/${theirs.id}`],
      ['PATCH', `/links/${theirs.id}`, { linkOptions: { comment: 'x' } }],
      ['PATCH', '/links/bulk', { linkIds: [theirs.id], updateData: { linkOptions: { comment: 'x' } } }],
      ['GET', '/links'],
      ['GET', '/links/count'],
      ['DELETE', `/links/bulk?linkIds=${theirs.id}`],
      ['DELETE', `/links/${theirs.id}`],
    ]
    for (const [method, path, body] of endpoints) {
      const none = await s.api(path, { key: null, method, json: body })
      expect(none.status).toBe(401)
      const ro = await s.api(path, { key: readonly, method, json: body })
      expect(ro.status).toBe(method === 'GET' ? (path.includes(theirs.id) ? 403 : 200) : 403)
      if (path.includes(theirs.id)) expect((await s.api(path, { key: member, method, json: body })).status).toBe(403)
    }
    expect((await s.api('/links?userIds=usr_bob', { key: member })).status).toBe(403)
    expect((await s.api(`/links/${theirs.id}`)).status).toBe(200) // admin sees all
  })
})
