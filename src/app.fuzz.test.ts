/**
 * Bad input never yields a 500: every operation in the OpenAPI document is called with
 * malformed path values, query strings and bodies (deterministic pseudo-random), as
 * admin and as a member, and must answer with a contract error or a success.
 */
import { expect, test } from 'bun:test'
import { createHarness } from '../test/helpers/in-process'
import { seededRandom } from '../test/helpers/random'

const rnd = seededRandom(7)
const pick = <T>(xs: T[]): T => xs[Math.floor(rnd() * xs.length)]!

const WEIRD_STRINGS = [
  '',
  ' ',
  'a'.repeat(5000),
  '../../etc/passwd',
  '%00',
  '\u0000',
  '💥',
  '<script>',
  'null',
  '-1',
  '1e309',
  'NaN',
  'lnk_x',
  'tag_x',
  'fil_x',
  'tpl_x',
  'localhost',
  'xn--',
  'https://',
  'javascript:alert(1)',
]
const WEIRD_VALUES: unknown[] = [null, true, false, 0, -1, 1.5, 2 ** 53, '', 'x', [], {}, [null], { a: 1 }, WEIRD_STRINGS[2], { url: 'https://x.example/' }]

function weirdBody(depth = 0): unknown {
  const r = rnd()
  if (depth > 2 || r < 0.4) return pick(WEIRD_VALUES)
  if (r < 0.6) return Array.from({ length: Math.floor(rnd() * 3) }, () => weirdBody(depth + 1))
  const keys = [
    'data',
    'linkOptions',
    'qrOptions',
    'name',
    'color',
    'url',
    'domain',
    'linkIds',
    'updateData',
    'key',
    'tags',
    'Targeting',
    'expiration',
    'patterns',
    'logo',
    'frame',
    'archived',
    'comment',
    pick(WEIRD_STRINGS),
  ]
  const o: Record<string, unknown> = {}
  for (let i = 0; i < 1 + Math.floor(rnd() * 4); i++) o[pick(keys)] = weirdBody(depth + 1)
  return o
}

function weirdQuery(): string {
  const names = [
    'page',
    'pageSize',
    'ids',
    'sortBy',
    'sortOrder',
    'search',
    'groupBy',
    'granularity',
    'timezone',
    'start',
    'end',
    'interval',
    'linkId',
    'tagIds',
    'format',
    'width',
    'texts',
    'includeArchived',
    'linkType',
    'qr',
    'country',
    'linkIds',
    'domains',
    'extension',
  ]
  const q = new URLSearchParams()
  for (let i = 0; i < Math.floor(rnd() * 5); i++) q.append(pick(names), pick(WEIRD_STRINGS.filter((s) => s.length < 100)))
  return q.toString()
}

test('no operation answers 500 to malformed input', async () => {
  const h = createHarness()
  const doc = (await h.call('GET', '/openapi.json', { key: null })).body
  const failures: string[] = []
  let calls = 0
  for (const [template, item] of Object.entries(doc.paths) as [string, Record<string, unknown>][]) {
    for (const method of Object.keys(item)) {
      for (let i = 0; i < 12; i++) {
        const path = template.replace(/\{[^}]+\}/g, () => encodeURIComponent(pick(WEIRD_STRINGS.filter((s) => s.length < 100 && s !== ''))))
        const qs = weirdQuery()
        const body = ['POST', 'PUT', 'PATCH'].includes(method.toUpperCase()) ? weirdBody() : undefined
        const key = pick([h.keys.admin, h.keys.member, h.keys.readonly])
        // A stream (GET /events) answers until the client leaves: its status, then it is cancelled.
        const stream = !!(item[method] as { responses?: Record<string, { content?: Record<string, unknown> }> }).responses?.['200']?.content?.[
          'text/event-stream'
        ]
        const r = await h.call(method.toUpperCase(), `${path}${qs ? `?${qs}` : ''}`, { key, json: body, stream })
        calls++
        if (r.status >= 500 && !(r.status === 502 && template === '/qr/scan'))
          failures.push(`${method.toUpperCase()} ${path}?${qs} ${JSON.stringify(body)?.slice(0, 200)} → ${r.status} ${JSON.stringify(r.body).slice(0, 200)}`)
        else if (r.status >= 400) expect(typeof r.body.code).toBe('string')
      }
    }
  }
  expect(calls).toBeGreaterThan(300)
  expect(failures).toEqual([])
}, 120_000)
