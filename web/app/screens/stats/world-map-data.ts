/**
 * The world map's shapes: Natural Earth's 1:110m countries (world-atlas, bundled into this
 * chunk, so nothing is fetched from elsewhere) as SVG paths in the Natural Earth
 * projection. Loaded with import() so only the statistics screen fetches it.
 */
import { feature } from 'topojson-client'
import topology from 'world-atlas/countries-110m.json'
import { alpha2FromNumeric } from './country-codes'

export interface CountryShape {
  /** ISO 3166-1 alpha-2, as the statistics name countries; null for the few shapes without one. */
  code: string | null
  name: string
  d: string
}
export interface WorldMap {
  width: number
  height: number
  /** The map's edge (the projected globe), also the clip of the countries. */
  outline: string
  countries: CountryShape[]
}

const SCALE = 160
const TOP = 84 // degrees north; nothing lies further
const BOTTOM = -58 // degrees south; Antarctica is left out

/** Natural Earth projection (Šavrič et al.): λ, φ in radians → x, y (y up). */
function project(lambda: number, phi: number): [number, number] {
  const p2 = phi * phi
  const p4 = p2 * p2
  const x = lambda * (0.8707 - 0.131979 * p2 + p4 * (-0.013791 + p4 * (0.003971 * p2 - 0.001529 * p4)))
  const y = phi * (1.007226 + p2 * (0.015085 + p4 * (-0.044475 + 0.028874 * p2 - 0.005916 * p4)))
  return [x, y]
}

const rad = Math.PI / 180
const [HALF_WIDTH] = project(Math.PI, 0)
const [, Y_TOP] = project(0, TOP * rad)
const [, Y_BOTTOM] = project(0, BOTTOM * rad)

function toSvg(lon: number, lat: number): string {
  const [x, y] = project(lon * rad, Math.max(BOTTOM, Math.min(TOP, lat)) * rad)
  return `${((x + HALF_WIDTH) * SCALE).toFixed(1)},${((Y_TOP - y) * SCALE).toFixed(1)}`
}

/**
 * A ring as path commands. Rings of Russia and Fiji cross the antimeridian: their
 * longitudes are unwrapped into one continuous run and the ring is drawn again a whole turn
 * over, so each side shows its part and the outline clips the rest.
 */
function ringPaths(ring: number[][]): string[] {
  const lons: number[] = []
  let prev = ring[0]![0]!
  for (const [lon] of ring) {
    let l = lon!
    while (l - prev > 180) l -= 360
    while (l - prev < -180) l += 360
    lons.push(l)
    prev = l
  }
  const draw = (shift: number) => `M${ring.map((p, i) => toSvg(lons[i]! + shift, p[1]!)).join('L')}Z`
  const out = [draw(0)]
  if (lons.some((l) => l > 180)) out.push(draw(-360))
  if (lons.some((l) => l < -180)) out.push(draw(360))
  return out
}

function outlinePath(): string {
  const pts: string[] = []
  for (let lat = TOP; lat >= BOTTOM; lat -= 2) pts.push(toSvg(180, lat))
  for (let lat = BOTTOM; lat <= TOP; lat += 2) pts.push(toSvg(-180, lat))
  return `M${pts.join('L')}Z`
}

let built: WorldMap | null = null
export function worldMap(): WorldMap {
  if (built) return built
  const countries: CountryShape[] = []
  for (const f of feature(topology, topology.objects.countries).features) {
    if (!f.geometry || f.id === '010') continue // Antarctica
    const polygons = f.geometry.type === 'Polygon' ? [f.geometry.coordinates] : f.geometry.coordinates
    const d = polygons.flatMap((rings) => rings.flatMap(ringPaths)).join('')
    const name = f.properties.name ?? ''
    countries.push({ code: alpha2FromNumeric(f.id, name), name, d })
  }
  built = {
    width: Math.round(2 * HALF_WIDTH * SCALE),
    height: Math.round((Y_TOP - Y_BOTTOM) * SCALE),
    outline: outlinePath(),
    countries,
  }
  return built
}
