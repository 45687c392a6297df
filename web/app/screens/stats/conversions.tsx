/**
 * Conversions on the statistics screen (contract: "Conversions"): leads, sales and revenue per
 * currency beside the clicks, and the clicks → leads → sales funnel of the selection. The
 * numbers come with every statistics answer asked with `conversions=true`.
 */
import type { Static } from '@sinclair/typebox'
import type { CountResult } from '../../../../src/stats/stats.results'

export type CountWithConversions = Static<typeof CountResult>

/** An amount in a currency's minor unit, as money (ISO 4217 code; an unknown code shows the raw amount). */
export function money(amount: number, currency: string): string {
  try {
    const format = new Intl.NumberFormat(undefined, { style: 'currency', currency: currency.toUpperCase() })
    const digits = format.resolvedOptions().maximumFractionDigits ?? 2
    return format.format(amount / 10 ** digits)
  } catch {
    return `${amount.toLocaleString()} ${currency.toUpperCase()}`
  }
}

/** Revenue per currency, largest first, as text ("€29.00 · $15.00"); "none" without sales. */
export function revenueText(saleAmount: Record<string, number> | undefined): string {
  const entries = Object.entries(saleAmount ?? {}).sort((a, b) => b[1] - a[1])
  return entries.length ? entries.map(([c, a]) => money(a, c)).join(' · ') : 'none'
}

const percent = (part: number, whole: number) => (whole > 0 ? `${((part / whole) * 100).toFixed(part / whole < 0.1 ? 1 : 0)}%` : '–')

export function ConversionsPanel({ count }: { count: CountWithConversions }) {
  const leads = count.leads ?? 0
  const sales = count.sales ?? 0
  const steps = [
    { name: 'Clicks', value: count.clicks, note: 'every counted visit' },
    { name: 'Leads', value: leads, note: `${percent(leads, count.clicks)} of clicks` },
    { name: 'Sales', value: sales, note: `${percent(sales, leads)} of leads` },
  ]
  const max = Math.max(count.clicks, leads, sales, 1)
  return (
    <section class="card stats-card stats-conversions" aria-labelledby="stats-conversions-title">
      <h2 id="stats-conversions-title">Conversions</h2>
      <dl class="stats-conversion-totals">
        <div class="stats-conversion-leads">
          <dt>Leads</dt>
          <dd class="stats-total-value">{leads.toLocaleString()}</dd>
        </div>
        <div class="stats-conversion-sales">
          <dt>Sales</dt>
          <dd class="stats-total-value">{sales.toLocaleString()}</dd>
        </div>
        <div class="stats-conversion-revenue">
          <dt>Revenue</dt>
          <dd class="stats-total-value">{revenueText(count.saleAmount)}</dd>
        </div>
      </dl>
      <ol class="stats-funnel" aria-label="Funnel: clicks, leads, sales">
        {steps.map((s) => (
          <li key={s.name} class="stats-funnel-step">
            <span class="stats-funnel-name">{s.name}</span>
            <span class="stats-funnel-bar" aria-hidden="true">
              <span style={{ width: `${(s.value / max) * 100}%` }} />
            </span>
            <span class="stats-funnel-value">
              {s.value.toLocaleString()} <span class="hint">{s.note}</span>
            </span>
          </li>
        ))}
      </ol>
      {leads === 0 && sales === 0 ? (
        <p class="hint">
          No leads or sales in this selection. Turn on “Track conversions” on a link, and have your site report sign-ups and sales with the sl_id its landing
          page receives (see the API documentation: POST /track/lead and /track/sale).
        </p>
      ) : null}
    </section>
  )
}
