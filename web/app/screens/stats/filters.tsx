/**
 * The filters: active ones as removable chips, and a form with every dimension the API
 * filters by (a list for the fixed sets, a text field for the rest).
 */
import { Field } from '../../ui'
import { CHOICES, countryName, FILTERS, filterLabel } from './view'

export function FilterChips({
  filters,
  names,
  onRemove,
  onClear,
}: {
  filters: Record<string, string>
  /** Readable names for values (a link id → its short link). */
  names: Record<string, string>
  onRemove: (name: string) => void
  onClear: () => void
}) {
  const active = Object.entries(filters)
  if (active.length === 0) return null
  return (
    <ul class="stats-chips" aria-label="Active filters">
      {active.map(([name, value]) => {
        const shown = names[`${name}:${value}`] ?? (name === 'country' ? `${countryName(value)} (${value.toUpperCase()})` : value)
        return (
          <li key={name} class="stats-chip">
            <span>
              <span class="muted">{filterLabel(name)}:</span> {shown}
            </span>
            <button type="button" class="stats-chip-remove" aria-label={`Remove filter ${filterLabel(name)}: ${shown}`} onClick={() => onRemove(name)}>
              ×
            </button>
          </li>
        )
      })}
      {active.length > 1 ? (
        <li>
          <button type="button" class="btn btn-ghost" onClick={onClear}>
            Clear all filters
          </button>
        </li>
      ) : null}
    </ul>
  )
}

export function FilterForm({
  filters,
  hidden,
  onApply,
}: {
  filters: Record<string, string>
  /** Filters this view does not offer (the link, on one link's statistics). */
  hidden: string[]
  onApply: (values: Record<string, string | null>) => void
}) {
  const submit = (e: Event) => {
    e.preventDefault()
    const form = new FormData(e.currentTarget as HTMLFormElement)
    const values: Record<string, string | null> = {}
    for (const f of FILTERS) if (!hidden.includes(f.name)) values[f.name] = String(form.get(f.name) ?? '').trim() || null
    onApply(values)
  }
  const count = Object.keys(filters).length
  return (
    <details class="stats-filters card">
      <summary>Filters{count ? ` (${count} active)` : ''}</summary>
      {/* keyed by the active filters so the fields show what the URL says after back/forward */}
      <form key={JSON.stringify(filters)} onSubmit={submit} class="stats-filters-form">
        {FILTERS.filter((f) => !hidden.includes(f.name)).map((f) => (
          <Field key={f.name} label={f.label} hint={f.hint}>
            {(props) =>
              CHOICES[f.name] ? (
                <select {...props} name={f.name}>
                  <option value="">Any</option>
                  {CHOICES[f.name]!.map((c) => (
                    <option key={c} value={c} selected={filters[f.name] === c}>
                      {c}
                    </option>
                  ))}
                </select>
              ) : (
                <input {...props} name={f.name} defaultValue={filters[f.name] ?? ''} maxLength={f.name === 'refererUrl' ? 2000 : 200} autoComplete="off" />
              )
            }
          </Field>
        ))}
        <div class="stats-filters-actions">
          <button type="submit" class="btn btn-primary">
            Apply filters
          </button>
        </div>
      </form>
    </details>
  )
}
