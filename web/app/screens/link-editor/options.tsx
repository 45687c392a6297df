/** The "Options" area: address, organisation, access, campaign tags, protection, social preview and rules. */
import { useState } from 'preact/hooks'
import { errorText, get, post } from '../../api'
import { Button, Field, toast, useResource } from '../../ui'
import { AbTestFields } from './ab-test'
import { Check, GroupError, TextArea, TextInput, useFieldError } from './fields'
import { type OptionsForm, UTM_FIELDS, type UtmField, utmFromUrl, withUtm } from './options-model'
import { TargetingBuilder } from './targeting'

interface DomainRecord {
  slug: string
  cnameStatus: string
  archived?: boolean
}
export interface TagRecord {
  id: string
  name: string
  color: string
}

export interface OptionsProps {
  o: OptionsForm
  set: (patch: Partial<OptionsForm>) => void
  /** The typed destination URL of link/google-form links, which the UTM builder edits; null for other types. */
  url: string | null
  setUrl: (url: string) => void
  hasPassword: boolean
  /** The type's visitors go to URLs the server checks (link, google-form, gs1): the fallback field shows. */
  health: boolean
  hosted: boolean
  /** The link's type can track conversions (its visitors go to an http(s) URL). */
  canTrackConversions: boolean
  readOnly: boolean
}

const UTM_LABELS: Record<UtmField, { label: string; placeholder: string }> = {
  source: { label: 'Source (utm_source)', placeholder: 'newsletter, flyer, instagram' },
  medium: { label: 'Medium (utm_medium)', placeholder: 'email, print, social' },
  campaign: { label: 'Campaign (utm_campaign)', placeholder: 'spring-sale' },
  term: { label: 'Term (utm_term)', placeholder: 'running shoes' },
  content: { label: 'Content (utm_content)', placeholder: 'blue-button' },
  ref: { label: 'Referrer (ref)', placeholder: 'partner-name' },
}

export function OptionsFields(props: OptionsProps) {
  const { o, set } = props
  return (
    <div class="le-options">
      <Section title="Short link" open>
        <div class="le-row">
          <DomainSelect value={o.domain} onValue={(domain) => set({ domain })} />
          <TextInput
            label="Custom key"
            path="linkOptions.key"
            value={o.key}
            onValue={(key) => set({ key })}
            placeholder="random"
            maxLength={190}
            hint="Letters, digits, - and _. Empty: 7 random characters."
          />
        </div>
      </Section>
      <Section title="Tags and comment">
        <TagPicker value={o.tags} onValue={(tags) => set({ tags })} readOnly={props.readOnly} />
        <TextArea
          label="Comment"
          path="linkOptions.comment"
          value={o.comment}
          onValue={(comment) => set({ comment })}
          maxLength={2000}
          rows={3}
          hint="Only you see it."
        />
      </Section>
      <Section title="Password and expiry">
        {props.hasPassword ? (
          <Check
            label="Remove the password"
            checked={o.removePassword}
            onValue={(removePassword) => set({ removePassword })}
            hint="This link asks visitors for a password."
          />
        ) : null}
        {o.removePassword ? null : (
          <TextInput
            label={props.hasPassword ? 'New password' : 'Password'}
            path="linkOptions.password"
            type="password"
            autocomplete="new-password"
            value={o.password}
            onValue={(password) => set({ password })}
            hint={props.hasPassword ? 'Leave empty to keep the current password.' : 'Optional: visitors must type it. 6 to 128 characters.'}
          />
        )}
        <Check label="Expires" checked={o.expires} onValue={(expires) => set({ expires })} hint="After this time visitors go to the fallback URL." />
        {o.expires ? (
          <div class="le-row">
            <TextInput
              label="Expires at"
              path="linkOptions.expiration.time"
              type="datetime-local"
              value={o.expirationTime}
              onValue={(expirationTime) => set({ expirationTime })}
            />
            <TextInput
              label="Afterwards, send visitors to"
              path="linkOptions.expiration.url"
              type="url"
              value={o.expirationUrl}
              onValue={(expirationUrl) => set({ expirationUrl })}
              placeholder="https://example.com/offer-ended"
            />
          </div>
        ) : null}
        <GroupError path="linkOptions.expiration" />
      </Section>
      {props.canTrackConversions ? (
        <Section title="Conversions" open={o.trackConversion || o.abTest}>
          <AbTestFields o={o} set={set} url={props.url} />
        </Section>
      ) : null}
      <Section title="Campaign tracking (UTM)">
        <UtmBuilder {...props} />
      </Section>
      <Section title="Content protection">
        {props.hosted ? null : <p class="hint">Applies to pages this service hosts (menus, text, files, Wi-Fi); this link redirects elsewhere.</p>}
        <Check label="Watermark" checked={o.watermark} onValue={(watermark) => set({ watermark })} hint="Text laid over the page's content." />
        {o.watermark ? (
          <TextInput
            label="Watermark text"
            path="linkOptions.option.watermarkText"
            value={o.watermarkText}
            onValue={(watermarkText) => set({ watermarkText })}
            maxLength={64}
            placeholder="Confidential"
          />
        ) : null}
        <Check
          label="Discourage screenshots"
          checked={o.screenshotProtected}
          onValue={(screenshotProtected) => set({ screenshotProtected })}
          hint="Applies the deterrents a web page can; no page can fully prevent screenshots."
        />
        <GroupError path="linkOptions.option" />
      </Section>
      <Section title="Social preview">
        <p class="hint">What chat apps and social networks show when the link is shared. The card beside the form shows it live.</p>
        <TextInput
          label="Preview title"
          path="linkOptions.previewData.title"
          value={o.previewTitle}
          onValue={(previewTitle) => set({ previewTitle })}
          maxLength={256}
        />
        <TextArea
          label="Preview description"
          path="linkOptions.previewData.desc"
          value={o.previewDesc}
          onValue={(previewDesc) => set({ previewDesc })}
          maxLength={256}
          rows={2}
        />
        <TextInput
          label="Preview image URL"
          path="linkOptions.previewData.image"
          type="url"
          value={o.previewImage}
          onValue={(previewImage) => set({ previewImage })}
          hint="1200×630 px works everywhere."
        />
      </Section>
      <Section title="Rules (targeting)" open={!!o.targeting.type}>
        <TargetingBuilder value={o.targeting} onChange={(targeting) => set({ targeting })} readOnly={props.readOnly} />
      </Section>
      {props.health ? (
        <Section title="If the destination breaks" open={!!o.healthFallbackUrl}>
          <p class="hint">
            The server checks the destination and every other URL of the link (rules, product links) regularly. While the URL a visitor would get is broken (two
            failed checks in a row), the visit goes here instead, and still counts.
          </p>
          <TextInput
            label="Fallback URL"
            path="linkOptions.healthFallbackUrl"
            type="url"
            value={o.healthFallbackUrl}
            onValue={(healthFallbackUrl) => set({ healthFallbackUrl })}
            placeholder="https://example.com/we-are-on-it"
          />
        </Section>
      ) : null}
    </div>
  )
}

/** A titled, collapsible part of the options; keyboard-operable through <details>. */
function Section({ title, open, children }: { title: string; open?: boolean; children: preact.ComponentChildren }) {
  return (
    <details class="le-section" open={open}>
      <summary>{title}</summary>
      <div class="le-section-body">{children}</div>
    </details>
  )
}

function DomainSelect({ value, onValue }: { value: string; onValue: (v: string) => void }) {
  const domains = useResource((signal) => get<DomainRecord[]>('/domains', { pageSize: 50 }, signal), [])
  const error = useFieldError('linkOptions.domain')
  const list = (domains.data ?? []).filter((d) => !d.archived)
  const options = list.some((d) => d.slug === value) || !value ? list.map((d) => d.slug) : [value, ...list.map((d) => d.slug)]
  return (
    <Field label="Domain" error={error ?? (domains.error ? errorText(domains.error) : undefined)} hint={domains.loading ? 'Loading domains…' : undefined}>
      {(p) => (
        <select {...p} name="linkOptions.domain" value={value} onChange={(e) => onValue(e.currentTarget.value)}>
          {value ? null : <option value="">Default domain</option>}
          {options.map((slug) => (
            <option key={slug} value={slug}>
              {slug}
            </option>
          ))}
        </select>
      )}
    </Field>
  )
}

function TagPicker({ value, onValue, readOnly }: { value: string[]; onValue: (v: string[]) => void; readOnly: boolean }) {
  const tags = useResource((signal) => get<TagRecord[]>('/tags', { pageSize: 100, sortBy: 'name', sortOrder: 'asc' }, signal), [])
  const [name, setName] = useState('')
  const [busy, setBusy] = useState(false)
  const [createError, setCreateError] = useState<string | null>(null)
  const error = useFieldError('linkOptions.tags')
  const list = tags.data ?? []
  const create = async () => {
    if (!name.trim()) return
    setBusy(true)
    setCreateError(null)
    try {
      const tag = await post<TagRecord>('/tags', { name: name.trim() })
      tags.reload()
      onValue([...value, tag.id])
      setName('')
      toast(`Tag “${tag.name}” created`)
    } catch (e) {
      setCreateError(errorText(e))
    } finally {
      setBusy(false)
    }
  }
  return (
    <div class="le-tags">
      <fieldset class={error ? 'field-invalid' : ''}>
        <legend>Tags</legend>
        {tags.loading && !tags.data ? <p class="muted">Loading tags…</p> : null}
        {tags.error ? <p class="field-error">{errorText(tags.error)}</p> : null}
        {tags.data && list.length === 0 ? <p class="muted">No tags yet{readOnly ? '' : ': create the first one below'}.</p> : null}
        <div class="le-tag-list">
          {list.map((t) => (
            <label key={t.id} class={`check le-tag le-tag-${t.color}`}>
              <input
                type="checkbox"
                checked={value.includes(t.id)}
                onChange={(e) => onValue(e.currentTarget.checked ? [...value, t.id] : value.filter((x) => x !== t.id))}
              />
              {t.name}
            </label>
          ))}
        </div>
        {error ? <p class="field-error">{error}</p> : null}
      </fieldset>
      {readOnly ? null : (
        <div class="le-row le-tag-new">
          <Field label="New tag" error={createError}>
            {(p) => (
              <input
                {...p}
                value={name}
                maxLength={50}
                onInput={(e) => setName(e.currentTarget.value)}
                onKeyDown={(e) => {
                  if (e.key === 'Enter') {
                    e.preventDefault()
                    create()
                  }
                }}
              />
            )}
          </Field>
          <Button onClick={create} busy={busy} disabled={!name.trim()}>
            Create tag
          </Button>
        </div>
      )}
    </div>
  )
}

/**
 * For a typed URL the builder reads and writes the URL's own utm_* parameters, so the
 * stored destination carries them; for other types it fills the `utm` option, which the
 * redirect merges into wherever the visitor goes.
 */
function UtmBuilder({ o, set, url, setUrl }: OptionsProps) {
  const inUrl = url !== null
  const values = inUrl ? utmFromUrl(url) : o.utm
  let parsable = true
  if (inUrl)
    try {
      new URL(url)
    } catch {
      parsable = false
    }
  return (
    <>
      <p class="hint">
        {inUrl
          ? 'These fill the utm_ parameters of the destination URL as you type; analytics tools read them.'
          : 'Added to the address visitors are sent to, so analytics tools can tell where they came from.'}
      </p>
      {inUrl && !parsable ? <p class="hint">Enter the destination URL first.</p> : null}
      <div class="le-utm">
        {UTM_FIELDS.map((f) => (
          <TextInput
            key={f}
            label={UTM_LABELS[f].label}
            path={inUrl ? `url-utm.${f}` : `linkOptions.utm.${f}`}
            name={`utm-${f}`}
            value={values[f]}
            placeholder={UTM_LABELS[f].placeholder}
            maxLength={190}
            onValue={(v) => (inUrl ? parsable && setUrl(withUtm(url, f, v)) : set({ utm: { ...o.utm, [f]: v } }))}
          />
        ))}
      </div>
      {inUrl && parsable ? (
        <p class="le-utm-url">
          <span class="label">Destination:</span> <span class="mono">{url}</span>
        </p>
      ) : null}
    </>
  )
}
