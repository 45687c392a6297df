/** The content part of the editor: one form per link type, with defaults and help fit for it. */
import { Button } from '../../ui'
import { Check, GroupError, Select, TextArea, TextInput } from './fields'
import { FileSource } from './file-source'
import { Gs1Fields } from './gs1-form'
import { type ContentForm, emptyItem, emptySection, FILE_TYPES, type LinkType, type MenuItem, type MenuSection } from './types'

export interface ContentProps {
  type: LinkType
  form: ContentForm
  set: (patch: Partial<ContentForm>) => void
  readOnly: boolean
  /** The origin of the link's short domain (GS1 products preview their resolver URIs on it). */
  origin?: string
}

export function ContentFields(props: ContentProps) {
  const { type, form, set } = props
  if (FILE_TYPES.has(type))
    return (
      <>
        <FileSource type={type} form={form} set={set} readOnly={props.readOnly} />
        <TitleField form={form} set={set} hint="Shown at the top of the page visitors see." />
      </>
    )
  switch (type) {
    case 'link':
      return (
        <TextInput
          label="Destination URL"
          path="data.url"
          type="url"
          required
          value={form.url}
          onValue={(url) => set({ url })}
          placeholder="https://example.com/spring-sale"
          hint="The page people reach. Add campaign tags under Options › UTM."
        />
      )
    case 'google-form':
      return (
        <TextInput
          label="Google Form URL"
          path="data.url"
          type="url"
          required
          value={form.url}
          onValue={(url) => set({ url })}
          placeholder="https://docs.google.com/forms/d/e/…/viewform"
          hint="In Google Forms: Send › link icon › Copy."
        />
      )
    case 'menu':
      return <MenuFields {...props} />
    case 'gs1':
      return <Gs1Fields form={form.gs1} set={(gs1) => set({ gs1 })} origin={props.origin ?? location.origin} />
    case 'app-stores':
      return (
        <>
          <GroupError path="data" />
          <TextInput
            label="App Store URL (iPhone, iPad)"
            path="data.ios"
            type="url"
            value={form.ios}
            onValue={(ios) => set({ ios })}
            placeholder="https://apps.apple.com/app/id…"
          />
          <TextInput
            label="Google Play URL (Android)"
            path="data.android"
            type="url"
            value={form.android}
            onValue={(android) => set({ android })}
            placeholder="https://play.google.com/store/apps/details?id=…"
          />
          <TextInput
            label="Everyone else goes to"
            path="data.fallbackUrl"
            type="url"
            value={form.fallbackUrl}
            onValue={(fallbackUrl) => set({ fallbackUrl })}
            hint="Optional: your website, for computers and other phones."
          />
          <TitleField form={form} set={set} hint="Shown on the page computers see." />
        </>
      )
    case 'wi-fi':
      return (
        <>
          <TextInput label="Network name (SSID)" path="data.ssid" value={form.ssid} onValue={(ssid) => set({ ssid })} required maxLength={32} />
          <Select
            label="Security"
            path="data.encryption"
            value={form.encryption}
            onValue={(encryption) => set({ encryption })}
            options={[
              { value: 'WPA', label: 'WPA / WPA2 / WPA3 (most networks)' },
              { value: 'WEP', label: 'WEP (old routers)' },
              { value: 'nopass', label: 'None (open network)' },
            ]}
          />
          {form.encryption !== 'nopass' ? (
            <TextInput
              label="Network password"
              path="data.password"
              value={form.password}
              onValue={(password) => set({ password })}
              hint={form.encryption === 'WPA' ? '8 to 63 characters, as printed on the router.' : '5, 13, 16 or 29 characters.'}
            />
          ) : null}
          <Check
            label="Hidden network"
            checked={form.hidden}
            onValue={(hidden) => set({ hidden })}
            hint="Tick when the network does not show in the list of networks."
          />
        </>
      )
    case 'email':
      return (
        <>
          <TextInput label="Send to" path="data.to" type="email" required value={form.to} onValue={(to) => set({ to })} placeholder="hello@example.com" />
          <TextInput label="Subject" path="data.subject" value={form.subject} onValue={(subject) => set({ subject })} maxLength={500} />
          <TextArea
            label="Message"
            path="data.body"
            value={form.body}
            onValue={(body) => set({ body })}
            maxLength={1500}
            hint="Pre-filled; the sender can change it."
          />
        </>
      )
    case 'sms':
    case 'whatsapp':
      return (
        <>
          <TextInput
            label="Phone number"
            path="data.phone"
            type="tel"
            required
            value={form.phone}
            onValue={(phone) => set({ phone })}
            placeholder="+33 6 12 34 56 78"
            hint="International format with the country code."
          />
          <TextArea
            label="Message"
            path="data.message"
            value={form.message}
            onValue={(message) => set({ message })}
            maxLength={1000}
            hint="Pre-filled; the sender can change it."
          />
        </>
      )
    case 'map':
      return (
        <>
          <GroupError path="data" />
          <fieldset class="segmented">
            <legend class="label">Find the place by</legend>
            <label>
              <input type="radio" name="map-place" checked={form.place === 'query'} onChange={() => set({ place: 'query' })} /> Address or name
            </label>
            <label>
              <input type="radio" name="map-place" checked={form.place === 'coordinates'} onChange={() => set({ place: 'coordinates' })} /> Coordinates
            </label>
          </fieldset>
          {form.place === 'query' ? (
            <TextInput
              label="Address or place"
              path="data.query"
              value={form.query}
              onValue={(query) => set({ query })}
              placeholder="Café de Flore, Paris"
              required
              maxLength={500}
            />
          ) : (
            <div class="le-row">
              <TextInput
                label="Latitude"
                path="data.latitude"
                type="number"
                step="any"
                value={form.latitude}
                onValue={(latitude) => set({ latitude })}
                placeholder="48.8540"
              />
              <TextInput
                label="Longitude"
                path="data.longitude"
                type="number"
                step="any"
                value={form.longitude}
                onValue={(longitude) => set({ longitude })}
                placeholder="2.3325"
              />
            </div>
          )}
        </>
      )
    case 'text':
      return (
        <>
          <TitleField form={form} set={set} hint="Optional heading of the page." />
          <TextArea
            label="Text"
            path="data.text"
            required
            rows={8}
            maxLength={5000}
            value={form.text}
            onValue={(text) => set({ text })}
            hint={`${form.text.length} of 5,000 characters.`}
          />
        </>
      )
  }
  return null
}

function TitleField({ form, set, hint }: { form: ContentForm; set: (p: Partial<ContentForm>) => void; hint: string }) {
  return <TextInput label="Page title" path="data.title" value={form.title} onValue={(title) => set({ title })} maxLength={200} hint={hint} />
}

function MenuFields({ type, form, set, readOnly }: ContentProps) {
  const sections = form.sections
  const setSections = (next: MenuSection[]) => set({ sections: next })
  const setSection = (i: number, patch: Partial<MenuSection>) => setSections(sections.map((s, j) => (j === i ? { ...s, ...patch } : s)))
  const setItem = (si: number, ii: number, patch: Partial<MenuItem>) =>
    setSection(si, { items: sections[si]!.items.map((it, j) => (j === ii ? { ...it, ...patch } : it)) })
  return (
    <>
      <TextInput label="Menu title" path="data.title" value={form.title} onValue={(title) => set({ title })} maxLength={200} placeholder="Lunch menu" />
      <fieldset class="segmented le-write">
        <legend class="label">The menu is</legend>
        <label>
          <input type="radio" name="menu-source" checked={form.source === 'sections'} onChange={() => set({ source: 'sections' })} /> Typed in here
        </label>
        <label>
          <input type="radio" name="menu-source" checked={form.source === 'file'} onChange={() => set({ source: 'file' })} /> A PDF or photo
        </label>
        <label>
          <input type="radio" name="menu-source" checked={form.source === 'url'} onChange={() => set({ source: 'url' })} /> On my website
        </label>
      </fieldset>
      {form.source !== 'sections' ? (
        <FileSource type={type} form={form} set={set} readOnly={readOnly} />
      ) : (
        <div class="le-menu">
          <GroupError path="data" />
          <GroupError path="data.sections" />
          {sections.map((s, si) => (
            <fieldset key={si} class="le-menu-section">
              <legend>Section {si + 1}</legend>
              <div class="le-menu-head">
                <TextInput
                  label="Section name"
                  path={`data.sections.${si}.name`}
                  value={s.name}
                  onValue={(name) => setSection(si, { name })}
                  placeholder="Mains"
                  maxLength={100}
                />
                <div class="le-move le-write">
                  <MoveButtons list={sections} index={si} what={`section ${s.name || si + 1}`} onMove={setSections} />
                  <Button
                    kind="danger"
                    aria-label={`Remove section ${s.name || si + 1}`}
                    onClick={() => setSections(sections.filter((_, j) => j !== si))}
                    disabled={sections.length === 1}
                  >
                    Remove
                  </Button>
                </div>
              </div>
              <ol class="le-menu-items">
                {s.items.map((it, ii) => {
                  const what = `item ${it.name || ii + 1} of ${s.name || `section ${si + 1}`}`
                  return (
                    <li key={ii} class="le-menu-item">
                      <div class="le-menu-item-fields">
                        <TextInput
                          label="Dish"
                          path={`data.sections.${si}.items.${ii}.name`}
                          value={it.name}
                          onValue={(name) => setItem(si, ii, { name })}
                          maxLength={100}
                        />
                        <TextInput
                          label="Price"
                          path={`data.sections.${si}.items.${ii}.price`}
                          value={it.price}
                          onValue={(price) => setItem(si, ii, { price })}
                          placeholder="€12.50"
                          maxLength={30}
                        />
                        <TextInput
                          label="Description"
                          path={`data.sections.${si}.items.${ii}.description`}
                          value={it.description}
                          onValue={(description) => setItem(si, ii, { description })}
                          maxLength={500}
                        />
                      </div>
                      <div class="le-move le-write">
                        <MoveButtons list={s.items} index={ii} what={what} onMove={(items) => setSection(si, { items })} />
                        <Button kind="ghost" aria-label={`Remove ${what}`} onClick={() => setSection(si, { items: s.items.filter((_, j) => j !== ii) })}>
                          ✕
                        </Button>
                      </div>
                    </li>
                  )
                })}
              </ol>
              <Button
                class="le-write"
                onClick={() => setSection(si, { items: [...s.items, emptyItem()] })}
                aria-label={`Add dish to ${s.name || `section ${si + 1}`}`}
              >
                <span aria-hidden="true">+</span> Add dish
              </Button>
            </fieldset>
          ))}
          <Button class="le-write" onClick={() => setSections([...sections, emptySection()])}>
            + Add section
          </Button>
        </div>
      )}
    </>
  )
}

/** Up and down buttons that reorder a list by swapping neighbours. */
export function MoveButtons<T>({ list, index, what, onMove }: { list: T[]; index: number; what: string; onMove: (next: T[]) => void }) {
  const move = (to: number) => {
    const next = [...list]
    ;[next[index], next[to]] = [next[to]!, next[index]!]
    onMove(next)
  }
  return (
    <>
      <Button kind="ghost" aria-label={`Move ${what} up`} disabled={index === 0} onClick={() => move(index - 1)}>
        ↑
      </Button>
      <Button kind="ghost" aria-label={`Move ${what} down`} disabled={index === list.length - 1} onClick={() => move(index + 1)}>
        ↓
      </Button>
    </>
  )
}
