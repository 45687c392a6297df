import { expect, test } from 'bun:test'
import { createHarness } from '../../test/helpers/in-process'
import { STATUS_BY_CODE } from '../shared'

test('every error response of the error table is the error body, described by its code and when it is answered', async () => {
  const doc = (await createHarness().call('GET', '/openapi.json', { key: null })).body
  const codeOf = new Map(Object.entries(STATUS_BY_CODE).map(([code, status]) => [String(status), code]))
  let seen = 0
  for (const [path, item] of Object.entries<any>(doc.paths))
    for (const [method, op] of Object.entries<any>(item))
      for (const [status, response] of Object.entries<any>(op.responses ?? {})) {
        if (!codeOf.has(status)) continue // e.g. 416, documented by hand where it applies
        // The contract gives readiness's 503 the readiness body ({ status, checks }), not the error body.
        if (path === '/readyz' && status === '503') {
          expect(response.content['application/json'].schema.required).toEqual(['status', 'checks'])
          continue
        }
        seen++
        expect([path, method, response.description]).toEqual([path, method, expect.stringMatching(new RegExp(`^\`${codeOf.get(status)}\`: .{10,}`))])
        expect(response.content['application/json'].schema.required).toEqual(['code', 'message'])
      }
  expect(seen).toBeGreaterThan(200)
  const statuses = (path: string, method: string) => Object.keys(doc.paths[path][method].responses).filter((s) => Number(s) >= 400)
  expect(statuses('/tags', 'post')).toEqual(['400', '401', '403', '404', '422', '429'])
  expect(statuses('/qr/scan', 'post')).toEqual(['400', '401', '403', '422', '429', '500', '502'])
})
