import { expect, test } from 'bun:test'
import { appendVisit, mergeBatch, visitsIn, visitsOfLink, type VisitInput } from './click-batch'

const visit = (over: Partial<VisitInput> = {}): VisitInput => ({
  linkSeq: 1, domain: 'd', at: 1000, scan: false, continent: 'Europe', country: 'DE', region: null, city: null, os: 'IOS',
  browser: 'Safari', device: 'Mobile', referer: null, refererUrl: null, utmSource: 'qr', utmMedium: null, utmCampaign: null,
  utmTerm: null, utmContent: null, ...over,
})

test('identical visits merge into one row with a count and the latest time; any difference keeps rows apart', () => {
  const buf: unknown[] = []
  appendVisit(buf, visit({ at: 1000 }))
  appendVisit(buf, visit({ at: 3000 }))
  appendVisit(buf, visit({ at: 2000 }))
  appendVisit(buf, visit({ scan: true }))
  appendVisit(buf, visit({ linkSeq: 2 }))
  appendVisit(buf, visit({ city: 'Berlin' }))
  expect(visitsIn(buf)).toBe(6)
  expect(visitsOfLink(buf, 1)).toBe(5)
  const rows = mergeBatch(buf)
  expect(rows).toHaveLength(4)
  expect(rows[0]).toMatchObject({ linkSeq: 1, at: 3000, n: 3, scan: false, country: 'DE', utmSource: 'qr' })
  expect(rows.reduce((a, r) => a + r.n, 0)).toBe(6)
})
