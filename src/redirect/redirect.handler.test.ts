import { beforeAll, describe, expect, test } from 'bun:test'
import { type ApiHarness, createHarness } from '../../test/helpers/in-process'
import { PASSWORD_LIMITS } from './password-gate'
import { createRedirectHandler, type RedirectHandler } from './redirect.handler'
import { handlerDeps, redirectHandlerFor } from './redirect.test-fixtures'

let h: ApiHarness
let redirects: RedirectHandler

/** A visit to https://localhost/<path> from `ip`, through the handler the server uses. */
async function visit(path: string, opts: { method?: string; body?: string; headers?: Record<string, string>; ip?: string } = {}) {
  const request = new Request(`https://localhost${path}`, { method: opts.method ?? 'GET', body: opts.body, headers: opts.headers })
  const q = path.indexOf('?')
  return redirects.handle(request, q < 0 ? path : path.slice(0, q), q < 0 ? '' : path.slice(q + 1), 'localhost', () => opts.ip ?? '192.0.2.1')
}
const form = { 'content-type': 'application/x-www-form-urlencoded' }

beforeAll(async () => {
  h = createHarness()
  const { deps } = h
  redirects = redirectHandlerFor(deps)
  for (const key of ['locked', 'guessed'])
    expect(
      (await h.call('POST', '/links/link', { json: { data: { url: 'https://secret.example/' }, linkOptions: { key, password: 'letmein' } } })).status,
    ).toBe(200)
})

describe('password form', () => {
  test('the form answers 200, a wrong password 403 with the form again, never 401', async () => {
    const page = await visit('/locked')
    expect(page.status).toBe(200)
    expect(await page.text()).toContain('<form method="post" action="/locked">')
    const wrong = await visit('/locked', { method: 'POST', body: 'password=nope', headers: form })
    expect(wrong.status).toBe(403)
    expect(await wrong.text()).toContain('Wrong password')
    const right = await visit('/locked', { method: 'POST', body: 'password=letmein', headers: form })
    expect(right.status).toBe(303)
    const cookie = right.headers.get('set-cookie')!.split(';')[0]!
    expect((await visit('/locked', { headers: { cookie } })).status).toBe(302)
  })

  test('guesses from many IPs stop at the per-link budget: 429 with Retry-After; a visitor with the cookie still gets in', async () => {
    const right = await visit('/guessed', { method: 'POST', body: 'password=letmein', headers: form, ip: '198.51.100.1' })
    const cookie = right.headers.get('set-cookie')!.split(';')[0]!
    // An empty form is a wrong guess that skips the slow hash check.
    const guess = (ip: string) => visit('/guessed', { method: 'POST', body: '', headers: form, ip })
    for (let i = 0; i < PASSWORD_LIMITS.perLink; i++) expect((await guess(`10.0.${i >> 8}.${i & 255}`)).status).toBe(403)
    const refused = await guess('10.1.0.1')
    expect(refused.status).toBe(429)
    const retryAfter = Number(refused.headers.get('retry-after'))
    expect(retryAfter).toBeGreaterThan(0)
    expect(retryAfter).toBeLessThanOrEqual(PASSWORD_LIMITS.windowMs / 1000)
    expect(await refused.text()).toContain('Too many attempts')
    expect((await visit('/guessed', { headers: { cookie } })).status).toBe(302)
    expect((await visit('/locked', { method: 'POST', body: '', headers: form, ip: '10.1.0.1' })).status).toBe(403) // other links unaffected
  })
})

describe('keys a stranger sends', () => {
  test('a key longer than any link key is not found and not remembered', async () => {
    const long = `/${'k'.repeat(16 * 1024)}`
    const before = redirects.cacheSize()
    const r = await visit(long)
    expect(r.status).toBe(404)
    expect(redirects.cacheSize()).toEqual(before)
  })
})

describe('the 302', () => {
  test('is built with HSTS where the domain has it, without it where not, and carries no page headers', async () => {
    expect((await h.call('POST', '/links/link', { json: { data: { url: 'https://dest.example/a?b=1' }, linkOptions: { key: 'plain302' } } })).status).toBe(200)
    const r = await visit('/plain302')
    expect([r.status, r.headers.get('location'), r.headers.get('strict-transport-security'), r.headers.get('content-security-policy')]).toEqual([
      302,
      'https://dest.example/a?b=1',
      'max-age=31536000',
      null,
    ])
    // The root and a page answer on the same domain: HSTS on both (the page also gets its page headers).
    expect((await visit('/')).headers.get('strict-transport-security')).toBe('max-age=31536000')
    const missing = await visit('/no-such-key')
    expect([missing.status, missing.headers.get('strict-transport-security'), missing.headers.get('x-content-type-options')]).toEqual([
      404,
      'max-age=31536000',
      'nosniff',
    ])
    // A domain without HSTS (no certificate of its own): neither the 302 nor the page carries it; once it has
    // one, the same cached link's 302 does (its kept headers follow the domain).
    let hsts = false
    const plain = createRedirectHandler({ ...handlerDeps(h), domainOf: (host) => ({ ...h.deps.domains.lookup(host)!, hsts }) })
    const sts = async (path: string) => {
      const r = await plain.handle(new Request(`https://localhost${path}`), path, '', 'localhost', () => '192.0.2.1')
      return [r.status, r.headers.get('location'), r.headers.get('strict-transport-security')]
    }
    expect(await sts('/plain302')).toEqual([302, 'https://dest.example/a?b=1', null])
    expect(await sts('/plain302')).toEqual([302, 'https://dest.example/a?b=1', null])
    expect(await sts('/nope')).toEqual([404, null, null])
    hsts = true
    expect(await sts('/plain302')).toEqual([302, 'https://dest.example/a?b=1', 'max-age=31536000'])
    hsts = false
    expect(await sts('/plain302')).toEqual([302, 'https://dest.example/a?b=1', null])
  })

  test("a location made per visit stays that answer's own when the next answers are made (the headers are copied)", async () => {
    const made = await h.call('POST', '/links/link', {
      json: { data: { url: 'https://dest.example/t' }, linkOptions: { key: 'own302', trackConversion: true } },
    })
    expect(made.status).toBe(200)
    // A browser's visit (one without a user agent is a bot's: not counted, no click id).
    const browser = { headers: { 'user-agent': 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0 Safari/537.36' } }
    const answers = [await visit('/own302', browser), await visit('/own302', browser), await visit('/own302', browser)]
    const ids = answers.map((r) => new URL(r.headers.get('location')!).searchParams.get('sl_id'))
    expect(new Set(ids).size).toBe(3)
    // Read again after all three were made: each still carries its own.
    expect(answers.map((r) => new URL(r.headers.get('location')!).searchParams.get('sl_id'))).toEqual(ids)
    expect(answers.every((r) => r.headers.get('strict-transport-security') === 'max-age=31536000')).toBe(true)
  })
})

describe('number targeting on one node', () => {
  test('the n-th visit counts from the store and the visits not yet written, also after the link left the cache', async () => {
    const made = await h.call('POST', '/links/link', {
      json: {
        data: { url: 'https://late.example/' },
        linkOptions: { key: 'nth', Targeting: { targetType: 'number', targetDatas: [{ from: 2, to: 3, url: 'https://second.example/' }] } },
      },
    })
    expect(made.status).toBe(200)
    const ua = 'Mozilla/5.0 (iPhone; CPU iPhone OS 17_4 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4 Mobile/15E148 Safari/604.1'
    const where = async () => (await visit('/nth', { headers: { 'user-agent': ua } })).headers.get('location')
    expect(await where()).toBe('https://late.example/') // 1st
    expect(await where()).toBe('https://second.example/') // 2nd
    redirects.clearCache() // the count is seeded again: 2 visits held by the recorder (storedClicks says 0 here)
    expect(h.deps.recorder.pendingFor(h.deps.links.findLiveRow('localhost', 'nth')!.seq)).toBe(2)
    expect(await where()).toBe('https://second.example/') // 3rd
    expect(await where()).toBe('https://late.example/') // 4th
  })
})
