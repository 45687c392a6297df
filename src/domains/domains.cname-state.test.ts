/** The CNAME state machine's transitions alone: status, attempts and the next check after each outcome. */
import { describe, expect, test } from 'bun:test'
import type { CnameOutcome } from './cname'
import { backoffMs, nextCnameState } from './domains.cname-state'
import type { CnameStatus } from './domains.schema'

const T = 1_000_000
const RETRY = 1000

describe('nextCnameState', () => {
  const cases: {
    name: string
    from: CnameStatus
    attempts: number
    outcome: CnameOutcome['status']
    manual?: boolean
    to: CnameStatus
    nextAttempts: number
    nextIn: number | null
  }[] = [
    {
      name: 'a first failed check: invalid, retry after the base delay',
      from: 'pending',
      attempts: 0,
      outcome: 'invalid',
      to: 'invalid',
      nextAttempts: 1,
      nextIn: 1000,
    },
    { name: 'each further failure doubles the delay', from: 'invalid', attempts: 2, outcome: 'invalid', to: 'invalid', nextAttempts: 3, nextIn: 4000 },
    { name: 'valid: attempts reset, no timed re-check', from: 'invalid', attempts: 5, outcome: 'valid', to: 'valid', nextAttempts: 0, nextIn: null },
    {
      name: 'a temporary DNS failure keeps a valid status and retries',
      from: 'valid',
      attempts: 0,
      outcome: 'pending',
      to: 'valid',
      nextAttempts: 1,
      nextIn: 1000,
    },
    {
      name: 'a temporary DNS failure keeps an invalid status too',
      from: 'invalid',
      attempts: 3,
      outcome: 'pending',
      to: 'invalid',
      nextAttempts: 4,
      nextIn: 8000,
    },
    {
      name: 'a manual check (verify) restarts the backoff',
      from: 'invalid',
      attempts: 9,
      outcome: 'invalid',
      manual: true,
      to: 'invalid',
      nextAttempts: 1,
      nextIn: 1000,
    },
    { name: 'the delay is capped at 6 hours', from: 'invalid', attempts: 40, outcome: 'invalid', to: 'invalid', nextAttempts: 41, nextIn: 6 * 3600_000 },
  ]
  for (const c of cases)
    test(c.name, () => {
      const next = nextCnameState({ cnameStatus: c.from, cnameAttempts: c.attempts }, { status: c.outcome, detail: 'why' }, c.manual ?? false, T, RETRY)
      expect(next).toEqual({
        cnameStatus: c.to,
        cnameDetail: 'why',
        cnameCheckedAt: T,
        cnameAttempts: c.nextAttempts,
        cnameNextAt: c.nextIn === null ? null : T + c.nextIn,
      })
    })

  test('backoff: base, 2x, 4x, ... up to 6 h', () => {
    expect([0, 1, 2, 3, 4].map((a) => backoffMs(1000, a))).toEqual([1000, 1000, 2000, 4000, 8000])
    expect(backoffMs(1000, 40)).toBe(6 * 3600_000)
  })
})
