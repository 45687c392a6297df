import { describe, expect, test } from 'bun:test'
import { createHarness } from '../../test/helpers/in-process'

describe('tags API', () => {
  test('create, get, list, update, delete', async () => {
    const h = createHarness()
    const created = await h.call('POST', '/tags', { key: h.keys.member, json: { name: 'Summer', color: 'teal' } })
    expect(created.status).toBe(200)
    expect(created.body).toMatchObject({ name: 'Summer', color: 'teal', userId: 'usr_alice' })
    expect(created.body.id).toMatch(/^tag_/)
    expect(created.body.createdAt).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/)

    const got = await h.call('GET', `/tags/${created.body.id}`, { key: h.keys.member })
    expect(got.body).toEqual(created.body)

    const renamed = await h.call('PATCH', `/tags/${created.body.id}`, { key: h.keys.member, json: { name: 'Winter' } })
    expect(renamed.status).toBe(200)
    expect(renamed.body).toMatchObject({ name: 'Winter', color: 'teal' })

    const list = await h.call('GET', '/tags', { key: h.keys.member })
    expect(list.body.map((t: any) => t.name)).toEqual(['Winter'])
    expect(list.headers.get('x-total-count')).toBe('1')

    const del = await h.call('DELETE', `/tags/${created.body.id}`, { key: h.keys.member })
    expect(del.body).toEqual({ id: created.body.id })
    expect((await h.call('GET', `/tags/${created.body.id}`, { key: h.keys.member })).status).toBe(404)
  })

  test('a colour is picked when none is given', async () => {
    const h = createHarness()
    const r = await h.call('POST', '/tags', { json: { name: 'promo' } })
    expect(['red', 'orange', 'yellow', 'green', 'teal', 'blue', 'purple', 'pink', 'brown', 'gray']).toContain(r.body.color)
  })

  test('names are unique per user, case-insensitively, but not across users', async () => {
    const h = createHarness()
    expect((await h.call('POST', '/tags', { key: h.keys.member, json: { name: 'Promo' } })).status).toBe(200)
    const dup = await h.call('POST', '/tags', { key: h.keys.member, json: { name: 'PROMO' } })
    expect(dup.status).toBe(422)
    expect(dup.body.code).toBe('parameter_error')
    expect(dup.body.message).toContain('name')
    expect((await h.call('POST', '/tags', { key: h.keys.other, json: { name: 'promo' } })).status).toBe(200)
  })

  test('name length 1-50 and the colour list are enforced', async () => {
    const h = createHarness()
    expect((await h.call('POST', '/tags', { json: { name: 'x'.repeat(50) } })).status).toBe(200)
    for (const body of [{ name: 'x'.repeat(51) }, { name: '' }, { name: 'ok', color: 'black' }, {}, { name: 5 }]) {
      const r = await h.call('POST', '/tags', { json: body })
      expect(r.status).toBe(422)
      expect(r.body.code).toBe('parameter_error')
    }
    const r = await h.call('POST', '/tags', { json: { name: 'ok', color: 'black' } })
    expect(r.body.message).toContain('color')
  })

  test('list: search, ids, sort, paging', async () => {
    const h = createHarness()
    const ids: string[] = []
    for (const name of ['alpha', 'beta', 'gamma', 'delta', 'alphabet']) {
      ids.push((await h.call('POST', '/tags', { json: { name } })).body.id)
    }
    const search = await h.call('GET', '/tags?search=ALPHA&sortBy=name&sortOrder=asc')
    expect(search.body.map((t: any) => t.name)).toEqual(['alpha', 'alphabet'])
    const byIds = await h.call('GET', `/tags?ids=${ids[1]}&ids=${ids[2]}&sortBy=name&sortOrder=asc`)
    expect(byIds.body.map((t: any) => t.name)).toEqual(['beta', 'gamma'])
    const page2 = await h.call('GET', '/tags?pageSize=2&page=2&sortBy=created_at&sortOrder=asc')
    expect(page2.body.map((t: any) => t.name)).toEqual(['gamma', 'delta'])
    expect(page2.headers.get('x-total-count')).toBe('5')
    const newest = await h.call('GET', '/tags?pageSize=1')
    expect(newest.body[0].name).toBe('alphabet')
    for (const q of ['pageSize=0', 'pageSize=101', 'page=0', 'sortBy=color', 'sortOrder=up', 'search=']) {
      const r = await h.call('GET', `/tags?${q}`)
      expect(r.status).toBe(422)
      expect(r.body.message).toContain(q.split('=')[0])
    }
    expect((await h.call('GET', '/tags?pageSize=100&unknownParam=1')).status).toBe(200)
  })

  test('ownership: members see and change only their own tags; admins all', async () => {
    const h = createHarness()
    const mine = (await h.call('POST', '/tags', { key: h.keys.member, json: { name: 'mine' } })).body
    await h.call('POST', '/tags', { key: h.keys.other, json: { name: 'theirs' } })
    expect((await h.call('GET', '/tags', { key: h.keys.other })).body.map((t: any) => t.name)).toEqual(['theirs'])
    expect((await h.call('GET', `/tags/${mine.id}`, { key: h.keys.other })).status).toBe(403)
    expect((await h.call('PATCH', `/tags/${mine.id}`, { key: h.keys.other, json: { name: 'x' } })).status).toBe(403)
    expect((await h.call('DELETE', `/tags/${mine.id}`, { key: h.keys.other })).status).toBe(403)
    expect((await h.call('GET', '/tags', { key: h.keys.admin })).body).toHaveLength(2)
    expect((await h.call('PATCH', `/tags/${mine.id}`, { key: h.keys.admin, json: { color: 'red' } })).body.color).toBe('red')
  })

  test('auth matrix: no key 401, bad key 401, readonly may read but not write', async () => {
    const h = createHarness()
    const none = await h.call('GET', '/tags', { key: null })
    expect(none.status).toBe(401)
    expect(none.body.code).toBe('unauthorized')
    expect((await h.call('GET', '/tags', { key: 'sk_wrong' })).status).toBe(401)
    expect((await h.call('GET', '/tags', { key: null, headers: { authorization: 'Basic abc' } })).status).toBe(401)
    expect((await h.call('GET', '/tags', { key: h.keys.readonly })).status).toBe(200)
    const write = await h.call('POST', '/tags', { key: h.keys.readonly, json: { name: 'x' } })
    expect(write.status).toBe(403)
    expect(write.body).toMatchObject({ code: 'forbidden' })
  })

  test('unknown ids are 404 not_found', async () => {
    const h = createHarness()
    for (const [m, json] of [['GET'], ['PATCH', { name: 'x' }], ['DELETE']] as const) {
      const r = await h.call(m, '/tags/tag_doesnotexist', { json })
      expect(r.status).toBe(404)
      expect(r.body.code).toBe('not_found')
    }
  })
})
