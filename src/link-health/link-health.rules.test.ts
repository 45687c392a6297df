import { describe, expect, test } from 'bun:test'
import { linkStatusOf, nextUrlState, type Outcome, resultsPlan, settlePlan, urlKey } from './link-health.rules'

const pass: Outcome = { result: 'pass', httpStatus: 200, error: null }
const fail: Outcome = { result: 'fail', httpStatus: 503, error: null }
const refused: Outcome = { result: 'refused', httpStatus: null, error: 'private' }

describe('link health rules', () => {
  test('a URL is broken after 2 failed checks in a row and fine after 1 pass; a refused hop leaves it unknown', () => {
    const walk = (outcomes: Outcome[]) => {
      let s = null as ReturnType<typeof nextUrlState> | null
      return outcomes.map((o) => {
        s = nextUrlState(s, o)
        return s.status
      })
    }
    expect(walk([fail, fail, fail, pass])).toEqual(['unknown', 'broken', 'broken', 'ok'])
    expect(walk([pass, fail, pass, fail, fail])).toEqual(['ok', 'ok', 'ok', 'ok', 'broken'])
    expect(walk([fail, fail, refused, fail])).toEqual(['unknown', 'broken', 'unknown', 'unknown'])
  })

  test('a link is broken when any URL is, else unknown when any is (or it has none), else ok', () => {
    expect(linkStatusOf(['ok', 'broken', 'unknown'])).toBe('broken')
    expect(linkStatusOf(['ok', 'unknown'])).toBe('unknown')
    expect(linkStatusOf([])).toBe('unknown')
    expect(linkStatusOf(['ok', 'ok'])).toBe('ok')
  })

  test('results in one batch apply in order; changed and flipped name the URLs that moved', () => {
    const plan = resultsPlan(new Map([['a', { status: 'ok', fails: 1 }]]), [
      { url: 'https://a/', key: 'a', outcome: fail, at: 1 },
      { url: 'https://b/', key: 'b', outcome: pass, at: 2 },
      { url: 'https://c/', key: 'c', outcome: fail, at: 3 },
      { url: 'https://c/', key: 'c', outcome: fail, at: 4 },
      { url: 'https://c/', key: 'c', outcome: pass, at: 5 },
    ])
    expect(plan.writes.map((w) => [w.key, w.status, w.fails, w.checkedAt])).toEqual([
      ['a', 'broken', 2, 1],
      ['b', 'ok', 0, 2],
      ['c', 'ok', 0, 5],
    ])
    expect(plan.changed).toEqual(['a', 'b', 'c'])
    expect(plan.flipped).toEqual(['a'])
  })

  test('settling writes only changed statuses, once, and never for a link that is gone', () => {
    const link = (seq: number, stored: 'ok' | 'broken' | null, live = true) => ({
      seq,
      id: `lnk_${seq}`,
      domain: 'd',
      key: `k${seq}`,
      live,
      stored: stored && { status: stored, since: 1 },
    })
    const plan = settlePlan(
      [link(1, 'ok'), link(2, null), link(3, 'broken'), link(4, null), link(5, 'ok', false)],
      new Map([
        [1, ['ok', 'broken'] as const],
        [2, ['unknown'] as const],
        [3, ['ok'] as const],
        [4, ['ok'] as const],
        [5, ['broken'] as const],
      ] as [number, ('ok' | 'broken' | 'unknown')[]][]),
      99,
    )
    expect(plan.writes).toEqual([
      { seq: 1, status: 'broken', since: 99 },
      { seq: 3, status: 'ok', since: 99 },
      { seq: 4, status: 'ok', since: 99 },
    ])
    expect(plan.transitions.map((t) => `${t.link.id} ${t.from}→${t.to}`)).toEqual(['lnk_1 ok→broken', 'lnk_3 broken→ok', 'lnk_4 unknown→ok'])
  })

  test('URL keys: fixed width, distinct per URL', () => {
    expect(urlKey('https://a.example/')).toHaveLength(22)
    expect(urlKey('https://a.example/')).not.toBe(urlKey('https://a.example/?'))
  })
})
