/**
 * Clicks by country on a world map: the shapes come from a chunk of their own (loaded on
 * first use), each country coloured on a sequential scale by its clicks, named with its
 * count on hover (<title>), and a country with clicks is a button that filters by it.
 */
import { useEffect, useState } from 'preact/hooks'
import { ErrorBox, Loading } from '../../ui'
import type { GroupRow } from './top-list'
import { countryName } from './view'
import type { WorldMap } from './world-map-data'

/** Sequential blues; level 0 is a country without clicks. */
const LEVELS = 5

/** The highest count of level k: square-root steps, so one big country leaves the rest visible. */
const upperBound = (k: number, max: number) => (k >= LEVELS ? max : Math.floor(max * (k / LEVELS) ** 2))

/** The level (1..LEVELS) of a count, 0 for none. */
export function levelOf(clicks: number, max: number): number {
  if (clicks <= 0 || max <= 0) return 0
  let k = 1
  while (clicks > upperBound(k, max)) k++
  return k
}

let loading: Promise<WorldMap> | null = null
const loadMap = () => {
  loading ??= import('./world-map-data').then((m) => m.worldMap())
  loading.catch(() => {
    loading = null
  })
  return loading
}

export function WorldMapView({ rows, onPick }: { rows: GroupRow[]; onPick: (code: string) => void }) {
  const [map, setMap] = useState<WorldMap | null>(null)
  const [error, setError] = useState<unknown>(null)
  const [attempt, setAttempt] = useState(0)
  useEffect(() => {
    loadMap().then(setMap, setError)
  }, [attempt])
  if (error)
    return (
      <ErrorBox
        error={error}
        retry={() => {
          setError(null)
          setAttempt(attempt + 1)
        }}
      />
    )
  if (!map) return <Loading label="Loading the map…" />

  const byCode = new Map<string, GroupRow>()
  for (const r of rows) if (typeof r.country === 'string') byCode.set(r.country.toUpperCase(), r)
  const max = rows.reduce((m, r) => (r.country ? Math.max(m, r.clicks) : m), 0)
  const levels = Array.from({ length: LEVELS }, (_, i) => ({ level: i + 1, from: upperBound(i, max) + 1, to: upperBound(i + 1, max) })).filter(
    (l) => l.from <= l.to,
  )
  return (
    <figure class="stats-map">
      <svg viewBox={`0 0 ${map.width} ${map.height}`} aria-label="World map of clicks by country">
        <defs>
          <clipPath id="stats-map-clip">
            <path d={map.outline} />
          </clipPath>
        </defs>
        <path class="stats-map-sea" d={map.outline} />
        <g clip-path="url(#stats-map-clip)">
          {map.countries.map((c, i) => {
            const row = c.code ? byCode.get(c.code) : undefined
            const clicks = row?.clicks ?? 0
            const name = c.code ? countryName(c.code) : c.name
            const text = `${name}: ${clicks.toLocaleString()} click${clicks === 1 ? '' : 's'}${row ? `, ${row.scans.toLocaleString()} scan${row.scans === 1 ? '' : 's'}` : ''}`
            const level = levelOf(clicks, max)
            const pick = () => c.code && onPick(c.code)
            return level > 0 ? (
              // biome-ignore lint/a11y/useSemanticElements: an SVG shape cannot be a <button>; role, tabIndex and keys make it one
              <path
                key={c.code ?? i}
                d={c.d}
                class={`stats-map-country stats-map-l${level}`}
                data-country={c.code}
                data-clicks={clicks}
                role="button"
                tabIndex={0}
                aria-label={`${text}. Show only this country`}
                onClick={pick}
                onKeyDown={(e) => {
                  if (e.key === 'Enter' || e.key === ' ') {
                    e.preventDefault()
                    pick()
                  }
                }}
              >
                <title>{text}</title>
              </path>
            ) : (
              <path key={c.code ?? i} d={c.d} class="stats-map-country stats-map-l0" data-country={c.code ?? undefined} data-clicks={0}>
                <title>{text}</title>
              </path>
            )
          })}
        </g>
      </svg>
      <figcaption class="stats-map-legend">
        <span class="muted">Clicks</span>
        <span class="stats-map-key">
          <span class="stats-map-swatch stats-map-l0" aria-hidden="true" />0
        </span>
        {max > 0
          ? levels.map(({ level, from, to }) => (
              <span key={level} class="stats-map-key">
                <span class={`stats-map-swatch stats-map-l${level}`} aria-hidden="true" />
                {from === to ? from.toLocaleString() : `${from.toLocaleString()}–${to.toLocaleString()}`}
              </span>
            ))
          : null}
      </figcaption>
    </figure>
  )
}
