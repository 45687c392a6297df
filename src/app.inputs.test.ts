/**
 * Inputs that once answered 500: each now gets the contract's error body, names the
 * field and rule at fault, and changes nothing.
 */
import { describe, expect, test } from 'bun:test'
import { createHarness } from '../test/helpers/in-process'
import { hasNulEscape, jsonDepth } from './app'

const h = createHarness()

describe('control characters', () => {
  for (const list of ['/links', '/tags', '/files', '/qr/templates', '/domains']) {
    test(`a NUL in ${list}?search is refused, naming the rule`, async () => {
      const r = await h.call('GET', `${list}?search=a%00b`)
      expect(r.status).toBe(422)
      expect(r.body).toMatchObject({ code: 'parameter_error', message: "'search' must not contain control characters" })
    })
  }

  test('searches of ordinary text still work (the full-text path and the short one)', async () => {
    await h.call('POST', '/links/link', { json: { data: { url: 'https://example.com/zq-menu' } } })
    for (const search of ['zq-men', 'zq']) {
      const r = await h.call('GET', `/links?search=${encodeURIComponent(search)}`)
      expect(r.status).toBe(200)
      expect(r.body.total).toBe(1)
    }
  })

  test('frame texts with control characters are refused in the query and in a saved design', async () => {
    const link = await h.call('POST', '/links/link', { json: { data: { url: 'https://example.com/frame' } } })
    const q = await h.call('GET', `/qr/${link.body.id}?texts=a%01b`)
    expect(q.status).toBe(422)
    expect(q.body.message).toBe("'texts.0' must not contain control characters")
    const saved = await h.call('PATCH', `/links/${link.body.id}`, { json: { qrOptions: { frame: { add_texts: [{ content: 'scan\u0007me' }] } } } })
    expect(saved.status).toBe(422)
    expect(saved.body.code).toBe('parameter_error')
    // Nothing was stored: the code still renders.
    expect((await h.call('GET', `/qr/${link.body.id}`)).status).toBe(200)
  })
})

describe('NUL characters (PostgreSQL refuses them in any query; no stored value holds one)', () => {
  test('in a path: 400; in a query value: 422 naming the parameter; in a JSON string: 422 naming the field; nothing made', async () => {
    expect((await h.call('GET', '/links/lnk_%00')).body).toMatchObject({ code: 'bad_request', message: 'the request path must not contain NUL (%00)' })
    expect((await h.call('GET', '/links?ids=a%00')).body).toMatchObject({ code: 'parameter_error', message: "'ids' must not contain control characters" })
    const made = await h.call('POST', '/links/text', { json: { data: { text: 'a\u0000b' }, linkOptions: { key: 'nul-text' } } })
    expect([made.status, made.body.message]).toEqual([422, "'data.text' must not contain control characters"])
    expect((await h.call('GET', '/links?search=nul-text')).body.total).toBe(0)
  })

  test('hasNulEscape finds \\u0000 in JSON text, not an escaped backslash before u0000', () => {
    const has = (s: string) => hasNulEscape(new TextEncoder().encode(s))
    expect([has('{"a":"x\\u0000"}'), has('{"a":"\\\\u0000"}'), has('{"a":"\\\\\\u0000"}'), has('{"a":"u0000"}'), has('{"a":"\\u00001"}')]).toEqual([
      true,
      false,
      true,
      false,
      true,
    ])
  })
})

describe('deeply nested JSON', () => {
  test('is refused with bad_request before any parser or validator recurses into it', async () => {
    const body = `{"name":"x","qrOptions":${'{"a":'.repeat(50_000)}1${'}'.repeat(50_001)}`
    const r = await h.call('POST', '/qr/templates', { body, headers: { 'content-type': 'application/json' } })
    expect(r.status).toBe(400)
    expect(r.body).toMatchObject({ code: 'bad_request', message: 'request body nests arrays and objects deeper than 32 levels' })
  })

  test('jsonDepth counts arrays and objects, not brackets inside strings', () => {
    const depth = (s: string) => jsonDepth(new TextEncoder().encode(s))
    expect(depth('1')).toBe(0)
    expect(depth('{"a":[1,{"b":2}]}')).toBe(3)
    expect(depth('{"a":"[[[[{{{{\\"]]"}')).toBe(1)
  })
})
