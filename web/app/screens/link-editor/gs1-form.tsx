/**
 * The GS1 product form: GTIN with live check-digit feedback, the default URL, typed links of the
 * GS1 Web Vocabulary with languages, lots with their own url and links, and a preview of what the
 * resolver answers, computed by the resolver's own choice functions (src/gs1) on the form as typed.
 */
import { useState } from 'preact/hooks'
import { chooseLink, linksetOf, productOf } from '../../../../src/gs1/gs1.product'
import { MAX_LOTS, MAX_PRODUCT_LINKS } from '../../../../src/gs1/gs1.rules'
import { GS1_LINK_TYPES, titleOf } from '../../../../src/gs1/gs1.vocabulary'
import { Button } from '../../ui'
import { GroupError, Select, TextInput } from './fields'
import { emptyGs1Link, emptyGs1Lot, type Gs1Form, type Gs1LinkRow, type Gs1LotRow, gs1DataOf, gtinFeedback, langValid, lotValid } from './gs1-model'

const LINK_TYPE_OPTIONS = GS1_LINK_TYPES.map((value) => ({ value, label: `${titleOf(value)} (${value})` }))

export function Gs1Fields({ form, set, origin }: { form: Gs1Form; set: (next: Gs1Form) => void; origin: string }) {
  const feedback = gtinFeedback(form.gtin)
  const patch = (p: Partial<Gs1Form>) => set({ ...form, ...p })
  return (
    <>
      <GroupError path="data" />
      <TextInput
        label="GTIN"
        path="data.gtin"
        value={form.gtin}
        onValue={(gtin) => patch({ gtin })}
        placeholder="09506000134352"
        required
        maxLength={14}
        hint={
          feedback ? (
            <span class={feedback.ok ? 'gs1-ok' : 'gs1-bad'} data-testid="gtin-feedback" role="status">
              {feedback.ok ? '✓ ' : '✗ '}
              {feedback.message}
            </span>
          ) : (
            'The barcode number: 8, 12, 13 or 14 digits, the last one the check digit. One product per GTIN and domain.'
          )
        }
      />
      <TextInput
        label="Product page (default link)"
        path="data.url"
        type="url"
        required
        value={form.url}
        onValue={(url) => patch({ url })}
        placeholder="https://brand.example/olive-oil"
        hint="Where a phone goes unless it asks for a particular kind of link."
      />
      <LinkRows title="Typed links" path="data.links" links={form.links} onLinks={(links) => patch({ links })} />
      <fieldset class="le-group gs1-lots">
        <legend class="label">Lots</legend>
        <p class="hint">A lot (batch) printed on the pack as /10/&lt;lot&gt; can have its own page, a recall notice say, and its own links.</p>
        {form.lots.map((lot, i) => (
          <LotRow
            key={i}
            index={i}
            lot={lot}
            onLot={(l) => patch({ lots: form.lots.map((x, j) => (j === i ? l : x)) })}
            onRemove={() => patch({ lots: form.lots.filter((_, j) => j !== i) })}
          />
        ))}
        <Button kind="default" disabled={form.lots.length >= MAX_LOTS} onClick={() => patch({ lots: [...form.lots, emptyGs1Lot()] })}>
          Add a lot
        </Button>
      </fieldset>
      <ResolverPreview form={form} origin={origin} />
    </>
  )
}

function LinkRows({ title, path, links, onLinks }: { title: string; path: string; links: Gs1LinkRow[]; onLinks: (l: Gs1LinkRow[]) => void }) {
  const setRow = (i: number, p: Partial<Gs1LinkRow>) => onLinks(links.map((l, j) => (j === i ? { ...l, ...p } : l)))
  return (
    <fieldset class="le-group gs1-links">
      <legend class="label">{title}</legend>
      {links.map((l, i) => (
        <div class="gs1-link-row" key={i}>
          <Select
            label="Link type"
            path={`${path}.${i}.linkType`}
            value={l.linkType}
            onValue={(linkType) => setRow(i, { linkType })}
            options={LINK_TYPE_OPTIONS}
          />
          <TextInput label="URL" path={`${path}.${i}.url`} type="url" required value={l.url} onValue={(url) => setRow(i, { url })} />
          <TextInput
            label="Title"
            path={`${path}.${i}.title`}
            value={l.title}
            onValue={(t) => setRow(i, { title: t })}
            placeholder={titleOf(l.linkType)}
            maxLength={200}
          />
          <TextInput
            label="Language"
            path={`${path}.${i}.lang`}
            value={l.lang}
            onValue={(lang) => setRow(i, { lang })}
            placeholder="en"
            maxLength={5}
            hint={langValid(l.lang) ? 'Optional: en, fr, pt-BR…' : 'A language such as en or fr-CH.'}
          />
          <Button kind="ghost" aria-label={`Remove link ${i + 1}`} onClick={() => onLinks(links.filter((_, j) => j !== i))}>
            Remove
          </Button>
        </div>
      ))}
      <Button kind="default" disabled={links.length >= MAX_PRODUCT_LINKS} onClick={() => onLinks([...links, emptyGs1Link()])}>
        Add a link
      </Button>
    </fieldset>
  )
}

function LotRow({ index, lot, onLot, onRemove }: { index: number; lot: Gs1LotRow; onLot: (l: Gs1LotRow) => void; onRemove: () => void }) {
  const path = `data.lots.${index}`
  return (
    <div class="gs1-lot">
      <div class="le-row">
        <TextInput
          label="Lot"
          path={`${path}.lot`}
          required
          value={lot.lot}
          onValue={(v) => onLot({ ...lot, lot: v })}
          maxLength={20}
          hint={lot.lot === '' || lotValid(lot.lot) ? 'As printed, up to 20 characters.' : 'Letters, digits and !"%&\'()*+,-./:;<=>?_ only, up to 20.'}
        />
        <TextInput
          label="Lot page"
          path={`${path}.url`}
          type="url"
          value={lot.url}
          onValue={(url) => onLot({ ...lot, url })}
          hint="Optional: replaces the product page for this lot."
        />
        <Button kind="ghost" aria-label={`Remove lot ${index + 1}`} onClick={onRemove}>
          Remove
        </Button>
      </div>
      <LinkRows title={`Links of lot ${lot.lot || index + 1}`} path={`${path}.links`} links={lot.links} onLinks={(links) => onLot({ ...lot, links })} />
    </div>
  )
}

/** What the resolver answers for this product as typed: the same choice functions the server runs. */
function ResolverPreview({ form, origin }: { form: Gs1Form; origin: string }) {
  const [language, setLanguage] = useState('en')
  const feedback = gtinFeedback(form.gtin)
  if (!feedback?.ok || !form.url.trim()) return <p class="hint">The resolver preview appears once the GTIN and the product page are valid.</p>
  const data = gs1DataOf(form)
  const product = productOf({ ...data, gtin: data.gtin.padStart(14, '0') } as Parameters<typeof productOf>[0])
  const base = `${origin}/01/${product.gtin}`
  const languages = language.trim() ? [language.trim().toLowerCase()] : []
  const types = [...new Set([...product.links, ...[...product.lots.values()].flatMap((l) => l.links)].map((l) => l.linkType))]
  const rows: { request: string; answer: string }[] = []
  const answer = (lot: string | undefined, linkType: string | null) => {
    const c = chooseLink(product, { lot, linkType, languages })
    return c.kind === 'target' ? `307 → ${c.url}` : '404 (no such link)'
  }
  rows.push({ request: base, answer: answer(undefined, null) })
  for (const t of types) rows.push({ request: `${base}?linkType=${t}`, answer: answer(undefined, t) })
  for (const lot of product.lots.keys()) {
    const lotUri = `${base}/10/${encodeURIComponent(lot)}`
    rows.push({ request: lotUri, answer: answer(lot, null) })
    for (const t of types) rows.push({ request: `${lotUri}?linkType=${t}`, answer: answer(lot, t) })
  }
  const linkset = linksetOf(product, { origin, name: `GTIN ${product.gtin}` })
  return (
    <section class="gs1-preview" aria-label="Resolver preview">
      <h3>What the resolver answers</h3>
      <TextInput label="Visitor's language (Accept-Language)" path="preview.language" value={language} onValue={setLanguage} maxLength={10} />
      <table class="gs1-answers">
        <thead>
          <tr>
            <th scope="col">Request</th>
            <th scope="col">Answer</th>
          </tr>
        </thead>
        <tbody>
          {rows.map((r) => (
            <tr key={r.request}>
              <td>
                <code>{r.request}</code>
              </td>
              <td>{r.answer}</td>
            </tr>
          ))}
          <tr>
            <td>
              <code>{base}?linkType=all</code>
            </td>
            <td>
              200, linkset with {linkset.linkset.length} context{linkset.linkset.length === 1 ? '' : 's'}
            </td>
          </tr>
        </tbody>
      </table>
      <details>
        <summary>Linkset (application/linkset+json)</summary>
        <pre class="gs1-linkset">{JSON.stringify(linkset, null, 2)}</pre>
      </details>
    </section>
  )
}
