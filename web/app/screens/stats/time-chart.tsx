/**
 * Clicks and scans over time: a uPlot line chart (canvas) with its legend, and for screen
 * readers a caption with the totals and a visually hidden table of the buckets.
 */
import { useEffect, useRef } from 'preact/hooks'
import uPlot from 'uplot'
import type { Granularity } from './view'

export interface TimeRow {
  start: string
  clicks: number
  scans: number
}

/** More rows than this are summarised, not tabulated, for screen readers. */
const TABLE_ROWS = 400

const BUCKET_FORMAT: Record<Granularity, Intl.DateTimeFormatOptions> = {
  hour: { month: 'short', day: 'numeric', hour: 'numeric', minute: '2-digit' },
  day: { weekday: 'short', month: 'short', day: 'numeric', year: 'numeric' },
  week: { month: 'short', day: 'numeric', year: 'numeric' },
  month: { month: 'long', year: 'numeric' },
}

export function bucketLabel(iso: string, granularity: Granularity, timezone: string): string {
  const text = new Intl.DateTimeFormat(undefined, { ...BUCKET_FORMAT[granularity], timeZone: timezone }).format(new Date(iso))
  return granularity === 'week' ? `Week of ${text}` : text
}

export function TimeChart({ rows, granularity, timezone }: { rows: TimeRow[]; granularity: Granularity; timezone: string }) {
  const box = useRef<HTMLDivElement>(null)
  useEffect(() => {
    const el = box.current!
    const css = getComputedStyle(el)
    const color = (name: string, fallback: string) => css.getPropertyValue(name).trim() || fallback
    const clicks = color('--stats-clicks', '#1f5fbf')
    const scans = color('--stats-scans', '#c2410c')
    const axis = { stroke: color('--muted', '#545b66'), grid: { stroke: color('--line', '#d9dde3'), width: 1 }, ticks: { stroke: color('--line', '#d9dde3') } }
    const data: uPlot.AlignedData = [rows.map((r) => Date.parse(r.start) / 1000), rows.map((r) => r.clicks), rows.map((r) => r.scans)]
    const width = () => Math.max(280, el.clientWidth)
    const height = () => (el.clientWidth < 600 ? 220 : 300)
    const plot = new uPlot(
      {
        width: width(),
        height: height(),
        tzDate: (ts) => uPlot.tzDate(new Date(ts * 1000), timezone),
        scales: { y: { range: (_u, _min, max) => [0, Math.max(4, Math.ceil(max * 1.1))] } },
        axes: [axis, { ...axis, size: 48, values: (_u, ticks) => ticks.map((v) => (Number.isInteger(v) ? v.toLocaleString() : '')) }],
        cursor: { drag: { x: false, y: false } },
        series: [
          { label: 'Time', value: (_u, v) => (v === null ? '–' : bucketLabel(new Date(v * 1000).toISOString(), granularity, timezone)) },
          { label: 'Clicks', stroke: clicks, width: 2, fill: `${clicks}22`, points: { show: rows.length <= 60 }, value: (_u, v) => (v ?? 0).toLocaleString() },
          { label: 'Scans', stroke: scans, width: 2, dash: [6, 3], points: { show: rows.length <= 60 }, value: (_u, v) => (v ?? 0).toLocaleString() },
        ],
      },
      data,
      el,
    )
    const resize = new ResizeObserver(() => {
      if (Math.abs(plot.width - width()) > 2) plot.setSize({ width: width(), height: height() })
    })
    resize.observe(el)
    return () => {
      resize.disconnect()
      plot.destroy()
    }
  }, [rows, granularity, timezone])

  const totalClicks = rows.reduce((n, r) => n + r.clicks, 0)
  const totalScans = rows.reduce((n, r) => n + r.scans, 0)
  const busiest = rows.reduce<TimeRow | null>((b, r) => (r.clicks > (b?.clicks ?? 0) ? r : b), null)
  return (
    <figure class="stats-chart">
      <figcaption>
        {totalClicks.toLocaleString()} clicks and {totalScans.toLocaleString()} scans by {granularity} ({timezone})
        {busiest ? `; busiest: ${bucketLabel(busiest.start, granularity, timezone)} with ${busiest.clicks.toLocaleString()} clicks` : ''}.
      </figcaption>
      <div ref={box} class="stats-chart-plot" aria-hidden="true" />
      {rows.length <= TABLE_ROWS ? (
        <table class="visually-hidden">
          <caption>Clicks and scans by {granularity}</caption>
          <thead>
            <tr>
              <th scope="col">{granularity}</th>
              <th scope="col">Clicks</th>
              <th scope="col">Scans</th>
            </tr>
          </thead>
          <tbody>
            {rows.map((r) => (
              <tr key={r.start}>
                <th scope="row">{bucketLabel(r.start, granularity, timezone)}</th>
                <td>{r.clicks}</td>
                <td>{r.scans}</td>
              </tr>
            ))}
          </tbody>
        </table>
      ) : null}
    </figure>
  )
}
