/**
 * Statistics, across links (/stats) or of one link (/links/:id/stats): totals, clicks and
 * scans over time, a top list per groupBy, a world map by country, filters for every
 * dimension and CSV export of what is shown. Every choice lives in the URL query, so a view
 * can be bookmarked and the back button undoes the last choice.
 */
import { get } from '../api'
import { downloadCsv, toCsv } from '../csv'
import { Link } from '../router'
import type { ScreenProps } from '../routes'
import { canWrite, useSession } from '../session'
import { Empty, ErrorBox, Field, Loading, Page, useResource } from '../ui'
import { ConversionsPanel, type CountWithConversions, revenueText } from './stats/conversions'
import { FilterChips, FilterForm } from './stats/filters'
import { TimeChart, type TimeRow } from './stats/time-chart'
import { type GroupRow, TopList } from './stats/top-list'
import {
  baseQuery,
  countryName,
  DIMENSIONS,
  type Dimension,
  dimensionOf,
  FILTERS,
  GRANULARITIES,
  INTERVALS,
  pushQuery,
  rangeError,
  readView,
  type StatsView,
  timeZones,
  todayIn,
} from './stats/view'
import { WorldMapView } from './stats/world-map'

type Count = CountWithConversions
interface LinkInfo {
  id: string
  shortLink: string
  destination?: string | null
  title?: string | null
}

/** Short links seen in the link list, to name a link filter's chip by its short link instead of its id. */
const linkNames = new Map<string, string>()

export function StatsScreen({ params, query }: ScreenProps) {
  const linkId = params.id ?? null
  const view = readView(query, linkId)
  const invalidRange = rangeError(view)
  const base = invalidRange ? null : baseQuery(view)
  const baseKey = JSON.stringify(base)

  const summary = useResource(
    async (signal) => {
      if (!base) return null
      const [count, time, countries] = await Promise.all([
        get<Count>('/statistics', { ...base, groupBy: 'count', conversions: 'true' }, signal),
        get<TimeRow[]>('/statistics', { ...base, groupBy: 'time', granularity: view.granularity }, signal),
        get<GroupRow[]>('/statistics', { ...base, groupBy: 'country' }, signal),
      ])
      return { count, time, countries }
    },
    [baseKey, view.granularity],
  )
  const top = useResource(
    (signal) => (base ? get<GroupRow[]>('/statistics', { ...base, groupBy: view.top, conversions: 'true' }, signal) : Promise.resolve(null)),
    [baseKey, view.top],
  )
  const link = useResource((signal) => (linkId ? get<LinkInfo>(`/links/${encodeURIComponent(linkId)}`, undefined, signal) : Promise.resolve(null)), [linkId])

  const dim = dimensionOf(view.top)!
  if (view.top === 'link') for (const r of top.data ?? []) if (typeof r.linkId === 'string') linkNames.set(r.linkId, String(r.shortLink ?? r.linkId))
  const names: Record<string, string> = {}
  if (view.filters.linkId) names[`linkId:${view.filters.linkId}`] = linkNames.get(view.filters.linkId)?.replace(/^https?:\/\//, '') ?? view.filters.linkId

  const pick = (d: Dimension, value: string) => pushQuery({ [d.key]: value })
  const clearFilters = () => pushQuery(Object.fromEntries(FILTERS.map((f) => [f.name, null])))
  const data = summary.data
  const empty = data ? data.count.clicks === 0 : false
  const fileBase = `statistics-${linkId ?? view.filters.linkId ?? 'all-links'}-${view.interval === 'custom' ? `${view.startDay}_${view.endDay}` : view.interval}`

  const exportTime = () =>
    data && downloadCsv(`${fileBase}-by-${view.granularity}.csv`, toCsv([['start', 'clicks', 'scans'], ...data.time.map((r) => [r.start, r.clicks, r.scans])]))
  const exportTop = () => {
    if (!top.data) return
    const keys = dim.key === 'linkId' ? ['linkId', 'shortLink', 'destination'] : dim.key === 'country' ? ['country', 'countryName'] : [dim.key]
    const value = (r: GroupRow, k: string) => (k === 'countryName' ? (r.country ? countryName(String(r.country)) : '') : r[k])
    downloadCsv(
      `${fileBase}-by-${dim.groupBy}.csv`,
      toCsv([
        [...keys, 'clicks', 'scans', 'leads', 'sales', 'revenue'],
        ...top.data.map((r) => [...keys.map((k) => value(r, k)), r.clicks, r.scans, r.leads ?? 0, r.sales ?? 0, r.sales ? revenueText(r.saleAmount) : '']),
      ]),
    )
  }

  return (
    <Page
      title={linkId ? 'Link statistics' : 'Statistics'}
      actions={
        data && !empty ? (
          <>
            <button type="button" class="btn" onClick={exportTime}>
              Export time series (CSV)
            </button>
            <button type="button" class="btn" onClick={exportTop} disabled={!top.data}>
              Export {dim.label.toLowerCase()} (CSV)
            </button>
          </>
        ) : null
      }
    >
      <div class="stats">
        {linkId ? <LinkHeader linkId={linkId} link={link.data ?? null} error={link.error} /> : null}
        <Controls view={view} invalidRange={invalidRange} />
        <FilterChips filters={view.filters} names={names} onRemove={(name) => pushQuery({ [name]: null })} onClear={clearFilters} />
        <FilterForm filters={view.filters} hidden={linkId ? ['linkId'] : []} onApply={pushQuery} />
        {invalidRange ? null : summary.error ? (
          <ErrorBox error={summary.error} retry={summary.reload} />
        ) : !data ? (
          <Loading label="Loading statistics…" />
        ) : empty ? (
          <EmptyRange view={view} onClear={() => pushQuery({ ...Object.fromEntries(FILTERS.map((f) => [f.name, null])), qr: null })} />
        ) : (
          <div class={`stats-body${summary.loading ? ' stats-busy' : ''}`} aria-busy={summary.loading || undefined}>
            <Totals count={data.count} />
            <ConversionsPanel count={data.count} />
            <section class="card stats-card" aria-labelledby="stats-time-title">
              <h2 id="stats-time-title">Over time</h2>
              <TimeChart rows={data.time} granularity={view.granularity} timezone={view.timezone} />
            </section>
            <div class="stats-breakdowns">
              <section class="card stats-card" aria-labelledby="stats-top-title">
                <h2 id="stats-top-title">Top {dim.label.toLowerCase()}</h2>
                <BreakdownPicker view={view} />
                {top.error ? (
                  <ErrorBox error={top.error} retry={top.reload} />
                ) : !top.data ? (
                  <Loading />
                ) : (
                  <div class={top.loading ? 'stats-busy' : ''} aria-busy={top.loading || undefined}>
                    <TopList key={view.top} dim={dim} rows={top.data} onPick={pick} />
                  </div>
                )}
              </section>
              <section class="card stats-card" aria-labelledby="stats-map-title">
                <h2 id="stats-map-title">Clicks by country</h2>
                <WorldMapView rows={data.countries} onPick={(code) => pushQuery({ country: code })} />
              </section>
            </div>
          </div>
        )}
      </div>
    </Page>
  )
}

function LinkHeader({ linkId, link, error }: { linkId: string; link: LinkInfo | null; error: unknown }) {
  const session = useSession()
  return (
    <div class="card stats-link">
      <div class="stats-link-text">
        <span class="mono stats-link-short">{link ? link.shortLink : linkId}</span>
        {link?.destination ? <span class="muted stats-link-dest">→ {link.destination}</span> : null}
        {error ? <span class="muted">(the link itself could not be loaded: its clicks are still counted)</span> : null}
      </div>
      <nav class="stats-link-nav" aria-label="This link">
        {canWrite(session) ? <Link href={`/links/${encodeURIComponent(linkId)}`}>Edit link</Link> : null}
        <Link href={`/links/${encodeURIComponent(linkId)}/qr`}>QR code</Link>
        <Link href={`/links/${encodeURIComponent(linkId)}/live`}>Live</Link>
        <Link href="/stats">All links' statistics</Link>
      </nav>
    </div>
  )
}

function Controls({ view, invalidRange }: { view: StatsView; invalidRange: string | null }) {
  const zones = timeZones(view.timezone)
  return (
    <div class="toolbar stats-controls">
      <Field label="Date range">
        {(props) => (
          <select
            {...props}
            value={view.interval}
            onChange={(e) => {
              const v = e.currentTarget.value
              if (v === 'custom') pushQuery({ interval: null, start: todayIn(view.timezone, 29), end: todayIn(view.timezone) })
              else pushQuery({ interval: v, start: null, end: null })
            }}
          >
            {INTERVALS.map((i) => (
              <option key={i.value} value={i.value}>
                {i.label}
              </option>
            ))}
            <option value="custom">Custom range…</option>
          </select>
        )}
      </Field>
      {view.interval === 'custom' ? (
        <>
          <Field label="From" error={invalidRange?.includes('start') ? invalidRange : null}>
            {(props) => (
              <input
                {...props}
                type="date"
                value={view.startDay ?? ''}
                max={view.endDay ?? undefined}
                onChange={(e) => pushQuery({ start: e.currentTarget.value })}
              />
            )}
          </Field>
          <Field label="To" error={invalidRange && !invalidRange.includes('start') ? invalidRange : null}>
            {(props) => (
              <input
                {...props}
                type="date"
                value={view.endDay ?? ''}
                min={view.startDay ?? undefined}
                onChange={(e) => pushQuery({ end: e.currentTarget.value })}
              />
            )}
          </Field>
        </>
      ) : null}
      <Field label="Time zone">
        {(props) => (
          <select {...props} value={view.timezone} onChange={(e) => pushQuery({ timezone: e.currentTarget.value })}>
            {zones.map((z) => (
              <option key={z} value={z}>
                {z.replace(/_/g, ' ')}
              </option>
            ))}
          </select>
        )}
      </Field>
      <Field label="Chart by">
        {(props) => (
          <select {...props} value={view.granularity} onChange={(e) => pushQuery({ granularity: e.currentTarget.value })}>
            {GRANULARITIES.map((g) => (
              <option key={g} value={g}>
                {g[0]!.toUpperCase() + g.slice(1)}
              </option>
            ))}
          </select>
        )}
      </Field>
      <Field label="Visits">
        {(props) => (
          <select
            {...props}
            value={view.audience}
            onChange={(e) => {
              const v = e.currentTarget.value
              pushQuery({ qr: v === 'scans' ? 'true' : v === 'clicks' ? 'false' : null })
            }}
          >
            <option value="all">Clicks and scans</option>
            <option value="scans">QR scans only</option>
            <option value="clicks">Link clicks only (no scans)</option>
          </select>
        )}
      </Field>
    </div>
  )
}

function Totals({ count }: { count: Count }) {
  const direct = count.clicks - count.scans
  const share = count.clicks ? Math.round((count.scans / count.clicks) * 100) : 0
  return (
    <dl class="stats-totals">
      <div class="card stats-total stats-total-clicks">
        <dt>Clicks</dt>
        <dd class="stats-total-value">{count.clicks.toLocaleString()}</dd>
        <dd class="hint">every visit, scans included</dd>
      </div>
      <div class="card stats-total stats-total-scans">
        <dt>QR scans</dt>
        <dd class="stats-total-value">{count.scans.toLocaleString()}</dd>
        <dd class="hint">{share}% of visits came from a QR code</dd>
      </div>
      <div class="card stats-total stats-total-direct">
        <dt>Link clicks</dt>
        <dd class="stats-total-value">{direct.toLocaleString()}</dd>
        <dd class="hint">visits not from a QR code</dd>
      </div>
    </dl>
  )
}

function BreakdownPicker({ view }: { view: StatsView }) {
  return (
    <fieldset class="stats-tabs">
      <legend class="visually-hidden">Breakdown</legend>
      {DIMENSIONS.filter((d) => !(view.linkId && d.groupBy === 'link')).map((d) => (
        <button key={d.groupBy} type="button" class="stats-tab" aria-pressed={view.top === d.groupBy} onClick={() => pushQuery({ top: d.groupBy })}>
          {d.label}
        </button>
      ))}
    </fieldset>
  )
}

function EmptyRange({ view, onClear }: { view: StatsView; onClear: () => void }) {
  const filtered = Object.keys(view.filters).length > 0 || view.audience !== 'all'
  const range = view.interval === 'custom' ? `from ${view.startDay} to ${view.endDay}` : INTERVALS.find((i) => i.value === view.interval)!.label.toLowerCase()
  return (
    <Empty title="No clicks in this range">
      <p>
        {view.linkId ? 'This link has' : 'Your links have'} no clicks {view.interval === 'all' ? 'yet' : `in the ${range}`}
        {filtered ? ' that match these filters' : ''}. Share the short link or print its QR code, then come back here.
      </p>
      <div class="stats-empty-actions">
        {view.interval !== 'all' ? (
          <button type="button" class="btn" onClick={() => pushQuery({ interval: 'all', start: null, end: null })}>
            Show all time
          </button>
        ) : null}
        {filtered ? (
          <button type="button" class="btn" onClick={onClear}>
            Clear filters
          </button>
        ) : null}
      </div>
    </Empty>
  )
}
