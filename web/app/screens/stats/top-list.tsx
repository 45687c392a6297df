/**
 * One top list (a groupBy) as horizontal bars: the bar is the clicks, its darker part the
 * scans among them. Each row is a button that filters by its value; rows without a value
 * (unknown country, a direct visit) cannot be filtered and are plain rows.
 */
import { useState } from 'preact/hooks'
import { revenueText } from './conversions'
import { countryName, type Dimension } from './view'

export type GroupRow = Record<string, unknown> & { clicks: number; scans: number; leads?: number; sales?: number; saleAmount?: Record<string, number> }

const SHOWN = 10

const NONE: Partial<Record<string, string>> = {
  referer: 'Direct (no referrer)',
  refererUrl: 'Direct (no referrer)',
  country: 'Unknown',
  region: 'Unknown',
  city: 'Unknown',
}

/** What a row is called on screen, and the value its filter takes (null: not filterable). */
export function rowLabel(dim: Dimension, row: GroupRow): { label: string; detail?: string; value: string | null } {
  const v = row[dim.key]
  if (v === null || v === undefined || v === '') return { label: NONE[dim.key] ?? 'None', value: null }
  const value = String(v)
  if (dim.key === 'linkId') return { label: String(row.shortLink ?? value).replace(/^https?:\/\//, ''), detail: String(row.destination ?? ''), value }
  if (dim.key === 'country') return { label: countryName(value), detail: value, value }
  return { label: value, value }
}

const plural = (n: number, one: string) => `${n.toLocaleString()} ${one}${n === 1 ? '' : 's'}`

export function TopList({ dim, rows, onPick }: { dim: Dimension; rows: GroupRow[]; onPick: (dim: Dimension, value: string) => void }) {
  const [all, setAll] = useState(false)
  const max = rows.reduce((m, r) => Math.max(m, r.clicks), 0) || 1
  const shown = all ? rows : rows.slice(0, SHOWN)
  if (rows.length === 0) return <p class="muted stats-top-none">No clicks in this breakdown.</p>
  return (
    <>
      <ol class="stats-top" aria-label={dim.label}>
        {shown.map((row, i) => {
          const { label, detail, value } = rowLabel(dim, row)
          const body = (
            <>
              <span class="stats-top-text">
                <span class="stats-top-label">{label}</span>
                {detail ? <span class="stats-top-detail muted">{detail}</span> : null}
              </span>
              <span class="stats-top-numbers">
                {plural(row.clicks, 'click')} · {plural(row.scans, 'scan')}
                {row.leads || row.sales ? (
                  <span class="stats-top-conversions">
                    {' '}
                    · {plural(row.leads ?? 0, 'lead')} · {plural(row.sales ?? 0, 'sale')} ({revenueText(row.saleAmount)})
                  </span>
                ) : null}
              </span>
              <span class="stats-bar" aria-hidden="true">
                <span class="stats-bar-clicks" style={{ width: `${(row.clicks / max) * 100}%` }}>
                  <span class="stats-bar-scans" style={{ width: `${row.clicks ? (row.scans / row.clicks) * 100 : 0}%` }} />
                </span>
              </span>
            </>
          )
          return (
            <li key={value ?? `none-${i}`}>
              {value === null ? (
                <div class="stats-top-row">{body}</div>
              ) : (
                <button type="button" class="stats-top-row" title={`Show only ${dim.label.toLowerCase()}: ${label}`} onClick={() => onPick(dim, value)}>
                  {body}
                </button>
              )}
            </li>
          )
        })}
      </ol>
      {rows.length > SHOWN ? (
        <button type="button" class="btn btn-ghost stats-top-more" aria-expanded={all} onClick={() => setAll(!all)}>
          {all ? 'Show top 10' : `Show all ${rows.length}`}
        </button>
      ) : null}
    </>
  )
}
