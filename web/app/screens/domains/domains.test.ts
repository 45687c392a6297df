/// <reference types="bun" />
// Run explicitly: `bun test web/app`.
import { describe, expect, test } from 'bun:test'
import { cnameRecordLine, looksLikeApex, relativeName } from './domain'
import { describeProblem, jsonProblem } from './json-check'

describe('deep-link JSON check', () => {
  test('empty text is no file; objects and arrays pass', () => {
    expect(jsonProblem('')).toBeNull()
    expect(jsonProblem('  \n')).toBeNull()
    expect(jsonProblem('{"applinks":{}}')).toBeNull()
    expect(jsonProblem('[{"relation":[]}]')).toBeNull()
  })

  test('broken JSON names its line and column', () => {
    const p = jsonProblem('{\n  "a": 1,\n  "b": }\n')!
    expect(p.line).toBe(3)
    expect(p.column).toBeGreaterThan(0)
    expect(describeProblem(p)).toBe('Line 3, column 8: Expected a value, but unexpected "}"')
  })

  test('agrees with JSON.parse on what is valid', () => {
    const samples = [
      '{}',
      '[]',
      '[1,2,]',
      '{"a":1,}',
      '{"a" 1}',
      "{'a':1}",
      '{"a":"\\x"}',
      '{"a":"\\u00e9"}',
      '[1e5,-0.5,true,null]',
      '[01]',
      '{"a":1}x',
      '[',
      '{"a":"b\nc"}',
    ]
    for (const s of samples) {
      let parses = true
      try {
        JSON.parse(s)
      } catch {
        parses = false
      }
      expect([s, jsonProblem(s) === null]).toEqual([s, parses])
    }
  })

  test('a bare value or an over-long text is refused as the server would', () => {
    expect(jsonProblem('"text"')?.message).toContain('object')
    expect(jsonProblem('42')?.message).toContain('object')
    expect(jsonProblem(`{"a":"${'x'.repeat(2000)}"}`)?.message).toContain('Too long')
  })
})

describe('DNS record', () => {
  test('apex domains cannot hold a CNAME', () => {
    expect(looksLikeApex('brand.com')).toBe(true)
    expect(looksLikeApex('brand.co.uk')).toBe(true)
    expect(looksLikeApex('go.brand.com')).toBe(false)
    expect(looksLikeApex('go.brand.co.uk')).toBe(false)
  })

  test('the name as DNS providers ask for it, and the zone-file line', () => {
    expect(relativeName('go.brand.com')).toBe('go')
    expect(relativeName('a.b.brand.co.uk')).toBe('a.b')
    expect(relativeName('brand.com')).toBe('@')
    expect(cnameRecordLine({ slug: 'go.brand.com', cnameTarget: 'edge.example.net' })).toBe('go.brand.com. CNAME edge.example.net.')
  })
})
