/** The one function of topojson-client the map uses (the package ships no types). */
declare module 'topojson-client' {
  export function feature(
    topology: unknown,
    object: unknown,
  ): {
    type: 'FeatureCollection'
    features: {
      id?: string
      properties: { name?: string }
      geometry: { type: 'Polygon'; coordinates: number[][][] } | { type: 'MultiPolygon'; coordinates: number[][][][] } | null
    }[]
  }
}
