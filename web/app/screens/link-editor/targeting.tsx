/**
 * The rule builder: one kind of rule per link (the API's Targeting has one targetType),
 * rows added and removed per kind. The first matching row wins; visitors no row matches
 * go to the link's own destination.
 */
import { Button, Field } from '../../ui'
import { MoveButtons } from './content-form'
import { GroupError, Select, TextInput, useFieldError } from './fields'
import { emptyLanguage, emptyLocation, emptyNumber, emptyTime, TARGET_LABELS, TARGET_TYPES, type TargetingForm, type TargetType } from './options-model'

const BASE = 'linkOptions.Targeting.targetDatas'
const HELP: Record<TargetType, string> = {
  device: 'iPhone and iPad visitors go to one URL, Android visitors to another; everyone else to the destination.',
  location: 'Visitors from a country (optionally a region or city) go to its URL.',
  language: 'Visitors whose browser prefers a language go to its URL.',
  time: 'Visits during a time window go to its URL: happy hours, opening hours, weekends.',
  number: 'The n-th visit goes to a URL: "the first 100 visitors win".',
}

let countries: { value: string; label: string }[] | null = null
/** Every ISO 3166-1 alpha-2 code the browser can name, sorted by name. */
export function countryOptions() {
  if (countries) return countries
  const names = new Intl.DisplayNames([navigator.language || 'en', 'en'], { type: 'region', fallback: 'code' })
  const notCountries = new Set([
    'EU',
    'EZ',
    'UN',
    'QO',
    'XA',
    'XB',
    'ZZ',
    'AA',
    'QM',
    'QN',
    'QP',
    'QQ',
    'QR',
    'QS',
    'QT',
    'QU',
    'QV',
    'QW',
    'QX',
    'QY',
    'QZ',
    'XK',
  ])
  const out: { value: string; label: string }[] = []
  for (let a = 65; a <= 90; a++)
    for (let b = 65; b <= 90; b++) {
      const code = String.fromCharCode(a, b)
      if (notCountries.has(code) || code.startsWith('X') || code.startsWith('Q')) continue
      let name: string | undefined
      try {
        name = names.of(code)
      } catch {
        name = undefined
      }
      if (name && name !== code) out.push({ value: code, label: `${name} (${code})` })
    }
  countries = out.sort((x, y) => x.label.localeCompare(y.label))
  return countries
}

const LANGUAGES = [
  'ar',
  'bg',
  'bn',
  'ca',
  'cs',
  'da',
  'de',
  'el',
  'en',
  'en-GB',
  'en-US',
  'es',
  'es-MX',
  'et',
  'fa',
  'fi',
  'fr',
  'fr-CA',
  'he',
  'hi',
  'hr',
  'hu',
  'id',
  'it',
  'ja',
  'ko',
  'lt',
  'lv',
  'ms',
  'nb',
  'nl',
  'pl',
  'pt',
  'pt-BR',
  'ro',
  'ru',
  'sk',
  'sl',
  'sr',
  'sv',
  'sw',
  'th',
  'tl',
  'tr',
  'uk',
  'ur',
  'vi',
  'zh',
  'zh-TW',
]
let languages: { value: string; label: string }[] | null = null
function languageOptions() {
  if (languages) return languages
  const names = new Intl.DisplayNames([navigator.language || 'en', 'en'], { type: 'language', fallback: 'code' })
  languages = LANGUAGES.map((code) => ({ value: code, label: `${names.of(code) ?? code} (${code})` })).sort((a, b) => a.label.localeCompare(b.label))
  return languages
}

let zones: string[] | null = null
function timeZones() {
  if (zones) return zones
  const all = typeof Intl.supportedValuesOf === 'function' ? Intl.supportedValuesOf('timeZone') : []
  zones = ['UTC', ...all.filter((z) => z !== 'UTC')]
  return zones
}

const DAYS = [1, 2, 3, 4, 5, 6, 7].map((d) => ({
  value: d,
  // 2024-01-01 was a Monday.
  label: new Intl.DateTimeFormat(navigator.language || 'en', { weekday: 'short', timeZone: 'UTC' }).format(new Date(Date.UTC(2024, 0, d))),
}))

export function TargetingBuilder({ value, onChange, readOnly }: { value: TargetingForm; onChange: (t: TargetingForm) => void; readOnly: boolean }) {
  const t = value
  const set = (patch: Partial<TargetingForm>) => onChange({ ...t, ...patch })
  return (
    <div class="le-rules">
      <Select
        label="Send some visitors elsewhere by"
        path="linkOptions.Targeting.targetType"
        value={t.type}
        onValue={(type) => set({ type })}
        options={[
          { value: '' as TargetType | '', label: 'No rules: everyone goes to the destination' },
          ...TARGET_TYPES.map((v) => ({ value: v, label: TARGET_LABELS[v] })),
        ]}
        hint={t.type ? HELP[t.type] : 'Route visitors by device, country, language, time or visit number.'}
      />
      <GroupError path="linkOptions.Targeting" />
      <GroupError path={BASE} />
      {t.type === 'device' ? (
        <div class="le-rule">
          <TextInput
            label="iPhone and iPad go to"
            path={`${BASE}.ios`}
            type="url"
            value={t.device.ios}
            onValue={(ios) => set({ device: { ...t.device, ios } })}
          />
          <TextInput
            label="Android goes to"
            path={`${BASE}.android`}
            type="url"
            value={t.device.android}
            onValue={(android) => set({ device: { ...t.device, android } })}
          />
        </div>
      ) : t.type ? (
        <Rows type={t.type} t={t} set={set} readOnly={readOnly} />
      ) : null}
    </div>
  )
}

type ListType = Exclude<TargetType, 'device'>
const EMPTY_ROW = { location: emptyLocation, language: emptyLanguage, time: emptyTime, number: emptyNumber }

function Rows({ type, t, set, readOnly }: { type: ListType; t: TargetingForm; set: (p: Partial<TargetingForm>) => void; readOnly: boolean }) {
  const rows = t[type] as unknown[]
  const setRows = (next: unknown[]) => set({ [type]: next } as Partial<TargetingForm>)
  const setRow = (i: number, patch: object) => setRows(rows.map((r, j) => (j === i ? { ...(r as object), ...patch } : r)))
  return (
    <>
      <ol class="le-rule-list">
        {rows.map((row, i) => (
          <li key={i} class="le-rule">
            <div class="le-rule-head">
              <span class="label">Rule {i + 1}</span>
              {readOnly ? null : (
                <span class="le-move">
                  <MoveButtons list={rows} index={i} what={`rule ${i + 1}`} onMove={setRows} />
                  <Button kind="ghost" aria-label={`Remove rule ${i + 1}`} disabled={rows.length === 1} onClick={() => setRows(rows.filter((_, j) => j !== i))}>
                    ✕
                  </Button>
                </span>
              )}
            </div>
            <GroupError path={`${BASE}.${i}`} />
            <RuleFields type={type} row={row as Record<string, string>} i={i} setRow={(p) => setRow(i, p)} />
          </li>
        ))}
      </ol>
      <Button class="le-write" onClick={() => setRows([...rows, EMPTY_ROW[type]()])} disabled={rows.length >= 50}>
        + Add rule
      </Button>
    </>
  )
}

function RuleFields({ type, row, i, setRow }: { type: ListType; row: Record<string, string>; i: number; setRow: (p: object) => void }) {
  const p = `${BASE}.${i}`
  const url = <TextInput label="Send them to" path={`${p}.url`} type="url" value={row.url ?? ''} onValue={(url) => setRow({ url })} placeholder="https://" />
  switch (type) {
    case 'location':
      return (
        <>
          <Select
            label="Country"
            path={`${p}.country`}
            value={row.country ?? ''}
            onValue={(country) => setRow({ country })}
            options={[{ value: '', label: 'Choose a country' }, ...countryOptions()]}
          />
          <div class="le-row">
            <TextInput label="Region (optional)" path={`${p}.region`} value={row.region ?? ''} onValue={(region) => setRow({ region })} maxLength={100} />
            <TextInput label="City (optional)" path={`${p}.city`} value={row.city ?? ''} onValue={(city) => setRow({ city })} maxLength={100} />
          </div>
          {url}
        </>
      )
    case 'language':
      return (
        <>
          <Select
            label="Language"
            path={`${p}.language`}
            value={row.language ?? ''}
            onValue={(language) => setRow({ language })}
            options={[{ value: '', label: 'Choose a language' }, ...languageOptions()]}
          />
          {url}
        </>
      )
    case 'time':
      return <TimeFields p={p} row={row as unknown as { start: string; end: string; days: number[]; timezone: string }} setRow={setRow} url={url} />
    case 'number':
      return (
        <>
          <div class="le-row">
            <TextInput label="From visit" path={`${p}.from`} type="number" value={row.from ?? ''} onValue={(from) => setRow({ from })} />
            <TextInput label="To visit" path={`${p}.to`} type="number" value={row.to ?? ''} onValue={(to) => setRow({ to })} />
          </div>
          {url}
        </>
      )
  }
}

function TimeFields({
  p,
  row,
  setRow,
  url,
}: {
  p: string
  row: { start: string; end: string; days: number[]; timezone: string }
  setRow: (p: object) => void
  url: preact.ComponentChildren
}) {
  const daysError = useFieldError(`${p}.days`)
  return (
    <>
      <fieldset class={`le-days${daysError ? ' field-invalid' : ''}`}>
        <legend class="label">Days</legend>
        {DAYS.map((d) => (
          <label key={d.value} class="check">
            <input
              type="checkbox"
              checked={row.days.includes(d.value)}
              onChange={(e) => setRow({ days: e.currentTarget.checked ? [...row.days, d.value] : row.days.filter((x) => x !== d.value) })}
            />
            {d.label}
          </label>
        ))}
        {daysError ? <p class="field-error">{daysError}</p> : null}
      </fieldset>
      <div class="le-row">
        <TextInput label="From" path={`${p}.start`} type="time" value={row.start} onValue={(start) => setRow({ start })} />
        <TextInput
          label="Until"
          path={`${p}.end`}
          type="time"
          value={row.end}
          onValue={(end) => setRow({ end })}
          hint="Past midnight wraps: 22:00 until 02:00."
        />
      </div>
      <Field label="Time zone" error={useFieldError(`${p}.timezone`)}>
        {(a) => (
          <select {...a} value={row.timezone} onChange={(e) => setRow({ timezone: e.currentTarget.value })}>
            {timeZones().map((z) => (
              <option key={z} value={z}>
                {z}
              </option>
            ))}
          </select>
        )}
      </Field>
      {url}
    </>
  )
}
