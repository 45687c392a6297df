/**
 * Time buckets in an IANA zone: bucket starts are local wall-clock boundaries (hour,
 * midnight, Monday midnight, the 1st at midnight) turned into UTC instants, so a day
 * on a DST change lasts 23 or 25 hours. Offsets come from Intl once per day sampled
 * (binary search to the minute at each change), then everything is arithmetic.
 */
export type Granularity = 'hour' | 'day' | 'week' | 'month'

const MINUTE = 60_000
const HOUR = 3_600_000
const DAY = 86_400_000

const formatters = new Map<string, Intl.DateTimeFormat>()
function formatter(zone: string): Intl.DateTimeFormat {
  let f = formatters.get(zone)
  if (!f) {
    f = new Intl.DateTimeFormat('en-US', {
      timeZone: zone,
      hourCycle: 'h23',
      year: 'numeric',
      month: 'numeric',
      day: 'numeric',
      hour: 'numeric',
      minute: 'numeric',
      second: 'numeric',
    })
    formatters.set(zone, f)
  }
  return f
}

/** The canonical zone name, or null when it is no IANA zone this runtime knows. */
export function canonicalZone(zone: string): string | null {
  try {
    return new Intl.DateTimeFormat('en-US', { timeZone: zone }).resolvedOptions().timeZone
  } catch {
    return null
  }
}

/** Offset of the zone from UTC at instant t, in ms (local = t + offset). */
export function offsetAt(zone: string, t: number): number {
  const parts = formatter(zone).formatToParts(new Date(t))
  const get = (type: string) => Number(parts.find((p) => p.type === type)!.value)
  const wall = Date.UTC(get('year'), get('month') - 1, get('day'), get('hour'), get('minute'), get('second'))
  return Math.round((wall - Math.floor(t / 1000) * 1000) / MINUTE) * MINUTE
}

/** Constant-offset stretches of a zone: segment i starts at starts[i] with offsets[i]. */
interface Segments {
  starts: number[]
  offsets: number[]
}

function segmentsOf(zone: string, from: number, to: number): Segments {
  if (zone === 'UTC') return { starts: [-Infinity], offsets: [0] }
  const starts = [-Infinity]
  const offsets = [offsetAt(zone, from)]
  let prevT = from
  let prevOff = offsets[0]!
  for (let t = from + DAY; ; t += DAY) {
    const at = Math.min(t, to)
    const off = offsetAt(zone, at)
    if (off !== prevOff) {
      // The change lies in (prevT, at]: find its first minute.
      let lo = prevT
      let hi = at
      while (hi - lo > MINUTE) {
        const mid = lo + Math.floor((hi - lo) / 2 / MINUTE) * MINUTE || lo + MINUTE
        if (offsetAt(zone, mid) === prevOff) lo = mid
        else hi = mid
      }
      starts.push(hi)
      offsets.push(off)
      prevOff = off
    }
    prevT = at
    if (at >= to) break
  }
  return { starts, offsets }
}

function segmentIndex(s: Segments, t: number): number {
  let lo = 0
  let hi = s.starts.length - 1
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1
    if (s.starts[mid]! <= t) lo = mid
    else hi = mid - 1
  }
  return lo
}

/** The first instant whose local time is at or after the wall-clock time `wall` (ms, as if UTC). */
function wallToUtc(s: Segments, wall: number): number {
  let best = Infinity
  for (let i = 0; i < s.starts.length; i++) {
    const t = wall - s.offsets[i]!
    const end = i + 1 < s.starts.length ? s.starts[i + 1]! : Infinity
    if (t >= s.starts[i]! && t < end && t < best) best = t
  }
  if (best !== Infinity) return best
  // In a gap (clocks jumped over it): the jump itself.
  for (let i = 1; i < s.starts.length; i++) if (s.starts[i]! + s.offsets[i]! > wall && s.starts[i]! + s.offsets[i - 1]! <= wall) return s.starts[i]!
  return wall - s.offsets[0]!
}

function floorWall(wall: number, g: Granularity): number {
  const d = new Date(wall)
  if (g === 'hour') return Math.floor(wall / HOUR) * HOUR
  const midnight = Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate())
  if (g === 'day') return midnight
  if (g === 'week') return midnight - ((d.getUTCDay() + 6) % 7) * DAY
  return Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), 1)
}

function nextWall(wall: number, g: Granularity): number {
  if (g === 'hour') return wall + HOUR
  const d = new Date(wall)
  if (g === 'day') return Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate() + 1)
  if (g === 'week') return Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate() + 7)
  return Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 1)
}

/**
 * Bucket boundaries covering [from, to): b[0] ≤ from is the start of the bucket holding
 * `from`, b[last] ≥ to ends the last bucket. Buckets are [b[i], b[i+1]). Returns null when
 * there would be more than `max` buckets.
 */
export function bucketBoundaries(zone: string, g: Granularity, from: number, to: number, max: number): number[] | null {
  const s = segmentsOf(zone, from - 32 * DAY, to + 32 * DAY)
  const out: number[] = []
  if (g === 'hour') {
    // Every instant whose local minute is 0: within a segment, every hour at −offset.
    const off0 = s.offsets[segmentIndex(s, from)]!
    let t = Math.floor((from + off0) / HOUR) * HOUR - off0
    out.push(t)
    while (t < to) {
      const i = segmentIndex(s, t)
      const next = t + HOUR
      const segEnd = i + 1 < s.starts.length ? s.starts[i + 1]! : Infinity
      if (next < segEnd) t = next
      else {
        // Past an offset change: the first whole local hour of the new segment.
        const off = s.offsets[i + 1]!
        t = Math.ceil((segEnd + off) / HOUR) * HOUR - off
      }
      out.push(t)
      if (out.length > max + 1) return null
    }
    return out
  }
  let wall = floorWall(from + s.offsets[segmentIndex(s, from)]!, g)
  let t = wallToUtc(s, wall)
  // A boundary after `from` (gap at local midnight): step back one bucket.
  if (t > from) {
    wall = floorWall(wall - 1, g)
    t = wallToUtc(s, wall)
  }
  out.push(t)
  while (t < to) {
    wall = nextWall(wall, g)
    t = wallToUtc(s, wall)
    out.push(t)
    if (out.length > max + 1) return null
  }
  return out
}
