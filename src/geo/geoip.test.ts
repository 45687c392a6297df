import { expect, test } from 'bun:test'
import { createGeoIp, UNKNOWN_LOCATION } from './geoip'

// 8.8.8.8 is in the United States in every edition of the bundled DB-IP country database.
const US_IP = '8.8.8.8'

test('a lookup while the database loads is resolved to the exact country once it is loaded', async () => {
  const geo = createGeoIp('')
  const early = geo.lookup(US_IP)
  expect(early.country).toBeNull()
  expect(geo.lookup(US_IP)).toBe(early) // one location per IP while loading, so its visits merge
  expect(await early.resolved).toMatchObject({ country: 'US', continent: 'North America' })
  const later = geo.lookup(US_IP)
  expect(later).toMatchObject({ country: 'US', continent: 'North America' })
  expect(later.resolved).toBeUndefined()
})

test('a database that cannot be read: warm() rejects and lookups are unknown, early ones included', async () => {
  const geo = createGeoIp('/nonexistent/geo.mmdb')
  const early = geo.lookup(US_IP)
  await expect(geo.warm()).rejects.toThrow()
  expect(await early.resolved).toBe(UNKNOWN_LOCATION)
  expect(geo.lookup(US_IP)).toBe(UNKNOWN_LOCATION)
})

test('addresses in one place share one location (the click recorder merges their visits by its id)', async () => {
  const geo = createGeoIp('')
  await geo.warm()
  const a = geo.lookup(US_IP)
  const b = geo.lookup('8.8.4.4')
  expect(a).toMatchObject({ country: 'US' })
  expect(b).toBe(a)
  const de = geo.lookup('141.1.1.1') // Germany (DFN) in every edition
  expect(de.country).not.toBe('US')
  expect(de.id).not.toBe(a.id)
})
